import CSQLite
import Foundation

/// Registers `mw_decodes(kind, value)`: 1 when the runtime's own decoding (``ColumnValue``'s
/// `init(sqlValue:)`, which records call) reads `value` as the stored type `kind`, else 0. A
/// migration's check of stored values asks it for every column (see `StoredValues`), so "the
/// check passes" and "every row decodes" follow from one set of rules.
enum DecodingFunction {
    /// The stored types the runtime decodes, one per decoding rule.
    enum Kind: Int32, CaseIterable {
        case decimal = 0
        case url = 1
        case bool = 2
        case int16 = 3
        case int32 = 4
        case int64 = 5
        /// `Double`, `Float` and `Date`, which all read a real or an integer.
        case double = 6
        case string = 7
        case data = 8
        /// `UUID` and a to-one relationship's `RecordID`: 16 bytes.
        case uuid = 9
        /// A `Codable` value: JSON text.
        case json = 10

        /// The rule a column of `type` is read by; `nil` is a to-one relationship's column.
        init(_ type: AttributeType?) {
            switch type {
            case nil, .uuid?: self = .uuid
            case .bool?: self = .bool
            case .int16?: self = .int16
            case .int32?: self = .int32
            case .int64?, .int?: self = .int64
            case .double?, .float?, .date?: self = .double
            case .decimal?: self = .decimal
            // A composite is stored field by field; its own type never reaches a column.
            case .string?, .composite?: self = .string
            case .url?: self = .url
            case .data?: self = .data
            case .codable?: self = .json
            case .enumeration(let description)?: self = description.rawType == .int ? .int64 : .string
            }
        }

        /// The same test as ``decodes(_:)`` written in SQL over the non-NULL `column`, for the kinds
        /// whose rule is only a storage class and a range: a scan of a large table then calls no
        /// function per value. `nil` for the kinds the runtime parses (the check calls `mw_decodes`).
        /// `DecodingRuleTests` holds the two forms to each other over every storage class.
        func sql(_ column: String) -> String? {
            switch self {
            case .bool: "typeof(\(column)) = 'integer' AND \(column) IN (0, 1)"
            case .int16: "typeof(\(column)) = 'integer' AND \(column) BETWEEN -32768 AND 32767"
            case .int32: "typeof(\(column)) = 'integer' AND \(column) BETWEEN -2147483648 AND 2147483647"
            case .int64: "typeof(\(column)) = 'integer'"
            case .double: "typeof(\(column)) IN ('real', 'integer')"
            case .string: "typeof(\(column)) = 'text'"
            case .data: "typeof(\(column)) = 'blob'"
            case .uuid: "typeof(\(column)) = 'blob' AND length(\(column)) = 16"
            case .decimal, .url, .json: nil
            }
        }

        /// The test of a non-NULL `column`: the SQL form where there is one, else `mw_decodes`.
        func test(_ column: String) -> String {
            sql(column) ?? "mw_decodes(\(rawValue), \(column)) = 1"
        }

        /// Whether the runtime reads `value` (not NULL) as this kind.
        func decodes(_ value: SQLValue) -> Bool {
            switch self {
            case .decimal: (try? Decimal(sqlValue: value)) != nil
            case .url: (try? URL(sqlValue: value)) != nil
            case .bool: (try? Bool(sqlValue: value)) != nil
            case .int16: (try? Int16(sqlValue: value)) != nil
            case .int32: (try? Int32(sqlValue: value)) != nil
            case .int64: (try? Int64(sqlValue: value)) != nil
            case .double: (try? Double(sqlValue: value)) != nil
            case .string: (try? String(sqlValue: value)) != nil
            case .data: (try? Data(sqlValue: value)) != nil
            case .uuid: (try? UUID(sqlValue: value)) != nil
            case .json: RowDecoder.isJSON(value)
            }
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
