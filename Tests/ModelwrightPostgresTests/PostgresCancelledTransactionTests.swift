import Foundation
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing

/// A task cancelled inside a transaction leaves nothing open: its transaction is rolled back on
/// every way the body can end, no later transaction commits its writes, its advisory lock is
/// released, and a pool never lends a connection that is still inside a transaction.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresCancelledTransactionTests {
    /// How the body ends after its task is cancelled (the task cancels itself, so the moment is exact).
    enum Ending: CaseIterable, Sendable {
        /// It swallows the cancellation and returns: COMMIT is refused.
        case returns
        /// It throws `CancellationError`.
        case throwsCancellation
        /// It runs another statement, which is refused.
        case runsAStatement
    }

    /// Where the transaction runs.
    enum Place: CaseIterable, Sendable {
        case transaction, advisoryLock, pool
    }

    private static func body(_ ending: Ending) -> @Sendable (PostgresConnection) async throws -> Void {
        { connection in
            try await connection.execute("INSERT INTO t VALUES (1)")
            withUnsafeCurrentTask { $0?.cancel() }
            switch ending {
            case .returns: try? await Task.sleep(for: .seconds(5))
            case .throwsCancellation: try Task.checkCancellation()
            case .runsAStatement: try await connection.execute("INSERT INTO t VALUES (3)")
            }
        }
    }

    @Test(arguments: Ending.allCases, Place.allCases)
    func aCancelledTransactionLeavesNothingOpen(ending: Ending, place: Place) async throws {
        let configuration = try await makeDatabase()
        let observer = try await PostgresConnection(configuration)
        try await observer.execute("CREATE TABLE t (v bigint)")
        let pool = PostgresPool(configuration, size: 1)
        let connection = try await PostgresConnection(configuration)
        let body = Self.body(ending)
        let task = Task {
            switch place {
            case .transaction: try await connection.transaction(body)
            case .advisoryLock: try await connection.withAdvisoryLock(41, body)
            case .pool: try await pool.withConnection { try await $0.transaction(body) }
            }
        }
        await #expect(throws: (any Error).self) { try await task.value }
        // The next transaction on the same connection commits only its own write.
        let next: @Sendable (PostgresConnection) async throws -> Void = { connection in
            try await connection.transaction { _ = try await $0.execute("INSERT INTO t VALUES (2)") }
        }
        if place == .pool { try await pool.withConnection(next) } else { try await next(connection) }
        let committed = try await observer.query("SELECT coalesce(sum(v), 0)::bigint FROM t")
        #expect(committed[0, 0] == .int64(2), "\(ending) \(place)")
        // The advisory lock went with the transaction.
        let locked = try await observer.query("SELECT pg_try_advisory_lock(41)")
        #expect(locked[0, 0] == .bool(true), "\(ending) \(place)")
    }

    @Test func thePoolRollsBackAConnectionGivenBackInsideATransaction() async throws {
        let configuration = try await makeDatabase()
        let pool = PostgresPool(configuration, size: 1)
        _ = try await pool.withConnection { try await $0.execute("CREATE TABLE t (v bigint)") }
        // A borrower that opens a transaction by hand and leaves it open, once plain and once failed.
        for statement in ["INSERT INTO t VALUES (1)", "SELECT 1 / 0"] {
            _ = try? await pool.withConnection { connection in
                try await connection.execute("BEGIN")
                try await connection.execute(statement)
            }
            _ = try await pool.withConnection { connection in
                try await connection.transaction { try await $0.execute("INSERT INTO t VALUES (2)") }
            }
        }
        let committed = try await pool.withConnection { try await $0.query("SELECT count(*), sum(v)::bigint FROM t") }
        #expect(committed[0, 0] == .int64(2))
        #expect(committed[0, 1] == .int64(4))
    }
}
