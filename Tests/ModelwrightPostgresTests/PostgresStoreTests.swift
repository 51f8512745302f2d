import Foundation
import Modelwright
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing
import Trips

/// A `Store` opened on PostgreSQL with the generated Trips code, unchanged: creation on an empty
/// database, opening it again, refusals that touch nothing (another model, another version, a
/// database that is no store, missing columns), and observation across stores and processes.
@Suite(.ownThread, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresStoreTests {
    /// Another model, as a tool would describe it.
    static let otherModel = SchemaDescription(
        modelName: "Other", version: 1,
        entities: [EntityDescription(name: "Counter", attributes: [.init(name: "value", type: .int64)])])

    /// Every table of the database and every row of the metadata, to show a refusal touched nothing.
    static func snapshot(_ configuration: PostgresConfiguration) async throws -> String {
        let connection = try await PostgresConnection(configuration)
        defer { Task { await connection.close() } }
        let tables = try await connection.query(
            "SELECT string_agg(table_name || ':' || column_name, ',' ORDER BY table_name, column_name) "
                + "FROM information_schema.columns WHERE table_schema = current_schema()")
        let metadata = try await connection.query(
            "SELECT string_agg(key || '=' || value, ',' ORDER BY key) FROM _modelwright_metadata")
        return "\(tables[0, 0]) \(metadata[0, 0])"
    }

    @Test func aStoreIsCreatedOnAnEmptyDatabaseAndOpenedAgain() async throws {
        let configuration = try await makeDatabase()
        let ada = makeUser("ada", rating: 5)
        do {
            let store = try Store(postgres: configuration, schema: Trips.schema)
            try await store.performAndSave { try $0.insert(ada) }
            try store.close()
        }
        let store = try Store(postgres: configuration, schema: Trips.schema, readers: 3)
        let found = try await store.performQuery { try $0.existing(ada.id) }
        #expect(found == ada)
        try store.close()
    }

    @Test func aDatabaseOfAnotherModelOrVersionIsRefusedUntouched() async throws {
        let configuration = try await makeDatabase()
        let store = try Store(postgres: configuration, schema: Trips.schema)
        try await store.performAndSave { try $0.insert(makeUser("ada", rating: 5)) }
        try store.close()
        let before = try await Self.snapshot(configuration)
        let older = try Trips.versions[0].schema()
        for schema in [Self.otherModel, older] {
            #expect {
                _ = try Store(postgres: configuration, schema: schema)
            } throws: { error in
                guard case StoreError.schemaMismatch(_, let version, _, let expected) = error else { return false }
                return version == Trips.schema.version && expected == schema.version
            }
        }
        #expect(try await Self.snapshot(configuration) == before)
    }

    @Test func aDatabaseThatIsNoStoreOrLacksAColumnIsRefusedUntouched() async throws {
        let configuration = try await makeDatabase()
        let connection = try await PostgresConnection(configuration)
        try await connection.execute("CREATE TABLE accounts (id bigint PRIMARY KEY)")
        #expect {
            _ = try Store(postgres: configuration, schema: Trips.schema)
        } throws: { error in
            guard case StoreError.notAStore(let location) = error else { return false }
            return !location.contains("secret")
        }
        #expect(
            try await connection.query(
                "SELECT count(*) FROM information_schema.tables "
                    + "WHERE table_schema = current_schema()")[0, 0] == .int64(1))
        try await connection.execute("DROP TABLE accounts")
        try Store(postgres: configuration, schema: Trips.schema).close()
        try await connection.execute("ALTER TABLE \"User\" DROP COLUMN \"rating\"")
        #expect {
            _ = try Store(postgres: configuration, schema: Trips.schema)
        } throws: { error in
            guard case StoreError.unexpectedSchema(_, let differences) = error else { return false }
            return differences == ["the column \"rating\" of \"User\" is missing"]
        }
        await connection.close()
    }

    @Test func anUnreachableServerIsAClearErrorWithoutThePassword() throws {
        let configuration = PostgresConfiguration("postgresql://app:hunter2@127.0.0.1:1/trips?connect_timeout=2")
        #expect {
            _ = try Store(postgres: configuration, schema: Trips.schema)
        } throws: { error in
            guard case PostgresError.connectionFailed(let message) = error else { return false }
            return !message.contains("hunter2") && !"\(error)".contains("hunter2")
        }
    }

    /// A commit in one store wakes `observe` in another store on the same database.
    @Test(.timeLimit(.minutes(1))) func aCommitInAnotherStoreWakesObservers() async throws {
        let configuration = try await makeDatabase()
        let watcher = try Store(postgres: configuration, schema: Trips.schema)
        let writer = try Store(postgres: configuration, schema: Trips.schema)
        var updates = watcher.observe(User.request().filter { $0.rating >= 5 }).makeAsyncIterator()
        #expect(try await updates.next()?.map(\.username) == [])
        for count in 1...5 {
            try await writer.performAndSave { try $0.insert(makeUser("u\(count)", rating: 5)) }
            let seen = try await updates.next()
            #expect(seen?.count == count)
        }
        try watcher.close()
        try writer.close()
    }

    /// A commit in another process wakes `observe` and a results controller.
    @Test(.timeLimit(.minutes(1))) func aCommitInAnotherProcessWakesObserversAndResultsControllers() async throws {
        let configuration = try await makeDatabase()
        let store = try Store(postgres: configuration, schema: Trips.schema)
        var updates = store.observe(User.request()).makeAsyncIterator()
        #expect(try await updates.next()?.count == 0)
        let controller = FetchedResultsController(
            store: store, request: User.request().sorted { [$0.rating.ascending] }, batchSize: 2)
        var results = controller.makeAsyncIterator()
        #expect(try await results.next()?.snapshot.count == 0)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: builtExecutable(named: "PostgresRaceProbe"))
        process.arguments = ["store", configuration.connectionString, "3"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        var seen = 0
        while seen < 3 {
            seen = try await updates.next()?.count ?? 3
        }
        var snapshot: ResultsSnapshot<User>?
        while (snapshot?.count ?? 0) < 3 {
            snapshot = try #require(try await results.next()).snapshot
        }
        // All three rate 9: ties come in "id" order on PostgreSQL (insertion order on SQLite).
        let shown = try #require(snapshot).ids.map { $0.uuid.uuidString.lowercased() }
        #expect(shown == shown.sorted())
        process.waitUntilExit()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(printed)")
        #expect(seen == 3)
        try store.close()
    }

    /// A user joined at a whole second: a `Date` keeps what PostgreSQL's microseconds cannot
    /// (see `dateRoundsToTheMicrosecond`).
    private func makeUser(_ username: String, rating: Int16) -> User {
        User(
            username: username, givenName: username.capitalized, familyName: "Test", rating: rating,
            joinedAt: Date(timeIntervalSinceReferenceDate: 800_000_000))
    }

    /// The pinned difference of the engines: a date is stored to the nearest microsecond on
    /// PostgreSQL (`timestamptz`), while SQLite keeps every bit of the `Double`.
    @Test func dateRoundsToTheMicrosecond() async throws {
        let configuration = try await makeDatabase()
        let store = try Store(postgres: configuration, schema: Trips.schema)
        let seconds = 800_000_000.123_456_7
        let user = User(
            username: "d", givenName: "D", familyName: "D", joinedAt: Date(timeIntervalSinceReferenceDate: seconds))
        try await store.performAndSave { try $0.insert(user) }
        let stored = try #require(try await store.performQuery { try $0.existing(user.id) })
        #expect(stored.joinedAt != user.joinedAt)
        #expect(stored.joinedAt.timeIntervalSinceReferenceDate == 800_000_000.123_457)
        try store.close()
    }
}
