import Foundation
import Modelwright

/// A statement of the runtime's engine interface (``DatabaseStatement``) on a
/// ``PostgresConnection``: values bound by position, run when first stepped, its rows read in
/// place from libpq's result.
///
/// The runtime writes its SQL with `?` markers; they are numbered `$1`, `$2` … here, outside
/// string literals, quoted names and comments. The server prepares the statement once per
/// connection (kept by its text) and infers each parameter's type, and a bound value is sent in
/// that type's binary form (``PostgresTypeMap``).
package final class PostgresStatement: DatabaseStatement {
    private let connection: PostgresConnection
    private let sql: String
    private let cached: Bool
    private var bindings: [SQLValue] = []
    private var rows: PostgresRows? {
        didSet { current = rows.map(Unmanaged.passUnretained) }
    }
    /// `rows`, unretained, for the readers: a row decoder reads every cell through them, and
    /// reaching the rows through the stored reference retained and released them around each read
    /// (7 % of a 100,000-row fetch's instructions). `rows` keeps them alive while this is set.
    private var current: Unmanaged<PostgresRows>?
    private var row: Int32 = -1
    /// What the server said of a statement written by hand when it was described; `nil` for the
    /// runtime's own statements.
    private let handWritten: PostgresConnection.HandWritten?

    init(_ sql: String, on connection: PostgresConnection, cached: Bool) {
        self.connection = connection
        self.sql = Self.numberingMarkers(sql)
        self.cached = cached
        handWritten = nil
    }

    /// A statement for SQL whose markers are already numbered (``numberedSQL`` of another), kept
    /// by the server once prepared.
    init(numbered sql: String, on connection: PostgresConnection) {
        self.connection = connection
        self.sql = sql
        cached = true
        handWritten = nil
    }

    /// The statement's SQL, its markers numbered `$1`, `$2` …
    var numberedSQL: String { sql }

    /// A statement written by hand, already numbered `$1`, `$2` … by its ``SQLQuery`` and run as
    /// written, so a `?` in one of its strings stays text.
    init(handWritten sql: String, _ description: PostgresConnection.HandWritten, on connection: PostgresConnection) {
        self.connection = connection
        self.sql = sql
        cached = false
        handWritten = description
    }

    /// `sql` with each `?` marker outside literals, quoted names and comments replaced by `$1`,
    /// `$2` … in order.
    package static func numberingMarkers(_ sql: String) -> String {
        guard sql.utf8.contains(UInt8(ascii: "?")) else { return sql }
        var output = [UInt8]()
        output.reserveCapacity(sql.utf8.count + 8)
        var number = 0
        var bytes = Array(sql.utf8)[...]
        while let byte = bytes.popFirst() {
            switch byte {
            case UInt8(ascii: "'"), UInt8(ascii: "\""):
                // A literal or a quoted name, up to its closing quote; a doubled quote stays inside.
                output.append(byte)
                while let inner = bytes.popFirst() {
                    output.append(inner)
                    if inner == byte {
                        guard bytes.first == byte else { break }
                        output.append(bytes.removeFirst())
                    }
                }
            case UInt8(ascii: "-") where bytes.first == UInt8(ascii: "-"):
                output.append(byte)
                while let inner = bytes.popFirst() {
                    output.append(inner)
                    if inner == UInt8(ascii: "\n") { break }
                }
            case UInt8(ascii: "/") where bytes.first == UInt8(ascii: "*"):
                output.append(byte)
                output.append(bytes.removeFirst())
                while let inner = bytes.popFirst() {
                    output.append(inner)
                    if inner == UInt8(ascii: "*"), bytes.first == UInt8(ascii: "/") {
                        output.append(bytes.removeFirst())
                        break
                    }
                }
            case UInt8(ascii: "?"):
                number += 1
                output.append(contentsOf: "$\(number)".utf8)
            default:
                output.append(byte)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// `value` for a parameter the server typed `oid`: exact conversions only (an integer to a
    /// `boolean` only when it is 0 or 1, to a `smallint` only when it fits).
    static func parameter(_ value: SQLValue, oid: UInt32) throws -> PostgresValue {
        if let column = columnType(oid: oid) { return try PostgresTypeMap.postgresValue(value, column: column) }
        if let array = try PostgresTypeMap.postgresArray(value, oid: oid) { return array }
        // A type outside the map (`unknown`, an array): the value in its own type, for the server to cast.
        return switch value {
        case .null: .null
        case .integer(let integer): .int64(integer)
        case .real(let double): .double(double)
        case .text(let text): .text(text)
        case .blob(let data): .bytes(data)
        }
    }

    /// The column type of a type's object ID, for the types a store uses.
    static func columnType(oid: UInt32) -> PostgresDialect.ColumnType? {
        switch oid {
        case 16: .boolean
        case 21: .smallint
        case 23: .integer
        case 20: .bigint
        case 701: .doublePrecision
        case 700: .real
        case 1_700: .numeric
        case 25, 1_043: .text
        case 1_184, 1_114: .timestamptz
        case 17: .bytea
        case 2_950: .uuid
        case 3_802: .jsonb
        default: nil
        }
    }

    private func bindValue(_ value: SQLValue, _ index: Int32) {
        let position = Int(index) - 1
        guard position >= 0 else { return }
        if bindings.count <= position {
            bindings.append(contentsOf: repeatElement(.null, count: position + 1 - bindings.count))
        }
        bindings[position] = value
    }

    /// `read` of the current row's rows, reached without a retain; `none` before the statement ran.
    @inline(__always) private func reading<Value>(_ none: Value, _ read: (PostgresRows, Int32) -> Value) -> Value {
        guard let current else { return none }
        return current._withUnsafeGuaranteedRef { read($0, row) }
    }

    // MARK: - DatabaseStatement

    /// Forgets the rows and the bindings, so the statement can run again.
    package func reset() {
        rows = nil
        row = -1
        bindings.removeAll(keepingCapacity: true)
    }

    /// Runs the statement on its first call, then moves to the next of its rows.
    package func step() throws -> Bool {
        if rows == nil {
            rows =
                try handWritten.map { try connection.runHandWritten(sql, bindings, $0) }
                ?? connection.runSynchronously(sql, bindings, cached: cached)
            row = -1
        }
        row += 1
        return Int(row) < rows?.count ?? 0
    }

    /// Runs the statement, keeping no rows; in a batch (``PostgresConnection/batching(_:)``), sends
    /// it without waiting for its answer.
    package func run() throws {
        if let handWritten {
            _ = try connection.runHandWritten(sql, bindings, handWritten)
        } else {
            try connection.runWithoutRows(sql, bindings, cached: cached)
        }
        rows = nil
        row = -1
    }

    /// Binds NULL.
    package func bindNull(_ index: Int32) { bindValue(.null, index) }
    /// Binds an integer.
    package func bind(_ value: Int64, _ index: Int32) { bindValue(.integer(value), index) }
    /// Binds a floating-point number.
    package func bind(_ value: Double, _ index: Int32) { bindValue(.real(value), index) }
    /// Binds text.
    package func bind(_ value: String, _ index: Int32) { bindValue(.text(value), index) }
    /// Binds bytes.
    package func bind(_ value: Data, _ index: Int32) { bindValue(.blob(value), index) }
    /// Binds a UUID, as the 16 bytes a `uuid` parameter takes.
    package func bind(_ value: UUID, _ index: Int32) {
        bindValue(.blob(withUnsafeBytes(of: value.uuid) { Data($0) }), index)
    }
    /// Binds any value the runtime stores.
    package func bind(_ value: SQLValue, _ index: Int32) { bindValue(value, index) }

    /// Whether the column of the current row is NULL.
    package func isNull(_ index: Int32) -> Bool { reading(true) { $0.isNull($1, index) } }
    /// The class of the column's value, as ``value(_:)`` gives it (the column's type decides:
    /// `boolean` and the integers are integers, `timestamptz` a real, `numeric` and `jsonb` text,
    /// `bytea` and `uuid` bytes), told from the type without converting the value.
    package func storageClass(_ index: Int32) -> StorageClass { reading(.null) { $0.storageClass($1, index) } }
    /// The column as an integer.
    package func int64(_ index: Int32) -> Int64 { reading(0) { $0.int64($1, index) } }
    /// The column as a floating-point number.
    package func double(_ index: Int32) -> Double { reading(0) { $0.double($1, index) } }
    /// The column as text.
    package func string(_ index: Int32) -> String { reading("") { $0.string($1, index) } }
    /// The column as bytes.
    package func data(_ index: Int32) -> Data { reading(Data()) { $0.data($1, index) } }
    /// The column as a UUID, when it holds one.
    package func uuid(_ index: Int32) -> UUID? { reading(nil) { $0.uuid($1, index) } }
    /// The column as the runtime's value.
    package func value(_ index: Int32) -> SQLValue { reading(.null) { $0.value($1, index) } }
    /// The column's text, `nil` for a value of another class: the row decoder's read, answered
    /// with one look at the cell rather than its class and then its text.
    package func text(_ index: Int32) -> String? { reading(nil) { $0.text($1, index) } }
    /// The column's integer, `nil` for a value of another class.
    package func integer(_ index: Int32) -> Int64? { reading(nil) { $0.integer($1, index) } }
    /// The column's number (a real, or an integer as a real), `nil` for a value of another class.
    package func number(_ index: Int32) -> Double? { reading(nil) { $0.number($1, index) } }

    /// The names of the result's columns, known once the statement has stepped (it runs then), or
    /// from its description for a statement written by hand.
    package var columnNames: [String] { rows?.columnNames ?? handWritten?.columnNames ?? [] }

    /// How many rows the statement changed itself, once it ran: 0 unless it was an `INSERT`,
    /// `UPDATE`, `DELETE` or `MERGE` (libpq counts the rows of a `SELECT` too).
    var changesOfItsOwn: Int {
        guard let rows else { return 0 }
        let command = rows.commandTag.prefix { $0 != " " }
        return ["INSERT", "UPDATE", "DELETE", "MERGE"].contains(command) ? rows.affectedRows : 0
    }
}
