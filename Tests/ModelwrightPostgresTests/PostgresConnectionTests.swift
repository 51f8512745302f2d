import Foundation
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing

/// A connection on a real server: parameters, prepared statements, both result formats,
/// transactions, cancellation, timeouts, a lost connection, advisory locks and the pool.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresConnectionTests {
    @Test func parametersBindByNumberAndBothFormatsReadTheSameValues() async throws {
        let connection = try await makeConnection()
        let parameters: [PostgresValue] = [
            .int16(.min), .int32(.max), .int64(.min), .double(-0.0), .float(.leastNonzeroMagnitude),
            .text("it's"), .bool(true), .bytes(Data([0, 255])), .uuid(UUID()), .numeric("-12.50"),
            .timestamp(microsecondsSince2000: 123), .jsonb("{\"a\": [1, 2]}"), .null,
        ]
        let sql = "SELECT " + (1...parameters.count).map { "$\($0)" }.joined(separator: ", ")
        let binary = try await connection.query(sql, parameters)
        let text = try await connection.query(sql, parameters, format: .text)
        for column in 0..<parameters.count {
            #expect(try binary.value(row: 0, column: column) == parameters[column], "binary \(column)")
            #expect(try text.value(row: 0, column: column) == parameters[column], "text \(column)")
        }
    }

    @Test func aStatementIsPreparedOnceAndReused() async throws {
        let connection = try await makeConnection()
        for value in 0..<20 {
            let rows = try await connection.query("SELECT $1::bigint + 1", [.int64(Int64(value))])
            #expect(rows[0, 0] == .int64(Int64(value) + 1))
        }
        let prepared = try await connection.query(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement = 'SELECT $1::bigint + 1'")
        #expect(prepared[0, 0] == .int64(1))
    }

    @Test func theStatementCacheStaysWithinItsLimit() async throws {
        let connection = try await makeConnection()
        for value in 0..<(PostgresConnection.statementLimit + 40) {
            #expect(try await connection.query("SELECT \(value)::bigint")[0, 0] == .int64(Int64(value)))
        }
        let prepared = try await connection.query("SELECT count(*) FROM pg_prepared_statements")
        guard case .int64(let count) = prepared[0, 0] else { throw PostgresError.closed }
        #expect(count > 0 && count <= Int64(PostgresConnection.statementLimit))
        // Statements prepared before the cache was emptied are prepared again.
        #expect(try await connection.query("SELECT 0::bigint")[0, 0] == .int64(0))
    }

    @Test func aTransactionCommitsWhenItsBodyReturnsAndRollsBackWhenItThrows() async throws {
        let connection = try await makeConnection()
        try await connection.execute("CREATE TABLE t (v bigint)")
        try await connection.transaction { try await $0.execute("INSERT INTO t VALUES (1)") }
        struct Stop: Error {}
        await #expect(throws: Stop.self) {
            try await connection.transaction { connection in
                try await connection.execute("INSERT INTO t VALUES (2)")
                throw Stop()
            }
        }
        #expect(try await connection.query("SELECT count(*) FROM t")[0, 0] == .int64(1))
    }

    @Test func aCommitAfterAFailedStatementSaysTheTransactionRolledBack() async throws {
        let connection = try await makeConnection()
        try await connection.execute("CREATE TABLE t (v bigint PRIMARY KEY)")
        await #expect(throws: PostgresError.transactionRolledBack) {
            try await connection.transaction { connection in
                try await connection.execute("INSERT INTO t VALUES (1)")
                _ = try? await connection.execute("INSERT INTO t VALUES (1)")  // fails; swallowed
            }
        }
        #expect(try await connection.query("SELECT count(*) FROM t")[0, 0] == .int64(0))
    }

    @Test func aServerErrorCarriesItsStateAndMessage() async throws {
        let connection = try await makeConnection()
        await #expect {
            try await connection.query("SELECT * FROM missing_table")
        } throws: { error in
            guard case PostgresError.server(let state, let message, _, _) = error else { return false }
            return state == "42P01" && message.contains("missing_table")
        }
    }

    @Test func cancellingTheTaskStopsTheStatementOnTheServer() async throws {
        let connection = try await makeConnection()
        let started = ContinuousClock.now
        let task = Task { try await connection.query("SELECT pg_sleep(600)") }
        try await Task.sleep(for: .milliseconds(300))
        task.cancel()
        await #expect(throws: PostgresError.cancelled) { try await task.value }
        // Far below the statement's 600 s, far above a loaded machine's delay (10.9 s was seen in CI).
        #expect(ContinuousClock.now - started < .seconds(120))
        // The connection stays usable.
        #expect(try await connection.query("SELECT 1")[0, 0] == .int32(1))
    }

    @Test func aStatementPastTheTimeoutIsStoppedAndSaysSo() async throws {
        var configuration = try await makeDatabase()
        configuration.statementTimeout = .milliseconds(200)
        let connection = try await PostgresConnection(configuration)
        await #expect(throws: PostgresError.timedOut) { try await connection.query("SELECT pg_sleep(10)") }
        #expect(try await connection.query("SELECT 1")[0, 0] == .int32(1))
    }

    /// Another session's `pg_cancel_backend` shares the timeout's SQLSTATE (57014) but is neither
    /// our cancel nor a timeout, with or without a statement timeout set.
    @Test(arguments: [nil, Duration.seconds(60)])
    func anotherSessionsCancelIsReportedAsItsOwnError(statementTimeout: Duration?) async throws {
        var configuration = try await makeDatabase()
        configuration.statementTimeout = statementTimeout
        let connection = try await PostgresConnection(configuration)
        let admin = try await PostgresConnection(configuration)
        let process = connection.serverProcessID
        let canceller = Task {
            while true {
                let running = try await admin.query(
                    "SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND query LIKE '%pg_sleep(30)%' AND state = 'active'",
                    [.int32(process)])
                if running[0, 0] == .int64(1) { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            try await admin.execute("SELECT pg_cancel_backend($1)", [.int32(process)])
        }
        await #expect {
            try await connection.query("SELECT pg_sleep(30)")
        } throws: { error in
            guard case PostgresError.server(let sqlState, _, _, _) = error else { return false }
            return sqlState == "57014"
        }
        try await canceller.value
        #expect(try await connection.query("SELECT 1")[0, 0] == .int32(1))
    }

    /// What another session (or a pooler's reset) does to the statements a connection prepared
    /// costs it one more preparation, not the connection.
    @Test(arguments: ["ALTER TABLE t ADD COLUMN w bigint", "DISCARD ALL", "DEALLOCATE ALL"])
    func aCachedStatementInvalidatedElsewhereIsPreparedAgain(change: String) async throws {
        let configuration = try await makeDatabase()
        let connection = try await PostgresConnection(configuration)
        try await connection.execute("CREATE TABLE t (v bigint)")
        try await connection.execute("INSERT INTO t VALUES (1)")
        #expect(try await connection.query("SELECT * FROM t").columnCount == 1)
        try await connection.transaction { _ in }
        if change.hasPrefix("ALTER") {
            try await PostgresConnection(configuration).execute(change)
        } else {
            try await connection.execute(change)
        }
        for _ in 0..<2 {
            #expect(try await connection.query("SELECT * FROM t").columnCount == (change.hasPrefix("ALTER") ? 2 : 1))
            try await connection.transaction { _ in }
        }
    }

    /// Timeouts too long for PostgreSQL or libpq are clamped to the longest they take, not a crash
    /// or a failed connection.
    @Test(arguments: [Duration.seconds(Int64.max), .seconds(30 * 86_400), .milliseconds(Int64(Int32.max) + 1)])
    func aHugeTimeoutIsClampedToTheLongestAllowed(timeout: Duration) async throws {
        var configuration = try await makeDatabase()
        configuration.connectTimeout = timeout
        configuration.statementTimeout = timeout
        let connection = try await PostgresConnection(configuration)
        #expect(try await connection.query("SHOW statement_timeout", format: .text)[0, 0] == .text("2147483647ms"))
    }

    @Test func aConnectionTheServerEndsIsReportedLost() async throws {
        let configuration = try await makeDatabase()
        let connection = try await PostgresConnection(configuration)
        let other = try await PostgresConnection(configuration)
        try await other.execute("SELECT pg_terminate_backend($1)", [.int32(connection.serverProcessID)])
        await #expect {
            try await connection.query("SELECT 1")
        } throws: { error in
            guard case PostgresError.connectionLost = error else { return false }
            return "\(error)".contains("lost")
        }
        #expect(await connection.isUsable == false)
        await #expect(throws: PostgresError.closed) { try await connection.query("SELECT 1") }
    }

    /// A deferred constraint trigger runs inside COMMIT; this one ends its own server process
    /// there, so the connection breaks while COMMIT runs, as a network failure would.
    @Test func aConnectionLostDuringCommitSaysItMayOrMayNotHaveCommitted() async throws {
        let connection = try await makeConnection()
        try await connection.execute("CREATE TABLE t (v bigint)")
        try await connection.execute(
            """
            CREATE FUNCTION die() RETURNS trigger LANGUAGE plpgsql AS
            $$ BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NULL; END $$
            """)
        try await connection.execute(
            "CREATE CONSTRAINT TRIGGER die AFTER INSERT ON t DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION die()"
        )
        await #expect {
            try await connection.transaction { try await $0.execute("INSERT INTO t VALUES (1)") }
        } throws: { error in
            error as? PostgresError == .commitOutcomeUnknown && "\(error)".contains("may or may not have committed")
        }
    }

    @Test func anAdvisoryLockRunsConcurrentWritersOneAtATime() async throws {
        let configuration = try await makeDatabase()
        let setup = try await PostgresConnection(configuration)
        try await setup.execute("CREATE TABLE counter (v bigint)")
        try await setup.execute("INSERT INTO counter VALUES (0)")
        // Read, wait, write: without the lock the writers would overwrite each other's increments.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<6 {
                group.addTask {
                    let connection = try await PostgresConnection(configuration)
                    for _ in 0..<3 {
                        try await connection.withAdvisoryLock(27) { connection in
                            let value = try await connection.query("SELECT v FROM counter")[0, 0]
                            guard case .int64(let current) = value else { throw PostgresError.closed }
                            try await connection.execute("SELECT pg_sleep(0.005)")
                            try await connection.execute("UPDATE counter SET v = $1", [.int64(current + 1)])
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await setup.query("SELECT v FROM counter")[0, 0] == .int64(18))
    }

    @Test func thePoolNeverOpensMoreThanItsSizeAndReplacesABrokenConnection() async throws {
        let configuration = try await makeDatabase()
        let pool = PostgresPool(configuration, size: 3)
        let processes = try await withThrowingTaskGroup(of: Int32.self) { group in
            for _ in 0..<30 {
                group.addTask {
                    try await pool.withConnection { connection in
                        try await connection.execute("SELECT pg_sleep(0.01)")
                        return connection.serverProcessID
                    }
                }
            }
            return try await group.reduce(into: Set<Int32>()) { $0.insert($1) }
        }
        #expect(processes.count <= 3)
        #expect(await pool.openConnections <= 3)
        // Break one connection: the pool drops it and opens another.
        let broken = try await pool.withConnection { connection in
            let other = try await PostgresConnection(configuration)
            try await other.execute("SELECT pg_terminate_backend($1)", [.int32(connection.serverProcessID)])
            _ = try? await connection.query("SELECT 1")
            return connection.serverProcessID
        }
        for _ in 0..<5 {
            let process = try await pool.withConnection { connection in
                _ = try await connection.query("SELECT 1")
                return connection.serverProcessID
            }
            #expect(process != broken)
        }
    }

    @Test func aListenerReceivesNotificationsInOrderWithTheirPayloads() async throws {
        let configuration = try await makeDatabase()
        let listener = try await PostgresListener(configuration, channels: ["changes", "other \"channel\""])
        let sender = try await PostgresConnection(configuration)
        let payloads = (0..<50).map { "Trip:\($0)" }
        for payload in payloads { try await sender.notify("changes", payload: payload) }
        try await sender.notify("other \"channel\"", payload: "x")
        // A notification sent inside a transaction arrives only when it commits.
        try await sender.transaction { try await $0.notify("changes", payload: "committed") }
        var received: [PostgresNotification] = []
        for try await notification in listener.notifications {
            received.append(notification)
            if received.count == payloads.count + 2 { break }
        }
        #expect(received.prefix(payloads.count).map(\.payload) == payloads)
        #expect(received[payloads.count].channel == "other \"channel\"")
        #expect(received.last?.payload == "committed")
        #expect(received.allSatisfy { $0.senderProcessID == sender.serverProcessID })
        listener.stop()
    }
}

/// A server process that stops answering (frozen with SIGSTOP, as a hung host or a dead network
/// would look) cannot hold the caller past the statement timeout or a cancel: the connection is
/// given up as lost a few seconds later.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresFrozenServerTests {
    enum Way: CaseIterable, Sendable {
        case statementTimeout, cancellation
    }

    @Test(arguments: Way.allCases)
    func aFrozenServerIsGivenUpAfterTheTimeoutOrACancel(way: Way) async throws {
        var configuration = try await makeDatabase()
        if way == .statementTimeout { configuration.statementTimeout = .milliseconds(500) }
        let connection = try await PostgresConnection(configuration)
        let process = connection.serverProcessID
        try #require(kill(process, SIGSTOP) == 0, "the tests may not signal the server's processes")
        defer {
            kill(process, SIGCONT)
            kill(process, SIGTERM)
        }
        let started = ContinuousClock.now
        let task = Task { try await connection.query("SELECT 1") }
        if way == .cancellation {
            try await Task.sleep(for: .milliseconds(300))
            task.cancel()
        }
        await #expect {
            try await task.value
        } throws: { error in
            guard case PostgresError.connectionLost = error else { return false }
            return true
        }
        // About 3.5 s on a quiet machine; the bound only tells "given up" from "held until the
        // server wakes" (forever), so a loaded CI machine does not fail it.
        #expect(ContinuousClock.now - started < .seconds(60))
        #expect(await connection.isUsable == false)
    }
}
