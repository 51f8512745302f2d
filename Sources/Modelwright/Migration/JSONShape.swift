import Foundation

/// The JSON a `Codable` attribute's values must have, as far as a version's archived schema
/// records it: the archive keeps only the type's Swift spelling (`Codable<[String: [Int]]>`), so
/// a type spelled with standard-library and Foundation types alone has a known shape (the one
/// `JSONEncoder`'s defaults write), while an app-defined type (`Codable<Address>`) has none
/// that can be checked without the app's Swift type of that version: only that its value is
/// well-formed JSON (``StoredValues``).
///
/// A value fits when `JSONDecoder` reads it as the declared type: the check rebuilds that type
/// from the spelling and decodes with it, so it accepts exactly what `JSONDecoder` accepts (a
/// dictionary keyed by `UUID` as the flat array `[key, value, …]` `JSONEncoder` writes, an `Int`
/// key only as an integer string in range, a `URL` only as a string `URL` parses, `Data` only as
/// base64, an integer only within its type's range).
///
/// After each custom stage, the migrator checks every such column of the stage's destination
/// against its shape, so a stage that writes `["a"]` where its version declares `[String: Int]`
/// fails there, not stages later when a version whose types the app has reads it; a
/// ``MigrationTester`` fixture gets the same check.
indirect enum JSONShape: Equatable, Sendable {
    /// A standard type that `JSONEncoder` writes as one JSON scalar.
    case scalar(Scalar)
    /// An array, or a set (which `JSONEncoder` writes as an array).
    case array(JSONShape)
    /// A dictionary: an object when the key is `String` or `Int`, otherwise a flat array of
    /// keys and values in turn.
    case dictionary(key: Scalar, value: JSONShape)
    case optional(JSONShape)

    /// The standard scalar types, by their Swift names.
    enum Scalar: String, CaseIterable, Sendable {
        case string = "String"
        case uuid = "UUID"
        case url = "URL"
        case data = "Data"
        case date = "Date"
        case bool = "Bool"
        case int = "Int"
        case int8 = "Int8"
        case int16 = "Int16"
        case int32 = "Int32"
        case int64 = "Int64"
        case uint = "UInt"
        case uint8 = "UInt8"
        case uint16 = "UInt16"
        case uint32 = "UInt32"
        case uint64 = "UInt64"
        case double = "Double"
        case float = "Float"
        case decimal = "Decimal"

        /// The Swift type.
        var type: any (Decodable & Hashable).Type {
            switch self {
            case .string: String.self
            case .uuid: UUID.self
            case .url: URL.self
            case .data: Data.self
            case .date: Date.self
            case .bool: Bool.self
            case .int: Int.self
            case .int8: Int8.self
            case .int16: Int16.self
            case .int32: Int32.self
            case .int64: Int64.self
            case .uint: UInt.self
            case .uint8: UInt8.self
            case .uint16: UInt16.self
            case .uint32: UInt32.self
            case .uint64: UInt64.self
            case .double: Double.self
            case .float: Float.self
            case .decimal: Decimal.self
            }
        }
    }

    /// The shape of the type `spelling` names; `nil` when it names a type whose shape the
    /// archive does not record (an app-defined type, or a dictionary key that is not a standard scalar).
    init?(spelling: String) {
        var parser = Parser(text: Array(spelling.filter { !$0.isWhitespace }))
        guard let shape = parser.type(), parser.position == parser.text.count else { return nil }
        self = shape
    }

    /// Why `text` is not JSON that `JSONDecoder` reads as this shape's type (the path to the
    /// first wrong value and what is wrong there), `nil` when it is.
    func problem(inJSON text: String) -> String? {
        do {
            try type.decodeJSON(Data(text.utf8))
            return nil
        } catch let DecodingError.dataCorrupted(context) where context.codingPath.isEmpty {
            return "not well-formed JSON, or not \(description): \(context.debugDescription)"
        } catch let error as DecodingError {
            return Self.explain(error)
        } catch {
            return "\(error)"
        }
    }

    /// The Swift type this shape stands for (a set as an array: `Set`'s decoding reads the
    /// same JSON as `Array`'s).
    private var type: any Decodable.Type {
        switch self {
        case .scalar(let scalar): scalar.type
        case .array(let element): element.type.arrayType
        case .optional(let wrapped): wrapped.type.optionalType
        case .dictionary(let key, let value): value.type.dictionaryType(keyedBy: key.type)
        }
    }

    /// A decoding error in words: the path (`$[2].name`) and what `JSONDecoder` found there.
    private static func explain(_ error: DecodingError) -> String {
        let (context, what): (DecodingError.Context, String) =
            switch error {
            case .typeMismatch(let type, let context): (context, "is not \(type)")
            case .valueNotFound(let type, let context): (context, "is null where \(type) is declared")
            case .keyNotFound(let key, let context): (context, "lacks key \(key.stringValue)")
            case .dataCorrupted(let context): (context, "is wrong")
            @unknown default: (DecodingError.Context(codingPath: [], debugDescription: "\(error)"), "is wrong")
            }
        let path = context.codingPath.reduce("$") { path, key in
            if let index = key.intValue, key.stringValue.hasPrefix("Index ") { return "\(path)[\(index)]" }
            return "\(path).\(key.stringValue)"
        }
        return "\(path) \(what): \(context.debugDescription)"
    }

    /// The shape in words, for errors.
    var description: String {
        switch self {
        case .scalar(let scalar): "a \(scalar.rawValue)"
        case .array(let element): "an array of (\(element.description))"
        case .dictionary(let key, let value): "a dictionary from \(key.rawValue) to (\(value.description))"
        case .optional(let wrapped): "\(wrapped.description) or null"
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
                    guard case .scalar(let key) = first, let value = type(), take("]") else { return nil }
                    shape = .dictionary(key: key, value: value)
                } else {
                    guard take("]") else { return nil }
                    shape = .array(first)
                }
            } else {
                let name = Self.unqualified(identifier())
                if take("<") {
                    guard let first = type() else { return nil }
                    var arguments = [first]
                    while take(",") {
                        guard let next = type() else { return nil }
                        arguments.append(next)
                    }
                    guard take(">") else { return nil }
                    switch (name, arguments.count) {
                    case ("Array", 1), ("Set", 1): shape = .array(first)
                    case ("Optional", 1): shape = .optional(first)
                    case ("Dictionary", 2):
                        guard case .scalar(let key) = first else { return nil }
                        shape = .dictionary(key: key, value: arguments[1])
                    default: return nil
                    }
                } else {
                    shape = Scalar(rawValue: name).map { .scalar($0) }
                }
            }
            while let current = shape, take("?") { shape = .optional(current) }
            return shape
        }

        private static func unqualified(_ name: String) -> String {
            for module in ["Foundation.", "Swift."] where name.hasPrefix(module) {
                return String(name.dropFirst(module.count))
            }
            return name
        }

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

/// The generic types a ``JSONShape`` builds from its parts' types, and the decoding with them.
extension Decodable {
    fileprivate static func decodeJSON(_ data: Data) throws { _ = try JSONDecoder().decode(Self.self, from: data) }
    fileprivate static var arrayType: any Decodable.Type { [Self].self }
    fileprivate static var optionalType: any Decodable.Type { Self?.self }
    fileprivate static func dictionaryType(keyedBy key: any (Decodable & Hashable).Type) -> any Decodable.Type {
        key.dictionaryType(of: Self.self)
    }
}

extension Decodable where Self: Hashable {
    fileprivate static func dictionaryType<Value: Decodable>(of _: Value.Type) -> any Decodable.Type {
        [Self: Value].self
    }
}
