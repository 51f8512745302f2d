import CSQLite
import Foundation

/// One SQLite connection with its prepared-statement cache.
///
/// Not thread-safe: the store gives each connection to one serial queue and only touches it
/// there. This is the only type, with ``SQLiteStatement``, that calls the C API.
final class SQLiteConnection {
    private(set) var handle: OpaquePointer?
    private var statements: [String: SQLiteStatement] = [:]
    /// SQL text the store rendered, by the shape of the request it came from; see `ReadContext.select`.
    var renderedSQL: [AnyHashable: String] = [:]

    /// Opens (or creates) a database file, or a private in-memory database for `nil`.
    init(path: String?, readOnly: Bool = false) throws {
        let flags =
            (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path ?? ":memory:", &handle, flags, nil)
        guard code == SQLITE_OK else {
            let error = SQLiteError(connection: handle, code: code, sql: nil)
            sqlite3_close_v2(handle)
            handle = nil
            throw error
        }
        sqlite3_extended_result_codes(handle, 1)
        // Readers and the writer wait for each other instead of failing with SQLITE_BUSY.
        sqlite3_busy_timeout(handle, 10_000)
        // No connection of the runtime or the tools ever reaches another database file: with no
        // ATTACH, SQL built from a hostile schema cannot touch files beside the store.
        sqlite3_limit(handle, SQLITE_LIMIT_ATTACHED, 0)
        // A store file can come from outside. Functions a hostile schema names (in a trigger, a
        // view, a CHECK, a default, a generated column) run only if SQLite deems them harmless,
        // and no SQL can edit `sqlite_master` or the file's pages directly (defensive mode).
        guard csqlite_db_config_flag(handle, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0) == SQLITE_OK,
            csqlite_db_config_flag(handle, SQLITE_DBCONFIG_DEFENSIVE, 1) == SQLITE_OK
        else {
            let error = SQLiteError(connection: handle, code: SQLITE_ERROR, sql: nil)
            sqlite3_close_v2(handle)
            handle = nil
            throw error
        }
        try StringFunctions.register(on: self)
        try DecodingFunction.register(on: self)
    }

    deinit {
        close()
    }

    /// Finalizes every cached statement and closes the database; later calls fail with SQLite's
    /// misuse error. Closing twice does nothing.
    func close() {
        statements.removeAll()
        renderedSQL.removeAll()
        sqlite3_close_v2(handle)
        handle = nil
    }

    /// Runs one statement that takes no parameters, stepping through any rows it returns.
    func execute(_ sql: String) throws {
        try SQLiteStatement(connection: self, sql: sql).run()
    }

    /// Runs statements one by one, each prepared alone.
    func execute(_ statements: [String]) throws {
        for sql in statements {
            try execute(sql)
        }
    }

    /// A prepared statement for `sql`, from the cache when it was prepared before; reset and unbound.
    /// While the cached one is still stepping (a fetch nested in another fetch's loop), a fresh one.
    func statement(_ sql: String) throws -> SQLiteStatement {
        if let cached = statements[sql] {
            guard sqlite3_stmt_busy(cached.handle) == 0 else { return try SQLiteStatement(connection: self, sql: sql) }
            cached.reset()
            return cached
        }
        let statement = try SQLiteStatement(connection: self, sql: sql)
        statements[sql] = statement
        return statement
    }

    /// Registers a deterministic SQL function of UTF-8 text implemented in Swift.
    func register(
        function name: String, arguments: Int32,
        _ body: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void
    ) throws {
        let code = sqlite3_create_function_v2(
            handle, name, arguments, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, body, nil, nil, nil)
        guard code == SQLITE_OK else { throw error(code: code, sql: nil) }
    }

    /// How many rows the last INSERT, UPDATE or DELETE changed.
    var changes: Int { Int(sqlite3_changes64(handle)) }

    /// Whether the main database file was renamed, replaced or deleted since this connection opened
    /// it (SQLite compares the file it holds open with the one now at its path); `false` in memory.
    var fileHasMoved: Bool {
        var moved: Int32 = 0
        return sqlite3_file_control(handle, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK && moved != 0
    }

    /// Makes closing leave the file as it is: without this, the last connection to close copies
    /// the write-ahead log into the database file. For a store refused at open, untouched.
    func keepFileOnClose() {
        _ = csqlite_db_config_flag(handle, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
    }

    /// The path of the main database file, empty in memory.
    var path: String {
        sqlite3_db_filename(handle, "main").map { String(cString: $0) } ?? ""
    }

    /// Whether a transaction is open.
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    func error(code: Int32, sql: String?) -> SQLiteError {
        SQLiteError(connection: handle, code: code, sql: sql)
    }
}
