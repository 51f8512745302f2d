import CLibPQ
import Foundation

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
    // @unchecked: `handle`, `statements` and `isBroken` are touched only on `queue`; `canceller`
    // has its own lock. That is the whole of the shared state.

    /// How the server sends result values.
    public enum ResultFormat: Int32, Sendable {
        /// Text, as `psql` shows them.
        case text = 0
        /// PostgreSQL's binary format: smaller and parsed without text conversions.
        case binary = 1
    }

    private let queue: DispatchQueue
    private var handle: OpaquePointer?
    private var statements: [StatementKey: String] = [:]
    private var statementNumber = 0
    private let statementTimeout: Duration?
    private var isBroken = false
    private let canceller: Canceller
    private let redaction: Redaction

    /// The process ID of the server process serving this connection, as `pg_stat_activity` and
    /// notifications name it.
    public let serverProcessID: Int32

    /// The most prepared statements a connection keeps; past it, all are dropped and prepared again.
    package static let statementLimit = 256

    private struct StatementKey: Hashable {
        let sql: String
        let types: [UInt32]
    }

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
        var keywords = ["dbname", "application_name", "fallback_application_name", "client_encoding", "options"]
        var values = [
            configuration.connectionString, configuration.applicationName, "modelwright", "UTF8",
            Self.sessionOptions(after: ownOptions ?? ProcessInfo.processInfo.environment["PGOPTIONS"], configuration),
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
        if let timeout = configuration.statementTimeout {
            // PostgreSQL takes at most Int32.max milliseconds (about 24 days): longer is that long.
            settings.append("statement_timeout=\(min(max(timeout.roundedUpMilliseconds, 1), Int64(Int32.max)))")
        }
        return ([own].compactMap { $0 } + settings.map { "-c \($0)" }).joined(separator: " ")
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
        let key = StatementKey(sql: sql, types: parameters.map(\.oid))
        var retried = false
        while true {
            let name = try prepared(key, handle: handle, request: request)
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
                guard case .server(let sqlState, _, _, _) = error, sqlState == "0A000" || sqlState == "26000" else {
                    throw error
                }
                // Another session's ALTER TABLE changed what the cached plan returns (0A000), or a
                // DISCARD ALL / DEALLOCATE ALL dropped the statement (26000). Forget the cache and
                // prepare once more; inside a transaction the failure has aborted it, so only the
                // cache is dropped and the error stands.
                statements.removeAll()
                guard !retried, PQtransactionStatus(handle) == PQTRANS_IDLE else { throw error }
                PQclear(send(handle, request: request) { PQsendQuery(handle, "DEALLOCATE ALL") })
                retried = true
            }
        }
    }

    /// The name of `key`'s prepared statement, preparing it on its first use.
    private func prepared(_ key: StatementKey, handle: OpaquePointer, request: CancelRequest) throws -> String {
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
        let result = key.types.withUnsafeBufferPointer { types in
            send(handle, request: request) {
                PQsendPrepare(handle, name, key.sql, Int32(types.count), types.baseAddress)
            }
        }
        _ = try check(result, sql: key.sql, request: request)
        statements[key] = name
        return name
    }

    /// How long past the statement timeout, or past a cancel, the connection waits for a server
    /// that says nothing before it gives the connection up as lost.
    private static let grace = Duration.seconds(3)

    /// Sends one command with `sendCommand` and waits for its result without blocking in libpq:
    /// a server that stops answering (a frozen process, a dead network) is given up after the
    /// statement timeout (or a cancel) plus ``grace`` of silence; the connection is then lost.
    /// `nil` when the connection broke or was given up.
    private func send(
        _ handle: OpaquePointer, request: CancelRequest, _ sendCommand: () -> Int32
    ) -> OpaquePointer? {
        guard sendCommand() == 1 else { return nil }
        while PQflush(handle) == 1 {
            var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLOUT), revents: 0)
            _ = poll(&descriptor, 1, 100)
        }
        var lastProgress = ContinuousClock.now
        var first: OpaquePointer?
        while true {
            while PQisBusy(handle) == 1 {
                var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
                let ready = poll(&descriptor, 1, 100)
                if ready > 0 {
                    guard PQconsumeInput(handle) == 1 else {
                        PQclear(first)
                        return nil
                    }
                    lastProgress = .now
                    continue
                }
                if ready < 0 {
                    guard errno == EINTR else {
                        PQclear(first)
                        return nil
                    }
                    continue
                }
                let silence = ContinuousClock.now - lastProgress
                let cancelledFor = request.cancelledFor
                let timedOut = statementTimeout.map { silence > $0 + Self.grace } ?? false
                if timedOut || cancelledFor.map({ $0 > Self.grace && silence > Self.grace }) == true {
                    // The server does not answer: ask it to stop, and give the connection up as lost.
                    canceller.send()
                    PQclear(first)
                    isBroken = true
                    return nil
                }
            }
            guard let result = PQgetResult(handle) else { return first }
            if first == nil { first = result } else { PQclear(result) }
        }
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
