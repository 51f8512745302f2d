import CSQLite
import Foundation

/// Registers `mw_decodes(kind, value)`: 1 when the runtime's own decoding (``ColumnValue``'s
/// `init(sqlValue:)`, which records call) reads `value` as the stored type `kind`, else 0. A
/// migration's check of stored values asks it for every column (see `StoredValues`), so "the
/// check passes" and "every row decodes" follow from one set of rules.
enum DecodingFunction {
    /// The stored types the runtime decodes, one per decoding rule: each built-in type's
    /// (``ScalarType/decodes``), and JSON for a `Codable` value.
    struct Kind: Hashable, CustomStringConvertible {
        /// The rule's number in `mw_decodes(kind, value)`: a position in ``ScalarType/all``, or
        /// the count of built-in types for JSON.
        let rawValue: Int32

        /// The rule for `mw_decodes`'s first argument; `nil` for a number that names none.
        init?(rawValue: Int32) {
            guard rawValue >= 0, Int(rawValue) <= ScalarType.all.count else { return nil }
            self.rawValue = rawValue
        }

        private init(_ scalar: ScalarType) {
            self.rawValue = Int32(ScalarType.all.firstIndex(of: scalar) ?? 0)
        }

        /// A `Codable` value: JSON text.
        static let json = Kind(rawValue: Int32(ScalarType.all.count)) ?? Kind(.string)

        /// Every rule.
        static let allCases: [Kind] = ScalarType.all.map(Kind.init) + [json]

        /// The built-in type whose rule this is; `nil` for JSON.
        var scalar: ScalarType? { Int(rawValue) < ScalarType.all.count ? ScalarType.all[Int(rawValue)] : nil }

        /// The type's name, or `json`.
        var description: String { scalar?.name ?? "json" }

        /// The rule a column of `type` is read by; `nil` is a to-one relationship's column (a
        /// `RecordID`: 16 bytes, as a `UUID`).
        init(_ type: AttributeType?) {
            switch type?.kind {
            case nil: self.init(.uuid)
            case .scalar(let scalar)?: self.init(scalar)
            // A composite is stored field by field; its own type never reaches a column.
            case .composite?: self.init(.string)
            case .codable?: self = .json
            case .enumeration(let description)?: self.init(description.rawType == .int ? .int64 : .string)
            }
        }

        /// The same test as ``decodes(_:)`` written in SQL over the non-NULL `column`, for the kinds
        /// whose rule is only a storage class, a range or a length (``ScalarType/valueCheck``): a
        /// scan of a large table then calls no function per value. `nil` for the kinds the runtime
        /// parses (the check calls `mw_decodes`). `DecodingRuleTests` holds the two forms to each
        /// other over every storage class.
        func sql(_ column: String) -> String? {
            guard let scalar else { return nil }
            let storedClass: String
            switch scalar.storageClass {
            case .integer: storedClass = "typeof(\(column)) = 'integer'"
            case .real: storedClass = "typeof(\(column)) IN ('real', 'integer')"
            case .text: storedClass = "typeof(\(column)) = 'text'"
            case .blob: storedClass = "typeof(\(column)) = 'blob'"
            case .null: storedClass = "typeof(\(column)) = 'null'"
            }
            switch scalar.valueCheck {
            case .parsed: return nil
            case .byteCount(let count): return storedClass + " AND length(\(column)) = \(count)"
            case .storageClass:
                guard let range = scalar.integerRange, range != Int64.min...Int64.max else { return storedClass }
                return storedClass + " AND \(column) BETWEEN \(range.lowerBound) AND \(range.upperBound)"
            }
        }

        /// The test of a non-NULL `column`: the SQL form where there is one, else `mw_decodes`.
        func test(_ column: String) -> String {
            sql(column) ?? "mw_decodes(\(rawValue), \(column)) = 1"
        }

        /// Whether the runtime reads `value` (not NULL) as this kind.
        func decodes(_ value: SQLValue) -> Bool {
            scalar?.decodes(value) ?? RowDecoder.isJSON(value)
        }
    }

    static func register(on connection: SQLiteConnection) throws {
        try connection.register(function: "mw_decodes", arguments: 2) { context, _, arguments in
            guard let arguments, let kind = DecodingFunction.Kind(rawValue: sqlite3_value_int(arguments[0])) else {
                sqlite3_result_int(context, 0)
                return
            }
            sqlite3_result_int(context, kind.decodes(DecodingFunction.value(arguments[1])) ? 1 : 0)
        }
    }

    /// An SQL function's argument as the value a column read gives.
    private static func value(_ value: OpaquePointer?) -> SQLValue {
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: return .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT: return .real(sqlite3_value_double(value))
        case SQLITE_TEXT: return .text(StringFunctions.text(value))
        case SQLITE_BLOB:
            let count = Int(sqlite3_value_bytes(value))
            guard count > 0, let bytes = sqlite3_value_blob(value) else { return .blob(Data()) }
            return .blob(Data(bytes: bytes, count: count))
        default: return .null
        }
    }
}
