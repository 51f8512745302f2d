import ModelwrightSchema

/// The one escaper for text the Core Data exporter writes into XML attribute values and element
/// text, defined on Unicode scalars.
///
/// `& < > " '` become entities; tab, line feed and carriage return become character references,
/// so a reader's attribute-value normalisation (which turns each literal one into a space) keeps
/// them. A character XML 1.0 cannot hold at all, even as a reference (the other C0 controls,
/// U+FFFE, U+FFFF), is refused: ``XMLReader`` would refuse the file.
enum XMLAttributeText {
    /// A character that no XML 1.0 file can hold.
    struct Unwritable: Error, Equatable {
        /// The value it is in.
        var value: String
        /// The character.
        var scalar: Unicode.Scalar
    }

    /// `value` escaped for a double-quoted attribute value or element text.
    static func escaped(_ value: String) throws(Unwritable) -> String {
        var result = ""
        result.unicodeScalars.reserveCapacity(value.unicodeScalars.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            case "\t": result += "&#9;"
            case "\n": result += "&#10;"
            case "\r": result += "&#13;"
            default:
                guard XMLReader.isXMLCharacter(scalar.value) else { throw Unwritable(value: value, scalar: scalar) }
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
