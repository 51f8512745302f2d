import CLibPQ
import Foundation

/// Takes the credentials of a connection string out of any text before it reaches an error.
///
/// libpq's messages can quote parts of the connection string (a malformed URL, a bad port), and
/// a server's can quote a statement; the password is found the way libpq finds it (parsing the
/// string) and removed, in every spelling a message could carry: as written, percent-encoded and
/// decoded. When the string does not parse, the URL's user information and every `password=`
/// value are removed by their shape instead.
struct Redaction: Sendable {
    private let secrets: [[UInt8]]

    /// The redaction for `connectionString`'s password.
    init(connectionString: String) {
        var secrets: [String] = []
        var error: UnsafeMutablePointer<CChar>?
        if let options = PQconninfoParse(connectionString, &error) {
            var option = options
            while let keyword = option.pointee.keyword {
                if String(cString: keyword) == "password", let value = option.pointee.val {
                    secrets.append(String(cString: value))
                }
                option += 1
            }
            PQconninfoFree(options)
        }
        if let error { PQfreemem(error) }
        // What a URL holds between `:` and `@` after the scheme, decoded or not.
        if let scheme = connectionString.range(of: "://") {
            let rest = connectionString[scheme.upperBound...]
            if let at = rest.lastIndex(of: "@"), let colon = rest[..<at].firstIndex(of: ":") {
                let raw = String(rest[rest.index(after: colon)..<at])
                secrets.append(raw)
                if let decoded = raw.removingPercentEncoding { secrets.append(decoded) }
            }
        }
        // Short passwords are not searched for: three letters would be cut out of unrelated words
        // ("e***pired"); the shapes below still remove them from the connection string.
        let spellings = secrets + secrets.compactMap { $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) }
        self.secrets = Array(Set(spellings.map { Array($0.utf8) }.filter { $0.count >= Self.shortestSearched }))
            .sorted { $0.count > $1.count }
    }

    /// The fewest bytes a password must have to be searched for in free text.
    static let shortestSearched = 4

    /// `text` with every spelling of the password, a URL's user information and every
    /// `password=` value replaced by `***`.
    func apply(_ text: String) -> String {
        var bytes = Array(text.utf8)
        for secret in secrets { bytes = Self.replacing(secret, in: bytes) }
        var result = String(decoding: bytes, as: UTF8.self)
        result = Self.userInformation(in: result)
        result = Self.passwordValues(in: result)
        return result
    }

    /// `bytes` with each occurrence of `secret` replaced by `***`. Bytes, not characters: a
    /// password that starts with a combining mark joins the character before it, and a search by
    /// `Character` would never find it.
    private static func replacing(_ secret: [UInt8], in bytes: [UInt8]) -> [UInt8] {
        guard !secret.isEmpty, bytes.count >= secret.count else { return bytes }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes.count - index >= secret.count, bytes[index..<(index + secret.count)].elementsEqual(secret) {
                result += Array("***".utf8)
                index += secret.count
            } else {
                result.append(bytes[index])
                index += 1
            }
        }
        return result
    }

    /// A fixed sentence for libpq's complaint about a connection string: libpq's own text quotes
    /// the part it could not read, which may be the password, so it is never passed on. An option
    /// is named only when it is one libpq knows.
    static func connectionStringError(_ libpqMessage: String) -> PostgresError {
        let reason: String
        if libpqMessage.contains("percent-encoded") {
            reason = "a % in it is not followed by two hexadecimal digits (percent-encode the password)"
        } else if libpqMessage.contains("missing \"=\"") {
            reason = "a key has no \"=\" after it (quote a value holding spaces in single quotes)"
        } else if libpqMessage.contains("unterminated quoted string") {
            reason = "a quoted value has no closing quote"
        } else if libpqMessage.contains("invalid connection option") || libpqMessage.contains("URI query parameter") {
            reason = "it names an option libpq does not know"
        } else if let option = knownOption(in: libpqMessage) {
            reason = "the value of the option \"\(option)\" is not valid"
        } else {
            reason = "libpq cannot read it"
        }
        return .invalidConnectionString(reason)
    }

    /// Whether libpq's connection failure is its complaint about the connection string.
    static func isConnectionStringError(_ libpqMessage: String) -> Bool {
        ["connection option", "percent-encoded", "URI", "connection info string", "unterminated quoted string"]
            .contains { libpqMessage.contains($0) }
    }

    /// The libpq option a message names as `connection option "name"`, if libpq knows it.
    private static func knownOption(in message: String) -> String? {
        guard let start = message.range(of: "connection option \"") else { return nil }
        let name = message[start.upperBound...].prefix { $0 != "\"" }
        guard let defaults = PQconndefaults() else { return nil }
        defer { PQconninfoFree(defaults) }
        var option = defaults
        while let keyword = option.pointee.keyword {
            if String(cString: keyword) == name { return String(name) }
            option += 1
        }
        return nil
    }

    /// `scheme://user:secret@` becomes `scheme://user:***@`.
    private static func userInformation(in text: String) -> String {
        var result = ""
        var rest = Substring(text)
        while let scheme = rest.range(of: "://") {
            result += rest[..<scheme.upperBound]
            rest = rest[scheme.upperBound...]
            let authorityEnd = rest.firstIndex { $0 == "/" || $0 == " " || $0 == "\"" || $0 == "?" } ?? rest.endIndex
            if let at = rest[..<authorityEnd].lastIndex(of: "@"), let colon = rest[..<at].firstIndex(of: ":") {
                result += rest[...colon] + "***"
                rest = rest[at...]
            }
        }
        return result + rest
    }

    /// `password=secret` (and `password = 'se cret'`) becomes `password=***`.
    private static func passwordValues(in text: String) -> String {
        var result = ""
        var rest = Substring(text)
        while let key = rest.range(of: "password", options: .caseInsensitive) {
            result += rest[..<key.upperBound]
            rest = rest[key.upperBound...]
            let afterSpaces = rest.drop { $0 == " " }
            guard afterSpaces.first == "=" else { continue }
            var value = afterSpaces.dropFirst().drop { $0 == " " }
            if value.first == "'" {
                value = value.dropFirst()
                var escaped = false
                while let character = value.first, escaped || character != "'" {
                    escaped = !escaped && character == "\\"
                    value = value.dropFirst()
                }
                value = value.dropFirst()
            } else {
                value = value.drop { $0 != " " && $0 != "&" && $0 != "\"" }
            }
            result += "=***"
            rest = value
        }
        return result + rest
    }
}
