import ModelwrightSchema

// Longer than 500 lines on purpose: one forward pass over the bytes, whose states (tags,
// attributes, references, comments, CDATA) share the cursor and its bounds checks; split, each
// part would re-derive the cursor's invariants.

/// A reader of the XML that Core Data and Xcode write, written by hand so that hostile input ends
/// in a located error, never in a crash or a long wait.
///
/// It replaces Foundation's `XMLParser`, whose libxml2 and FoundationXML layers crashed on tiny
/// malformed files (`<?xml?><model/>`, a byte that is not UTF-8 in a name). Everything it does is
/// one forward pass over the bytes with no recursion; the open elements are an array bounded by
/// ``maximumDepth``. It reads the subset Core Data files use: an optional XML 1.0 declaration in
/// UTF-8, elements, attributes in either quote, the five predefined entities and numeric
/// character references, comments, processing instructions, CDATA sections and text. Document
/// type declarations are refused (only a `.xccurrentversion` plist may carry one, without an
/// internal subset), so no entity can be declared: no billion laughs, no external entities.
///
/// Offsets are byte offsets into the bytes given; ``SourceFile`` turns them into lines and columns.
struct XMLReader {
    /// The deepest nesting of elements accepted. Core Data models nest five levels at most
    /// (`model` › `entity` › `uniquenessConstraints` › `uniquenessConstraint` › `constraint`).
    static let maximumDepth = 64

    /// One thing read from the document, in document order.
    enum Event: Equatable {
        /// A start tag (or an empty-element tag, which is followed by its ``end``), with its
        /// attributes in document order and the offset of its `<`.
        case start(name: String, attributes: [CoreDataXMLAttribute], offset: Int)
        /// An end tag, or the end of an empty-element tag.
        case end(name: String)
        /// Character data inside the root element, entities replaced; only when asked for.
        case text(String)
    }

    /// Why the bytes are not XML this reader accepts, and at which byte.
    struct SyntaxError: Error, Equatable {
        /// What is wrong, in words a user of Xcode understands.
        var message: String
        /// The offset of the byte the problem is at.
        var offset: Int
    }

    private let bytes: [UInt8]
    private let allowsDocumentType: Bool
    private let keepsText: Bool
    private var offset: Int
    /// The open elements' names and the offsets of their `<`, outermost first.
    private var open: [(name: String, offset: Int)] = []
    private var hasRoot = false
    private var hasDocumentType = false
    /// The end of an empty-element tag, reported on the next call.
    private var pendingEnd: String?

    /// Checks that `bytes` are UTF-8 holding only characters XML 1.0 allows, and reads past the
    /// byte order mark and the XML declaration.
    ///
    /// `allowsDocumentType` accepts one `<!DOCTYPE …>` without an internal subset before the root
    /// element, as property lists have; `keepsText` reports character data as ``Event/text``.
    init(bytes: [UInt8], allowsDocumentType: Bool = false, keepsText: Bool = false) throws(SyntaxError) {
        self.bytes = bytes
        self.allowsDocumentType = allowsDocumentType
        self.keepsText = keepsText
        offset = 0
        try Self.checkCharacters(bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { offset = 3 }
        try readDeclaration()
    }

    // MARK: - Characters

    /// Throws at the first byte that does not start a well-formed UTF-8 sequence of a character
    /// XML 1.0 allows (tab, line feed, carriage return, U+0020…U+D7FF, U+E000…U+FFFD, U+10000 and up).
    static func checkCharacters(_ bytes: [UInt8]) throws(SyntaxError) {
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if byte >= 0x20, byte < 0x80 {
                index += 1
                continue
            }
            if byte < 0x20 {
                guard byte == 0x09 || byte == 0x0A || byte == 0x0D else {
                    throw SyntaxError(
                        message: "the control character \(hex(UInt32(byte))) is not allowed in an XML file",
                        offset: index)
                }
                index += 1
                continue
            }
            let length: Int
            let minimum: UInt32
            var scalar: UInt32
            switch byte {
            case 0xC2...0xDF: (length, minimum, scalar) = (2, 0x80, UInt32(byte & 0x1F))
            case 0xE0...0xEF: (length, minimum, scalar) = (3, 0x800, UInt32(byte & 0x0F))
            case 0xF0...0xF4: (length, minimum, scalar) = (4, 0x10000, UInt32(byte & 0x07))
            default: throw invalidUTF8(bytes, at: index)
            }
            guard index + length <= count else { throw invalidUTF8(bytes, at: index) }
            for next in 1..<length {
                let continuation = bytes[index + next]
                guard continuation & 0xC0 == 0x80 else { throw invalidUTF8(bytes, at: index) }
                scalar = scalar << 6 | UInt32(continuation & 0x3F)
            }
            guard scalar >= minimum, scalar <= 0x10FFFF, !(0xD800...0xDFFF).contains(scalar) else {
                throw invalidUTF8(bytes, at: index)
            }
            guard scalar != 0xFFFE, scalar != 0xFFFF else {
                throw SyntaxError(
                    message: "the character \(hex(scalar)) is not allowed in an XML file", offset: index)
            }
            index += length
        }
    }

    private static func invalidUTF8(_ bytes: [UInt8], at offset: Int) -> SyntaxError {
        let byte = String(bytes[offset], radix: 16, uppercase: true)
        return SyntaxError(
            message:
                "invalid UTF-8: the byte 0x\(byte.count < 2 ? "0" + byte : byte) does not start a well-formed character; Core Data files are UTF-8",
            offset: offset)
    }

    /// `U+001B` for a scalar value.
    static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    // MARK: - The declaration

    private static let declarationHint = "write it as <?xml version=\"1.0\" encoding=\"UTF-8\"?>"

    /// Reads `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` if the file starts with one.
    private mutating func readDeclaration() throws(SyntaxError) {
        let start = offset
        guard matches("<?xml"), start + 5 < bytes.count, Self.isSpace(bytes[start + 5]) || bytes[start + 5] == 0x3F
        else { return }
        offset += 5
        var seen: [String] = []
        while true {
            let hadSpace = skipSpaces()
            if matches("?>") {
                offset += 2
                break
            }
            guard hadSpace, offset < bytes.count, Self.isNameStart(bytes[offset]) else {
                throw SyntaxError(message: "malformed XML declaration; \(Self.declarationHint)", offset: offset)
            }
            let nameOffset = offset
            let name = readName()
            let value = try readPseudoAttributeValue()
            let order = ["version", "encoding", "standalone"]
            guard let rank = order.firstIndex(of: name), seen.allSatisfy({ order.firstIndex(of: $0) ?? 0 < rank })
            else {
                throw SyntaxError(
                    message: "unexpected '\(name)' in the XML declaration; \(Self.declarationHint)", offset: nameOffset)
            }
            switch name {
            case "version" where value != "1.0":
                throw SyntaxError(message: "only XML version 1.0 is read; \(Self.declarationHint)", offset: nameOffset)
            case "encoding" where value.lowercased() != "utf-8":
                throw SyntaxError(
                    message: "only the UTF-8 encoding is read (Xcode writes UTF-8); \(Self.declarationHint)",
                    offset: nameOffset)
            case "standalone" where value != "yes" && value != "no":
                throw SyntaxError(message: "standalone must be \"yes\" or \"no\"", offset: nameOffset)
            default: break
            }
            seen.append(name)
        }
        guard seen.first == "version" else {
            throw SyntaxError(message: "the XML declaration has no version; \(Self.declarationHint)", offset: start)
        }
    }

    /// `="value"` or `='value'` of the declaration, which takes no entities.
    private mutating func readPseudoAttributeValue() throws(SyntaxError) -> String {
        skipSpaces()
        guard offset < bytes.count, bytes[offset] == 0x3D else {
            throw SyntaxError(message: "expected '=' in the XML declaration; \(Self.declarationHint)", offset: offset)
        }
        offset += 1
        skipSpaces()
        guard offset < bytes.count, bytes[offset] == 0x22 || bytes[offset] == 0x27 else {
            throw SyntaxError(message: "expected a quoted value in the XML declaration", offset: offset)
        }
        let quote = bytes[offset]
        let start = offset + 1
        var end = start
        while end < bytes.count, bytes[end] != quote, bytes[end] != 0x3F, bytes[end] != 0x3C { end += 1 }
        guard end < bytes.count, bytes[end] == quote else {
            throw SyntaxError(message: "unterminated value in the XML declaration", offset: offset)
        }
        offset = end + 1
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }

    // MARK: - Events

    /// The next event, or `nil` at the end of a well-formed document.
    mutating func next() throws(SyntaxError) -> Event? {
        if let name = pendingEnd {
            pendingEnd = nil
            return .end(name: name)
        }
        while offset < bytes.count {
            guard bytes[offset] == 0x3C else {
                if let text = try readText() { return .text(text) }
                continue
            }
            let next = offset + 1 < bytes.count ? bytes[offset + 1] : 0
            switch next {
            case 0x2F: return try readEndTag()
            case 0x3F: try skipProcessingInstruction()
            case 0x21:
                if let text = try readMarkupDeclaration() { return .text(text) }
            default: return try readStartTag()
            }
        }
        if let innermost = open.last {
            throw SyntaxError(
                message: "the file ends before <\(innermost.name)> is closed; add </\(innermost.name)>",
                offset: bytes.count)
        }
        guard hasRoot else { throw SyntaxError(message: "the file has no root element", offset: bytes.count) }
        return nil
    }

    private mutating func readStartTag() throws(SyntaxError) -> Event {
        let start = offset
        offset += 1
        guard offset < bytes.count, Self.isNameStart(bytes[offset]) else {
            throw SyntaxError(message: "'<' must start a tag; write '&lt;' for a literal '<'", offset: start)
        }
        if open.isEmpty, hasRoot {
            throw SyntaxError(message: "a second root element: an XML file holds one", offset: start)
        }
        guard open.count < Self.maximumDepth else {
            throw SyntaxError(
                message: "elements are nested more than \(Self.maximumDepth) deep; Core Data models nest a few levels",
                offset: start)
        }
        let name = readName()
        var attributes: [CoreDataXMLAttribute] = []
        var names: Set<String> = []
        while true {
            let hadSpace = skipSpaces()
            guard offset < bytes.count else {
                throw SyntaxError(message: "the file ends inside the tag <\(name)>", offset: start)
            }
            if bytes[offset] == 0x3E {
                offset += 1
                open.append((name, start))
                hasRoot = true
                return .start(name: name, attributes: attributes, offset: start)
            }
            if bytes[offset] == 0x2F {
                guard offset + 1 < bytes.count, bytes[offset + 1] == 0x3E else {
                    throw SyntaxError(message: "expected '/>' to end the tag <\(name)>", offset: offset)
                }
                offset += 2
                hasRoot = true
                pendingEnd = name
                return .start(name: name, attributes: attributes, offset: start)
            }
            guard hadSpace, Self.isNameStart(bytes[offset]) else {
                throw SyntaxError(
                    message: "expected an attribute name, '>' or '/>' in the tag <\(name)>", offset: offset)
            }
            let attributeOffset = offset
            let attribute = readName()
            guard names.insert(attribute).inserted else {
                throw SyntaxError(
                    message: "the attribute '\(attribute)' appears twice in the tag <\(name)>", offset: attributeOffset)
            }
            skipSpaces()
            guard offset < bytes.count, bytes[offset] == 0x3D else {
                throw SyntaxError(message: "expected '=' after the attribute '\(attribute)'", offset: offset)
            }
            offset += 1
            skipSpaces()
            attributes.append(CoreDataXMLAttribute(attribute, try readAttributeValue(of: attribute)))
        }
    }

    /// A quoted attribute value with entities replaced and white space normalised as XML says:
    /// each literal tab, line feed, carriage return or CR LF pair becomes one space.
    private mutating func readAttributeValue(of attribute: String) throws(SyntaxError) -> String {
        guard offset < bytes.count, bytes[offset] == 0x22 || bytes[offset] == 0x27 else {
            throw SyntaxError(message: "the value of '\(attribute)' must be in quotes", offset: offset)
        }
        let quote = bytes[offset]
        let opening = offset
        offset += 1
        let start = offset
        var plain = true
        while offset < bytes.count, bytes[offset] != quote {
            switch bytes[offset] {
            case 0x3C:
                throw SyntaxError(
                    message: "'<' is not allowed in the value of '\(attribute)'; write '&lt;'", offset: offset)
            case 0x26, 0x09, 0x0A, 0x0D: plain = false
            default: break
            }
            offset += 1
        }
        guard offset < bytes.count else {
            throw SyntaxError(message: "the value of '\(attribute)' is never closed", offset: opening)
        }
        let end = offset
        offset += 1
        if plain { return String(decoding: bytes[start..<end], as: UTF8.self) }
        return try decode(start..<end, isAttribute: true)
    }

    private mutating func readEndTag() throws(SyntaxError) -> Event {
        let start = offset
        offset += 2
        guard offset < bytes.count, Self.isNameStart(bytes[offset]) else {
            throw SyntaxError(message: "expected a name after '</'", offset: start)
        }
        let name = readName()
        skipSpaces()
        guard offset < bytes.count, bytes[offset] == 0x3E else {
            throw SyntaxError(message: "expected '>' to end the tag </\(name)>", offset: offset)
        }
        offset += 1
        guard let innermost = open.last else {
            throw SyntaxError(message: "</\(name)> closes no open element", offset: start)
        }
        guard innermost.name == name else {
            throw SyntaxError(message: "</\(name)> does not close <\(innermost.name)>", offset: start)
        }
        open.removeLast()
        return .end(name: name)
    }

    /// Character data up to the next `<`: only white space outside the root element.
    private mutating func readText() throws(SyntaxError) -> String? {
        let start = offset
        var plain = true
        while offset < bytes.count, bytes[offset] != 0x3C {
            let byte = bytes[offset]
            if open.isEmpty, !Self.isSpace(byte) {
                throw SyntaxError(
                    message: hasRoot
                        ? "text after the root element" : "text before the root element; an XML file starts with '<'",
                    offset: offset)
            }
            if byte == 0x26 || byte == 0x0D { plain = false }
            offset += 1
        }
        if plain {
            return keepsText && !open.isEmpty ? String(decoding: bytes[start..<offset], as: UTF8.self) : nil
        }
        let text = try decode(start..<offset, isAttribute: false)
        return keepsText && !open.isEmpty ? text : nil
    }

    /// `<!-- … -->`, `<![CDATA[ … ]]>`, or a document type declaration when allowed.
    private mutating func readMarkupDeclaration() throws(SyntaxError) -> String? {
        let start = offset
        if matches("<!--") {
            offset += 4
            while offset + 1 < bytes.count, !(bytes[offset] == 0x2D && bytes[offset + 1] == 0x2D) { offset += 1 }
            guard offset + 2 < bytes.count else {
                throw SyntaxError(message: "the comment is never closed; add '-->'", offset: start)
            }
            guard bytes[offset + 2] == 0x3E else {
                throw SyntaxError(message: "'--' is not allowed inside a comment", offset: offset)
            }
            offset += 3
            return nil
        }
        if matches("<![CDATA[") {
            guard !open.isEmpty else {
                throw SyntaxError(message: "a CDATA section outside the root element", offset: start)
            }
            offset += 9
            let textStart = offset
            while offset + 2 < bytes.count,
                !(bytes[offset] == 0x5D && bytes[offset + 1] == 0x5D && bytes[offset + 2] == 0x3E)
            {
                offset += 1
            }
            guard offset + 2 < bytes.count else {
                throw SyntaxError(message: "the CDATA section is never closed; add ']]>'", offset: start)
            }
            let text = keepsText ? Self.normalisedLineEnds(bytes[textStart..<offset]) : nil
            offset += 3
            return text
        }
        if matches("<!DOCTYPE"), allowsDocumentType, !hasRoot, !hasDocumentType {
            try skipDocumentType()
            return nil
        }
        let what = matches("<!DOCTYPE") ? "a document type declaration (<!DOCTYPE …>)" : "a markup declaration"
        throw SyntaxError(
            message:
                "\(what) is not accepted: Core Data never writes one, and it could declare entities; remove it",
            offset: start)
    }

    /// `<!DOCTYPE plist PUBLIC "…" "…">`: names and quoted literals only, no internal subset.
    private mutating func skipDocumentType() throws(SyntaxError) {
        let start = offset
        offset += 9
        while offset < bytes.count, bytes[offset] != 0x3E {
            switch bytes[offset] {
            case 0x22, 0x27:
                let quote = bytes[offset]
                offset += 1
                while offset < bytes.count, bytes[offset] != quote { offset += 1 }
                offset += 1
            case 0x5B, 0x3C:
                throw SyntaxError(
                    message: "a document type declaration with an internal subset is not accepted; remove it",
                    offset: offset)
            default: offset += 1
            }
        }
        guard offset < bytes.count else {
            throw SyntaxError(message: "the document type declaration is never closed", offset: start)
        }
        offset += 1
        hasDocumentType = true
    }

    /// `<?target …?>`; a second XML declaration is an error.
    private mutating func skipProcessingInstruction() throws(SyntaxError) {
        let start = offset
        offset += 2
        guard offset < bytes.count, Self.isNameStart(bytes[offset]) else {
            throw SyntaxError(message: "expected a name after '<?'", offset: start)
        }
        let target = readName()
        if target.lowercased() == "xml" {
            throw SyntaxError(
                message: "the XML declaration must be the very first thing in the file", offset: start)
        }
        while offset + 1 < bytes.count, !(bytes[offset] == 0x3F && bytes[offset + 1] == 0x3E) { offset += 1 }
        guard offset + 1 < bytes.count else {
            throw SyntaxError(message: "the processing instruction is never closed; add '?>'", offset: start)
        }
        offset += 2
    }

    // MARK: - Entities

    /// The text of `range` with entity and character references replaced and line ends normalised;
    /// in an attribute value each literal white-space character or CR LF pair becomes a space.
    private func decode(_ range: Range<Int>, isAttribute: Bool) throws(SyntaxError) -> String {
        var result: [UInt8] = []
        result.reserveCapacity(range.count)
        var index = range.lowerBound
        while index < range.upperBound {
            let byte = bytes[index]
            switch byte {
            case 0x26:
                let (scalar, end) = try reference(at: index, before: range.upperBound)
                result.append(contentsOf: Array(String(scalar).utf8))
                index = end
                continue
            case 0x0D:
                if index + 1 < range.upperBound, bytes[index + 1] == 0x0A { index += 1 }
                result.append(isAttribute ? 0x20 : 0x0A)
            case 0x09, 0x0A:
                result.append(isAttribute ? 0x20 : byte)
            default:
                result.append(byte)
            }
            index += 1
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// The character of the reference starting with `&` at `start`, and the offset after its `;`.
    private func reference(at start: Int, before limit: Int) throws(SyntaxError) -> (Unicode.Scalar, Int) {
        // The longest reference is `&#x10FFFF;` with leading zeros; 12 bytes is plenty for any
        // Core Data file, and bounds the scan.
        var end = start + 1
        while end < limit, end - start < 12, bytes[end] != 0x3B { end += 1 }
        guard end < limit, bytes[end] == 0x3B else {
            throw SyntaxError(
                message: "'&' must start an entity such as '&amp;' and end with ';'; write '&amp;' for a literal '&'",
                offset: start)
        }
        let body = String(decoding: bytes[(start + 1)..<end], as: UTF8.self)
        let scalar: Unicode.Scalar?
        switch body {
        case "amp": scalar = "&"
        case "lt": scalar = "<"
        case "gt": scalar = ">"
        case "quot": scalar = "\""
        case "apos": scalar = "'"
        default:
            if body.hasPrefix("#x") {
                scalar = Self.characterReference(body.dropFirst(2), radix: 16)
            } else if body.hasPrefix("#") {
                scalar = Self.characterReference(body.dropFirst(), radix: 10)
            } else {
                throw SyntaxError(
                    message:
                        "unknown entity '&\(body);': XML without a document type knows only &amp; &lt; &gt; &quot; &apos; and &#…;",
                    offset: start)
            }
        }
        guard let scalar else {
            throw SyntaxError(
                message: "'&\(body);' is not a character XML 1.0 allows", offset: start)
        }
        return (scalar, end + 1)
    }

    private static func characterReference(_ digits: Substring, radix: Int) -> Unicode.Scalar? {
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isHexDigit }),
            let value = UInt32(digits, radix: radix), isXMLCharacter(value)
        else { return nil }
        return Unicode.Scalar(value)
    }

    /// Whether XML 1.0 allows the character `value` in a document.
    static func isXMLCharacter(_ value: UInt32) -> Bool {
        switch value {
        case 0x09, 0x0A, 0x0D, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: true
        default: false
        }
    }

    // MARK: - Bytes

    private func matches(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard offset + count <= bytes.count else { return false }
        return literal.withUTF8Buffer { buffer in
            var index = 0
            while index < count {
                if bytes[offset + index] != buffer[index] { return false }
                index += 1
            }
            return true
        }
    }

    @discardableResult
    private mutating func skipSpaces() -> Bool {
        let start = offset
        while offset < bytes.count, Self.isSpace(bytes[offset]) { offset += 1 }
        return offset > start
    }

    /// A name starting at `offset`, which holds a name-start byte. Names are read byte-wise: ASCII
    /// letters, digits, `_ : - .`, and any non-ASCII character (the bytes are already valid UTF-8).
    private mutating func readName() -> String {
        let start = offset
        offset += 1
        while offset < bytes.count, Self.isNameByte(bytes[offset]) { offset += 1 }
        return String(decoding: bytes[start..<offset], as: UTF8.self)
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private static func isNameStart(_ byte: UInt8) -> Bool {
        (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || byte == 0x5F || byte == 0x3A
            || byte >= 0x80
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        isNameStart(byte) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2D || byte == 0x2E
    }

    private static func normalisedLineEnds(_ slice: ArraySlice<UInt8>) -> String {
        guard slice.contains(0x0D) else { return String(decoding: slice, as: UTF8.self) }
        var result: [UInt8] = []
        var index = slice.startIndex
        while index < slice.endIndex {
            if slice[index] == 0x0D {
                result.append(0x0A)
                if index + 1 < slice.endIndex, slice[index + 1] == 0x0A { index += 1 }
            } else {
                result.append(slice[index])
            }
            index += 1
        }
        return String(decoding: result, as: UTF8.self)
    }
}
