/// The one escaper for schema text written from Core Data values: string literals and the text of
/// comments. Defined on Unicode scalars, never on `Character`: a prepend character such as U+0600
/// ARABIC NUMBER SIGN joins a following `"` into one grapheme cluster, so a comparison of
/// characters would miss the quote.
///
/// A literal re-parses to exactly the string it was made from, and neither form ever holds a raw
/// control character, line or paragraph separator, or invisible format character (bidi overrides,
/// zero-width characters, U+0600…): those are written as `\u{…}` escapes, so schema files stay
/// one line per declaration, show what they hold, and cannot hide text from a reviewer.
///
/// Swift has the same comment and line rules, so the generator writes model text into Swift
/// comments with ``commentText(_:)`` and its string literals with ``stringLiteral(_:)``.
package enum SchemaText {
    /// `text` as a schema string literal, quotes included.
    package static func stringLiteral(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case "\0": result += "\\0"
            default:
                if needsEscape(scalar) {
                    result += escape(scalar)
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }

    /// `text` for a `//` or `///` comment line: every scalar ``stringLiteral(_:)`` would escape
    /// (line ends among them) written as `\u{…}`, so the comment cannot end early.
    package static func commentText(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            if scalar == "\t" || !needsEscape(scalar) {
                result.unicodeScalars.append(scalar)
            } else {
                result += escape(scalar)
            }
        }
        return result
    }

    /// Whether `scalar` is written as an escape: controls (C0, DEL, C1), line and paragraph
    /// separators, format characters, and scalars that are private or unassigned.
    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) { return true }
        if scalar.value < 0x7F { return false }
        switch scalar.properties.generalCategory {
        case .format, .lineSeparator, .paragraphSeparator, .control, .surrogate, .privateUse, .unassigned: return true
        default: return false
        }
    }

    /// `\u{…}` with the scalar's value in hexadecimal.
    private static func escape(_ scalar: Unicode.Scalar) -> String {
        "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
    }
}
