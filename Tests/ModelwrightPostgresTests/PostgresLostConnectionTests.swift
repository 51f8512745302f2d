import Foundation
import Modelwright
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing
import Trips

/// When the server ends the sessions of a store's reader and writer (`pg_terminate_backend`, as a
/// restart or a failover does), the store opens fresh connections: the statement that met the
/// lost link may fail, every later read and write works, and a write is never repeated behind
/// the app's back (one whose `COMMIT` lost its link says its outcome is unknown).
@Suite(.ownThread, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresLostConnectionTests {
    private static let readers = 2

    @Test(.timeLimit(.minutes(2)), arguments: 0..<3)
    func theStoreKeepsWorkingAfterItsSessionsAreEnded(seed: Int) async throws {
        let configuration = try await makeDatabase()
        let store = try Store(postgres: configuration, schema: Trips.schema, readers: Self.readers)
        let admin = try await PostgresConnection(configuration)
        var generator = SplitMix64(seed: 0x27, index: seed)
        var committed = Set<String>()
        var uncertain = Set<String>()
        for round in 0..<6 {
            // Every session of the database but the admin's ends at a drawn moment, while reads and
            // writes run (or before they start, or after they end).
            let delay = generator.next(below: 40)
            let terminator = Task {
                try await Task.sleep(for: .milliseconds(delay))
                try await admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        + "WHERE datname = current_database() AND pid <> pg_backend_pid()")
            }
            for operation in 0..<(2 + generator.next(below: 6)) {
                let name = "r\(round)o\(operation)"
                do {
                    try await store.performAndSave { try $0.insert(Self.user(name)) }
                    committed.insert(name)
                } catch PostgresError.commitOutcomeUnknown {
                    uncertain.insert(name)
                } catch {
                    #expect(!Self.isClosed(error), "round \(round): a write met a closed connection: \(error)")
                }
                do {
                    _ = try await store.performQuery { try $0.count(User.request()) }
                } catch {
                    #expect(!Self.isClosed(error), "round \(round): a read met a closed connection: \(error)")
                }
            }
            try await terminator.value
            // Once the sessions are gone, every reader and the writer work again at once.
            for reader in 0...Self.readers {
                let name = "after\(round)-\(reader)"
                try await store.performAndSave { try $0.insert(Self.user(name)) }
                committed.insert(name)
                let names = Set(try await store.performQuery { try $0.fetch(User.request()) }.map(\.username))
                #expect(committed.isSubset(of: names), "round \(round): a committed write is missing")
                #expect(names.subtracting(committed).isSubset(of: uncertain), "round \(round): a failed write was kept")
            }
        }
        await admin.close()
        try store.close()
    }

    /// The failure the store gave before it replaced lost connections: every statement on a
    /// connection whose link was gone.
    private static func isClosed(_ error: any Error) -> Bool {
        if case PostgresError.closed = error { return true }
        return "\(error)".contains("connection is closed")
    }

    private static func user(_ username: String) -> User {
        User(
            username: username, givenName: "Given", familyName: "Family", rating: 1,
            joinedAt: Date(timeIntervalSinceReferenceDate: 800_000_000))
    }
}
