import CLibPQ
import Foundation
import Modelwright

// The runtime's engine interface on a PostgreSQL connection: the synchronous calls its store,
// contexts, migrator and history make (see `DatabaseConnection` in the runtime). They block the
// calling thread while the server answers, as SQLite's calls block on the disk, and the async API
// above stays for server code that calls PostgreSQL directly.
extension PostgresConnection: DatabaseConnection {
    /// PostgreSQL's spelling of the runtime's statements.
    package var dialect: PostgresDialect { PostgresDialect() }

    /// Runs one statement that takes no parameters, reading past any rows it returns.
    package func execute(_ sql: String) throws {
        _ = try runSynchronously(sql, [], cached: false)
    }

    /// Runs statements one by one, each prepared alone.
    package func execute(_ statements: [String]) throws {
        for statement in statements { try execute(statement) }
    }

    /// A statement for `sql`; the server prepares it on its first run on this connection and
    /// keeps it, by its text, for every later statement with the same text.
    package func statement(_ sql: String) throws -> PostgresStatement {
        PostgresStatement(sql, on: self, cached: true)
    }

    /// A statement for the SQL kept for `shape`, ready to bind; `nil` when none was kept. Each call
    /// makes a fresh statement (one stepping is never handed out again), from SQL whose markers were
    /// numbered when it was kept: numbering them scanned the whole SQL text again for every lookup
    /// (9,100 of the 41,600 instructions a lookup by ID took, `PostgresProbe`).
    package func keptStatement(for shape: RequestShape) -> PostgresStatement? {
        guard let sql = numberedSQL[shape] else { return nil }
        return PostgresStatement(numbered: sql, on: self)
    }

    /// A statement for `sql`, rendered for `shape`, whose SQL is kept for the next request of that shape.
    package func keepStatement(_ sql: String, for shape: RequestShape) throws -> PostgresStatement {
        let statement = try statement(sql)
        if numberedSQL.count >= Self.statementLimit { numberedSQL.removeAll() }
        numberedSQL[shape] = statement.numberedSQL
        return statement
    }

    /// Forgets the SQL kept by shape, because the schema it was rendered for changed.
    package func forgetShapes() {
        renderedSQL.removeAll()
        numberedSQL.removeAll()
    }

    /// A statement for `sql` that the server does not keep, for one run.
    package func prepare(_ sql: String) throws -> PostgresStatement {
        PostgresStatement(sql, on: self, cached: false)
    }

    /// Begins a transaction. A ``TransactionKind/deferred`` one (reads) sees one snapshot from its
    /// first statement (`REPEATABLE READ`); an ``TransactionKind/immediate`` one (writes) first
    /// waits for the database's writer lock (``writerLockKey``, a transaction-scoped advisory
    /// lock), so writers of all processes take turns as they do on SQLite, and reads the newest
    /// committed rows (`READ COMMITTED`), which no other writer can change before it commits.
    package func begin(_ kind: TransactionKind) throws {
        _ = try controlSynchronously(Self.beginning(kind))
    }

    /// Begins as ``begin(_:)`` does, with `query` as the transaction's first statement and
    /// `check` run on its value (see the requirement). A write sends the `BEGIN`, the writer lock
    /// and `query` in one simple-protocol message now, and checks before its body runs. A read
    /// sends nothing yet: its `BEGIN` and `query` go with its first statement, pipelined in one
    /// round trip (``runSynchronously(_:_:cached:)``), or with its `COMMIT`, and `check` runs before
    /// that statement's rows are returned.
    package func begin(
        _ kind: TransactionKind, checking query: String, with check: @escaping (String?) throws -> Void
    ) throws {
        let begin = HeldBegin(sql: Self.beginning(kind), query: query, check: check)
        if kind == .deferred {
            holdBegin(begin)
        } else {
            try beginNow(begin)
        }
    }

    /// Sends a held-back `BEGIN` and its first statement in one simple-protocol message and runs
    /// the check on the value the statement read.
    func beginNow(_ begin: HeldBegin) throws {
        let rows = try controlSynchronously(begin.sql + "; " + begin.query)
        try begin.check(rows.count > 0 && !rows.isNull(0, 0) ? rows.string(0, 0) : nil)
    }

    /// The statements that begin a transaction of `kind`.
    static func beginning(_ kind: TransactionKind) -> String {
        switch kind {
        case .deferred: "BEGIN ISOLATION LEVEL REPEATABLE READ"
        case .immediate: "BEGIN ISOLATION LEVEL READ COMMITTED; SELECT pg_advisory_xact_lock(\(writerLockKey))"
        }
    }

    /// Commits the open transaction. Throws ``StoreError/transactionAbortedByEngine(cause:)`` when
    /// a statement of it failed (PostgreSQL rolled it back), and
    /// ``PostgresError/commitOutcomeUnknown`` when the connection was lost during `COMMIT`: the
    /// server may have committed before the link broke.
    ///
    /// A read's `COMMIT` is sent without waiting for the answer, which the connection reads before
    /// it sends anything else: what the read returned came from its snapshot, which no outcome of
    /// the `COMMIT` changes (a read cannot write; a lost connection fails the next statement).
    package func commit() throws {
        if let cause = transactionAbortCause {
            rollback()
            throw StoreError.transactionAbortedByEngine(cause: cause.engineFailure)
        }
        // A read that ran no statement still checks the schema, as every transaction does.
        if let held = takeHeldBegin() { try beginNow(held) }
        if commitWithoutWaitingIfReading() { return }
        let rows: PostgresRows
        do {
            rows = try controlSynchronously("COMMIT")
        } catch PostgresError.connectionLost {
            throw PostgresError.commitOutcomeUnknown
        }
        // A transaction that failed where this connection did not see it (a deferred constraint)
        // answers COMMIT with ROLLBACK.
        guard rows.commandTag == "COMMIT" else { throw PostgresError.transactionRolledBack }
    }

    /// Rolls back the open transaction, if there is one, and forgets a failure that aborted it.
    package func rollback() {
        _ = takeHeldBegin()  // nothing was sent
        if transactionState != PQTRANS_IDLE { _ = try? controlSynchronously("ROLLBACK") }
        forgetAbort()
    }

    /// Runs `body` with its statements that return no rows sent in pipelines of up to 512, each
    /// answered in one round trip (``batchingSynchronously(_:)``).
    package func batching<Result>(_ body: () throws -> Result) throws -> Result {
        try batchingSynchronously(body)
    }

    /// Whether a transaction is open (a failed one included, until it is rolled back).
    package var isInTransaction: Bool {
        let state = transactionState
        return state == PQTRANS_INTRANS || state == PQTRANS_INERROR || state == PQTRANS_ACTIVE
    }

    /// Whether the session is gone: a statement found the link broken, or libpq's status is bad.
    /// The store then opens a fresh connection instead of failing every later statement with
    /// ``PostgresError/closed``.
    package var isLost: Bool { isBrokenNow }

    package func watchCancellation(_ isCancelled: (@Sendable () -> Bool)?) {
        watchedCancellation.withLock { $0 = isCancelled }
    }

    /// How many rows the last `INSERT`, `UPDATE` or `DELETE` changed (libpq's `PQcmdTuples`).
    package var changes: Int { changesOfLastStatement }

    /// Ends the connection; later calls throw ``PostgresError/closed``.
    package func close() {
        closeSynchronously()
    }

    // MARK: - What the store asks of every engine

    /// Throws ``PostgresError/transactionAborted(cause:)`` once a statement of the open
    /// transaction failed: PostgreSQL refuses everything after it until `ROLLBACK`, so a write
    /// whose closure caught that error reports no commit.
    package func checkTransaction() throws {
        if let cause = transactionAbortCause { throw PostgresError.transactionAborted(cause: cause) }
    }

    /// Does nothing: a server database has no file that could be moved while it is open.
    package func checkInPlace() throws {}

    /// Returns `verified` unchanged: PostgreSQL keeps no schema counter a connection could read
    /// cheaply in every transaction (an event trigger on DDL would stand in for one), so a store on
    /// PostgreSQL verifies its schema when it opens and checks the recorded checksum in every
    /// transaction, as on SQLite, but does not notice a table another program altered meanwhile.
    package func verifySchema(_ layout: SchemaLayout, since verified: Int64) throws -> Int64 {
        verified
    }

    /// What differs from the schema `layout` creates: a missing or unexpected table or column,
    /// read from `information_schema`, and otherwise every column type, default, index and foreign
    /// key, compared with a fresh store created and rolled back in a scratch schema, and the change
    /// feed's trigger function with the one the runtime installs.
    package func schemaDifferences(from layout: SchemaLayout) throws -> [String] {
        let missing = try tableAndColumnDifferences(from: layout)
        guard missing.isEmpty else { return missing }
        return try serverSchemaDifferences(
            from: layout, ownedFunctions: [PostgresChangeFeed.function],
            extensionFunctions: PostgresStoreEngine.unaccentFunctions)
    }

    /// Reads the SQLSTATE of a server error: `23505` (unique; the detail names the columns,
    /// `Key ("givenName", "familyName")=(…) already exists.`), `23502` (not null), `23503`
    /// (foreign key), also when the failure aborted the transaction it came in. A foreign key that
    /// failed `COMMIT` is named by the constraint in the message, which the catalog maps to the
    /// table and column of the reference (``ConstraintFailure/danglingReference(table:column:)``).
    package func constraintFailure(in error: any Error) -> ConstraintFailure? {
        guard var failure = error as? PostgresError else { return nil }
        while case .transactionAborted(let cause) = failure { failure = cause }
        guard case .server(let sqlState, let message, let detail, _) = failure else { return nil }
        switch sqlState {
        case "23505":
            return .unique(columns: Self.keyColumns(inDetail: detail ?? ""))
        case "23502":
            return .notNull(message: message)
        case "23503":
            return Self.constraintName(inMessage: message).flatMap { foreignKey(named: $0, message: message) }
                ?? .foreignKey
        default:
            return nil
        }
    }

    /// The constraint a foreign-key error names: `… violates foreign key constraint "name"…`.
    package static func constraintName(inMessage message: String) -> String? {
        guard let start = message.range(of: "foreign key constraint \"") else { return nil }
        let rest = message[start.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<end])
    }

    /// The table and column of the foreign key `name` in the connection's schema, read from
    /// `pg_catalog`, on the table `message` names where tables share the name; `nil` inside a
    /// transaction (an aborted one refuses queries) or when the catalog has no such key.
    private func foreignKey(named name: String, message: String) -> ConstraintFailure? {
        let sql = """
            SELECT t.relname::text, a.attname::text FROM pg_constraint c \
            JOIN pg_class t ON t.oid = c.conrelid \
            JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1] \
            WHERE c.contype = 'f' AND c.conname = $1 AND t.relnamespace = current_schema()::regnamespace \
            ORDER BY strpos($2, '"' || t.relname || '"') = 0, t.relname LIMIT 1
            """
        guard !isInTransaction, let rows = try? runSynchronously(sql, [.text(name), .text(message)], cached: false),
            rows.count == 1,
            case .text(let table) = rows[0, 0], case .text(let column) = rows[0, 1]
        else { return nil }
        return .danglingReference(table: table, column: column)
    }

    /// The column names in a unique violation's detail, `Key (a, "b c")=(…) already exists.`
    package static func keyColumns(inDetail detail: String) -> [String] {
        guard detail.hasPrefix("Key ("), let end = detail.range(of: ")=(") else { return [] }
        let list = detail[detail.index(detail.startIndex, offsetBy: 5)..<end.lowerBound]
        return list.split(separator: ",").map { name in
            var name = name.trimmingCharacters(in: .whitespaces)
            if name.hasPrefix("\""), name.hasSuffix("\""), name.count >= 2 {
                name = String(name.dropFirst().dropLast()).replacingOccurrences(of: "\"\"", with: "\"")
            }
            return name
        }
    }
}
