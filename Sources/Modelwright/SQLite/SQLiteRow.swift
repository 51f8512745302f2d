import CSQLite
import Foundation

/// The current row of an SQLite statement, read column by column with the decoding rule's typed
/// reads: each answers `nil` for a value of any other storage class (NULL included), so a check
/// and a read are one question, and SQLite never converts a value (the integer 7 to the text "7").
///
/// ``SQLiteStatement`` reads through it, and so do ``RowDecoder`` and ``RowCursor``, which are
/// `@inlinable` so that a record's decoding is specialised in the app's module: there a fetch's row
/// loop calls SQLite as raw C does, without a Swift call per column through ``DatabaseStatement``.
///
/// Each read asks for the column once (`sqlite3_column_value`) and takes its class and content from
/// that value: every `sqlite3_column_*` call looks the column up again and checks the connection's
/// error state on the way out. SQLite calls the value "unprotected": reading it is safe while no other
/// thread uses the connection, which a connection here never shares.
@usableFromInline struct SQLiteRow {
    @usableFromInline let handle: OpaquePointer

    @inlinable init(_ handle: OpaquePointer) {
        self.handle = handle
    }

    /// The row of `statement` when it is SQLite's, read directly; `nil` for another engine's.
    static func of(_ statement: any DatabaseStatement) -> SQLiteRow? {
        guard let statement = statement as? SQLiteStatement, let handle = statement.handle else { return nil }
        return SQLiteRow(handle)
    }

    /// Whether the column's value is NULL.
    @inlinable func isNull(_ index: Int32) -> Bool {
        sqlite3_column_type(handle, index) == SQLITE_NULL
    }

    /// The column's text, `nil` when its value is of another class.
    @inlinable func text(_ index: Int32) -> String? {
        guard let value = sqlite3_column_value(handle, index), sqlite3_value_type(value) == SQLITE_TEXT else {
            return nil
        }
        // The text first, then its length, as SQLite asks.
        guard let text = sqlite3_value_text(value) else { return "" }
        let count = Int(sqlite3_value_bytes(value))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// The column's integer, `nil` when its value is of another class.
    @inlinable func integer(_ index: Int32) -> Int64? {
        guard let value = sqlite3_column_value(handle, index), sqlite3_value_type(value) == SQLITE_INTEGER else {
            return nil
        }
        return sqlite3_value_int64(value)
    }

    /// The column's number (a real, or an integer read as a real), `nil` for any other class.
    @inlinable func number(_ index: Int32) -> Double? {
        guard let value = sqlite3_column_value(handle, index) else { return nil }
        let type = sqlite3_value_type(value)
        guard type == SQLITE_FLOAT || type == SQLITE_INTEGER else { return nil }
        return sqlite3_value_double(value)
    }

    /// The column's UUID: a blob of 16 bytes only, as `UUID(sqlValue:)` reads it (16 bytes of text
    /// are not an ID); `nil` for anything else.
    @inlinable func uuid(_ index: Int32) -> UUID? {
        guard let value = sqlite3_column_value(handle, index), sqlite3_value_type(value) == SQLITE_BLOB,
            sqlite3_value_bytes(value) == 16, let bytes = sqlite3_value_blob(value)
        else {
            return nil
        }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: UnsafeRawBufferPointer(start: bytes, count: 16)) }
        return UUID(uuid: uuid)
    }
}
