import Foundation
import Modelwright
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing
import Trips

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
}
