import Foundation

/// The JSON a `Codable` attribute's values must have, as far as a version's archived schema
/// records it: the archive keeps only the type's Swift spelling (`Codable<[String: [Int]]>`), so
/// a type spelled with standard-library and Foundation types alone has a known shape (the one
/// `JSONEncoder`'s defaults write), while an app-defined type (`Codable<Address>`) has none
/// that can be checked without the app's Swift type of that version: only that its value is
/// well-formed JSON (``StoredValues``).
///
/// After each custom stage, the migrator checks every such column of the stage's destination
/// against its shape, so a stage that writes `["a"]` where its version declares `[String: Int]`
/// fails there, not stages later when a version whose types the app has reads it.
indirect enum JSONShape: Equatable, Sendable {
    case string
    case integer
    case number
    case bool
    case array(JSONShape)
    /// An object with string keys (a dictionary keyed by `String` or `Int`).
    case object(JSONShape)
    case optional(JSONShape)

    /// The shape of the type `spelling` names; `nil` when it names a type whose shape the
    /// archive does not record (an app-defined type, or a key type that encodes otherwise).
    init?(spelling: String) {
        var parser = Parser(text: Array(spelling.filter { !$0.isWhitespace }))
        guard let shape = parser.type(), parser.position == parser.text.count else { return nil }
        self = shape
    }

    /// Why `text` is not JSON of this shape (the path to the first wrong value), `nil` when it is.
    func problem(inJSON text: String) -> String? {
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) else {
            return "not well-formed JSON"
        }
        return problem(in: value, at: "$")
    }

    private func problem(in value: JSONValue, at path: String) -> String? {
        switch (self, value) {
        case (.optional, .null): return nil
        case (.optional(let wrapped), _): return wrapped.problem(in: value, at: path)
        case (.string, .string), (.integer, .integer), (.number, .integer), (.number, .number), (.bool, .bool):
            return nil
        case (.array(let element), .array(let values)):
            for (index, item) in values.enumerated() {
                if let problem = element.problem(in: item, at: "\(path)[\(index)]") { return problem }
            }
            return nil
        case (.object(let element), .object(let values)):
            for key in values.keys.sorted() {
                if let item = values[key], let problem = element.problem(in: item, at: "\(path).\(key)") {
                    return problem
                }
            }
            return nil
        default:
            return "\(path) is \(value.kind), where \(description) is declared"
        }
    }

    /// The shape in words, for errors.
    var description: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .number: "a number"
        case .bool: "a Boolean"
        case .array(let element): "an array of \(element.plural)"
        case .object(let element): "an object of \(element.plural)"
        case .optional(let wrapped): "\(wrapped.description) or null"
        }
    }

    private var plural: String {
        switch self {
        case .string: "strings"
        case .integer: "integers"
        case .number: "numbers"
        case .bool: "Booleans"
        case .array, .object, .optional: "(\(description))"
        }
    }

    /// Reads a Swift type spelling: `[T]`, `[K: V]`, `T?`, `Array<T>`, `Set<T>`,
    /// `Dictionary<K, V>`, `Optional<T>`, and the standard types by name.
    private struct Parser {
        let text: [Character]
        var position = 0

        mutating func type() -> JSONShape? {
            var shape: JSONShape?
            if take("[") {
                guard let first = type() else { return nil }
                if take(":") {
                    guard key(first), let value = type(), take("]") else { return nil }
                    shape = .object(value)
                } else {
                    guard take("]") else { return nil }
                    shape = .array(first)
                }
            } else {
                let name = identifier()
                if take("<") {
                    guard let first = type() else { return nil }
                    var arguments = [first]
                    while take(",") {
                        guard let next = type() else { return nil }
                        arguments.append(next)
                    }
                    guard take(">") else { return nil }
                    switch (name, arguments.count) {
                    case ("Array", 1), ("Set", 1), ("Swift.Array", 1), ("Swift.Set", 1): shape = .array(first)
                    case ("Optional", 1), ("Swift.Optional", 1): shape = .optional(first)
                    case ("Dictionary", 2), ("Swift.Dictionary", 2):
                        guard key(first) else { return nil }
                        shape = .object(arguments[1])
                    default: return nil
                    }
                } else {
                    shape =
                        Self.named[
                            name.replacingOccurrences(of: "Foundation.", with: "")
                                .replacingOccurrences(of: "Swift.", with: "")]
                }
            }
            while let current = shape, take("?") { shape = .optional(current) }
            return shape
        }

        /// Whether a dictionary key's shape encodes as an object key (`String`, or an integer).
        private func key(_ shape: JSONShape) -> Bool { shape == .string || shape == .integer }

        private static let named: [String: JSONShape] = [
            "String": .string, "UUID": .string, "URL": .string, "Data": .string,
            "Int": .integer, "Int8": .integer, "Int16": .integer, "Int32": .integer, "Int64": .integer,
            "UInt": .integer, "UInt8": .integer, "UInt16": .integer, "UInt32": .integer, "UInt64": .integer,
            // `JSONEncoder`'s default writes a `Date` as seconds since 2001, a number.
            "Double": .number, "Float": .number, "Decimal": .number, "Date": .number, "Bool": .bool,
        ]

        private mutating func take(_ character: Character) -> Bool {
            guard position < text.count, text[position] == character else { return false }
            position += 1
            return true
        }

        private mutating func identifier() -> String {
            let start = position
            while position < text.count,
                text[position].isLetter || text[position].isNumber || text[position] == "_"
                    || text[position] == "."
            {
                position += 1
            }
            return String(text[start..<position])
        }
    }
}

/// Any JSON value, read strictly: a Boolean is not a number, nor a number a Boolean.
private enum JSONValue: Decodable {
    case null, bool, integer, number, string
    case array([JSONValue])
    case object([String: JSONValue])

    var kind: String {
        switch self {
        case .null: "null"
        case .bool: "a Boolean"
        case .integer: "an integer"
        case .number: "a number with a fraction"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if (try? container.decode(Bool.self)) != nil {
            self = .bool
        } else if (try? container.decode(Int64.self)) != nil || (try? container.decode(UInt64.self)) != nil {
            self = .integer
        } else if (try? container.decode(Double.self)) != nil {
            self = .number
        } else if (try? container.decode(String.self)) != nil {
            self = .string
        } else if let values = try? container.decode([JSONValue].self) {
            self = .array(values)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }
}
