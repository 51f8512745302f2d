import Foundation
@_spi(Generated) import Modelwright

/// The type map: how each attribute type's value, in the runtime's currency (``SQLValue``, what
/// records encode to and decode from), is stored in PostgreSQL, and read back.
///
/// | Attribute type | Column | Exactness |
/// |---|---|---|
/// | `Bool` | `boolean` | exact |
/// | `Int16`, `Int32`, `Int64`/`Int` | `smallint`, `integer`, `bigint` | exact |
/// | `Double`, `Float` | `double precision`, `real` | exact, -0.0 and infinities included |
/// | `Decimal` | `numeric` | exact (SQLite keeps it as text) |
/// | `String`, `URL` | `text` | exact; text holding NUL is refused |
/// | `Date` | `timestamptz` | to the microsecond, halfway to even; ±infinity kept |
/// | `Data` | `bytea` | exact |
/// | `UUID`, record IDs | `uuid` | exact |
/// | `Codable` | `jsonb` | the same value; key order and spacing are PostgreSQL's, -0.0 becomes 0, U+0000 is refused |
/// | enums | their raw value's column | exact |
/// | composites | a column per field | as each field's type |
public enum PostgresTypeMap {
    /// The PostgreSQL column type of an attribute type; `nil` stands for a record ID.
    public static func columnType(of type: AttributeType?) -> String {
        PostgresDialect.columnType(of: type).rawValue
    }

    /// `value`, as a record encodes it for an attribute of `type` (`nil`: a record ID), as
    /// PostgreSQL stores it. Throws ``PostgresError/invalidValue(_:)`` for what PostgreSQL cannot
    /// hold exactly, saying what and why.
    public static func postgresValue(_ value: SQLValue, storedAs type: AttributeType?) throws -> PostgresValue {
        try postgresValue(value, column: PostgresDialect.columnType(of: type))
    }

    /// `value` as a value of the column type `column`: what a statement binds to a parameter
    /// whose type the server inferred (``PostgresStatement``) and a record's attribute alike.
    static func postgresValue(_ value: SQLValue, column: PostgresDialect.ColumnType) throws -> PostgresValue {
        if value == .null { return .null }
        switch (column, value) {
        case (.boolean, .integer(let integer)) where integer == 0 || integer == 1:
            return .bool(integer == 1)
        case (.smallint, .integer(let integer)):
            guard let exact = Int16(exactly: integer) else { throw outOfRange(integer, "smallint") }
            return .int16(exact)
        case (.integer, .integer(let integer)):
            guard let exact = Int32(exactly: integer) else { throw outOfRange(integer, "integer") }
            return .int32(exact)
        case (.bigint, .integer(let integer)):
            return .int64(integer)
        case (.doublePrecision, .real(let double)):
            return .double(double)
        case (.doublePrecision, .integer(let integer)):
            guard let exact = Double(exactly: integer) else { throw outOfRange(integer, "double precision") }
            return .double(exact)
        case (.real, .real(let double)):
            guard let exact = Float(exactly: double) else {
                throw PostgresError.invalidValue("\(double) is not a Float value; a real column holds Floats exactly")
            }
            return .float(exact)
        case (.numeric, .text(let text)):
            guard let decimal = try? Decimal(sqlValue: .text(text)), !decimal.isNaN else {
                throw PostgresError.invalidValue("'\(text)' is not a decimal number")
            }
            return .numeric(text)
        case (.text, .text(let text)):
            guard !text.utf8.contains(0) else {
                throw PostgresError.invalidValue(
                    "text holding a NUL byte (U+0000) cannot be stored in PostgreSQL, whose text type refuses it; "
                        + "store such values as Data")
            }
            return .text(text)
        case (.numeric, .integer(let integer)):
            return .numeric(String(integer))
        case (.numeric, .real(let double)) where double.isFinite:
            // A Double's shortest exact spelling, which numeric reads as that very value.
            return .numeric("\(double)")
        case (.real, .integer(let integer)):
            guard let exact = Float(exactly: integer) else { throw outOfRange(integer, "real") }
            return .float(exact)
        case (.timestamptz, .integer(let seconds)):
            return try postgresValue(.real(Double(seconds)), column: .timestamptz)
        case (.timestamptz, .real(let seconds)):
            do {
                return .timestamp(microsecondsSince2000: try PostgresDialect.microseconds(sinceReferenceDate: seconds))
            } catch let error as PostgresValueError {
                throw PostgresError.invalidValue(error.message)
            }
        case (.bytea, .blob(let data)):
            return .bytes(data)
        case (.uuid, .blob(let data)):
            return .uuid(try UUID(sqlValue: .blob(data)))
        case (.jsonb, .text(let json)):
            // jsonb refuses the escape \u0000 (22P05) and a raw NUL; PostgreSQL's json type would keep it.
            guard !json.utf8.contains(0), !Self.escapesNUL(json) else {
                throw PostgresError.invalidValue(
                    "JSON holding the character U+0000 cannot be stored in PostgreSQL's jsonb, which refuses it")
            }
            return .jsonb(json)
        case (let column, _):
            throw PostgresError.invalidValue("\(value) cannot be stored in a \(column.rawValue) column")
        }
    }

    /// A list the runtime binds as one argument (`SQLValueList`, a list test's values) for a
    /// parameter the server typed as an array of a column type (`CAST(? AS uuid[])`): each value
    /// converted as ``postgresValue(_:column:)`` converts a single one, in PostgreSQL's binary array
    /// format. `nil` when `oid` is no such array or `value` no such list. An array of `text` may
    /// hold any value whose text the server casts further (a decimal list's `numeric[]`).
    static func postgresArray(_ value: SQLValue, oid: UInt32) throws -> PostgresValue? {
        guard let element = arrayElements[oid], let values = SQLValueList.values(of: value) else { return nil }
        var bytes: [UInt8] = []
        func append(_ integer: Int32) { withUnsafeBytes(of: integer.bigEndian) { bytes += $0 } }
        append(values.isEmpty ? 0 : 1)  // dimensions
        append(values.contains(.null) ? 1 : 0)
        append(Int32(bitPattern: element.oid))
        if !values.isEmpty {
            append(Int32(values.count))
            append(1)  // lower bound
        }
        for (index, value) in values.enumerated() {
            let converted: PostgresValue
            do {
                converted = try postgresValue(value, column: element.column)
            } catch PostgresError.invalidValue(let reason) {
                throw PostgresError.invalidValue("value \(index + 1) of the list: \(reason)")
            }
            let (payload, isBinary) = try converted.parameter()
            guard isBinary else {
                throw PostgresError.invalidValue("a \(element.column.rawValue) list cannot be bound as an array")
            }
            guard let payload else {
                append(-1)
                continue
            }
            append(Int32(payload.count))
            bytes += payload
        }
        return .other(oid: oid, bytes: Data(bytes))
    }

    /// The array types a list binds as, by their object ID: each one's element column type and
    /// element object ID.
    private static let arrayElements: [UInt32: (column: PostgresDialect.ColumnType, oid: UInt32)] = [
        1_000: (.boolean, 16), 1_005: (.smallint, 21), 1_007: (.integer, 23), 1_016: (.bigint, 20),
        1_021: (.real, 700), 1_022: (.doublePrecision, 701), 1_009: (.text, 25), 1_185: (.timestamptz, 1_184),
        1_001: (.bytea, 17), 2_951: (.uuid, 2_950), 3_807: (.jsonb, 3_802),
    ]

    /// A stored PostgreSQL value as the runtime reads it for an attribute of `type` (`nil`: a
    /// record ID): what a record decodes. The inverse of ``postgresValue(_:storedAs:)``.
    public static func sqlValue(_ value: PostgresValue, storedAs type: AttributeType?) throws -> SQLValue {
        switch value {
        case .null: return .null
        case .bool(let flag): return .integer(flag ? 1 : 0)
        case .int16(let integer): return .integer(Int64(integer))
        case .int32(let integer): return .integer(Int64(integer))
        case .int64(let integer): return .integer(integer)
        case .float(let float): return .real(Double(float))
        case .double(let double): return .real(double)
        case .numeric(let text): return .text(text)
        case .text(let text): return .text(text)
        case .jsonb(let text): return .text(text)
        case .timestamp(let microseconds):
            return .real(PostgresDialect.secondsSinceReferenceDate(microseconds: microseconds))
        case .bytes(let data): return .blob(data)
        case .uuid(let uuid): return .blob(withUnsafeBytes(of: uuid.uuid) { Data($0) })
        case .other(let oid, _):
            throw PostgresError.invalidValue(
                "a value of PostgreSQL type \(oid) cannot be read as \(type.map { "\($0)" } ?? "an ID")")
        }
    }

    /// Whether JSON text holds the escape `\u0000`: the escape itself, not the text `\\u0000` (an
    /// escaped backslash followed by `u0000`), which is six ordinary characters.
    private static func escapesNUL(_ json: String) -> Bool {
        let bytes = Array(json.utf8)
        var index = 0
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "\\") else {
                index += 1
                continue
            }
            if index + 5 < bytes.count, bytes[index + 1] == UInt8(ascii: "u"),
                bytes[(index + 2)...(index + 5)].elementsEqual("0000".utf8)
            {
                return true
            }
            index += 2  // the escaped character, whatever it is, cannot start another escape
        }
        return false
    }

    private static func outOfRange(_ value: Int64, _ column: String) -> PostgresError {
        .invalidValue("\(value) is out of range for a \(column) column")
    }
}
