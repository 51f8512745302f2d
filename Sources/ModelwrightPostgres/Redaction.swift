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
    private let secrets: [String]

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
        self.secrets =
            Array(Set(secrets.filter { !$0.isEmpty })).sorted { $0.count > $1.count }
            + secrets.compactMap { $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) }
            .filter { !$0.isEmpty }
    }

    /// `text` with every spelling of the password, a URL's user information and every
    /// `password=` value replaced by `***`.
    func apply(_ text: String) -> String {
        var result = text
        for secret in secrets where !secret.isEmpty {
            result = result.replacingOccurrences(of: secret, with: "***")
        }
        result = Self.userInformation(in: result)
        result = Self.passwordValues(in: result)
        return result
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
