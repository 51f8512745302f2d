import CSQLite
import Foundation

/// A prepared statement: bind parameters by index, step through rows, read columns by index.
final class SQLiteStatement: DatabaseStatement {
    private let connection: SQLiteConnection
    /// What keeps ``handle`` prepared; the connection's cache shares it.
    let prepared: PreparedHandle
    /// A `let`, so reading it costs no runtime exclusivity check on every bind and column read.
    let handle: OpaquePointer?
    let sql: String

    /// A statement over a handle the connection prepared before (from its cache).
    init(connection: SQLiteConnection, sql: String, prepared: PreparedHandle) {
        self.connection = connection
        self.sql = sql
        self.prepared = prepared
        handle = prepared.pointer
    }

    init(connection: SQLiteConnection, sql: String) throws {
        self.connection = connection
        self.sql = sql
        var handle: OpaquePointer?
        var unparsed = 0
        var text = sql
        let code = text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { characters -> Int32 in
                var tail: UnsafePointer<CChar>?
                let code = sqlite3_prepare_v3(
                    connection.handle, characters.baseAddress, Int32(clamping: characters.count),
                    UInt32(SQLITE_PREPARE_PERSISTENT), &handle, &tail)
                if let tail, let base = characters.baseAddress {
                    unparsed = UnsafeBufferPointer(rebasing: characters[(tail - base)...]).count {
                        !Self.whitespace.contains(UInt8(bitPattern: $0))
                    }
                }
                return code
            }
        }
        self.handle = handle
        prepared = PreparedHandle(handle)
        guard code == SQLITE_OK else {
            if code == SQLITE_AUTH, let refused = connection.refusedHandWrittenAction {
                connection.refusedHandWrittenAction = nil
                throw SQLQueryError.connectionStatement(keyword: refused, sql: sql)
            }
            if code == SQLITE_AUTH, connection.refusedTransactionStatement {
                connection.refusedTransactionStatement = false
                throw SQLiteError.transactionStatementRefused(sql: sql)
            }
            let error = connection.error(code: code, sql: sql)
            connection.noteFailure(error)
            throw error
        }
        // One statement per preparation, always: even text that a quoting mistake let through
        // cannot chain a second statement (`…'); ATTACH …; DELETE …`) behind the first.
        guard unparsed == 0 else { throw SQLiteError.multipleStatements(sql: sql) }
    }

    /// The bytes SQLite skips as whitespace, which may follow the one statement.
    private static let whitespace: Set<UInt8> = [0x20, 0x09, 0x0a, 0x0c, 0x0d]

    /// Resets the statement and clears its bindings so it can run again.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Advances to the next row; `false` when there are no more. Throws
    /// ``StoreError/transactionAborted(cause:)``, without running anything, once SQLite has rolled
    /// back the connection's transaction (see ``SQLiteConnection``).
    func step() throws -> Bool {
        try connection.checkTransaction()
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = connection.error(code: code, sql: sql)
            sqlite3_reset(handle)
            connection.noteFailure(error)
            throw error
        }
    }

    /// Runs a statement that returns no rows.
    func run() throws {
        while try step() {}
    }

    // MARK: - Binding (parameter indexes start at 1)

    // The binding rule of each type is ``SQLiteParameters``', which a batch insert binds through directly.

    func bindNull(_ index: Int32) {
        parameters?.bindNull(index)
    }

    func bind(_ value: Int64, _ index: Int32) {
        parameters?.bind(value, index)
    }

    func bind(_ value: Double, _ index: Int32) {
        parameters?.bind(value, index)
    }

    func bind(_ value: String, _ index: Int32) {
        parameters?.bind(value, index)
    }

    func bind(_ value: Data, _ index: Int32) {
        parameters?.bind(value, index)
    }

    func bind(_ value: UUID, _ index: Int32) {
        parameters?.bind(value, index)
    }

    /// The statement's parameters; `nil` for a statement without a handle (empty SQL).
    private var parameters: SQLiteParameters? {
        handle.map(SQLiteParameters.init)
    }

    func bind(_ value: SQLValue, _ index: Int32) {
        switch value {
        case .null: bindNull(index)
        case .integer(let integer): bind(integer, index)
        case .real(let real): bind(real, index)
        case .text(let text): bind(text, index)
        case .blob(let data): bind(data, index)
        }
    }

    // MARK: - Reading (column indexes start at 0)

    func isNull(_ index: Int32) -> Bool {
        sqlite3_column_type(handle, index) == SQLITE_NULL
    }

    /// The storage class of the column's value, without converting it.
    func storageClass(_ index: Int32) -> StorageClass {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: .integer
        case SQLITE_FLOAT: .real
        case SQLITE_TEXT: .text
        case SQLITE_BLOB: .blob
        default: .null
        }
    }

    func int64(_ index: Int32) -> Int64 {
        sqlite3_column_int64(handle, index)
    }

    func double(_ index: Int32) -> Double {
        sqlite3_column_double(handle, index)
    }

    func string(_ index: Int32) -> String {
        guard let text = sqlite3_column_text(handle, index) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    func data(_ index: Int32) -> Data {
        let count = Int(sqlite3_column_bytes(handle, index))
        guard count > 0, let bytes = sqlite3_column_blob(handle, index) else { return Data() }
        return Data(bytes: bytes, count: count)
    }

    // The typed reads, one question per column: see ``SQLiteRow``, which the row decoder reads
    // through directly.

    func text(_ index: Int32) -> String? {
        handle.flatMap { SQLiteRow($0).text(index) }
    }

    func integer(_ index: Int32) -> Int64? {
        handle.flatMap { SQLiteRow($0).integer(index) }
    }

    func number(_ index: Int32) -> Double? {
        handle.flatMap { SQLiteRow($0).number(index) }
    }

    func uuid(_ index: Int32) -> UUID? {
        handle.flatMap { SQLiteRow($0).uuid(index) }
    }

    func value(_ index: Int32) -> SQLValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: .integer(int64(index))
        case SQLITE_FLOAT: .real(double(index))
        case SQLITE_TEXT: .text(string(index))
        case SQLITE_BLOB: .blob(data(index))
        default: .null
        }
    }

    var columnCount: Int32 { sqlite3_column_count(handle) }

    /// The result columns' names, in order.
    var columnNames: [String] {
        (0..<columnCount).map { String(cString: sqlite3_column_name(handle, $0)) }
    }
}

/// A prepared SQLite statement, finalized when the last ``SQLiteStatement`` over it and the
/// connection's cache let it go. The cache holds these rather than statements: a statement holds
/// its connection, so a cache of statements would hold the connection in a cycle and a store
/// released without ``Store/close()`` would never close its files.
final class PreparedHandle {
    let pointer: OpaquePointer?

    init(_ pointer: OpaquePointer?) {
        self.pointer = pointer
    }

    deinit {
        sqlite3_finalize(pointer)
    }
}
