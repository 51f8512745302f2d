import CLibPQ
import Foundation
import Modelwright

// The runtime's engine interface on a PostgreSQL connection: the synchronous calls its store,
// contexts, migrator and history make (see `DatabaseConnection` in the runtime). They block the
// calling thread while the server answers, as SQLite's calls block on the disk, and the async API
// above stays for server code that calls PostgreSQL directly.
//
// What is missing to declare `extension PostgresConnection: DatabaseConnection` is the dialect
// (`associatedtype Dialect: SQLDialect`): `PostgresDialect` becomes an `SQLDialect` in the
// storage-engine seam's work of the same round; with it, the conformance is the one line
// `var dialect: PostgresDialect { PostgresDialect() }` beside these members.
extension PostgresConnection {
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
        switch kind {
        case .deferred:
            _ = try controlSynchronously("BEGIN ISOLATION LEVEL REPEATABLE READ")
        case .immediate:
            _ = try controlSynchronously(
                "BEGIN ISOLATION LEVEL READ COMMITTED; SELECT pg_advisory_xact_lock(\(Self.writerLockKey))")
        }
    }

    /// Commits the open transaction. Throws ``StoreError/transactionAbortedByEngine(cause:)`` when
    /// a statement of it failed (PostgreSQL rolled it back), and
    /// ``PostgresError/commitOutcomeUnknown`` when the connection was lost during `COMMIT`: the
    /// server may have committed before the link broke.
    package func commit() throws {
        if let cause = transactionAbortCause {
            rollback()
            throw StoreError.transactionAbortedByEngine(cause: cause.engineFailure)
        }
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
        if transactionState != PQTRANS_IDLE { _ = try? controlSynchronously("ROLLBACK") }
        forgetAbort()
    }

    /// Whether a transaction is open (a failed one included, until it is rolled back).
    package var isInTransaction: Bool {
        let state = transactionState
        return state == PQTRANS_INTRANS || state == PQTRANS_INERROR || state == PQTRANS_ACTIVE
    }

    /// How many rows the last `INSERT`, `UPDATE` or `DELETE` changed (libpq's `PQcmdTuples`).
    package var changes: Int { changesOfLastStatement }

    /// Ends the connection; later calls throw ``PostgresError/closed``.
    package func close() {
        closeSynchronously()
    }
}
