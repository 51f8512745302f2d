/// Decodes the body of a schema string literal, the one place that knows its escapes, so that
/// the lexer (which makes the value) and the parser (which maps a predicate's bytes back to the
/// file) can never disagree.
///
/// A literal is one line, like Swift's single-line literals: a raw line feed or carriage return
/// ends it unterminated, so a literal can never carry a line break into generated Swift or SQL
/// unescaped. The escapes are Swift's: `\0`, `\\`, `\t`, `\n`, `\r`, `\"`, `\'` and `\u{…}`
/// with 1 to 8 hexadecimal digits naming a Unicode scalar value. Every other escape, and every
/// `\u{…}` that is malformed, a surrogate or above U+10FFFF, is a problem at the backslash and
/// adds nothing to the value.
enum StringLiteralDecoder {
    /// One invalid escape or the missing closing quote.
    struct Problem {
        /// What is wrong.
        var message: String
        /// The file offset it points at.
        var offset: Int
        /// Hints, each with the offset it points at.
        var notes: [(String, Int)]
    }

    /// A decoded literal.
    struct Decoded {
        /// The value's UTF-8 bytes.
        var value: [UInt8] = []
        /// The file offset each byte of `value` comes from, and one more for the end; empty unless asked for.
        var offsets: [Int] = []
        /// The offset after the closing quote, or where the unterminated literal stops (at the line end).
        var end: Int = 0
        /// Invalid escapes and a missing closing quote, in file order.
        var problems: [Problem] = []
    }

    /// Decodes the literal whose opening quote is just before `start`.
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, recordingOffsets: Bool) -> Decoded {
        var decoded = Decoded()
        var offset = start
        func append(_ byte: UInt8, from source: Int) {
            decoded.value.append(byte)
            if recordingOffsets { decoded.offsets.append(source) }
        }
        while offset < bytes.count {
            let byte = bytes[offset]
            switch byte {
            case UInt8(ascii: "\""):
                decoded.end = offset + 1
                if recordingOffsets { decoded.offsets.append(offset) }
                return decoded
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                decoded.end = offset
                if recordingOffsets { decoded.offsets.append(offset) }
                decoded.problems.append(
                    Problem(
                        message: "unterminated string literal", offset: start - 1,
                        notes: [("add '\"' before the line ends; write a line break as '\\n'", offset)]))
                return decoded
            case UInt8(ascii: "\\"):
                let escape = offset
                offset += 1
                guard offset < bytes.count else { continue }
                let escaped = bytes[offset]
                switch escaped {
                case UInt8(ascii: "n"): append(UInt8(ascii: "\n"), from: escape)
                case UInt8(ascii: "r"): append(UInt8(ascii: "\r"), from: escape)
                case UInt8(ascii: "t"): append(UInt8(ascii: "\t"), from: escape)
                case UInt8(ascii: "0"): append(0, from: escape)
                case UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "\\"): append(escaped, from: escape)
                case UInt8(ascii: "u"):
                    offset = unicodeEscape(bytes, at: escape, into: &decoded, recordingOffsets: recordingOffsets)
                    continue
                case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                    // The backslash cannot join lines: the line end is the literal's end.
                    decoded.problems.append(
                        Problem(message: "a string literal cannot continue on the next line", offset: escape, notes: [])
                    )
                    continue
                default:
                    decoded.problems.append(
                        Problem(
                            message: "unknown escape sequence '\\\(printable(escaped))' in string literal",
                            offset: escape,
                            notes: [(escapesNote, escape)]))
                }
                offset += 1
            default:
                append(byte, from: offset)
                offset += 1
            }
        }
        decoded.end = offset
        if recordingOffsets { decoded.offsets.append(offset) }
        decoded.problems.append(
            Problem(
                message: "unterminated string literal", offset: start - 1, notes: [("add '\"' to close it", offset)]))
        return decoded
    }

    /// The escapes a string literal may use, for the note under an unknown one.
    static let escapesNote = "the escapes are \\n, \\r, \\t, \\0, \\\", \\', \\\\ and \\u{…}"

    /// Decodes `\u{…}` starting at the backslash at `escape`; returns the offset after it, or after
    /// as much of it as was read when it is malformed.
    private static func unicodeEscape(
        _ bytes: UnsafeBufferPointer<UInt8>, at escape: Int, into decoded: inout Decoded, recordingOffsets: Bool
    ) -> Int {
        var offset = escape + 2
        guard offset < bytes.count, bytes[offset] == UInt8(ascii: "{") else {
            decoded.problems.append(
                Problem(message: "expected '{' after '\\u', as in '\\u{2028}'", offset: escape, notes: []))
            return offset
        }
        offset += 1
        var value: UInt32 = 0
        var digits = 0
        while offset < bytes.count, let digit = hexValue(bytes[offset]) {
            // Counted, not accumulated past eight digits, so the value cannot overflow.
            if digits < 8 { value = value << 4 | digit }
            digits += 1
            offset += 1
        }
        guard digits >= 1, digits <= 8, offset < bytes.count, bytes[offset] == UInt8(ascii: "}") else {
            decoded.problems.append(
                Problem(
                    message: "expected 1 to 8 hexadecimal digits and '}' in '\\u{…}'", offset: escape,
                    notes: [(escapesNote, escape)]))
            return offset
        }
        offset += 1
        guard let scalar = Unicode.Scalar(value) else {
            decoded.problems.append(
                Problem(
                    message:
                        "'\\u{\(String(value, radix: 16, uppercase: true))}' is not a Unicode scalar value: surrogates (D800–DFFF) and values above 10FFFF are not",
                    offset: escape, notes: []))
            return offset
        }
        for byte in String(scalar).utf8 {
            decoded.value.append(byte)
            if recordingOffsets { decoded.offsets.append(escape) }
        }
        return offset
    }

    private static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    /// The byte as itself when it is printable ASCII, otherwise as `U+XX`.
    private static func printable(_ byte: UInt8) -> String {
        guard byte < 0x21 || byte >= 0x7F else { return String(UnicodeScalar(byte)) }
        let hex = String(byte, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
