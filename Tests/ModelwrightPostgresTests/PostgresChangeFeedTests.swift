import Foundation
import ModelwrightTestSupport
import Testing

@testable import ModelwrightPostgres

/// The change feed on a real server: a commit of another process (`psql`) wakes an observer with
/// which tables, columns and rows it changed, with no polling; a rollback and an update that wrote
/// the same values send nothing; an update too large for one payload falls back to its table; and
/// random transactions are reported exactly as a model of the triggers' rule says.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresChangeFeedTests {
    /// A database with a few tables and the feed installed, and an observer on it.
    private static func observedDatabase() async throws -> (
        PostgresConfiguration, database: String, PostgresConnection, PostgresChangeObserver
    ) {
        let configuration = try await makeDatabase()
        let connection = try await PostgresConnection(configuration)
        for statement in [
            "CREATE TABLE \"Trip\" (id uuid PRIMARY KEY, title text NOT NULL, rating bigint NOT NULL)",
            "CREATE TABLE \"Tag\" (id uuid PRIMARY KEY, name text NOT NULL)",
            "CREATE TABLE \"Trip_tags\" (trip uuid NOT NULL, tag uuid NOT NULL)",
            "CREATE TABLE \"Marker\" (id uuid PRIMARY KEY)",
            "CREATE TABLE _modelwright_metadata (key text PRIMARY KEY, value text NOT NULL)",
        ] + PostgresChangeFeed.installation {
            try await connection.execute(statement)
        }
        let observer = try await PostgresChangeObserver(configuration)
        let database = try #require(
            configuration.connectionString.split(separator: " ").first { $0.hasPrefix("dbname=") }?.dropFirst(7))
        return (configuration, String(database), connection, observer)
    }

    /// The next change the observer reports, or `nil` after `timeout` (the observer is then stopped).
    private static func next(
        _ iterator: inout AsyncThrowingStream<PostgresCommittedChanges, any Error>.AsyncIterator,
        of observer: PostgresChangeObserver, timeout: Duration = .seconds(60)
    ) async throws -> PostgresCommittedChanges? {
        let deadline = Task {
            try await Task.sleep(for: timeout)
            observer.stop()
        }
        defer { deadline.cancel() }
        return try await iterator.next()
    }

    @Test func aCommitInAnotherProcessWakesTheObserverWithWhatItChanged() async throws {
        let (_, database, connection, observer) = try await Self.observedDatabase()
        let cluster = try #require(PostgresCluster.shared)
        var changes = observer.changes.makeAsyncIterator()
        let (kept, gone) = (UUID(), UUID())
        try cluster.psql(
            """
            INSERT INTO "Trip" VALUES ('\(kept)', 'Lisbon', 1), ('\(gone)', 'Porto', 2);
            INSERT INTO "Tag" VALUES ('\(UUID())', 'sea');
            """, database: database)
        let first = try #require(try await Self.next(&changes, of: observer))
        #expect(first.tablesWithNewOrDeletedRows == ["Trip", "Tag"])
        #expect(first.changedColumns.isEmpty)
        #expect(first.senderProcessID != connection.serverProcessID)
        // One transaction of another process: an update of one column of one row, an update
        // that writes the values rows had, a delete, a join-table row, the runtime's own table.
        try cluster.psql(
            """
            BEGIN;
            UPDATE "Trip" SET title = 'Lisboa' WHERE id = '\(kept)';
            UPDATE "Trip" SET rating = rating;
            DELETE FROM "Tag";
            INSERT INTO "Trip_tags" VALUES ('\(kept)', '\(gone)');
            INSERT INTO _modelwright_metadata VALUES ('k', 'v');
            COMMIT;
            """, database: database)
        let second = try #require(try await Self.next(&changes, of: observer))
        #expect(second.tablesWithNewOrDeletedRows == ["Tag", "Trip_tags"])
        #expect(second.changedColumns == ["Trip": ["title"]])
        #expect(second.updatedRows == ["Trip": [kept]])
        #expect(second.affects(table: "Trip", columns: ["title"]))
        #expect(!second.affects(table: "Trip", columns: ["rating"]))
        // A rolled-back transaction and an update to the same values send nothing: the next
        // change is the marker's.
        try cluster.psql(
            "BEGIN; INSERT INTO \"Trip\" VALUES ('\(UUID())', 'x', 0); ROLLBACK; UPDATE \"Trip\" SET rating = rating;",
            database: database)
        try cluster.psql("INSERT INTO \"Marker\" VALUES ('\(UUID())')", database: database)
        let third = try #require(try await Self.next(&changes, of: observer))
        #expect(third.tablesWithNewOrDeletedRows == ["Marker"])
        #expect(third.changedColumns.isEmpty)
        // Nothing polls: the observer's server process has run one statement, its LISTEN, and waits.
        let listeners = try await connection.query(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle' "
                + "AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()")
        #expect(listeners[0, 0] == .int64(1))
        observer.stop()
    }

    @Test func anUpdateTooLargeForOnePayloadNamesItsTableAndColumns() async throws {
        let (_, _, connection, observer) = try await Self.observedDatabase()
        var changes = observer.changes.makeAsyncIterator()
        try await connection.execute(
            "INSERT INTO \"Trip\" SELECT gen_random_uuid(), 'trip ' || n, n FROM generate_series(1, 1000) AS n")
        _ = try #require(try await Self.next(&changes, of: observer))
        try await connection.execute("UPDATE \"Trip\" SET rating = rating + 1")
        let update = try #require(try await Self.next(&changes, of: observer))
        #expect(update.tablesWithUnknownUpdatedRows == ["Trip"])
        #expect(update.changedColumns == ["Trip": ["rating"]])
        #expect(update.updatedRows.isEmpty)
        #expect(update.affects(table: "Trip", columns: ["rating"]))
        observer.stop()
    }

    /// Random transactions of inserts, updates (some writing the values rows had) and deletes:
    /// the observer reports for each exactly what a model of the triggers' rule expects.
    @Test func randomTransactionsAreReportedAsTheModelSays() async throws {
        let (configuration, _, _, observer) = try await Self.observedDatabase()
        let writer = try await PostgresConnection(configuration)
        var changes = observer.changes.makeAsyncIterator()
        var random = SplitMix64(seed: 0xFEED)
        var rows: [UUID: (title: String, rating: Int64)] = [:]
        let transactions = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 500 : 25
        for _ in 0..<transactions {
            var insertedOrDeleted = false
            var columns: Set<String> = []
            var updated: Set<UUID> = []
            try await writer.execute("BEGIN")
            for _ in 0..<random.size(in: 1...4) {
                switch random.next(below: 4) {
                case 0:
                    for _ in 0..<random.size(in: 1...3) {
                        let id = UUID()
                        rows[id] = ("a", 0)
                        try await writer.execute("INSERT INTO \"Trip\" VALUES ($1, 'a', 0)", [.uuid(id)])
                    }
                    insertedOrDeleted = true
                case 1 where !rows.isEmpty:
                    let id = random.pick(rows.keys.sorted { $0.uuidString < $1.uuidString })
                    rows[id] = nil
                    try await writer.execute("DELETE FROM \"Trip\" WHERE id = $1", [.uuid(id)])
                    insertedOrDeleted = true
                default:
                    // Every row whose rating is below a bound gets a title, maybe the one it has.
                    let title = random.pick(["a", "b"])
                    let bound = Int64(random.next(below: 3))
                    for (id, row) in rows where row.rating < bound && row.title != title {
                        updated.insert(id)
                        columns.insert("title")
                    }
                    for (id, row) in rows where row.rating < bound { rows[id] = (title, row.rating) }
                    try await writer.execute(
                        "UPDATE \"Trip\" SET title = $1 WHERE rating < $2", [.text(title), .int64(bound)])
                    if random.chance(0.5), let id = rows.keys.first {
                        rows[id]?.rating += 1
                        updated.insert(id)
                        columns.insert("rating")
                        try await writer.execute("UPDATE \"Trip\" SET rating = rating + 1 WHERE id = $1", [.uuid(id)])
                    }
                }
            }
            try await writer.execute("COMMIT")
            try await writer.execute("INSERT INTO \"Marker\" VALUES ($1)", [.uuid(UUID())])
            var seen: [PostgresCommittedChanges] = []
            while let change = try await Self.next(&changes, of: observer),
                !change.tablesWithNewOrDeletedRows.contains("Marker")
            {
                seen.append(change)
            }
            let expectedEmpty = !insertedOrDeleted && updated.isEmpty
            #expect(seen.count == (expectedEmpty ? 0 : 1), "\(seen)")
            guard let change = seen.first else { continue }
            #expect(change.tablesWithNewOrDeletedRows == (insertedOrDeleted ? ["Trip"] : []))
            #expect(change.changedColumns == (columns.isEmpty ? [:] : ["Trip": columns]))
            #expect(change.updatedRows == (updated.isEmpty ? [:] : ["Trip": updated]))
        }
        observer.stop()
    }
}
