import CLibPQ
import Foundation
import Modelwright

/// One connection to a PostgreSQL server: parameterised statements, prepared once and reused,
/// transactions, cancellation and timeouts, with errors that say what happened and never show
/// the password.
///
/// ```swift
/// let connection = try await PostgresConnection(PostgresConfiguration("postgresql://app@localhost/trips"))
/// let rows = try await connection.query("SELECT \"username\" FROM \"User\" WHERE \"rating\" >= $1", [.int16(3)])
/// for row in 0..<rows.count { print(rows[row, 0]) }
/// ```
///
/// Each connection runs its statements one at a time, in order, on a serial queue of its own,
/// so blocking network calls never hold a thread of Swift's cooperative pool. Statements from
/// several tasks are serialised; a transaction belongs to the task that runs
/// ``transaction(_:)``, so share a connection between tasks only through a ``PostgresPool``.
///
/// Every statement is prepared on its first use and the prepared statement reused after, keyed
/// by its SQL text and its parameters' types. Results come in PostgreSQL's binary format by
/// default (no number is printed and parsed again); ``ResultFormat/text`` asks for text.
public final class PostgresConnection: @unchecked Sendable {
    // @unchecked: `handle`, `statements`, `isBroken`, `heldBegin`, `isReading`, `commitInFlight`
    // and the batch's state are touched only on `queue`; `canceller` has its own lock. That is the
    // whole of the shared state.

    /// How the server sends result values.
    public enum ResultFormat: Int32, Sendable {
        /// Text, as `psql` shows them.
        case text = 0
        /// PostgreSQL's binary format: smaller and parsed without text conversions.
        case binary = 1
    }

    private let queue: DispatchQueue
    private var handle: OpaquePointer?
    private var statements: [StatementKey: Prepared] = [:]
    private var statementNumber = 0
    private let statementTimeout: Duration?
    private var isBroken = false
    /// The database's name on the server, for ``PostgresStatementLog``.
    private let databaseName: String
    /// The statement log, when the connection opened while its database was recorded or
    /// ``attachStatementLog()`` attached it; `nil` (and no lock per statement) otherwise.
    private var log: PostgresStatementLog?
    private let canceller: Canceller

    /// What the store asks to stop waiting on (``watchCancellation(_:)``), read by the running
    /// statement's wait from the connection's queue.
    let watchedCancellation = LockedCancellation()

    /// Whether the store's task for the running transaction was cancelled.
    func isWatchedCancelled() -> Bool {
        watchedCancellation.withLock { $0 }?() == true
    }
    private let redaction: Redaction

    /// Makes this connection, opened before its database was recorded, write to
    /// ``PostgresStatementLog`` whenever its database is: how `plan --engine postgres` records
    /// what the migrator sends on the connection it opened. Call it from the connection's own
    /// thread, before the statements to record.
    package func attachStatementLog() {
        log = PostgresStatementLog.shared
    }

    /// The process ID of the server process serving this connection, as `pg_stat_activity` and
    /// notifications name it.
    public let serverProcessID: Int32

    /// The most prepared statements a connection keeps; past it, all are dropped and prepared again.
    package static let statementLimit = 256

    private struct StatementKey: Hashable {
        let sql: String
        /// The parameters' types as the caller gives them; `nil` when the server infers them.
        let types: [UInt32]?
    }

    /// A statement the server prepared: its name and its parameters' types.
    private struct Prepared {
        let name: String
        let parameterTypes: [UInt32]
    }

    /// Why the open transaction failed, once a statement in it failed: PostgreSQL refuses every
    /// later statement until `ROLLBACK` (or `ROLLBACK TO SAVEPOINT`, which clears it), and the
    /// engine interface says so with this cause.
    private var abortCause: PostgresError?

    /// What the last statement run through the engine interface reported changing (`PQcmdTuples`).
    private var lastChanges = 0

    /// A read's `BEGIN` and schema check, held back to be sent with its first statement.
    private var heldBegin: HeldBegin?

    /// Whether the open transaction is a read, whose `COMMIT` need not be waited for.
    private var isReading = false

    /// Whether a read's `COMMIT` was sent and its answer not read yet (see `settleCommit`).
    private var commitInFlight = false

    /// Whether statements that return no rows are pipelined (``batchingSynchronously(_:)``).
    private var isBatching = false

    /// How many statements of the batch were sent since the pipeline's last sync.
    private var batchPending = 0

    /// The SQL of the batch's statements, for its errors.
    private var batchSQL = ""

    /// SQL the runtime rendered for a request's shape (see `DatabaseConnection.renderedSQL`); touched
    /// only on the store's queue for this connection, like every engine-interface call.
    package var renderedSQL: [RequestShape: String] = [:]

    /// The SQL of each request shape a statement was kept for, its markers already numbered
    /// (``PostgresConnection/keepStatement(_:for:)``); touched only on the store's queue for this
    /// connection. The SQL, not the statement: a statement holds its connection.
    var numberedSQL: [RequestShape: String] = [:]

    /// Connects with `configuration`; throws ``PostgresError/connectionFailed(_:)`` or
    /// ``PostgresError/invalidConnectionString(_:)``, whose text holds no password.
    public init(_ configuration: PostgresConfiguration) async throws {
        let redaction = Redaction(connectionString: configuration.connectionString)
        let queue = DispatchQueue(label: "modelwright.postgres.connection")
        let handle = try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try Self.connect(configuration, redaction: redaction) })
            }
        }
        self.queue = queue
        self.handle = handle.pointer
        self.redaction = redaction
        self.statementTimeout = configuration.statementTimeout
        let databaseName = PQdb(handle.pointer).map { String(cString: $0) } ?? ""
        self.databaseName = databaseName
        self.log = PostgresStatementLog.shared.attached(to: databaseName)
        self.serverProcessID = PQbackendPID(handle.pointer)
        self.canceller = Canceller(PQgetCancel(handle.pointer))
    }

    /// Connects with `configuration` on the calling thread, blocking it until the server answers:
    /// for the runtime's synchronous store connections (`Store(postgres:…)`), never for a task of
    /// Swift's cooperative pool.
    package init(connectingNow configuration: PostgresConfiguration) throws {
        let redaction = Redaction(connectionString: configuration.connectionString)
        let handle = try Self.connect(configuration, redaction: redaction)
        self.queue = DispatchQueue(label: "modelwright.postgres.connection")
        self.handle = handle.pointer
        self.redaction = redaction
        self.statementTimeout = configuration.statementTimeout
        let databaseName = PQdb(handle.pointer).map { String(cString: $0) } ?? ""
        self.databaseName = databaseName
        self.log = PostgresStatementLog.shared.attached(to: databaseName)
        self.serverProcessID = PQbackendPID(handle.pointer)
        self.canceller = Canceller(PQgetCancel(handle.pointer))
    }

    deinit {
        PQfinish(handle)
    }

    /// A `PGconn` that may cross to the caller's queue while nothing else can touch it.
    struct Handle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// Opens a `PGconn` for `configuration`, with the session settings results depend on fixed
    /// in its startup packet; the listener connects this way too.
    static func connect(_ configuration: PostgresConfiguration, redaction: Redaction) throws -> Handle {
        var error: UnsafeMutablePointer<CChar>?
        guard let parsed = PQconninfoParse(configuration.connectionString, &error) else {
            let reason = error.map { String(cString: $0) } ?? "out of memory"
            if let error { PQfreemem(error) }
            throw Redaction.connectionStringError(reason)
        }
        var ownOptions: String?
        var option = parsed
        while let keyword = option.pointee.keyword {
            if String(cString: keyword) == "options", let value = option.pointee.val {
                ownOptions = String(cString: value)
            }
            option += 1
        }
        PQconninfoFree(parsed)
        ownOptions = ownOptions ?? ProcessInfo.processInfo.environment["PGOPTIONS"]
        var keywords = ["dbname", "application_name", "fallback_application_name", "client_encoding", "options"]
        var values = [
            configuration.connectionString, configuration.applicationName, "modelwright", "UTF8",
            Self.sessionOptions(after: ownOptions, configuration),
        ]
        if let timeout = configuration.connectTimeout {
            keywords.append("connect_timeout")
            let milliseconds = timeout.roundedUpMilliseconds
            let seconds = milliseconds / 1_000 + (milliseconds % 1_000 > 0 ? 1 : 0)
            values.append(String(min(max(2, seconds), Int64(Int32.max))))  // libpq reads an int
        }
        // The string is expanded in place of `dbname`; the keywords after it override its own.
        let connection = withCStrings(keywords) { keywordPointers in
            withCStrings(values) { valuePointers in
                PQconnectdbParams(keywordPointers, valuePointers, 1)
            }
        }
        guard let connection else { throw PostgresError.connectionFailed("out of memory") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let reason = String(cString: PQerrorMessage(connection))
            PQfinish(connection)
            if Redaction.isConnectionStringError(reason) { throw Redaction.connectionStringError(reason) }
            throw PostgresError.connectionFailed(redaction.apply(reason.trimmed))
        }
        return Handle(pointer: connection)
    }

    /// The server settings every result is read under, after the connection string's own
    /// `options` (or `PGOPTIONS`), so that neither they nor `ALTER DATABASE … SET` can change
    /// how values are spelled: ISO dates, hex bytea, round-tripping floats, standard strings.
    private static func sessionOptions(after own: String?, _ configuration: PostgresConfiguration) -> String {
        var settings = [
            "DateStyle=ISO", "bytea_output=hex", "extra_float_digits=3", "standard_conforming_strings=on",
            "client_encoding=UTF8",
        ]
        if configuration.pinsStoreSchema {
            let schema = Self.storeSchema(in: own)
            // Exactly the store's schema: pg_catalog, not on the path, is then searched first, so no
            // function, operator or collation of another schema can shadow the ones statements call.
            let quoted = "\"" + schema.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            let escaped = quoted.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: " ", with: "\\ ")
            settings.append("search_path=\(escaped)")
        }
        if let timeout = configuration.statementTimeout {
            // PostgreSQL takes at most Int32.max milliseconds (about 24 days): longer is that long.
            settings.append("statement_timeout=\(min(max(timeout.roundedUpMilliseconds, 1), Int64(Int32.max)))")
        }
        return ([own].compactMap { $0 } + settings.map { "-c \($0)" }).joined(separator: " ")
    }

    /// The schema a store keeps its tables in: the first schema of a `search_path` the connection
    /// string's own `options` (or `PGOPTIONS`) set, other than `"$user"`, and otherwise `public`;
    /// never one taken from `"$user"` or from `ALTER DATABASE`/`ALTER ROLE … SET search_path`, which
    /// a hand edit can change under an existing store.
    private static func storeSchema(in options: String?) -> String {
        var words: [String] = []
        var word = ""
        var escaped = false
        for character in options ?? "" {
            if escaped {
                word.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character.isWhitespace {
                if !word.isEmpty { words.append(word) }
                word = ""
            } else {
                word.append(character)
            }
        }
        if !word.isEmpty { words.append(word) }
        var path: String?
        for (index, word) in words.enumerated() {
            var setting = word
            if setting == "-c", index + 1 < words.count {
                continue
            } else if index > 0, words[index - 1] == "-c" {
                setting = word
            } else if setting.hasPrefix("--") {
                setting.removeFirst(2)
            } else if setting.hasPrefix("-c") {
                setting.removeFirst(2)
            } else {
                continue
            }
            guard let equals = setting.firstIndex(of: "=") else { continue }
            let name = setting[..<equals].lowercased().replacingOccurrences(of: "-", with: "_")
            if name == "search_path" { path = String(setting[setting.index(after: equals)...]) }
        }
        for entry in Self.pathEntries(path ?? "") where entry != "$user" && !entry.isEmpty {
            return entry
        }
        return "public"
    }

    /// The schemas of a `search_path` value, unquoted (a quoted name kept as written, another
    /// folded to lower case, as the server reads them).
    private static func pathEntries(_ path: String) -> [String] {
        var entries: [String] = []
        var entry = ""
        var quoted = false
        var wasQuoted = false
        var characters = Array(path)[...]
        while let character = characters.popFirst() {
            if quoted {
                if character == "\"" {
                    if characters.first == "\"" {
                        entry.append("\"")
                        characters.removeFirst()
                    } else {
                        quoted = false
                    }
                } else {
                    entry.append(character)
                }
            } else if character == "\"" {
                quoted = true
                wasQuoted = true
            } else if character == "," {
                entries.append(wasQuoted ? entry : entry.trimmingCharacters(in: .whitespaces).lowercased())
                entry = ""
                wasQuoted = false
            } else if !character.isWhitespace {
                entry.append(character)
            }
        }
        entries.append(wasQuoted ? entry : entry.lowercased())
        return entries
    }

    // MARK: - Statements

    /// Runs `sql` with `parameters` bound to `$1`, `$2`, … and returns its rows.
    ///
    /// Throws ``PostgresError/server(sqlState:message:detail:hint:)`` when the server refuses
    /// it, ``PostgresError/cancelled`` when the task is cancelled while it runs,
    /// ``PostgresError/timedOut`` past the statement timeout, and
    /// ``PostgresError/connectionLost(during:)`` when the connection breaks.
    @discardableResult
    public func query(
        _ sql: String, _ parameters: [PostgresValue] = [], format: ResultFormat = .binary
    ) async throws -> PostgresRows {
        let request = CancelRequest()
        return try await withTaskCancellationHandler {
            try await onQueue { try self.run(sql, parameters, format: format, request: request) }
        } onCancel: {
            request.cancel(using: self.canceller)
        }
    }

    /// Runs `sql` and returns how many rows it changed.
    @discardableResult
    public func execute(_ sql: String, _ parameters: [PostgresValue] = []) async throws -> Int {
        try await query(sql, parameters).affectedRows
    }

    /// Runs `body` in a transaction: commits when it returns, rolls back when it throws.
    ///
    /// When the connection is lost during `COMMIT`, throws ``PostgresError/commitOutcomeUnknown``:
    /// the server may have committed before the connection broke, so check before retrying.
    @discardableResult
    public func transaction<T: Sendable>(
        _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await execute("BEGIN")
        let value: T
        do {
            value = try await body(self)
        } catch {
            await rollBack()
            throw error
        }
        let rows: PostgresRows
        do {
            rows = try await query("COMMIT")
        } catch PostgresError.connectionLost {
            throw PostgresError.commitOutcomeUnknown
        } catch {
            // A cancelled task's COMMIT is refused before it is sent: its writes must not stay
            // open for the connection's next user to commit.
            await rollBack()
            throw error
        }
        // COMMIT of a transaction in which a statement failed rolls it back, and says so only here.
        guard rows.commandTag == "COMMIT" else { throw PostgresError.transactionRolledBack }
        return value
    }

    /// Ends the open transaction, whether or not the task was cancelled: `query` refuses to send
    /// anything in a cancelled task, and a transaction left open would hold its locks and hand
    /// its writes to the connection's next user.
    private func rollBack() async {
        _ = try? await onQueue { try self.run("ROLLBACK", [], format: .binary, request: CancelRequest()) }
    }

    /// Whether the connection can serve another borrower: it works and is outside any
    /// transaction. A transaction still open (its task ended without ending it) is rolled back
    /// first; a connection that cannot be brought back to idle is not reusable.
    var isReadyForReuse: Bool {
        get async {
            await onQueue {
                guard let handle = self.handle, !self.isBroken, PQstatus(handle) == CONNECTION_OK else { return false }
                self.settleCommit(handle)
                switch PQtransactionStatus(handle) {
                case PQTRANS_IDLE:
                    return true
                case PQTRANS_INTRANS, PQTRANS_INERROR:
                    PQclear(self.send(handle, request: CancelRequest()) { PQsendQuery(handle, "ROLLBACK") })
                    return PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) == PQTRANS_IDLE
                default:  // a statement still runs, or the link is gone
                    return false
                }
            }
        }
    }

    /// Runs `body` in a transaction that first takes PostgreSQL's transaction-scoped advisory
    /// lock `key` (`pg_advisory_xact_lock`): whichever connections of whichever processes ask
    /// for the same key run their bodies one after another. The lock ends with the transaction.
    @discardableResult
    public func withAdvisoryLock<T: Sendable>(
        _ key: Int64, _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await transaction { connection in
            try await connection.execute("SELECT pg_advisory_xact_lock($1)", [.int64(key)])
            return try await body(connection)
        }
    }

    /// Sends a notification on `channel` (`pg_notify`); listeners get it when the current
    /// transaction commits, or at once outside one.
    public func notify(_ channel: String, payload: String = "") async throws {
        try await execute("SELECT pg_notify($1, $2)", [.text(channel), .text(payload)])
    }

    /// Asks the server to stop the statement that runs now, if any; it fails with
    /// ``PostgresError/cancelled``.
    public func cancel() {
        CancelRequest().cancel(using: canceller, force: true)
    }

    /// Closes the connection; later statements throw ``PostgresError/closed``.
    public func close() async {
        await onQueue {
            PQfinish(self.handle)
            self.handle = nil
            self.isBroken = true
        }
    }

    /// Whether the connection broke or was closed: a pool drops such a connection.
    public var isUsable: Bool {
        get async { await onQueue { !self.isBroken && self.handle.map { PQstatus($0) == CONNECTION_OK } == true } }
    }

    // MARK: - The engine interface's primitives

    /// The advisory lock every ``TransactionKind/immediate`` transaction takes first, so writers of
    /// every process on one database run one after another, as SQLite's write lock makes them:
    /// what such a transaction reads cannot change before it commits, and it never fails with a
    /// serialization error that would need a retry. ("MWWRITER" in ASCII.)
    package static let writerLockKey: Int64 = 0x4D57_5752_4954_4552

    /// Runs `sql` (parameters `$1`, `$2` …) with `values` and waits on the caller's thread: the
    /// engine interface (``DatabaseConnection``) is synchronous, and its callers run it on threads
    /// of their own. `cached` keeps the server's prepared statement for the next run of the same
    /// text; otherwise the unnamed statement is used and replaced by the next uncached one.
    ///
    /// A value is sent in the binary form of the parameter's type as the server inferred it (a
    /// `Date`'s seconds become a `timestamptz`, an integer 0 or 1 a `boolean`), so no text
    /// conversion can round it. Inside a transaction that failed, throws
    /// ``StoreError/transactionAbortedByEngine(cause:)`` without sending anything.
    ///
    /// The first statement of a read whose `BEGIN` is held back (``holdBegin(_:)``) is sent with
    /// the `BEGIN` and the schema check in one pipeline (``runWithHeldBegin(_:_:_:)``).
    func runSynchronously(_ sql: String, _ values: [SQLValue], cached: Bool) throws -> PostgresRows {
        if let held = takeHeldBegin() {
            if cached, let rows = try runWithHeldBegin(held, sql, values) { return rows }
            try beginNow(held)
        }
        log?.sent(sql, bound: !values.isEmpty, to: databaseName)
        return try withUnsafeCurrentTask { task in
            try queue.sync {
                try self.runOnQueue(
                    sql, values, cached: cached, isCancelled: { task?.isCancelled == true || self.isWatchedCancelled() }
                )
            }
        }
    }

    /// A read's `BEGIN`, held back until its first statement, and the schema check that must
    /// accept the transaction before any of its rows are returned.
    struct HeldBegin {
        /// The statement that begins the transaction.
        let sql: String
        /// The transaction's first statement: the store's checksum read.
        let query: String
        /// Throws to refuse the transaction, given the text `query` read.
        let check: (String?) throws -> Void
    }

    /// Holds `begin` back until the transaction's first statement or its end; the open
    /// transaction is a read.
    func holdBegin(_ begin: HeldBegin) {
        queue.sync {
            heldBegin = begin
            isReading = true
        }
    }

    /// The `BEGIN` held back, if any, which the caller now sends.
    func takeHeldBegin() -> HeldBegin? {
        queue.sync {
            defer { heldBegin = nil }
            return heldBegin
        }
    }

    /// Sends the held `BEGIN` (if any) and runs its check, before a statement that is not pipelined.
    private func settleHeldBegin() throws {
        if let held = takeHeldBegin() { try beginNow(held) }
    }

    /// When the open transaction is a read: sends its `COMMIT` without waiting for the answer (read
    /// before the next command, by ``settleCommit(_:)``) and returns true.
    func commitWithoutWaitingIfReading() -> Bool {
        queue.sync {
            defer { isReading = false }
            guard isReading, let handle, !isBroken, PQtransactionStatus(handle) == PQTRANS_INTRANS,
                PQsendQuery(handle, "COMMIT") == 1
            else { return false }
            flush(handle)
            commitInFlight = true
            return true
        }
    }

    /// What the pipeline of a read's first statement returned.
    private struct PipelinedRead {
        /// The text the schema check read.
        let checked: String?
        /// The statement's rows, or why it failed.
        let rows: Result<PostgresRows, any Error>
    }

    /// Sends `held`'s `BEGIN`, its schema check and the cached statement `sql` in one pipeline
    /// (libpq's pipeline mode, one flush, one round trip), then runs the check before returning the
    /// statement's rows; `nil` when `sql` was never prepared on this connection (its parameter
    /// types are unknown), and the caller begins the usual way.
    ///
    /// The statement runs in the transaction's snapshot, after the check, as it would alone; only
    /// its rows wait for the check. When the statement failed and the check refuses, the check is
    /// made again in a fresh transaction, since the failure aborted the transaction a refusal reads
    /// its error's details in; the statement then runs again there if the check accepts. So it
    /// does after a failure a stale cached statement caused.
    private func runWithHeldBegin(_ held: HeldBegin, _ sql: String, _ values: [SQLValue]) throws -> PostgresRows? {
        let read = try withUnsafeCurrentTask { task in
            try queue.sync {
                try self.pipeline(
                    held, sql, values, isCancelled: { task?.isCancelled == true || self.isWatchedCancelled() })
            }
        }
        guard let read else { return nil }
        switch read.rows {
        case .success(let rows):
            try held.check(read.checked)
            return rows
        case .failure(let failure):
            // The statement was the transaction's first: nothing was read in it yet, so a plan that
            // another session's DDL made stale (0A000, a column retyped behind the store's back)
            // or a statement a DISCARD dropped (26000) is prepared again in a fresh transaction,
            // as outside one; the pipeline forgot the cache.
            var stale = (failure as? PostgresError)?.isStaleStatement == true
            do {
                try held.check(read.checked)
            } catch {
                stale = true
            }
            guard stale else { throw failure }
            rollback()
            markReading()
            try beginNow(held)
            return try runSynchronously(sql, values, cached: true)
        }
    }

    /// Marks the open transaction a read, after a read began once more.
    private func markReading() {
        queue.sync { isReading = true }
    }

    /// The pipeline of ``runWithHeldBegin(_:_:_:)``, on the queue. Throws the failure of the
    /// `BEGIN` or the check (the transaction then stands as it would have after them alone).
    private func pipeline(
        _ held: HeldBegin, _ sql: String, _ values: [SQLValue], isCancelled: () -> Bool
    ) throws -> PipelinedRead? {
        guard let handle, !isBroken else { throw PostgresError.closed }
        guard let prepared = statements[StatementKey(sql: sql, types: nil)] else { return nil }
        guard !isCancelled() else { throw PostgresError.cancelled }
        settleCommit(handle)
        let encoded = try encode(values, as: prepared.parameterTypes)
        guard PQenterPipelineMode(handle) == 1 else { return nil }
        let request = CancelRequest()
        guard request.begin(canceller) else {
            PQexitPipelineMode(handle)
            throw PostgresError.cancelled
        }
        defer { request.end(canceller) }
        let lengths = encoded.map { Int32($0.bytes?.count ?? 0) }
        let formats = encoded.map { Int32($0.isBinary ? 1 : 0) }
        let started = ContinuousClock.now
        var sent =
            PQsendQueryParams(handle, held.sql, 0, nil, nil, nil, nil, 0) == 1
            && PQsendQueryParams(handle, held.query, 0, nil, nil, nil, nil, 0) == 1
        sent =
            sent
            && withParameterPointers(encoded.map(\.bytes)) { pointers in
                PQsendQueryPrepared(
                    handle, prepared.name, Int32(encoded.count), pointers, lengths, formats,
                    Self.engineResultFormat.rawValue) == 1
            }
        sent = sent && PQpipelineSync(handle) == 1
        // Each statement's results end with a NULL, the pipeline with its sync.
        var results: [OpaquePointer?] = [nil, nil, nil]
        var index = 0
        var complete = false
        if sent {
            flush(handle)
            var lastProgress = ContinuousClock.now
            while awaitResult(handle, request: request, watch: isCancelled, lastProgress: &lastProgress) {
                guard let result = PQgetResult(handle) else {
                    index += 1
                    continue
                }
                if PQresultStatus(result) == PGRES_PIPELINE_SYNC {
                    PQclear(result)
                    complete = true
                    break
                }
                guard index < results.count, results[index] == nil else {
                    PQclear(result)
                    continue
                }
                results[index] = result
            }
        }
        if PQexitPipelineMode(handle) != 1 { isBroken = true }
        guard complete, !isBroken else {
            for result in results { PQclear(result) }
            throw lostOrFailed(during: held.sql)
        }
        // The BEGIN, then the check: a failure of either is the transaction's, as when sent alone.
        let checked: String?
        do {
            _ = try check(results[0], sql: held.sql, request: request)
            let rows = try check(results[1], sql: held.query, request: request)
            results[1] = nil  // the rows own it now
            checked = rows.count > 0 && !rows.isNull(0, 0) ? rows.string(0, 0) : nil
        } catch {
            PQclear(results[1])
            PQclear(results[2])
            throw error
        }
        do {
            let rows = try check(results[2], sql: sql, request: request, started: started)
            lastChanges = rows.affectedRows
            return PipelinedRead(checked: checked, rows: .success(rows))
        } catch let error as PostgresError {
            if error.isStaleStatement { statements.removeAll() }
            if PQtransactionStatus(handle) == PQTRANS_INERROR { abortCause = error }
            return PipelinedRead(checked: checked, rows: .failure(error))
        }
    }

    /// Runs `sql` once, as the unnamed statement prepared with the parameter types `types` (a
    /// statement written by hand, see ``describeSynchronously(_:)``), otherwise as
    /// ``runSynchronously(_:_:cached:)`` does.
    func runSynchronously(_ sql: String, _ values: [SQLValue], types: [UInt32]) throws -> PostgresRows {
        try settleHeldBegin()
        return try withUnsafeCurrentTask { task in
            try queue.sync {
                try self.runOnQueue(
                    sql, values, cached: false, types: types,
                    isCancelled: { task?.isCancelled == true || self.isWatchedCancelled() })
            }
        }
    }

    /// The parameter types the server infers for `sql` and the names of the columns it returns,
    /// from the unnamed statement prepared and described; nothing runs. A failure aborts the open
    /// transaction, as a statement's does.
    func describeSynchronously(_ sql: String) throws -> (parameterTypes: [UInt32], columnNames: [String]) {
        try settleHeldBegin()
        return try queue.sync {
            guard let handle, !isBroken else { throw PostgresError.closed }
            if let abortCause, PQtransactionStatus(handle) == PQTRANS_INERROR {
                throw StoreError.transactionAbortedByEngine(cause: abortCause.engineFailure)
            }
            let request = CancelRequest()
            do {
                _ = try check(
                    send(handle, request: request) { PQsendPrepare(handle, "", sql, 0, nil) }, sql: sql,
                    request: request)
                let description = try check(
                    send(handle, request: request) { PQsendDescribePrepared(handle, "") }, sql: sql, request: request)
                return (description.parameterTypes, description.columnNames)
            } catch let error as PostgresError {
                if PQtransactionStatus(handle) == PQTRANS_INERROR { abortCause = error }
                throw error
            }
        }
    }

    /// Runs a statement that takes no parameters with the simple query protocol, on the caller's
    /// thread; for `BEGIN`, `COMMIT` and `ROLLBACK`, which need no prepared statement.
    func controlSynchronously(_ sql: String) throws -> PostgresRows {
        try settleHeldBegin()
        return try queue.sync {
            guard let handle, !isBroken else { throw PostgresError.closed }
            let request = CancelRequest()
            return try check(send(handle, request: request) { PQsendQuery(handle, sql) }, sql: sql, request: request)
        }
    }

    /// Whether the connection broke (or was closed): read on its queue, for the store's readers and
    /// writer, which replace such a connection.
    var isBrokenNow: Bool {
        queue.sync { isBroken || handle.map { PQstatus($0) != CONNECTION_OK } ?? true }
    }

    /// The state of the connection's transaction, read on its queue.
    var transactionState: PGTransactionStatusType {
        queue.sync {
            guard let handle else { return PQTRANS_UNKNOWN }
            settleCommit(handle)
            return PQtransactionStatus(handle)
        }
    }

    /// What the last statement of the engine interface changed.
    var changesOfLastStatement: Int { queue.sync { lastChanges } }

    /// The failure that aborted the open transaction, if one did; ``forgetAbort()`` clears it.
    var transactionAbortCause: PostgresError? { queue.sync { abortCause } }

    /// Forgets the failure that aborted the transaction, once it is rolled back.
    func forgetAbort() {
        queue.sync {
            abortCause = nil
            isReading = false
        }
    }

    /// Closes the connection on the caller's thread.
    func closeSynchronously() {
        queue.sync {
            PQfinish(handle)
            handle = nil
            heldBegin = nil
            isBroken = true
        }
    }

    private func runOnQueue(
        _ sql: String, _ values: [SQLValue], cached: Bool, types: [UInt32]? = nil, isCancelled: () -> Bool
    ) throws -> PostgresRows {
        guard let handle, !isBroken else { throw PostgresError.closed }
        if PQpipelineStatus(handle) != PQ_PIPELINE_OFF { try endBatch(handle) }
        // `ROLLBACK TO SAVEPOINT` is what a failed transaction still accepts: it undoes the failed
        // operation (the runtime runs each in a savepoint), and the transaction goes on, as on SQLite.
        if let abortCause, PQtransactionStatus(handle) == PQTRANS_INERROR,
            !sql.hasPrefix("ROLLBACK TO SAVEPOINT ")
        {
            throw StoreError.transactionAbortedByEngine(cause: abortCause.engineFailure)
        }
        guard !isCancelled() else { throw PostgresError.cancelled }
        let request = CancelRequest()
        var retried = false
        while true {
            do {
                let prepared =
                    cached
                    ? try self.prepared(StatementKey(sql: sql, types: nil), handle: handle, request: request)
                    : try unnamed(sql, types: types, handle: handle, request: request)
                let encoded = try encode(values, as: prepared.parameterTypes)
                guard request.begin(canceller) else { throw PostgresError.cancelled }
                defer { request.end(canceller) }
                let lengths = encoded.map { Int32($0.bytes?.count ?? 0) }
                let formats = encoded.map { Int32($0.isBinary ? 1 : 0) }
                let started = ContinuousClock.now
                let result = withParameterPointers(encoded.map(\.bytes)) { pointers in
                    send(handle, request: request, watch: isCancelled) {
                        PQsendQueryPrepared(
                            handle, prepared.name, Int32(encoded.count), pointers, lengths, formats,
                            Self.engineResultFormat.rawValue)
                    }
                }
                let rows = try check(result, sql: sql, request: request, started: started)
                lastChanges = rows.affectedRows
                if abortCause != nil, PQtransactionStatus(handle) != PQTRANS_INERROR { abortCause = nil }
                return rows
            } catch let error as PostgresError {
                if error.isStaleStatement {
                    statements.removeAll()
                    if !retried, PQtransactionStatus(handle) == PQTRANS_IDLE {
                        retried = true
                        continue
                    }
                }
                if PQtransactionStatus(handle) == PQTRANS_INERROR { abortCause = error }
                throw error
            }
        }
    }

    // MARK: - Batches

    /// The most statements of a batch sent before the connection waits for their answers: enough
    /// that the round trips stop mattering, few enough that the answers never fill the socket's
    /// buffer while libpq blocks sending (libpq's pipeline mode on a blocking connection).
    private static let batchWindow = 512

    /// Runs `body` with its statements that return no rows pipelined (see
    /// `DatabaseConnection.batching(_:)`): the failure of one is thrown by a later one or when
    /// `body` returns.
    func batchingSynchronously<Result>(_ body: () throws -> Result) throws -> Result {
        queue.sync { isBatching = true }
        let result: Result
        do {
            result = try body()
        } catch {
            queue.sync {
                isBatching = false
                if let handle { _ = try? endBatch(handle) }
            }
            throw error
        }
        try queue.sync {
            isBatching = false
            guard let handle else { return }
            try endBatch(handle)
        }
        return result
    }

    /// Runs a statement that returns no rows: in a batch, sent without waiting when it was prepared
    /// before on this connection, otherwise as ``runSynchronously(_:_:cached:)``.
    func runWithoutRows(_ sql: String, _ values: [SQLValue], cached: Bool) throws {
        if cached, try queue.sync(execute: { try self.sendInBatch(sql, values) }) { return }
        _ = try runSynchronously(sql, values, cached: cached)
    }

    /// Sends `sql` in the open batch's pipeline; false when it cannot be (no batch, a statement
    /// never prepared here, a read's `BEGIN` held back, a failed transaction).
    private func sendInBatch(_ sql: String, _ values: [SQLValue]) throws -> Bool {
        guard isBatching, heldBegin == nil, let handle, !isBroken, abortCause == nil,
            let prepared = statements[StatementKey(sql: sql, types: nil)]
        else { return false }
        // Only before the batch's first statement: `settleCommit` also ends a batch under way.
        if batchPending == 0 { settleCommit(handle) }
        let encoded = try encode(values, as: prepared.parameterTypes)
        if batchPending == 0 {
            guard PQpipelineStatus(handle) == PQ_PIPELINE_ON || PQenterPipelineMode(handle) == 1 else { return false }
        }
        let lengths = encoded.map { Int32($0.bytes?.count ?? 0) }
        let formats = encoded.map { Int32($0.isBinary ? 1 : 0) }
        let sent = withParameterPointers(encoded.map(\.bytes)) { pointers in
            PQsendQueryPrepared(
                handle, prepared.name, Int32(encoded.count), pointers, lengths, formats,
                Self.engineResultFormat.rawValue)
        }
        guard sent == 1 else {
            try endBatch(handle)
            throw lostOrFailed(during: sql)
        }
        batchSQL = sql
        batchPending += 1
        if batchPending >= Self.batchWindow { try endBatch(handle) }
        return true
    }

    /// Waits for the answers of the batch's statements sent so far and leaves pipeline mode;
    /// throws the first failure (the transaction is then aborted, as after any failed statement).
    private func endBatch(_ handle: OpaquePointer) throws {
        guard PQpipelineStatus(handle) != PQ_PIPELINE_OFF else { return }
        defer { batchPending = 0 }
        // The batch's statements may wait (a lock another session holds): a cancellation the
        // store watches for cancels them, and the batch fails.
        let request = CancelRequest()
        _ = request.begin(canceller)
        defer { request.end(canceller) }
        var failure: OpaquePointer?
        var last: OpaquePointer?
        var complete = false
        if PQpipelineSync(handle) == 1 {
            flush(handle)
            var lastProgress = ContinuousClock.now
            while awaitResult(handle, request: request, watch: isWatchedCancelled, lastProgress: &lastProgress) {
                guard let result = PQgetResult(handle) else { continue }
                let status = PQresultStatus(result)
                if status == PGRES_PIPELINE_SYNC {
                    PQclear(result)
                    complete = true
                    break
                }
                if failure == nil, status != PGRES_COMMAND_OK, status != PGRES_TUPLES_OK,
                    status != PGRES_PIPELINE_ABORTED
                {
                    failure = result
                } else {
                    PQclear(last)
                    last = result
                }
            }
        }
        if PQexitPipelineMode(handle) != 1 { isBroken = true }
        defer { PQclear(last) }
        guard complete, !isBroken else {
            PQclear(failure)
            throw lostOrFailed(during: batchSQL)
        }
        if let last { lastChanges = Int(String(cString: PQcmdTuples(last))) ?? 0 }
        guard let failure else { return }
        do {
            _ = try check(failure, sql: batchSQL, request: request)
        } catch let error as PostgresError {
            if PQtransactionStatus(handle) == PQTRANS_INERROR { abortCause = error }
            throw error
        }
    }

    /// The result format of the engine interface: binary, which reads 100,000 rows faster than
    /// text (see BENCHMARKS.md, "PostgreSQL"); every reader of ``PostgresStatement`` takes both.
    static let engineResultFormat = ResultFormat.binary

    /// The unnamed statement prepared for `sql`, for a statement run once: with the parameter types
    /// `types` where given, otherwise described to learn the types the server inferred.
    private func unnamed(
        _ sql: String, types: [UInt32]? = nil, handle: OpaquePointer, request: CancelRequest
    ) throws -> Prepared {
        if let types {
            let result = types.withUnsafeBufferPointer { types in
                send(handle, request: request) {
                    PQsendPrepare(handle, "", sql, Int32(types.count), types.baseAddress)
                }
            }
            _ = try check(result, sql: sql, request: request)
            return Prepared(name: "", parameterTypes: types)
        }
        _ = try check(
            send(handle, request: request) { PQsendPrepare(handle, "", sql, 0, nil) }, sql: sql, request: request)
        let description = try check(
            send(handle, request: request) { PQsendDescribePrepared(handle, "") }, sql: sql, request: request)
        return Prepared(name: "", parameterTypes: description.parameterTypes)
    }

    /// `values` in the binary forms of the parameter types the server inferred.
    private func encode(_ values: [SQLValue], as types: [UInt32]) throws -> [(bytes: [UInt8]?, isBinary: Bool)] {
        guard values.count == types.count else {
            throw PostgresError.invalidValue(
                "the statement takes \(types.count) parameter(s) but \(values.count) were bound; bind every $n once")
        }
        return try zip(values, types).enumerated().map { index, pair in
            do {
                return try PostgresStatement.parameter(pair.0, oid: pair.1).parameter()
            } catch PostgresError.invalidValue(let reason) {
                throw PostgresError.invalidValue("parameter $\(index + 1): \(reason)")
            } catch {
                throw PostgresError.invalidValue("parameter $\(index + 1): \(error)")
            }
        }
    }

    // MARK: - On the queue

    private func onQueue<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }

    private func onQueue<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: work()) }
        }
    }

    private func run(
        _ sql: String, _ parameters: [PostgresValue], format: ResultFormat, request: CancelRequest
    ) throws -> PostgresRows {
        guard let handle, !isBroken else { throw PostgresError.closed }
        let encoded = try parameters.map { try $0.parameter() }
        let key = StatementKey(sql: sql, types: parameters.map(\.oid) as [UInt32]?)
        var retried = false
        while true {
            let name = try prepared(key, handle: handle, request: request).name
            guard request.begin(canceller) else { throw PostgresError.cancelled }
            defer { request.end(canceller) }
            let lengths = encoded.map { Int32($0.bytes?.count ?? 0) }
            let formats = encoded.map { Int32($0.isBinary ? 1 : 0) }
            let started = ContinuousClock.now
            let result = withParameterPointers(encoded.map(\.bytes)) { values in
                send(handle, request: request) {
                    PQsendQueryPrepared(handle, name, Int32(encoded.count), values, lengths, formats, format.rawValue)
                }
            }
            do {
                return try check(result, sql: sql, request: request, started: started)
            } catch let error as PostgresError {
                guard error.isStaleStatement else { throw error }
                // Inside a transaction the failure has aborted it, so only the cache is dropped
                // and the error stands.
                statements.removeAll()
                guard !retried, PQtransactionStatus(handle) == PQTRANS_IDLE else { throw error }
                PQclear(send(handle, request: request) { PQsendQuery(handle, "DEALLOCATE ALL") })
                retried = true
            }
        }
    }

    /// `key`'s prepared statement, preparing it on its first use; a statement whose parameter
    /// types the server infers is described once, to learn them.
    private func prepared(_ key: StatementKey, handle: OpaquePointer, request: CancelRequest) throws -> Prepared {
        if let known = statements[key] { return known }
        if statements.count >= Self.statementLimit {
            // SQL built at run time could fill the server's memory one statement at a time.
            let result = send(handle, request: request) { PQsendQuery(handle, "DEALLOCATE ALL") }
            _ = try check(result, sql: "DEALLOCATE", request: request)
            statements.removeAll()
        }
        // Names are never reused: a statement dropped from the cache may still exist on the server.
        statementNumber += 1
        let name = "mw_\(statementNumber)"
        let types = key.types ?? []
        let result = types.withUnsafeBufferPointer { types in
            send(handle, request: request) {
                PQsendPrepare(handle, name, key.sql, Int32(types.count), types.baseAddress)
            }
        }
        _ = try check(result, sql: key.sql, request: request)
        var parameterTypes = types
        if key.types == nil {
            let description = try check(
                send(handle, request: request) { PQsendDescribePrepared(handle, name) }, sql: key.sql,
                request: request)
            parameterTypes = description.parameterTypes
        }
        let prepared = Prepared(name: name, parameterTypes: parameterTypes)
        statements[key] = prepared
        return prepared
    }

    /// How long past the statement timeout, or past a cancel, the connection waits for a server
    /// that says nothing before it gives the connection up as lost.
    private static let grace = Duration.seconds(3)

    /// Sends one command with `sendCommand` and waits for its result without blocking in libpq:
    /// a server that stops answering (a frozen process, a dead network) is given up after the
    /// statement timeout (or a cancel) plus ``grace`` of silence; the connection is then lost.
    /// `nil` when the connection broke or was given up. A query of several statements (the simple
    /// protocol's `BEGIN …; SELECT …`) answers with one result each: this returns the first that
    /// failed, or else the last, so a failure after the first statement is not lost and the last
    /// statement's rows are read.
    private func send(
        _ handle: OpaquePointer, request: CancelRequest, watch: () -> Bool = { false }, _ sendCommand: () -> Int32
    ) -> OpaquePointer? {
        settleCommit(handle)
        guard sendCommand() == 1 else { return nil }
        return collect(handle, request: request, watch: watch)
    }

    /// Flushes what was sent and reads the results of one command, as ``send(_:request:watch:_:)``
    /// describes: the first that failed, or else the last; `nil` when the connection was lost.
    private func collect(_ handle: OpaquePointer, request: CancelRequest, watch: () -> Bool = { false })
        -> OpaquePointer?
    {
        flush(handle)
        var lastProgress = ContinuousClock.now
        var kept: OpaquePointer?
        while true {
            guard awaitResult(handle, request: request, watch: watch, lastProgress: &lastProgress) else {
                PQclear(kept)
                return nil
            }
            guard let result = PQgetResult(handle) else { return kept }
            // The first failure wins, else the last result: in autocommit a deferred constraint fails
            // at the implicit commit, after the statement's own result said it succeeded.
            if let previous = kept, !Self.succeeded(previous) {
                PQclear(result)
            } else {
                PQclear(kept)
                kept = result
            }
        }
    }

    /// Sends what libpq holds for the server.
    private func flush(_ handle: OpaquePointer) {
        while PQflush(handle) == 1 {
            var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLOUT), revents: 0)
            _ = poll(&descriptor, 1, 100)
        }
    }

    /// Waits until libpq holds a whole result (or the end of one command's results) without
    /// blocking in libpq; false when the connection broke or the server was given up after its
    /// silence outlasted the statement timeout (or a cancel) by ``grace``.
    private func awaitResult(
        _ handle: OpaquePointer, request: CancelRequest, watch: () -> Bool,
        lastProgress: inout ContinuousClock.Instant
    ) -> Bool {
        while PQisBusy(handle) == 1 {
            var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 100)
            if ready > 0 {
                guard PQconsumeInput(handle) == 1 else { return false }
                lastProgress = .now
                continue
            }
            if ready < 0 {
                guard errno == EINTR else { return false }
                continue
            }
            // A caller blocked in the engine interface has no cancellation handler: its task
            // is asked here, between waits, and a cancel sent when it was cancelled.
            // The store's task for the transaction was cancelled: whatever this command is (a
            // prepare that waits on a table's lock, say), it is stopped and the transaction fails.
            if isWatchedCancelled() {
                request.cancel(using: canceller, force: true)
            } else if watch() {
                request.cancel(using: canceller)
            }
            let silence = ContinuousClock.now - lastProgress
            let cancelledFor = request.cancelledFor
            let timedOut = statementTimeout.map { silence > $0 + Self.grace } ?? false
            if timedOut || cancelledFor.map({ $0 > Self.grace && silence > Self.grace }) == true {
                // The server does not answer: ask it to stop, and give the connection up as lost.
                canceller.send()
                isBroken = true
                return false
            }
        }
        return true
    }

    /// Reads the answer to a read's `COMMIT` sent without waiting (``commitWithoutWaitingIfReading()``),
    /// before anything else is sent or the transaction's state is read. Its outcome changes nothing
    /// the read returned; a lost connection fails the next command.
    private func settleCommit(_ handle: OpaquePointer) {
        // A batch's statements still owed answers are read first; their failure, recorded as the
        // transaction's abort, fails whatever is sent next.
        if PQpipelineStatus(handle) != PQ_PIPELINE_OFF { try? endBatch(handle) }
        guard commitInFlight else { return }
        commitInFlight = false
        PQclear(collect(handle, request: CancelRequest()))
    }

    /// Whether `result` is a statement's success (rows, a command's tag or an empty query).
    private static func succeeded(_ result: OpaquePointer) -> Bool {
        let status = PQresultStatus(result)
        return status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY
    }

    /// The rows of `result`, or the error it (or its absence) stands for.
    private func check(
        _ result: OpaquePointer?, sql: String, request: CancelRequest, started: ContinuousClock.Instant? = nil
    ) throws -> PostgresRows {
        guard let result else { throw lostOrFailed(during: sql) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return PostgresRows(result)
        default:
            defer { PQclear(result) }
            if handle.map({ PQstatus($0) }) != CONNECTION_OK { throw lostOrFailed(during: sql) }
            func field(_ code: UInt8) -> String? {
                PQresultErrorField(result, Int32(code)).map { redaction.apply(String(cString: $0)) }
            }
            let sqlState = field(UInt8(ascii: "C")) ?? "XX000"
            if sqlState == "57014" {
                // One SQLSTATE for our cancel, the statement timeout and another session's
                // pg_cancel_backend: ours when we sent it, a timeout only once the timeout passed.
                if request.wasCancelled { throw PostgresError.cancelled }
                if let statementTimeout, let started, ContinuousClock.now - started >= statementTimeout {
                    throw PostgresError.timedOut
                }
            }
            guard let message = field(UInt8(ascii: "M")) else { throw lostOrFailed(during: sql) }
            throw PostgresError.server(
                sqlState: sqlState, message: message, detail: field(UInt8(ascii: "D")),
                hint: field(UInt8(ascii: "H")))
        }
    }

    private func lostOrFailed(during sql: String) -> PostgresError {
        isBroken = true
        let statement = sql.split(separator: " ", maxSplits: 1).first.map(String.init) ?? sql
        return .connectionLost(during: statement.uppercased())
    }
}

/// The connection's `PGcancel`, which any thread may use to cancel the running statement.
final class Canceller: @unchecked Sendable {
    // @unchecked: `cancel` is freed only in deinit; PQcancel itself is thread-safe.
    private let cancel: OpaquePointer?

    init(_ cancel: OpaquePointer?) {
        self.cancel = cancel
    }

    deinit {
        PQfreeCancel(cancel)
    }

    func send() {
        var buffer = [CChar](repeating: 0, count: 256)
        _ = PQcancel(cancel, &buffer, Int32(buffer.count))
    }
}

/// One statement's cancellation: a cancel that arrives before the statement is sent stops it
/// from being sent; one that arrives while it runs asks the server to stop it.
final class CancelRequest: @unchecked Sendable {
    // @unchecked: every field is behind `lock`.
    private let lock = NSLock()
    private var isRunning = false
    private var cancelled = false
    private var cancelledAt: ContinuousClock.Instant?

    var wasCancelled: Bool { lock.withLock { cancelled } }

    /// How long ago the statement was cancelled, if it was.
    var cancelledFor: Duration? { lock.withLock { cancelledAt.map { .now - $0 } } }

    /// Marks the statement running; false when it was cancelled before it started.
    func begin(_: Canceller) -> Bool {
        lock.withLock {
            isRunning = !cancelled
            return isRunning
        }
    }

    func end(_: Canceller) {
        lock.withLock { isRunning = false }
    }

    func cancel(using canceller: Canceller, force: Bool = false) {
        lock.withLock {
            cancelled = true
            cancelledAt = cancelledAt ?? .now
            if isRunning || force { canceller.send() }
        }
    }
}

extension String {
    fileprivate var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}

private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let duplicates = strings.map { strdup($0) }
    defer { for duplicate in duplicates { free(duplicate) } }
    let pointers: [UnsafePointer<CChar>?] = duplicates.map { UnsafePointer($0) } + [nil]
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}

private func withParameterPointers<R>(
    _ values: [[UInt8]?], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> R
) -> R {
    let buffers: [UnsafeMutablePointer<CChar>?] = values.map { bytes -> UnsafeMutablePointer<CChar>? in
        guard let bytes else { return nil }
        // One byte more, a NUL: libpq reads a text-format parameter up to its NUL, not its length.
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
        bytes.withUnsafeBytes { source in
            UnsafeMutableRawBufferPointer(start: buffer, count: source.count).copyMemory(from: source)
        }
        buffer[bytes.count] = 0
        return buffer
    }
    defer { for buffer in buffers { buffer?.deallocate() } }
    let pointers = buffers.map { $0.map { UnsafePointer($0) } }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress) }
}

/// The store's cancellation check for a connection, set from the store's queue and read from the
/// connection's.
final class LockedCancellation: @unchecked Sendable {
    // @unchecked: `check` is read and written only under `lock`.
    private let lock = NSLock()
    private var check: (@Sendable () -> Bool)?

    func withLock<Result>(_ body: (inout (@Sendable () -> Bool)?) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&check)
    }
}
