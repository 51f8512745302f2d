import CSQLite
import Foundation

/// The parameters of an SQLite statement, bound by index (from 1) with the binding rule of each type.
///
/// ``SQLiteStatement`` binds through it, and so does ``RowEncoder``, whose binds are `@inlinable` so
/// that a batch insert's loop (``RowInserter/insert(_:)``) and the record's `encode(to:)` are
/// specialised in the app's module: there each column is bound with SQLite's C call, as raw C binds
/// it, without a Swift call per column through ``DatabaseStatement``.
@usableFromInline struct SQLiteParameters {
    @usableFromInline let handle: OpaquePointer

    @inlinable init(_ handle: OpaquePointer) {
        self.handle = handle
    }

    /// The parameters of `statement` when it is SQLite's, bound directly; `nil` for another engine's.
    static func of(_ statement: any DatabaseStatement) -> SQLiteParameters? {
        guard let statement = statement as? SQLiteStatement, let handle = statement.handle else { return nil }
        return SQLiteParameters(handle)
    }

    /// Tells SQLite to copy bound bytes, since Swift's buffers do not outlive the call.
    @inlinable static var transient: sqlite3_destructor_type {
        unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    }

    @inlinable func bindNull(_ index: Int32) {
        sqlite3_bind_null(handle, index)
    }

    @inlinable func bind(_ value: Int64, _ index: Int32) {
        sqlite3_bind_int64(handle, index, value)
    }

    @inlinable func bind(_ value: Double, _ index: Int32) {
        sqlite3_bind_double(handle, index, value)
    }

    @inlinable func bind(_ value: String, _ index: Int32) {
        // The byte count makes embedded NUL characters survive; SQLITE_TRANSIENT copies the bytes.
        var value = value
        value.withUTF8 { bytes in
            guard let base = bytes.baseAddress, !bytes.isEmpty else {
                // An empty string must stay text: a nil pointer would bind NULL.
                sqlite3_bind_text(handle, index, "", 0, Self.transient)
                return
            }
            base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                _ = sqlite3_bind_text64(handle, index, $0, UInt64(bytes.count), Self.transient, UInt8(SQLITE_UTF8))
            }
        }
    }

    @inlinable func bind(_ value: UUID, _ index: Int32) {
        var uuid = value.uuid
        withUnsafeBytes(of: &uuid) { bytes in
            _ = sqlite3_bind_blob64(handle, index, bytes.baseAddress, 16, Self.transient)
        }
    }

    func bind(_ value: Data, _ index: Int32) {
        if value.isEmpty {
            // A zero-length blob with a nil pointer would be stored as NULL.
            sqlite3_bind_zeroblob(handle, index, 0)
            return
        }
        value.withUnsafeBytes { bytes in
            _ = sqlite3_bind_blob64(handle, index, bytes.baseAddress, UInt64(bytes.count), Self.transient)
        }
    }
}
