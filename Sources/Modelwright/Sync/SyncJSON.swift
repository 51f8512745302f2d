import Foundation

// Sync's JSON written and read by hand, for the parts every row crosses: a stored record and the
// changes of a push or a pull. Foundation's `JSONEncoder` and `JSONDecoder` box every value of
// every row behind `Codable`'s containers, and print and parse each stamp's node UUID through
// `vfprintf` and `sscanf`; the profile of a 3 × 10,000-change burst found that to be most of the
// sync's CPU. The writer produces the bytes `JSONEncoder` produces for the same values (so stored
// rows and peers that still use `Codable` read them unchanged), and the reader accepts any JSON
// `JSONDecoder` accepts for them. The `Codable` conformances stay as the public coding of the
// messages and as the tests' oracle.

/// Writes JSON into a byte buffer as `JSONEncoder` (default options) writes it: no whitespace,
/// `/` escaped, control characters as `\b \t \n \f \r` or `\u00xx`, other characters as they are,
/// a `Double` as its shortest description without a trailing `.0`.
struct SyncJSONWriter {
    /// The bytes written so far.
    private(set) var bytes: [UInt8] = []

    init(reservingCapacity capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    /// Appends one byte (a bracket, a comma) as it is.
    mutating func byte(_ byte: UInt8) {
        bytes.append(byte)
    }

    /// Appends ASCII text as it is (a key with its quotes, `null`).
    mutating func ascii(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Appends JSON that is already written (a stored record).
    mutating func json(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// Appends JSON that is already written.
    mutating func json(_ other: some Sequence<UInt8>) {
        bytes.append(contentsOf: other)
    }

    mutating func null() {
        ascii("null")
    }

    mutating func bool(_ value: Bool) {
        if value { ascii("true") } else { ascii("false") }
    }

    /// A string, quoted and escaped.
    mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): ascii("\\\"")
            case UInt8(ascii: "\\"): ascii("\\\\")
            case UInt8(ascii: "/"): ascii("\\/")
            case 0x08: ascii("\\b")
            case 0x09: ascii("\\t")
            case 0x0A: ascii("\\n")
            case 0x0C: ascii("\\f")
            case 0x0D: ascii("\\r")
            case 0..<0x20:
                ascii("\\u00")
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// A signed integer in decimal.
    mutating func integer(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        unsigned(value.magnitude)
    }

    /// An unsigned integer in decimal, written without an intermediate `String`.
    mutating func unsigned(_ value: UInt64) {
        guard value >= 10 else {
            bytes.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        var digits: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)  // 20 digits at most, 4 × 5
        var count = 0
        var rest = value
        withUnsafeMutableBytes(of: &digits) { buffer in
            while rest > 0 {
                buffer[count] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                count += 1
            }
            for index in stride(from: count - 1, through: 0, by: -1) { bytes.append(buffer[index]) }
        }
    }

    /// A finite number as `JSONEncoder` writes it: its shortest round-trip description, without
    /// the `.0` of a whole number. The caller writes the infinities and refuses NaN.
    mutating func real(_ value: Double) {
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
    }

    /// A UUID as `JSONEncoder` writes it: its uppercase string, quoted; printed here by hand.
    mutating func uuid(_ value: UUID) {
        bytes.append(UInt8(ascii: "\""))
        withUnsafeBytes(of: value.uuid) { raw in
            for (index, byte) in raw.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 { bytes.append(UInt8(ascii: "-")) }
                bytes.append(Self.upperHexDigits[Int(byte >> 4)])
                bytes.append(Self.upperHexDigits[Int(byte & 0xF)])
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
    private static let upperHexDigits = Array("0123456789ABCDEF".utf8)
}

/// Reads JSON from a byte buffer, one value at a time, in the order the caller expects them; any
/// whitespace JSON allows, any escape, numbers in any JSON form. What it cannot read is refused
/// with ``SyncError/malformedMessage(field:reason:)`` naming `field` and the byte offset.
struct SyncJSONReader {
    private let bytes: ArraySlice<UInt8>
    /// The index in `bytes` of the next byte to read.
    private(set) var offset: Int
    /// What is being read, for errors: `changes[3]`, `(a stored record)`.
    var field: String

    /// A reader of `bytes` from their start.
    init(_ bytes: ArraySlice<UInt8>, field: String) {
        self.bytes = bytes
        self.offset = bytes.startIndex
        self.field = field
    }

    /// A reader of `bytes` from their start.
    init(_ bytes: [UInt8], field: String) {
        self.init(bytes[...], field: field)
    }

    /// A reader of a string's UTF-8 bytes.
    init(_ text: String, field: String) {
        self.init(Array(text.utf8)[...], field: field)
    }

    /// The error for the byte at `offset`.
    func malformed(_ reason: String) -> SyncError {
        .malformedMessage(field: field, reason: "\(reason) (at byte \(offset - bytes.startIndex))")
    }

    private mutating func skipWhitespace() {
        while offset < bytes.endIndex {
            switch bytes[offset] {
            case 0x20, 0x09, 0x0A, 0x0D: offset += 1
            default: return
            }
        }
    }

    /// The next byte after whitespace, not consumed; `nil` at the end.
    mutating func peek() -> UInt8? {
        skipWhitespace()
        return offset < bytes.endIndex ? bytes[offset] : nil
    }

    /// Consumes `byte` (after whitespace) or throws.
    mutating func expect(_ byte: UInt8, _ what: String) throws {
        guard peek() == byte else { throw malformed("expected \(what)") }
        offset += 1
    }

    /// Throws unless only whitespace is left.
    mutating func expectEnd() throws {
        guard peek() == nil else { throw malformed("expected the end of the JSON") }
    }

    /// Consumes `null` and returns `true` when it is next; `false` and nothing consumed otherwise.
    mutating func null() throws -> Bool {
        guard peek() == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    private mutating func literal(_ word: StaticString) throws {
        let count = word.utf8CodeUnitCount
        let matches = word.withUTF8Buffer { expected in
            offset + count <= bytes.endIndex && bytes[offset..<offset + count].elementsEqual(expected)
        }
        guard matches else { throw malformed("expected \(word)") }
        offset += count
    }

    mutating func bool() throws -> Bool {
        switch peek() {
        case UInt8(ascii: "t"):
            try literal("true")
            return true
        case UInt8(ascii: "f"):
            try literal("false")
            return false
        default: throw malformed("expected true or false")
        }
    }

    // MARK: Arrays and objects

    /// Consumes `[`.
    mutating func beginArray() throws {
        try expect(UInt8(ascii: "["), "an array")
    }

    /// Whether another element follows in the array begun (consuming the `,` before it); at
    /// `]`, consumes it and returns `false`. `first` is whether no element was read yet.
    mutating func hasElement(first: Bool) throws -> Bool {
        if peek() == UInt8(ascii: "]") {
            offset += 1
            return false
        }
        if !first { try expect(UInt8(ascii: ","), "a comma or the end of the array") }
        return true
    }

    /// Consumes `]`, or throws: an array longer than its shape (`shape` says it) is refused.
    mutating func endArray(_ shape: String) throws {
        guard peek() == UInt8(ascii: "]") else { throw malformed(shape) }
        offset += 1
    }

    /// Consumes `{`.
    mutating func beginObject() throws {
        try expect(UInt8(ascii: "{"), "an object")
    }

    /// The next key of the object begun, its `:` consumed; `nil` at `}`, which it consumes.
    mutating func nextKey(first: Bool) throws -> String? {
        if peek() == UInt8(ascii: "}") {
            offset += 1
            return nil
        }
        if !first { try expect(UInt8(ascii: ","), "a comma or the end of the object") }
        let key = try string()
        try expect(UInt8(ascii: ":"), "a colon after a key")
        return key
    }

    /// Skips one value of any kind and returns its bytes, for a part read elsewhere.
    mutating func rawValue() throws -> ArraySlice<UInt8> {
        _ = peek()
        let start = offset
        try skipValue(depth: 0)
        return bytes[start..<offset]
    }

    private mutating func skipValue(depth: Int) throws {
        // Deeper than any sync message: a hostile message cannot exhaust the stack.
        guard depth < 64 else { throw malformed("the JSON is nested too deeply") }
        switch peek() {
        case UInt8(ascii: "{"):
            offset += 1
            var first = true
            while try nextKey(first: first) != nil {
                first = false
                try skipValue(depth: depth + 1)
            }
        case UInt8(ascii: "["):
            offset += 1
            var first = true
            while try hasElement(first: first) {
                first = false
                try skipValue(depth: depth + 1)
            }
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "t"), UInt8(ascii: "f"): _ = try bool()
        case UInt8(ascii: "n"): try literal("null")
        default: _ = try numberToken()
        }
    }

    // MARK: Strings

    /// A string; its escapes resolved. Invalid UTF-8 is refused, as `JSONDecoder` refuses it.
    mutating func string() throws -> String {
        try expect(UInt8(ascii: "\""), "a string")
        let start = offset
        while offset < bytes.endIndex {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") {
                defer { offset += 1 }
                return try text(bytes[start..<offset])
            }
            if byte == UInt8(ascii: "\\") { return try escapedString(from: start) }
            guard byte >= 0x20 else { throw malformed("a control character in a string is written escaped") }
            offset += 1
        }
        throw malformed("a string is not closed")
    }

    private func text(_ slice: ArraySlice<UInt8>) throws -> String {
        guard let text = String(validating: slice, as: UTF8.self) else { throw malformed("a string is not UTF-8") }
        return text
    }

    /// The rest of a string that has escapes, from its first byte at `start`.
    private mutating func escapedString(from start: Int) throws -> String {
        var result = Array(bytes[start..<offset])
        while offset < bytes.endIndex {
            let byte = bytes[offset]
            offset += 1
            switch byte {
            case UInt8(ascii: "\""): return try text(result[...])
            case UInt8(ascii: "\\"):
                guard offset < bytes.endIndex else { throw malformed("a string is not closed") }
                let escape = bytes[offset]
                offset += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): result.append(escape)
                case UInt8(ascii: "b"): result.append(0x08)
                case UInt8(ascii: "f"): result.append(0x0C)
                case UInt8(ascii: "n"): result.append(0x0A)
                case UInt8(ascii: "r"): result.append(0x0D)
                case UInt8(ascii: "t"): result.append(0x09)
                case UInt8(ascii: "u"): result.append(contentsOf: try unicodeEscape())
                default: throw malformed("\\\(Character(Unicode.Scalar(escape))) is no JSON escape")
                }
            default:
                guard byte >= 0x20 else { throw malformed("a control character in a string is written escaped") }
                result.append(byte)
            }
        }
        throw malformed("a string is not closed")
    }

    /// The UTF-8 of a `\uXXXX` escape (its `\u` read), a surrogate pair's second half included.
    private mutating func unicodeEscape() throws -> [UInt8] {
        let first = try hexQuad()
        var scalar: Unicode.Scalar?
        if (0xD800..<0xDC00).contains(first) {
            guard offset + 1 < bytes.endIndex, bytes[offset] == UInt8(ascii: "\\"),
                bytes[offset + 1] == UInt8(ascii: "u")
            else { throw malformed("a high surrogate escape is followed by its low surrogate") }
            offset += 2
            let second = try hexQuad()
            guard (0xDC00..<0xE000).contains(second) else {
                throw malformed("a high surrogate escape is followed by its low surrogate")
            }
            scalar = Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
        } else {
            scalar = Unicode.Scalar(first)
        }
        guard let scalar else { throw malformed("a lone surrogate escape is no character") }
        return Array(String(Character(scalar)).utf8)
    }

    private mutating func hexQuad() throws -> UInt32 {
        guard offset + 4 <= bytes.endIndex else { throw malformed("\\u is followed by four hex digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = Self.hexValue(bytes[offset]) else {
                throw malformed("\\u is followed by four hex digits")
            }
            value = value << 4 | UInt32(digit)
            offset += 1
        }
        return value
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// A UUID string, parsed by hand when it is written plainly (36 characters, no escape).
    mutating func uuid() throws -> UUID {
        _ = peek()
        if offset + 38 <= bytes.endIndex, bytes[offset] == UInt8(ascii: "\""), bytes[offset + 37] == UInt8(ascii: "\""),
            let parsed = Self.parseUUID(bytes, at: offset + 1)
        {
            offset += 38
            return parsed
        }
        let start = offset
        let text = try string()
        guard let parsed = UUID(uuidString: text) else {
            offset = start
            throw malformed("\(text.debugDescription) is not a UUID")
        }
        return parsed
    }

    /// The UUID of the 36 characters at `start` (hex digits of either case, dashes at 8, 13, 18
    /// and 23), or `nil`.
    private static func parseUUID(_ bytes: ArraySlice<UInt8>, at start: Int) -> UUID? {
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let parsed = withUnsafeMutableBytes(of: &raw) { buffer -> Bool in
            var position = start
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    guard bytes[position] == UInt8(ascii: "-") else { return false }
                    position += 1
                }
                guard let high = hexValue(bytes[position]), let low = hexValue(bytes[position + 1]) else {
                    return false
                }
                buffer[index] = high << 4 | low
                position += 2
            }
            return true
        }
        return parsed ? UUID(uuid: raw) : nil
    }

    // MARK: Numbers

    /// The bytes of the number next, checked against JSON's grammar.
    private mutating func numberToken() throws -> ArraySlice<UInt8> {
        _ = peek()
        let start = offset
        func digits() -> Int {
            let first = offset
            while offset < bytes.endIndex, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[offset]) {
                offset += 1
            }
            return offset - first
        }
        if offset < bytes.endIndex, bytes[offset] == UInt8(ascii: "-") { offset += 1 }
        let integerStart = offset
        let integerDigits = digits()
        guard integerDigits > 0, integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else {
            offset = start
            throw malformed("expected a number")
        }
        if offset < bytes.endIndex, bytes[offset] == UInt8(ascii: ".") {
            offset += 1
            guard digits() > 0 else { throw malformed("a number's fraction has digits") }
        }
        if offset < bytes.endIndex, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
            offset += 1
            if offset < bytes.endIndex, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") {
                offset += 1
            }
            guard digits() > 0 else { throw malformed("a number's exponent has digits") }
        }
        return bytes[start..<offset]
    }

    /// A number as a `Double`, correctly rounded; finite.
    mutating func real() throws -> Double {
        let token = try numberToken()
        // A number beyond a Double's range is refused, as `JSONDecoder` refuses it, not read as infinity.
        guard let value = Double(String(decoding: token, as: UTF8.self)), value.isFinite else {
            throw malformed("\(String(decoding: token, as: UTF8.self)) is not a number a Double holds")
        }
        return value
    }

    /// A whole number that fits `Int64`: plain digits, or (as `JSONDecoder` also takes) a number
    /// with a fraction or exponent whose value is exactly an integer.
    mutating func integer() throws -> Int64 {
        let start = offset
        let token = try numberToken()
        if let value = Self.plainInteger(token) { return value }
        if let value = Double(String(decoding: token, as: UTF8.self)), let exact = Int64(exactly: value) {
            return exact
        }
        offset = start
        throw malformed("\(String(decoding: token, as: UTF8.self)) is not an integer of 64 bits")
    }

    /// A whole number that fits `UInt64` (see ``integer()``).
    mutating func unsigned() throws -> UInt64 {
        let start = offset
        let token = try numberToken()
        if token.first != UInt8(ascii: "-"), token.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            var value: UInt64 = 0
            var fits = true
            for byte in token {
                let (times, overflow) = value.multipliedReportingOverflow(by: 10)
                let (sum, carry) = times.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
                if overflow || carry { fits = false }
                value = sum
            }
            if fits { return value }
        } else if let value = Double(String(decoding: token, as: UTF8.self)), let exact = UInt64(exactly: value) {
            return exact
        }
        offset = start
        throw malformed("\(String(decoding: token, as: UTF8.self)) is not an unsigned integer of 64 bits")
    }

    /// `token` as an `Int64` when it is plain digits (with a minus) that fit.
    private static func plainInteger(_ token: ArraySlice<UInt8>) -> Int64? {
        var digits = token
        let negative = digits.first == UInt8(ascii: "-")
        if negative { digits = digits.dropFirst() }
        var magnitude: UInt64 = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times, overflow) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            guard !overflow, !carry else { return nil }
            magnitude = sum
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        return Int64(exactly: magnitude)
    }
}
