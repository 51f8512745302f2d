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
        self.serverProcessID = PQbackendPID(handle.pointer)
        self.canceller = Canceller(PQgetCancel(handle.pointer))
        // ISO dates, so a timestamp in a text-format result reads one way whatever the server's default.
        try await execute("SET DateStyle = ISO")
        if let timeout = configuration.statementTimeout {
            try await execute("SET statement_timeout = \(timeout.roundedUpMilliseconds)")
        }
    }

    deinit {
        PQfinish(handle)
    }

    /// A `PGconn` that may cross to the caller's queue while nothing else can touch it.
    private struct Handle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private static func connect(_ configuration: PostgresConfiguration, redaction: Redaction) throws -> Handle {
        var error: UnsafeMutablePointer<CChar>?
        guard let parsed = PQconninfoParse(configuration.connectionString, &error) else {
            let reason = error.map { String(cString: $0) } ?? "out of memory"
            if let error { PQfreemem(error) }
            throw PostgresError.invalidConnectionString(redaction.apply(reason.trimmed))
        }
        PQconninfoFree(parsed)
        var keywords = ["dbname", "application_name", "fallback_application_name"]
        var values = [configuration.connectionString, configuration.applicationName, "modelwright"]
        if let timeout = configuration.connectTimeout {
            keywords.append("connect_timeout")
            values.append(String(max(2, (timeout.roundedUpMilliseconds + 999) / 1_000)))
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
            throw PostgresError.connectionFailed(redaction.apply(reason.trimmed))
        }
        return Handle(pointer: connection)
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
            if !(await onQueue { self.isBroken }) { _ = try? await execute("ROLLBACK") }
            throw error
        }
        let rows: PostgresRows
        do {
            rows = try await query("COMMIT")
        } catch PostgresError.connectionLost {
            throw PostgresError.commitOutcomeUnknown
        }
        // COMMIT of a transaction in which a statement failed rolls it back, and says so only here.
        guard rows.commandTag == "COMMIT" else { throw PostgresError.transactionRolledBack }
        return value
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
        let name: String
        if let known = statements[key] {
            name = known
        } else {
            if statements.count >= Self.statementLimit {
                // SQL built at run time could fill the server's memory one statement at a time.
                let result = PQexec(handle, "DEALLOCATE ALL")
                _ = try check(result, sql: "DEALLOCATE", request: request)
                statements.removeAll()
            }
            name = "mw_\(statements.count + 1)"
            let result = key.types.withUnsafeBufferPointer { types in
                PQprepare(handle, name, sql, Int32(types.count), types.baseAddress)
            }
            _ = try check(result, sql: sql, request: request)
            statements[key] = name
        }
        guard request.begin(canceller) else { throw PostgresError.cancelled }
        defer { request.end(canceller) }
        let lengths = encoded.map { Int32($0.bytes?.count ?? 0) }
        let formats = encoded.map { Int32($0.isBinary ? 1 : 0) }
        let result = withParameterPointers(encoded.map(\.bytes)) { values in
            PQexecPrepared(handle, name, Int32(encoded.count), values, lengths, formats, format.rawValue)
        }
        return try check(result, sql: sql, request: request)
    }

    /// The rows of `result`, or the error it (or its absence) stands for.
    private func check(_ result: OpaquePointer?, sql: String, request: CancelRequest) throws -> PostgresRows {
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
            if sqlState == "57014" { throw request.wasCancelled ? PostgresError.cancelled : PostgresError.timedOut }
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

    var wasCancelled: Bool { lock.withLock { cancelled } }

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
