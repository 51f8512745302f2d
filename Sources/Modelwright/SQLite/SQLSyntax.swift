/// How text is spelled inside SQL the runtime builds: identifiers and string literals.
///
/// The only two quoting rules in the product. Both work on UTF-8 bytes, never on `Character`:
/// a grapheme cluster can join a quote to the scalar before it (U+0600 followed by `'` is one
/// `Character`), and a comparison of characters would then miss the quote and let the rest of the
/// text escape the literal. Every quote and every other ASCII byte is a byte of its own in UTF-8,
/// so doubling quote bytes is exact whatever surrounds them.
enum SQLSyntax {
    /// An identifier in double quotes, so names such as `Order`, `Group` or `index` are safe.
    static func identifier(_ name: String) -> String {
        enclosed(name, in: UInt8(ascii: "\""))
    }

    /// A string literal in single quotes; text holding NUL becomes a hexadecimal blob cast to text,
    /// since SQLite's tokenizer stops at NUL.
    static func string(_ text: String) -> String {
        guard text.utf8.contains(0) else { return enclosed(text, in: UInt8(ascii: "'")) }
        var result = "(CAST(X'"
        for byte in text.utf8 {
            result.unicodeScalars.append(hexDigits[Int(byte >> 4)])
            result.unicodeScalars.append(hexDigits[Int(byte & 0x0f)])
        }
        return result + "' AS TEXT))"
    }

    /// A blob literal, `X'…'`, of `bytes` in hexadecimal.
    static func blob(_ bytes: some Sequence<UInt8>) -> String {
        var result = "X'"
        for byte in bytes {
            result.unicodeScalars.append(hexDigits[Int(byte >> 4)])
            result.unicodeScalars.append(hexDigits[Int(byte & 0x0f)])
        }
        return result + "'"
    }

    private static let hexDigits: [Unicode.Scalar] = Array("0123456789abcdef".unicodeScalars)

    /// `text` between two `quote` bytes, each `quote` byte inside it doubled.
    private static func enclosed(_ text: String, in quote: UInt8) -> String {
        // Plain Swift over the bytes rather than `replacingOccurrences`, which goes through
        // Foundation on Linux and showed up in profiles: queries quote identifiers many times.
        guard text.utf8.contains(quote) else {
            var result = String(Unicode.Scalar(quote))
            result += text
            result.unicodeScalars.append(Unicode.Scalar(quote))
            return result
        }
        var bytes: [UInt8] = [quote]
        bytes.reserveCapacity(text.utf8.count + 8)
        for byte in text.utf8 {
            bytes.append(byte)
            if byte == quote { bytes.append(quote) }
        }
        bytes.append(quote)
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Quotes an identifier for SQL: shorthand for ``SQLSyntax/identifier(_:)``, which the runtime's
/// SQL builders call at nearly every name.
func quoted(_ identifier: String) -> String {
    SQLSyntax.identifier(identifier)
}
