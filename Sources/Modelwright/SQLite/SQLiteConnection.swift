import CSQLite
import Foundation

/// One SQLite connection with its prepared-statement cache, and the owner of its transactions.
///
/// Not thread-safe: the store gives each connection to one serial queue and only touches it
/// there. This is the only type, with ``SQLiteStatement``, that calls the C API.
///
/// Transactions begin and end only through ``begin(_:)``, ``commit()`` and ``rollback()``: an
/// authorizer refuses `BEGIN`, `COMMIT` and `ROLLBACK` in any other SQL (a custom migration step's),
/// so nothing but the owner ends a transaction early. SQLite itself may end one: on `SQLITE_FULL`,
/// `SQLITE_IOERR`, `SQLITE_NOMEM`, `SQLITE_INTERRUPT`, `SQLITE_CORRUPT` or a trigger's
/// `RAISE(ROLLBACK)` it can roll the whole transaction back and return to autocommit, where every
/// later statement would commit on its own. Every statement steps through ``SQLiteStatement/step()``,
/// which checks for that: once the transaction is gone, every later statement on the connection
/// throws ``StoreError/transactionAborted(cause:)`` and ``commit()`` throws it too, until the owner
/// calls ``rollback()``.
final class SQLiteConnection: DatabaseConnection {
    private(set) var handle: OpaquePointer?
    private var statements: [String: PreparedHandle] = [:]
    /// Whether a transaction this connection began is open, or was rolled back by SQLite.
    private var transaction = TransactionState.none
    /// Set while ``begin(_:)``, ``commit()`` or ``rollback()`` prepares its statement: the only
    /// time the authorizer lets a transaction statement through.
    private var isControllingTransaction = false
    /// Set when the authorizer refused a transaction statement, so the error can say why.
    var refusedTransactionStatement = false
    /// Set while a statement written by hand (``SQLQuery``) is prepared: the authorizer then lets
    /// through only what reads and writes rows.
    var isPreparingHandWritten = false
    /// What the authorizer refused in a statement written by hand (`PRAGMA`, `CREATE` …), so the
    /// error can name it.
    var refusedHandWrittenAction: String?
    /// SQL text the store rendered, by the shape of the request it came from; see `ReadContext.select`.
    var renderedSQL: [RequestShape: String] = [:]
    /// Prepared statements by the shape of the request they run (``keptStatement(for:)``), at most
    /// ``keptStatementLimit``, the least recently used one making room.
    private var kept: [RequestShape: KeptStatement] = [:]
    /// Counts uses of kept statements, so each remembers when it was last used.
    private var keptUses: UInt64 = 0
    /// How the statements this connection runs are spelled.
    let dialect = SQLiteDialect()

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
        // Readers and the writer wait for each other instead of failing with SQLITE_BUSY, for up
        // to the busy timeout, unless the store's task is cancelled meanwhile (``waitsAgain(after:)``).
        sqlite3_busy_handler(handle, busyHandler, Unmanaged.passUnretained(self).toOpaque())
        // No connection of the runtime or the tools ever reaches another database file: with no
        // ATTACH, SQL built from a hostile schema cannot touch files beside the store.
        sqlite3_limit(handle, SQLITE_LIMIT_ATTACHED, 0)
        // A store file can come from outside. Functions a hostile schema names (in a trigger, a
        // view, a CHECK, a default, a generated column) run only if SQLite deems them harmless,
        // and no SQL can edit `sqlite_master` or the file's pages directly (defensive mode).
        // A double-quoted name that names no column is an error, as in standard SQL and on
        // PostgreSQL, rather than SQLite's legacy fallback to a string: `WHERE "user_name" = 'x'`
        // with a misspelled name would otherwise compare two strings and hold for every row.
        guard csqlite_db_config_flag(handle, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0) == SQLITE_OK,
            csqlite_db_config_flag(handle, SQLITE_DBCONFIG_DEFENSIVE, 1) == SQLITE_OK,
            csqlite_db_config_flag(handle, SQLITE_DBCONFIG_DQS_DML, 0) == SQLITE_OK,
            csqlite_db_config_flag(handle, SQLITE_DBCONFIG_DQS_DDL, 0) == SQLITE_OK
        else {
            let error = SQLiteError(connection: handle, code: SQLITE_ERROR, sql: nil)
            sqlite3_close_v2(handle)
            handle = nil
            throw error
        }
        sqlite3_set_authorizer(handle, transactionAuthorizer, Unmanaged.passUnretained(self).toOpaque())
        try StringFunctions.register(on: self)
        try DecodingFunction.register(on: self)
        try FloatFunction.register(on: self)
    }

    deinit {
        close()
    }

    /// Runs `body` with SQLite's defensive mode off, and turns it on again: for the one repair that
    /// writes FTS5's own storage (see ``SQLiteDialect/prepareSearchIndexForDrop(_:on:)``).
    func withDefensiveModeOff<Result>(_ body: () throws -> Result) throws -> Result {
        guard csqlite_db_config_flag(handle, SQLITE_DBCONFIG_DEFENSIVE, 0) == SQLITE_OK else {
            throw SQLiteError(connection: handle, code: SQLITE_ERROR, sql: nil)
        }
        defer { _ = csqlite_db_config_flag(handle, SQLITE_DBCONFIG_DEFENSIVE, 1) }
        return try body()
    }

    /// Finalizes every cached statement and closes the database; later calls fail with SQLite's
    /// misuse error. Closing twice does nothing.
    func close() {
        statements.removeAll()
        forgetShapes()
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
            guard sqlite3_stmt_busy(cached.pointer) == 0 else { return try SQLiteStatement(connection: self, sql: sql) }
            let statement = SQLiteStatement(connection: self, sql: sql, prepared: cached)
            statement.reset()
            return statement
        }
        let statement = try SQLiteStatement(connection: self, sql: sql)
        statements[sql] = statement.prepared
        return statement
    }

    // MARK: - Statements kept by shape

    /// How many statements the connection keeps by shape. An app's reads repeat a few dozen shapes
    /// (a lookup per entity and key, a fetch per screen); a statement costs SQLite a few kilobytes.
    static let keptStatementLimit = 64

    /// A kept statement and when it was last used.
    private final class KeptStatement {
        let statement: SQLiteStatement
        var lastUse: UInt64

        init(_ statement: SQLiteStatement, lastUse: UInt64) {
            self.statement = statement
            self.lastUse = lastUse
        }
    }

    /// Keeping the statement by shape, rather than finding it by its text in ``statement(_:)``, saves
    /// hashing the SQL and allocating a statement object per request. Callgrind, `FetchProbe` (see
    /// BENCHMARKS.md, "statements kept by shape"): 1,000 lookups by ID 21.0 M → 19.3 M instructions
    /// (removing it costs 8.8 %), by a unique attribute 23.6 M → 21.9 M (7.7 %), filtered + sorted
    /// 122.6 M → 120.0 M (2.2 %): under the plain-code bar of 10 %, though it is what brings lookups
    /// by ID under 1.5× raw C (1.41×).
    func keptStatement(for shape: RequestShape) -> SQLiteStatement? {
        guard let entry = kept[shape] else { return nil }
        keptUses &+= 1
        entry.lastUse = keptUses
        guard sqlite3_stmt_busy(entry.statement.handle) == 0 else { return nil }
        return entry.statement
    }

    func keepStatement(_ sql: String, for shape: RequestShape) throws -> SQLiteStatement {
        if let entry = kept[shape], entry.statement.sql == sql {
            guard sqlite3_stmt_busy(entry.statement.handle) == 0 else {
                return try SQLiteStatement(connection: self, sql: sql)
            }
            return entry.statement
        }
        let statement = try SQLiteStatement(connection: self, sql: sql)
        if kept.count >= Self.keptStatementLimit, kept[shape] == nil,
            let oldest = kept.min(by: { $0.value.lastUse < $1.value.lastUse })?.key
        {
            // A statement still stepping stays alive with its cursor and is finalized after it.
            kept[oldest] = nil
        }
        keptUses &+= 1
        kept[shape] = KeptStatement(statement, lastUse: keptUses)
        return statement
    }

    func forgetShapes() {
        kept.removeAll()
        renderedSQL.removeAll()
    }

    func prepare(_ sql: String) throws -> SQLiteStatement {
        try SQLiteStatement(connection: self, sql: sql)
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

    /// Puts the database in write-ahead-log mode (it stays so, in the file). Converting a file
    /// from another mode needs it to itself for a moment, and SQLite does not wait for that with the
    /// busy timeout (it holds a read lock it will not give up, to avoid a deadlock): this waits,
    /// trying again for as long as the busy timeout, while another process (opening the same new
    /// store) has the file.
    func useWriteAheadLog() throws {
        let deadline = ContinuousClock.now + Self.busyTimeout
        while true {
            do {
                return try execute("PRAGMA journal_mode=WAL")
            } catch let error as SQLiteError where error.code == SQLITE_BUSY && ContinuousClock.now < deadline {
                usleep(useconds_t(1_000 + Int.random(in: 0..<4_000)))
            }
        }
    }

    /// How long a statement waits for another connection's lock before failing with `SQLITE_BUSY`.
    private static let busyTimeout = Duration.seconds(10)

    /// Whether the store's task for the running transaction was cancelled (see
    /// ``DatabaseConnection/watchCancellation(_:)``); set and read on the store's queue.
    private var isCancelled: (@Sendable () -> Bool)?

    func watchCancellation(_ isCancelled: (@Sendable () -> Bool)?) {
        self.isCancelled = isCancelled
    }

    /// Sleeps before the `count`th retry of a statement another connection's lock holds up, and
    /// says whether to try again: SQLite's own schedule of waits (1 ms rising to 100 ms) up to the
    /// busy timeout, but no more once the store's task is cancelled, so a cancelled write stops
    /// waiting within 100 ms and fails (`SQLITE_BUSY`) instead of committing later.
    fileprivate func waitsAgain(after count: Int32) -> Bool {
        if isCancelled?() == true { return false }
        let delays: [Int64] = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100]
        let index = Int(max(0, count))
        let waited =
            index < delays.count
            ? delays.prefix(index).reduce(0, +) : delays.reduce(0, +) + Int64(index - delays.count) * 100
        let delay = min(
            index < delays.count ? delays[index] : 100, Self.busyTimeout.components.seconds * 1_000 - waited)
        guard delay > 0 else { return false }
        usleep(useconds_t(delay * 1_000))
        return isCancelled?() != true
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

    // MARK: - Transactions

    private enum TransactionState {
        case none
        case open
        /// SQLite rolled it back after this error; the owner has not rolled back yet.
        case aborted(SQLiteError)
    }

    /// Begins a transaction, which only ``commit()`` or ``rollback()`` ends.
    func begin(_ kind: TransactionKind) throws {
        try control(dialect.begin(kind))
        transaction = .open
    }

    /// Commits the open transaction; throws ``StoreError/transactionAborted(cause:)`` when SQLite
    /// rolled it back. A failed commit that leaves the transaction open (a deferred foreign key)
    /// keeps it open for ``rollback()``.
    func commit() throws {
        try checkTransaction()
        try control("COMMIT")
        if !isInTransaction { transaction = .none }
    }

    /// Rolls back the open transaction, if SQLite has not already, and forgets an abort.
    func rollback() {
        transaction = .none
        if isInTransaction { try? control("ROLLBACK") }
    }

    /// Throws ``StoreError/transactionAborted(cause:)`` when the transaction this connection began
    /// is gone: rolled back by SQLite after an error, here or in a statement reported earlier.
    /// Every statement calls it before it steps.
    func checkTransaction() throws {
        // Read into a local, so the access to the property ends before any call.
        let state = transaction
        switch state {
        case .none:
            return
        case .aborted(let cause):
            throw StoreError.transactionAborted(cause: cause)
        case .open:
            // The authorizer lets no other SQL end a transaction, so this is SQLite's doing, after
            // an error whose statement did not say (a failed prepare, say).
            guard !isInTransaction else { return }
            let cause = SQLiteError(
                code: SQLITE_ABORT, extendedCode: SQLITE_ABORT | (2 << 8),  // SQLITE_ABORT_ROLLBACK
                message: "SQLite rolled the transaction back after an earlier error", sql: nil)
            transaction = .aborted(cause)
            throw StoreError.transactionAborted(cause: cause)
        }
    }

    /// Called with every error a statement reports: when SQLite rolled the transaction back with
    /// it, the transaction is over and every later statement throws.
    func noteFailure(_ failure: SQLiteError) {
        if case .open = transaction, !isInTransaction {
            transaction = .aborted(failure)
        }
    }

    /// Prepares and runs one of the owner's transaction statements, which the authorizer lets through.
    private func control(_ sql: String) throws {
        isControllingTransaction = true
        let statement: SQLiteStatement
        do {
            defer { isControllingTransaction = false }
            statement = try SQLiteStatement(connection: self, sql: sql)
        }
        let code = sqlite3_step(statement.handle)
        guard code == SQLITE_DONE else {
            let failure = error(code: code, sql: sql)
            noteFailure(failure)
            throw failure
        }
    }

    /// The actions a statement written by hand may take: reading and writing rows, calling
    /// functions, recursive common table expressions. An allowlist, so that `PRAGMA`, `ATTACH`,
    /// temporary objects, schema changes and transaction statements are refused whatever text
    /// leads to them (`EXPLAIN PRAGMA …` runs its pragma while being prepared).
    private static let handWrittenActions: Set<Int32> = [
        SQLITE_SELECT, SQLITE_READ, SQLITE_INSERT, SQLITE_UPDATE, SQLITE_DELETE, SQLITE_FUNCTION, SQLITE_RECURSIVE,
    ]

    /// The statement an authorizer action stands for, to name it in an error.
    private static func statementName(of action: Int32) -> String {
        switch action {
        case SQLITE_PRAGMA: "PRAGMA"
        case SQLITE_ATTACH: "ATTACH"
        case SQLITE_DETACH: "DETACH"
        case SQLITE_TRANSACTION, SQLITE_SAVEPOINT: "a transaction statement"
        case SQLITE_ALTER_TABLE: "ALTER TABLE"
        case SQLITE_REINDEX: "REINDEX"
        case SQLITE_ANALYZE: "ANALYZE"
        case SQLITE_CREATE_INDEX...SQLITE_CREATE_VIEW, SQLITE_CREATE_VTABLE: "CREATE"
        case SQLITE_DROP_INDEX...SQLITE_DROP_VIEW, SQLITE_DROP_VTABLE: "DROP"
        default: "a statement that does more than read or write rows"
        }
    }

    /// The authorizer's answer for one action of a statement being prepared.
    fileprivate func authorize(_ action: Int32) -> Int32 {
        if isPreparingHandWritten, !Self.handWrittenActions.contains(action) {
            refusedHandWrittenAction = refusedHandWrittenAction ?? Self.statementName(of: action)
            return SQLITE_DENY
        }
        guard action == SQLITE_TRANSACTION, !isControllingTransaction else { return SQLITE_OK }
        refusedTransactionStatement = true
        return SQLITE_DENY
    }

    func error(code: Int32, sql: String?) -> SQLiteError {
        SQLiteError(connection: handle, code: code, sql: sql)
    }
}

/// SQLite's authorizer callback: refuses `BEGIN`, `COMMIT` and `ROLLBACK` that the connection's
/// transaction methods did not prepare (see ``SQLiteConnection``).
private func transactionAuthorizer(
    _ connection: UnsafeMutableRawPointer?, _ action: Int32, _: UnsafePointer<CChar>?, _: UnsafePointer<CChar>?,
    _: UnsafePointer<CChar>?, _: UnsafePointer<CChar>?
) -> Int32 {
    guard let connection else { return SQLITE_OK }
    return Unmanaged<SQLiteConnection>.fromOpaque(connection).takeUnretainedValue().authorize(action)
}

// MARK: - What the store asks of every engine

extension SQLiteConnection {
    /// See ``StoreVerification/checkFileInPlace(_:)``.
    func checkInPlace() throws {
        try StoreVerification.checkFileInPlace(self)
    }

    /// Compares SQLite's schema cookie, which any change to `sqlite_master` in any process
    /// increments, with the one last verified, and verifies the whole schema again when it moved.
    func verifySchema(_ layout: SchemaLayout, since verified: Int64) throws -> Int64 {
        let cookie = try StoreVerification.schemaCookie(on: self)
        guard cookie != verified else { return cookie }
        // SQLite prepares a kept statement again when the schema changes; the SQL itself is
        // rendered again too, from the layout verified below.
        forgetShapes()
        try StoreVerification.verifySchema(self, path: path, layout: layout, plan: nil)
        return cookie
    }

    /// See ``StoreVerification/differences(on:layout:)``.
    func schemaDifferences(from layout: SchemaLayout) throws -> [String] {
        try StoreVerification.differences(on: self, layout: layout)
    }

    /// Reads SQLite's extended result codes; a uniqueness failure's message lists the columns:
    /// "UNIQUE constraint failed: User.givenName, User.familyName".
    func constraintFailure(in error: any Error) -> ConstraintFailure? {
        guard let error = error as? SQLiteError else { return nil }
        switch error.extendedCode {
        case 2067, 1555:  // SQLITE_CONSTRAINT_UNIQUE, SQLITE_CONSTRAINT_PRIMARYKEY
            let list = error.message.split(separator: ":", maxSplits: 1).last.map(String.init) ?? ""
            return .unique(columns: list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        case 1299:  // SQLITE_CONSTRAINT_NOTNULL
            return .notNull(message: error.message)
        case 787:  // SQLITE_CONSTRAINT_FOREIGNKEY
            return .foreignKey
        default:
            return nil
        }
    }
}

/// SQLite's busy handler for a connection: ``SQLiteConnection/waitsAgain(after:)``.
private let busyHandler: @convention(c) (UnsafeMutableRawPointer?, Int32) -> Int32 = { context, count in
    guard let context else { return 0 }
    return Unmanaged<SQLiteConnection>.fromOpaque(context).takeUnretainedValue().waitsAgain(after: count) ? 1 : 0
}
