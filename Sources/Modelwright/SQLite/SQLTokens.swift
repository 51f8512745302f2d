import Foundation

/// The tokens of one SQL statement in canonical text: keywords and bare names in upper case,
/// quoted names and strings re-quoted the runtime's way, numbers and punctuation as written, so
/// two statements SQLite reads alike compare equal token by token.
///
/// Strict on purpose: what the runtime's DDL and SQLite's own rewriting (`ALTER TABLE`) never
/// produce — comments, bracketed or backquoted names, other characters — makes the text
/// unreadable, and a store holding it is refused rather than read past.
struct SQLTokens {
    var items: [String] = []

    init?(_ sql: String) {
        let bytes = Array(sql.utf8)
        var index = 0
        func isWordByte(_ byte: UInt8) -> Bool {
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x5F || byte == 0x24
        }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0C, 0x0D:
                index += 1
            case 0x22, 0x27:  // "name", 'text'
                var value: [UInt8] = []
                index += 1
                var closed = false
                while index < bytes.count {
                    if bytes[index] == byte {
                        if index + 1 < bytes.count && bytes[index + 1] == byte {
                            value.append(byte)
                            index += 2
                            continue
                        }
                        index += 1
                        closed = true
                        break
                    }
                    value.append(bytes[index])
                    index += 1
                }
                guard closed else { return nil }
                let text = String(decoding: value, as: UTF8.self)
                items.append(byte == 0x22 ? SQLSyntax.identifier(text) : SQLSyntax.string(text))
            case 0x28, 0x29, 0x2C, 0x3B, 0x2B:  // ( ) , ; +
                items.append(String(UnicodeScalar(byte)))
                index += 1
            case 0x2D:  // -, but not the start of a comment
                guard index + 1 >= bytes.count || bytes[index + 1] != 0x2D else { return nil }
                items.append("-")
                index += 1
            case _ where (byte == 0x58 || byte == 0x78) && index + 1 < bytes.count && bytes[index + 1] == 0x27:
                // X'…': a blob literal, in lower-case hexadecimal.
                guard let close = bytes[(index + 2)...].firstIndex(of: 0x27) else { return nil }
                let digits = bytes[(index + 2)..<close]
                guard digits.allSatisfy({ isWordByte($0) }) else { return nil }
                items.append("X'" + String(decoding: digits, as: UTF8.self).lowercased() + "'")
                index = close + 1
            case _ where byte >= 0x30 && byte <= 0x39 || byte == 0x2E:  // a number, as written
                let start = index
                while index < bytes.count,
                    isWordByte(bytes[index]) || bytes[index] == 0x2E
                        || ((bytes[index] == 0x2B || bytes[index] == 0x2D)
                            && (bytes[index - 1] == 0x65 || bytes[index - 1] == 0x45))
                {
                    index += 1
                }
                items.append(String(decoding: bytes[start..<index], as: UTF8.self))
            case _ where isWordByte(byte):
                let start = index
                while index < bytes.count, isWordByte(bytes[index]) { index += 1 }
                items.append(String(decoding: bytes[start..<index], as: UTF8.self).uppercased())
            default:
                return nil
            }
        }
    }
}
