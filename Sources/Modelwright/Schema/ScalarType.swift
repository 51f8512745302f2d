import Foundation

/// A built-in attribute type that one column stores as one value (`Int16`, `String`, `Day`, …),
/// described once: how the store keeps it, how Swift, the schema language, the archive and Core
/// Data spell it, which literals it takes, how it is read, synthesised and converted.
///
/// Every rule about a built-in type reads this table (``ScalarType/all``) instead of switching
/// over the types, so a new type is one entry here, its case in ``AttributeType`` and its Swift
/// value's ``ColumnValue`` conformance (see "Adding an attribute type" in the contributors' guide).
package struct ScalarType: Sendable, Hashable, CustomStringConvertible {
    /// The type's token in the schema archive and the checksum, and the name of its case in
    /// ``AttributeType`` (`int16`); never changes once shipped, as stores carry it.
    package let name: String
    /// How the schema language spells it (`Int16`).
    package let schemaSpelling: String
    /// Its Swift type in generated code (`Int16`).
    package let swiftType: String
    /// The type with its article, for messages (`an Int16`, `Data`).
    package let phrase: String
    /// What the store keeps a value as, for the value check: the same ``StorageClass`` the row
    /// decoder checks a result column against (never `.null`).
    package let storageClass: StorageClass
    /// What a column of the type stores; each engine's ``SQLDialect`` declares it with its own
    /// column type.
    package let columnStorage: ColumnStorage
    /// The stored integers a value may be, for the types stored as integers.
    package let integerRange: ClosedRange<Int64>?
    /// What a number of this type is, for the conversion rule; `nil` when it is not a number.
    package let number: NumberKind?
    /// Whether numbers converted to this type become their text (`String`, `Decimal`).
    package let takesNumbersAsText: Bool
    /// Which literals a default value (or a request's constant) of the type may be.
    package let literal: LiteralRule
    /// Whether requests may order values of the type (`<`, `BETWEEN`).
    package let isOrdered: Bool
    /// How the type appears in a Core Data model.
    package let coreData: CoreDataType
    /// The Swift type records hold a value in; its ``ColumnValue`` conformance is the type's row coding.
    package let valueType: any ColumnValue.Type
    /// Whether the runtime's decoding (`init(sqlValue:)` of the Swift type) reads a non-NULL
    /// stored value as this type.
    package let decodes: @Sendable (SQLValue) -> Bool
    /// What ``decodes`` asks of a stored value, as far as a storage engine can test it without
    /// calling back into Swift.
    package let valueCheck: ValueCheck
    /// A stored value for synthetic rows (migration checks): `number` distinguishes rows, `extreme`
    /// asks for a value at the edge of the type, `stub` for a value that no ordinary row holds.
    package let synthetic: @Sendable (_ number: Int, _ extreme: Bool, _ tag: String, _ stub: Bool) -> SQLValue
    /// A migration fixture's value as a column of this type stores it; `nil` when it is not one.
    package let fixture: @Sendable (FixtureValue) -> SQLValue?

    /// Equal when they name the same type.
    package static func == (lhs: ScalarType, rhs: ScalarType) -> Bool { lhs.name == rhs.name }

    /// Hashes the name.
    package func hash(into hasher: inout Hasher) { hasher.combine(name) }

    /// The name.
    package var description: String { name }

    /// Whether a value is an IEEE number kept bit for bit, `-0.0` included (`Double`, `Float`),
    /// rather than a real number where `-0.0` and `0` may be one value (a `Date`'s seconds).
    package var keepsNegativeZero: Bool { columnStorage == .double || columnStorage == .float }

    /// Every built-in type, in the order the schema language documents them.
    package static let all: [ScalarType] = [
        .bool, .int16, .int32, .int64, .int, .double, .float, .decimal, .string, .date, .data, .uuid, .url, .day,
    ]

    /// The type by its ``name``.
    package static let byName: [String: ScalarType] = Dictionary(
        all.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })

    /// The type by its schema spelling.
    package static let bySchemaSpelling: [String: ScalarType] = Dictionary(
        all.map { ($0.schemaSpelling, $0) }, uniquingKeysWith: { first, _ in first })
}

extension ScalarType {
    /// What decoding asks of a stored value, in terms a storage engine can test in its own language.
    package enum ValueCheck: Sendable, Equatable {
        /// Any value of the storage class (an integer within ``ScalarType/integerRange``; a real
        /// number, or an integer, for the real classes).
        case storageClass
        /// Bytes of exactly this many.
        case byteCount(Int)
        /// Only the runtime's parser can tell (decimal text, a URL, a day).
        case parsed
    }

    /// What a number is, for the conversion rule.
    package enum NumberKind: Sendable, Equatable {
        /// An integer of `bits` bits (`Bool` is one bit).
        case integer(bits: Int)
        /// A binary floating-point number of `bits` bits that holds every integer of up to
        /// `exactIntegerBits` bits exactly.
        case floatingPoint(bits: Int, exactIntegerBits: Int)
    }

    /// Which literals a default value or a request's constant of a type may be.
    package enum LiteralRule: Sendable {
        /// `true` or `false`.
        case bool
        /// An integer literal within ``ScalarType/integerRange``.
        case integer
        /// An integer or floating-point literal held as a `Float` (`isFloat`) or a `Double`.
        case floatingPoint(isFloat: Bool)
        /// An integer or floating-point literal held exactly.
        case decimal
        /// An ISO 8601 instant in a string, or `now`.
        case instant
        /// A string literal, checked and normalised by the rule.
        case text(TextLiteral)
        /// No literal: the type has no default.
        case none
    }
}

extension ScalarType.LiteralRule {
    /// The literal, in the schema language, to write instead of the bare word `word` (`no` for a
    /// `Bool`), so that a hint offers a value the type takes; `nil` when the type takes none.
    /// A word that reads as yes or no becomes `true` or `false`; a word a string type takes
    /// becomes that string; otherwise the type's plainest value.
    package func replacement(forWord word: String) -> String? {
        switch self {
        case .bool: ["yes", "y", "on", "true", "enabled", "set"].contains(word.lowercased()) ? "true" : "false"
        case .integer, .decimal: "0"
        case .floatingPoint: "0.0"
        case .instant: "now"
        case .text(let rule): "\"\(rule.parse(word) == nil ? rule.example : word)\""
        case .none: nil
        }
    }
}

extension ScalarType {
    /// The rule for a type whose literal is a string.
    package struct TextLiteral: Sendable {
        /// The value as stored in the default (normalised), or `nil` when the text is not one.
        package let parse: @Sendable (String) -> String?
        /// Why text that does not parse is wrong, and how to write it.
        package let problem: @Sendable (String) -> (message: String, hint: String)
        /// A text that parses, for hints that must offer a value the type takes.
        package let example: String
        /// The Swift expression of a value, given the text as an escaped Swift string literal.
        package let swiftExpression: @Sendable (_ stringLiteral: String) -> String
    }

    /// How a type appears in a Core Data model.
    package struct CoreDataType: Sendable {
        /// The attribute type Core Data names (`Integer 16`), which export writes.
        package let name: String
        /// Core Data's "use scalar type" flag, when the type has one.
        package let usesScalarValueType: Bool?
        /// Whether importing an attribute of Core Data type ``name`` gives this type (`Int` and
        /// `Day` export as `Integer 64` and `String` but do not come back as themselves).
        package let imports: Bool
    }
}

extension AttributeType {
    /// What an attribute type is, with every built-in type as its table entry: a switch over it
    /// handles the built-in types once, through ``ScalarType``, and the compiler still lists every
    /// switch when a new kind of type (not a new built-in type) is added.
    package enum Kind: Sendable {
        /// A built-in type.
        case scalar(ScalarType)
        /// An enum.
        case enumeration(EnumDescription)
        /// A composite.
        case composite(CompositeDescription)
        /// An app-defined `Codable` type, by its Swift name.
        case codable(typeName: String)
    }

    /// What the type is.
    package var kind: Kind {
        switch self {
        case .enumeration(let description): .enumeration(description)
        case .composite(let description): .composite(description)
        case .codable(let typeName): .codable(typeName: typeName)
        default: .scalar(scalar ?? .string)
        }
    }

    /// The built-in type's description; `nil` for an enum, a composite or a `Codable` type.
    package var scalar: ScalarType? {
        switch self {
        case .bool: .bool
        case .int16: .int16
        case .int32: .int32
        case .int64: .int64
        case .int: .int
        case .double: .double
        case .float: .float
        case .decimal: .decimal
        case .string: .string
        case .date: .date
        case .data: .data
        case .uuid: .uuid
        case .url: .url
        case .day: .day
        case .enumeration, .composite, .codable: nil
        }
    }

    /// The attribute type of a built-in type.
    package init(_ scalar: ScalarType) {
        self = Self.byScalarName[scalar.name] ?? .string
    }

    private static let byScalarName: [String: AttributeType] = [
        "bool": .bool, "int16": .int16, "int32": .int32, "int64": .int64, "int": .int, "double": .double,
        "float": .float, "decimal": .decimal, "string": .string, "date": .date, "data": .data, "uuid": .uuid,
        "url": .url, "day": .day,
    ]
}

// MARK: - The table

extension ScalarType {
    private static func integer<Value: FixedWidthInteger & ColumnValue>(
        _ type: Value.Type, held valueType: any ColumnValue.Type = Value.self, name: String, spelling: String,
        phrase: String, coreData: CoreDataType
    ) -> ScalarType {
        let range = Int64(Value.min)...Int64(Value.max)
        return ScalarType(
            name: name, schemaSpelling: spelling, swiftType: spelling, phrase: phrase, storageClass: .integer,
            columnStorage: Value.bitWidth <= 16 ? .integer16 : Value.bitWidth <= 32 ? .integer32 : .integer64,
            integerRange: range, number: .integer(bits: Value.bitWidth), takesNumbersAsText: false, literal: .integer,
            isOrdered: true, coreData: coreData, valueType: valueType, decodes: { (try? Value(sqlValue: $0)) != nil },
            valueCheck: .storageClass,
            synthetic: { number, extreme, _, _ in
                .integer(extreme ? range.lowerBound + Int64(number) : range.upperBound - Int64(number))
            },
            fixture: { value in
                guard case .integer(let integer) = value, range.contains(integer) else { return nil }
                return .integer(integer)
            })
    }

    /// The bytes of a synthetic ID: `number` in the first eight, `row` in the last.
    package static func syntheticID(_ number: Int, _ row: Int) -> SQLValue {
        var bytes = [UInt8](repeating: 0, count: 16)
        withUnsafeBytes(of: UInt64(number).bigEndian) { bytes.replaceSubrange(0..<8, with: $0) }
        bytes[15] = UInt8(truncatingIfNeeded: row)
        return .blob(Data(bytes))
    }

    /// A string of characters that SQL, Swift and JSON each escape.
    private static let awkwardText = "\u{600}'\"\r\n\u{2028}"

    /// `Bool`: the integers 0 and 1.
    package static let bool = ScalarType(
        name: "bool", schemaSpelling: "Bool", swiftType: "Bool", phrase: "a Bool", storageClass: .integer,
        columnStorage: .boolean,
        integerRange: 0...1, number: .integer(bits: 1), takesNumbersAsText: false, literal: .bool, isOrdered: false,
        coreData: CoreDataType(name: "Boolean", usesScalarValueType: true, imports: true),
        valueType: Bool.self,
        decodes: { (try? Bool(sqlValue: $0)) != nil }, valueCheck: .storageClass,
        synthetic: { _, extreme, _, _ in .integer(extreme ? 1 : 0) },
        fixture: { value in
            guard case .bool(let flag) = value else { return nil }
            return .integer(flag ? 1 : 0)
        })

    /// `Int16`.
    package static let int16 = integer(
        Int16.self, name: "int16", spelling: "Int16", phrase: "an Int16",
        coreData: CoreDataType(name: "Integer 16", usesScalarValueType: true, imports: true))

    /// `Int32`.
    package static let int32 = integer(
        Int32.self, name: "int32", spelling: "Int32", phrase: "an Int32",
        coreData: CoreDataType(name: "Integer 32", usesScalarValueType: true, imports: true))

    /// `Int64`.
    package static let int64 = integer(
        Int64.self, name: "int64", spelling: "Int64", phrase: "an Int64",
        coreData: CoreDataType(name: "Integer 64", usesScalarValueType: true, imports: true))

    /// `Int`: 64 bits in the store on every platform (so it reads as `Int64`).
    package static let int = integer(
        Int64.self, held: Int.self, name: "int", spelling: "Int", phrase: "an Int",
        coreData: CoreDataType(name: "Integer 64", usesScalarValueType: true, imports: false))

    /// `Double`: an IEEE double kept bit for bit.
    package static let double = ScalarType(
        name: "double", schemaSpelling: "Double", swiftType: "Double", phrase: "a Double", storageClass: .real,
        columnStorage: .double,
        integerRange: nil, number: .floatingPoint(bits: 64, exactIntegerBits: 32), takesNumbersAsText: false,
        literal: .floatingPoint(isFloat: false), isOrdered: true,
        coreData: CoreDataType(name: "Double", usesScalarValueType: true, imports: true),
        valueType: Double.self,
        decodes: { (try? Double(sqlValue: $0)) != nil }, valueCheck: .storageClass,
        synthetic: { number, extreme, _, stub in
            stub
                ? .real(extreme ? -3.0e38 - Double(number) : Double(number) + (number % 2 == 0 ? 0 : 0.5))
                : .real(extreme ? -3.0e38 + Double(number) : 1.5 + Double(number))
        },
        fixture: { value in
            switch value {
            case .integer(let integer): .real(Double(integer))
            case .double(let number): .real(number)
            default: nil
            }
        })

    /// `Float`: stored as the double it converts to exactly.
    package static let float = ScalarType(
        name: "float", schemaSpelling: "Float", swiftType: "Float", phrase: "a Float", storageClass: .real,
        columnStorage: .float,
        integerRange: nil, number: .floatingPoint(bits: 32, exactIntegerBits: 16), takesNumbersAsText: false,
        literal: .floatingPoint(isFloat: true), isOrdered: true,
        coreData: CoreDataType(name: "Float", usesScalarValueType: true, imports: true),
        valueType: Float.self,
        decodes: { (try? Double(sqlValue: $0)) != nil }, valueCheck: .storageClass,
        synthetic: { number, extreme, _, stub in
            // A value a `Float` holds exactly, as every `Float` the app stores is (a stub's too).
            .real(
                Double(
                    Float(
                        stub
                            ? (extreme ? -3.0e38 - Double(number) : Double(number) + (number % 2 == 0 ? 0 : 0.5))
                            : (extreme ? -3.0e38 + Double(number) : 1.5 + Double(number)))))
        },
        fixture: { value in
            switch value {
            case .integer(let integer): .real(Double(integer))
            case .double(let number): Float(exactly: number).map { _ in .real(number) }
            default: nil
            }
        })

    /// `Decimal`: its exact text, never through `Double`.
    package static let decimal = ScalarType(
        name: "decimal", schemaSpelling: "Decimal", swiftType: "Decimal", phrase: "a Decimal", storageClass: .text,
        columnStorage: .decimal,
        integerRange: nil, number: nil, takesNumbersAsText: true, literal: .decimal, isOrdered: true,
        coreData: CoreDataType(name: "Decimal", usesScalarValueType: nil, imports: true),
        valueType: Decimal.self,
        decodes: { (try? Decimal(sqlValue: $0)) != nil }, valueCheck: .parsed,
        synthetic: { number, extreme, _, stub in
            // Written as `Decimal` writes it: no trailing zero.
            .text(
                extreme
                    ? "-12345678901234567890123456789.\(number)1" : stub ? "\(number).25" : "\(number).5")
        },
        fixture: { value in
            switch value {
            case .decimal(let decimal): decimal.isNaN ? nil : .text(decimal.description)
            case .integer(let integer): .text(String(integer))
            case .double(let number): number.isFinite ? .text(Decimal(number).description) : nil
            default: nil
            }
        })

    /// `String`.
    package static let string = ScalarType(
        name: "string", schemaSpelling: "String", swiftType: "String", phrase: "a String", storageClass: .text,
        columnStorage: .text,
        integerRange: nil, number: nil, takesNumbersAsText: true,
        literal: .text(
            TextLiteral(
                parse: { $0 }, problem: { _ in ("", "") }, example: "", swiftExpression: { $0 })),
        isOrdered: true, coreData: CoreDataType(name: "String", usesScalarValueType: nil, imports: true),
        valueType: String.self,
        decodes: { (try? String(sqlValue: $0)) != nil }, valueCheck: .storageClass,
        synthetic: { _, extreme, tag, stub in
            .text(extreme ? awkwardText + (stub ? "007 " : "") + tag : tag)
        },
        fixture: { value in
            guard case .string(let text) = value else { return nil }
            return .text(text)
        })

    /// `Date`: seconds since 2001-01-01 as a double, exactly how `Date` holds its value.
    package static let date = ScalarType(
        name: "date", schemaSpelling: "Date", swiftType: "Date", phrase: "a Date", storageClass: .real,
        columnStorage: .timestamp,
        integerRange: nil, number: nil, takesNumbersAsText: false, literal: .instant, isOrdered: true,
        coreData: CoreDataType(name: "Date", usesScalarValueType: false, imports: true),
        valueType: Date.self,
        decodes: { (try? Double(sqlValue: $0)) != nil }, valueCheck: .storageClass,
        synthetic: { number, extreme, _, _ in .real(extreme ? -1.0e9 - Double(number) : 1.0e9 + Double(number)) },
        fixture: { value in
            guard case .date(let date) = value else { return nil }
            return .real(date.timeIntervalSinceReferenceDate)
        })

    /// `Data`: the bytes.
    package static let data = ScalarType(
        name: "data", schemaSpelling: "Data", swiftType: "Data", phrase: "Data", storageClass: .blob,
        columnStorage: .bytes,
        integerRange: nil, number: nil, takesNumbersAsText: false, literal: .none, isOrdered: false,
        coreData: CoreDataType(name: "Binary", usesScalarValueType: nil, imports: true),
        valueType: Data.self,
        decodes: { (try? Data(sqlValue: $0)) != nil }, valueCheck: .storageClass,
        synthetic: { _, _, tag, _ in .blob(Data(tag.utf8)) },
        fixture: { value in
            guard case .data(let bytes) = value else { return nil }
            return .blob(bytes)
        })

    /// `UUID`: 16 bytes.
    package static let uuid = ScalarType(
        name: "uuid", schemaSpelling: "UUID", swiftType: "UUID", phrase: "a UUID", storageClass: .blob,
        columnStorage: .uuid,
        integerRange: nil, number: nil, takesNumbersAsText: false,
        literal: .text(
            TextLiteral(
                parse: { UUID(uuidString: $0) == nil ? nil : $0 },
                problem: { ("\"\($0)\" is not a UUID", "write it as \"E621E1F8-C36C-495A-93FC-0C247A3E6E5F\"") },
                example: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F",
                swiftExpression: { "UUID(uuidString: \($0))!" })),
        isOrdered: false, coreData: CoreDataType(name: "UUID", usesScalarValueType: false, imports: true),
        valueType: UUID.self,
        decodes: { (try? UUID(sqlValue: $0)) != nil }, valueCheck: .byteCount(16),
        synthetic: { number, extreme, _, stub in
            stub ? syntheticID(1_000_000 + number, 0) : syntheticID(number, extreme ? 2 : 3)
        },
        fixture: { value in
            guard case .uuid(let uuid) = value else { return nil }
            return .blob(withUnsafeBytes(of: uuid.uuid) { Data($0) })
        })

    /// `URL`: its absolute text.
    package static let url = ScalarType(
        name: "url", schemaSpelling: "URL", swiftType: "URL", phrase: "a URL", storageClass: .text,
        columnStorage: .text,
        integerRange: nil, number: nil, takesNumbersAsText: false,
        literal: .text(
            TextLiteral(
                parse: { text in URL(string: text).flatMap { $0.scheme == nil ? nil : $0.absoluteString } },
                problem: { ("\"\($0)\" is not an absolute URL", "include a scheme, as in \"https://example.com\"") },
                example: "https://example.com",
                swiftExpression: { "URL(string: \($0))!" })),
        isOrdered: false, coreData: CoreDataType(name: "URI", usesScalarValueType: nil, imports: true),
        valueType: URL.self,
        decodes: { (try? URL(sqlValue: $0)) != nil }, valueCheck: .parsed,
        synthetic: { number, _, tag, stub in
            .text(stub ? "https://example.com/stub/\(number)" : "https://example.com/\(tag)")
        },
        fixture: { value in
            guard case .url(let url) = value else { return nil }
            return .text(url.absoluteString)
        })

    /// `Day`: a calendar day without a time, stored as its ISO 8601 text (`2024-05-01`), which
    /// sorts as the days do and which SQLite's date functions read. Core Data has no such type:
    /// it exports as a `String` and imports back as one.
    package static let day = ScalarType(
        name: "day", schemaSpelling: "Day", swiftType: "Day", phrase: "a Day", storageClass: .text,
        columnStorage: .text,
        integerRange: nil, number: nil, takesNumbersAsText: false,
        literal: .text(
            TextLiteral(
                parse: { Day($0)?.description },
                problem: { ("\"\($0)\" is not a day", "write it as \"2024-05-01\" (year, month, day)") },
                example: "2024-05-01",
                swiftExpression: { "Day(\($0))!" })),
        isOrdered: true, coreData: CoreDataType(name: "String", usesScalarValueType: nil, imports: false),
        valueType: Day.self,
        decodes: { (try? Day(sqlValue: $0)) != nil }, valueCheck: .parsed,
        synthetic: { number, extreme, _, stub in
            let first = Day(year: 1, month: 1, day: 1)?.daysSince1970 ?? 0
            let last = Day(year: 9999, month: 12, day: 31)?.daysSince1970 ?? 0
            let days = stub ? 20_000 + number : extreme ? first + number : last - number
            return .text(Day(daysSince1970: days).description)
        },
        fixture: { value in
            switch value {
            case .string(let text): Day(text).map { .text($0.description) }
            case .date(let date): .text(Day(date).description)
            default: nil
            }
        })
}
