import Foundation

/// A Transformable value Core Data stored as an `NSKeyedArchiver` archive (its default and
/// `NSSecureUnarchiveFromData` transformers), turned into the JSON a `Codable<T>` attribute keeps:
/// the text `JSONEncoder` writes for the same Swift value, so the record reads it as if the app
/// had saved it.
///
/// Only the standard types `import-coredata` maps to `Codable<T>` are read (strings, numbers,
/// dates, UUIDs, URLs, data, decimals, and arrays, sets, string-keyed dictionaries and optionals
/// of them), with secure coding and exactly those classes allowed.
indirect enum CoreDataArchivedValue: Encodable {
    case null
    case string(String)
    case integer(Int64)
    case bool(Bool)
    case double(Double)
    case date(Date)
    case uuid(UUID)
    case url(URL)
    case data(Data)
    case decimal(Decimal)
    case array([CoreDataArchivedValue])
    case dictionary([String: CoreDataArchivedValue])

    /// The JSON text of `archive` as a value of the Swift type spelt `typeName`.
    static func json(of archive: Data, typeName: String) throws -> String {
        try CoreDataPropertyListBound.check(archive)
        guard archive.starts(with: Array("bplist00".utf8)),
            let plist = try? PropertyListSerialization.propertyList(from: archive, options: [], format: nil)
                as? [String: Any],
            plist["$archiver"] as? String == "NSKeyedArchiver"
        else {
            throw CoreDataValueError(reason: "it is not a keyed archive (was it written by a custom transformer?)")
        }
        guard let type = ArchivedType(typeName) else {
            throw CoreDataValueError(reason: "values of type '\(typeName)' are not read from a keyed archive")
        }
        let classes: [AnyClass] = [
            NSArray.self, NSDictionary.self, NSSet.self, NSString.self, NSNumber.self, NSDate.self, NSData.self,
            NSUUID.self, NSURL.self, NSDecimalNumber.self, NSNull.self,
        ]
        let object: Any?
        do {
            object = try NSKeyedUnarchiver.unarchivedObject(ofClasses: classes, from: archive)
        } catch {
            throw CoreDataValueError(reason: "its keyed archive cannot be read: \(error.localizedDescription)")
        }
        let value = try convert(object, to: type)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    private static func convert(_ object: Any?, to type: ArchivedType) throws -> CoreDataArchivedValue {
        func mismatch() -> Error {
            CoreDataValueError(
                reason: "its archive holds \(object.map { "\(Swift.type(of: $0))" } ?? "nil"), not \(type)")
        }
        guard let object, !(object is NSNull) else {
            if case .optional = type { return .null }
            throw mismatch()
        }
        switch type {
        case .optional(let wrapped):
            return try convert(object, to: wrapped)
        case .scalar(let name):
            switch name {
            case "String":
                guard let string = object as? String else { throw mismatch() }
                return .string(string)
            case "Bool":
                guard let number = object as? NSNumber else { throw mismatch() }
                return .bool(number.boolValue)
            case "Double", "Float":
                guard let number = object as? NSNumber else { throw mismatch() }
                return .double(number.doubleValue)
            case "Date":
                guard let date = object as? Date else { throw mismatch() }
                return .date(date)
            case "UUID":
                if let uuid = object as? UUID { return .uuid(uuid) }
                guard let uuid = object as? NSUUID else { throw mismatch() }
                return .uuid(uuid as UUID)
            case "URL":
                if let url = object as? URL { return .url(url) }
                guard let url = object as? NSURL, let absolute = url.absoluteURL else { throw mismatch() }
                return .url(absolute)
            case "Data":
                guard let data = object as? Data else { throw mismatch() }
                return .data(data)
            case "Decimal":
                if let decimal = object as? NSDecimalNumber { return .decimal(decimal.decimalValue) }
                guard let number = object as? NSNumber, let decimal = Decimal(string: number.stringValue) else {
                    throw mismatch()
                }
                return .decimal(decimal)
            default:
                // Integer types: the value must fit the type's range.
                guard let number = object as? NSNumber, let range = integerRanges[name] else { throw mismatch() }
                let value = number.int64Value
                guard range.contains(value), Double(value) == number.doubleValue else { throw mismatch() }
                return .integer(value)
            }
        case .array(let element), .set(let element):
            let items: [Any]
            if let array = object as? [Any] {
                items = array
            } else if let set = object as? NSSet {
                items = set.allObjects
            } else {
                throw mismatch()
            }
            var values = try items.map { try convert($0, to: element) }
            if case .set = type {
                // A set's order means nothing; sorted by JSON text, the same set gives the same text.
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                let texts = try values.map { try encoder.encode($0) }
                values = zip(texts, values).sorted { $0.0.lexicographicallyPrecedes($1.0) }.map(\.1)
            }
            return .array(values)
        case .dictionary(let valueType):
            guard let dictionary = object as? [String: Any] else { throw mismatch() }
            return .dictionary(try dictionary.mapValues { try convert($0, to: valueType) })
        }
    }

    private static let integerRanges: [String: ClosedRange<Int64>] = [
        "Int": Int64.min...Int64.max, "Int64": Int64.min...Int64.max,
        "Int32": Int64(Int32.min)...Int64(Int32.max), "Int16": Int64(Int16.min)...Int64(Int16.max),
        "Int8": Int64(Int8.min)...Int64(Int8.max), "UInt8": 0...Int64(UInt8.max), "UInt16": 0...Int64(UInt16.max),
        "UInt32": 0...Int64(UInt32.max), "UInt": 0...Int64.max, "UInt64": 0...Int64.max,
    ]

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .array(let values):
            var container = encoder.unkeyedContainer()
            for value in values { try container.encode(value) }
        case .dictionary(let values):
            try values.encode(to: encoder)
        default:
            var container = encoder.singleValueContainer()
            switch self {
            case .null: try container.encodeNil()
            case .string(let value): try container.encode(value)
            case .integer(let value): try container.encode(value)
            case .bool(let value): try container.encode(value)
            case .double(let value): try container.encode(value)
            case .date(let value): try container.encode(value)
            case .uuid(let value): try container.encode(value)
            case .url(let value): try container.encode(value)
            case .data(let value): try container.encode(value)
            case .decimal(let value): try container.encode(value)
            case .array, .dictionary: break
            }
        }
    }
}

/// The type a `Codable<T>` attribute names, as `import-coredata` spells it (`[String]`,
/// `[String: Date]`, `Set<UUID>`, `Int64?`).
private indirect enum ArchivedType: CustomStringConvertible {
    case scalar(String)
    case optional(ArchivedType)
    case array(ArchivedType)
    case set(ArchivedType)
    case dictionary(ArchivedType)

    init?(_ text: String) {
        var scalars = Substring(text.filter { !$0.isWhitespace })
        guard let type = Self.parse(&scalars, depth: 0), scalars.isEmpty else { return nil }
        self = type
    }

    private static func parse(_ text: inout Substring, depth: Int) -> ArchivedType? {
        guard depth < 16 else { return nil }
        var type: ArchivedType
        if text.hasPrefix("[") {
            text = text.dropFirst()
            guard let first = parse(&text, depth: depth + 1) else { return nil }
            if text.hasPrefix(":") {
                text = text.dropFirst()
                guard case .scalar("String") = first, let value = parse(&text, depth: depth + 1) else { return nil }
                type = .dictionary(value)
            } else {
                type = .array(first)
            }
            guard text.hasPrefix("]") else { return nil }
            text = text.dropFirst()
        } else if text.hasPrefix("Set<") {
            text = text.dropFirst(4)
            guard let element = parse(&text, depth: depth + 1), text.hasPrefix(">") else { return nil }
            text = text.dropFirst()
            type = .set(element)
        } else {
            let name = text.prefix { $0.isLetter || $0.isNumber }
            guard !name.isEmpty else { return nil }
            text = text.dropFirst(name.count)
            type = .scalar(String(name))
        }
        while text.hasPrefix("?") {
            text = text.dropFirst()
            type = .optional(type)
        }
        return type
    }

    var description: String {
        switch self {
        case .scalar(let name): name
        case .optional(let wrapped): "\(wrapped)?"
        case .array(let element): "[\(element)]"
        case .set(let element): "Set<\(element)>"
        case .dictionary(let value): "[String: \(value)]"
        }
    }
}
