import ModelwrightTestSupport

/// Mutations that treat a file as bytes, shared by the schema and XML mutators. Each changes
/// `bytes` in place and returns how it was changed, for the input's mutation list.
enum ByteMutations {
    /// Byte sequences that are not UTF-8: a lone continuation byte, an overlong encoding, a UTF-16
    /// surrogate, a scalar above U+10FFFF, a truncated sequence, and bytes UTF-8 never uses.
    static let invalidUTF8: [[UInt8]] = [
        [0x80], [0xC0, 0x80], [0xC1, 0xBF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82],
        [0xFF], [0xFE, 0xFF], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xE0, 0x80, 0xAF],
    ]

    /// Scalars that are valid but hostile: line and paragraph separators, NUL, bidi controls, a
    /// byte-order mark, a combining mark, a prepend character (U+0600 joins the next character),
    /// zero-width joiners, a bare CR and a form feed.
    static let specialScalars: [String] = [
        "\u{2028}", "\u{2029}", "\u{0}", "\u{202E}", "\u{2066}", "\u{2069}", "\u{200F}", "\u{FEFF}", "\u{0301}",
        "\u{0600}", "\u{200D}", "\r", "\u{0C}", "\u{0B}", "\u{85}", "\u{1B}[31m", "\u{0600}'", "\u{0600}\"",
    ]

    /// Flips one to eight random bits.
    static func flipBits(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        guard !bytes.isEmpty else { return "flipBits(empty)" }
        let count = random.size(in: 1...8)
        var places: [String] = []
        for _ in 0..<count {
            let offset = random.index(below: bytes.count)
            bytes[offset] ^= UInt8(1) << UInt8(random.index(below: 8))
            places.append(String(offset))
        }
        return "flipBits(at \(places.joined(separator: ",")))"
    }

    /// Replaces one to four bytes with random values.
    static func randomBytes(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        guard !bytes.isEmpty else { return "randomBytes(empty)" }
        let offset = random.index(below: bytes.count)
        let count = min(random.size(in: 1...4), bytes.count - offset)
        for place in offset..<(offset + count) { bytes[place] = UInt8.random(in: 0...255, using: &random) }
        return "randomBytes(\(count) at \(offset))"
    }

    /// Cuts the file at a random point.
    static func truncate(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        let length = random.index(below: bytes.count + 1)
        bytes.removeSubrange(length...)
        return "truncate(at \(length))"
    }

    /// Removes a random range of up to 256 bytes.
    static func deleteRange(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        guard !bytes.isEmpty else { return "deleteRange(empty)" }
        let start = random.index(below: bytes.count)
        let length = min(random.size(in: 1...256), bytes.count - start)
        bytes.removeSubrange(start..<(start + length))
        return "deleteRange(\(length) at \(start))"
    }

    /// Copies a random range of up to 512 bytes, one to 64 times, to a random place.
    static func duplicateRange(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        guard !bytes.isEmpty else { return "duplicateRange(empty)" }
        let start = random.index(below: bytes.count)
        let length = min(random.size(in: 1...512), bytes.count - start)
        let times = random.size(in: 1...64)
        let destination = random.index(below: bytes.count + 1)
        let copy = Array(bytes[start..<(start + length)])
        bytes.insert(contentsOf: Array(repeating: copy, count: times).joined(), at: destination)
        return "duplicateRange(\(length) from \(start), \(times)x at \(destination))"
    }

    /// Inserts a byte sequence that is not UTF-8 at a random place.
    static func insertInvalidUTF8(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        let sequence = random.pick(invalidUTF8)
        let offset = random.index(below: bytes.count + 1)
        bytes.insert(contentsOf: sequence, at: offset)
        return "insertInvalidUTF8(\(hex(sequence)) at \(offset))"
    }

    /// Inserts a hostile scalar at a random place.
    static func insertSpecialScalar(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        let scalar = random.pick(specialScalars)
        let offset = random.index(below: bytes.count + 1)
        bytes.insert(contentsOf: Array(scalar.utf8), at: offset)
        return "insertScalar(\(hex(Array(scalar.utf8))) at \(offset))"
    }

    /// Rewrites every line end as CRLF, or as a bare CR.
    static func lineEnds(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        let crlf = random.chance(0.5)
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count + bytes.count / 16)
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                result.append(UInt8(ascii: "\r"))
                if crlf { result.append(byte) }
            } else {
                result.append(byte)
            }
        }
        bytes = result
        return crlf ? "lineEnds(CRLF)" : "lineEnds(CR)"
    }

    /// Inserts `count` copies of `unit` at a random place (deep nesting, long runs).
    static func insertRun(_ bytes: inout [UInt8], unit: String, count: Int, _ random: inout SplitMix64) -> Int {
        let offset = random.index(below: bytes.count + 1)
        bytes.insert(contentsOf: Array(repeating: Array(unit.utf8), count: count).joined(), at: offset)
        return offset
    }

    /// The byte ranges of every occurrence of `needle`.
    static func occurrences(of needle: String, in bytes: [UInt8]) -> [Range<Int>] {
        let pattern = Array(needle.utf8)
        guard !pattern.isEmpty, bytes.count >= pattern.count else { return [] }
        var ranges: [Range<Int>] = []
        var offset = 0
        while offset <= bytes.count - pattern.count {
            if bytes[offset] == pattern[0], bytes[offset..<(offset + pattern.count)].elementsEqual(pattern) {
                ranges.append(offset..<(offset + pattern.count))
                offset += pattern.count
            } else {
                offset += 1
            }
        }
        return ranges
    }

    /// A random identifier of `length` ASCII letters.
    static func identifier(length: Int, _ random: inout SplitMix64) -> String {
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
        var name: [UInt8] = [UInt8(ascii: "Z")]
        name.reserveCapacity(length)
        while name.count < length { name.append(random.pick(letters)) }
        return String(decoding: name, as: UTF8.self)
    }

    /// Bytes as hex, for mutation lists.
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16, uppercase: true) }.map { $0.count == 1 ? "0" + $0 : $0 }
            .joined(separator: " ")
    }
}
