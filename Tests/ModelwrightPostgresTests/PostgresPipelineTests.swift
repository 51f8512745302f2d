import Foundation
import Modelwright
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing
import Trips

/// What the pipelined paths keep: a read's first query, sent with its `BEGIN` and schema check in
/// one round trip, still never returns rows of a database whose schema is no longer the store's,
/// and a batch insert, sent in pipelines without waiting for each row, stores exactly its rows or,
/// when any row fails, none of them and names the failure.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresPipelineTests {
    /// Every reader has prepared the fetch (so its next run is pipelined with the `BEGIN`), then
    /// another store replaces the database: the fetch fails in the server (its table is gone) and
    /// the check refuses, and the store reports the schema mismatch, on every reader, not the
    /// failed query.
    @Test func aPreparedFetchAfterTheDatabaseWasReplacedIsRefusedAsAMismatch() async throws {
        let configuration = try await makeDatabase()
        let readers = 3
        let store = try Store(postgres: configuration, schema: Trips.schema, readers: readers)
        try await store.performAndSave { try $0.insert(Self.user(0)) }
        for _ in 0..<readers {
            #expect(try await store.performQuery { try $0.fetch(User.request()) }.count == 1)
        }
        let connection = try await PostgresConnection(configuration)
        try await connection.execute("DROP SCHEMA public CASCADE")
        try await connection.execute("CREATE SCHEMA public")
        await connection.close()
        try Store(postgres: configuration, schema: PostgresStoreTests.otherModel, readers: 1).close()

        for _ in 0..<readers {
            await #expect {
                _ = try await store.performQuery { try $0.fetch(User.request()) }
            } throws: { error in
                PostgresStoreReplacedWhileOpenTests.isMismatch(error, expecting: Trips.schema)
            }
        }
        try store.close()
    }

    /// Batches of many sizes (across the pipeline's window of 512 statements), some with a row
    /// that breaks a uniqueness constraint at a drawn position: a batch stores all its rows, read
    /// back equal, or fails with the uniqueness violation and stores none, and the store goes on.
    @Test func aPipelinedBatchStoresAllItsRowsOrNone() async throws {
        let configuration = try await makeDatabase()
        let store = try Store(postgres: configuration, schema: Trips.schema, readers: 2)
        var generator = SystemRandomNumberGenerator()
        var stored: [User.ID: User] = [:]
        var next = 0
        let sizes = [0, 1, 2, 511, 512, 513, 1_100] + (0..<5).map { _ in Int.random(in: 1...1_500, using: &generator) }
        for (round, size) in sizes.enumerated() {
            var users = (0..<size).map { Self.user(next + $0) }
            next += size
            // Every other batch holds a duplicate username, at a drawn position.
            let failing = round % 2 == 1 && size > 1
            if failing {
                let position = Int.random(in: 1..<size, using: &generator)
                let copied = users[Int.random(in: 0..<position, using: &generator)]
                users[position] = User(
                    username: copied.username, givenName: "Dup", familyName: "Dup",
                    joinedAt: Date(timeIntervalSinceReferenceDate: 0))
            }
            let batch = users
            if failing {
                await #expect("batch \(round) of \(size)") {
                    _ = try await store.performAndSave { try $0.batchInsert(batch) }
                } throws: { error in
                    guard case StoreError.uniquenessViolation(let entity, let attributes) = error else { return false }
                    return entity == "User" && attributes == ["username"]
                }
            } else {
                #expect(try await store.performAndSave { try $0.batchInsert(batch) } == size)
                for user in batch { stored[user.id] = user }
            }
            let found = try await store.performQuery { try $0.fetch(User.request()) }
            #expect(found.count == stored.count, "after batch \(round) of \(size)")
            #expect(Dictionary(uniqueKeysWithValues: found.map { ($0.id, $0) }) == stored)
        }
        try store.close()
    }

    /// A user with values that must come back exact: extreme ratings, quotes and non-ASCII text,
    /// empty and missing values, a date at a whole second.
    private static func user(_ number: Int) -> User {
        let ratings: [Int16] = [.min, -1, 0, 1, .max]
        return User(
            username: "u\(number) ✓ x'\"", givenName: number % 3 == 0 ? "" : String(repeating: "é", count: number % 7),
            familyName: "F\(number)", namePrefix: number % 2 == 0 ? nil : "Dr",
            rating: ratings[number % ratings.count],
            joinedAt: Date(timeIntervalSinceReferenceDate: Double(number) - 1e9), isVerified: number % 2 == 0)
    }
}
