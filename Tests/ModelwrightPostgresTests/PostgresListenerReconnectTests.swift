import Foundation
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing
import Trips

@testable import Modelwright

/// When the server ends the store's `LISTEN` connection (`pg_terminate_backend`, as an
/// administrator or a server restart does), the store connects and listens again and its
/// observers read again: a commit made while the feed was down still reaches them, round after
/// round.
@Suite(.ownThread, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresListenerReconnectTests {
    /// The server processes listening on the change feed in `configuration`'s database.
    private static func listeners(_ admin: PostgresConnection) async throws -> [Int32] {
        let rows = try await admin.query(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %' "
                + "AND pid <> pg_backend_pid() ORDER BY pid")
        return (0..<rows.count).compactMap { row in
            switch rows[row, 0] {
            case .int32(let pid): pid
            case .int64(let pid): Int32(pid)
            default: nil
            }
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: [1, 3])
    func observersHearCommitsMadeAfterTheListenerWasEnded(rounds: Int) async throws {
        let configuration = try await makeDatabase()
        let store = try Store(postgres: configuration, schema: Trips.schema)
        let admin = try await PostgresConnection(configuration)
        var updates = store.observe(User.request()).makeAsyncIterator()
        #expect(try await updates.next()?.count == 0)
        for round in 1...rounds {
            let listening = try await Self.listeners(admin)
            try #require(listening.count == 1, "round \(round): \(listening)")
            _ = try await admin.query("SELECT pg_terminate_backend($1)", [.int32(listening[0])])
            // Written by another connection right away, most likely before the feed listens again.
            try await admin.execute(
                "INSERT INTO \"User\" (id, username, \"givenName\", \"familyName\", rating, role, \"joinedAt\") "
                    + "VALUES (gen_random_uuid(), $1, 'G', 'F', 0, 'member', now())",
                [.text("user\(round)")])
            var seen = 0
            while seen < round { seen = try await updates.next()?.count ?? round }
            #expect(seen == round)
        }
        await admin.close()
        try store.close()
    }

    /// The server ends the store's writer and readers but not its listener; the store opens a
    /// fresh writer for its next write. Its observers then hear that write once, as their own
    /// commit, not a second time from the change feed (which had told the store's commits apart
    /// by the old writer's process ID, so it would also have dropped another session's commits
    /// once the server gave that ID to it), and another store still hears it.
    @Test(.timeLimit(.minutes(1)), arguments: 1...3)
    func aStoreWithAFreshWriterHearsItsOwnCommitsOnce(writes: Int) async throws {
        let configuration = try await makeDatabase()
        let store = try Store(postgres: configuration, schema: Trips.schema)
        let other = try Store(postgres: configuration, schema: Trips.schema)
        let admin = try await PostgresConnection(configuration)
        let wakes = Locked(0)
        let started = Locked(false)
        let token = store.observe(
            User.request(), changed: { _ in wakes.withLock { $0 += 1 } },
            refresh: { _ in started.withLock { $0 = true } }, failure: { _ in }, closed: {})
        var heard = other.observe(User.request()).makeAsyncIterator()
        #expect(try await heard.next()?.count == 0)
        while !started.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
        try await admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
                + "AND pid <> pg_backend_pid() AND query NOT LIKE 'LISTEN %'")
        for write in 1...writes {
            try await store.performAndSave {
                try $0.insert(
                    User(
                        username: "user\(write)", givenName: "G", familyName: "F", rating: 1,
                        joinedAt: Date(timeIntervalSinceReferenceDate: 0)))
            }
            var seen = 0
            while seen < write { seen = try await heard.next()?.count ?? write }
        }
        // The other store heard every write; the feed reaches this store at about the same moment.
        try await Task.sleep(for: .milliseconds(500))
        #expect(wakes.withLock { $0 } == writes)
        if let token { store.observers.remove(token) }
        await admin.close()
        try other.close()
        try store.close()
    }
}
