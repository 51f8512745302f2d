import Foundation
import ModelwrightEngineTestSupport
import ModelwrightTestSupport
import Testing

@testable import Modelwright

/// Persistent history, checked against the data itself: what a transaction recorded must be
/// exactly the difference between the store before and after it, whether it ran in this process
/// or in `HistoryProbe`, a second process that commits as "widget". The tests within one process
/// run on every engine (``TestEngine``).
@Suite(.ownThread, .serialized)
struct HistoryTests {
    private static let probe = builtExecutable(named: "HistoryProbe")

    private static func launch(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: probe)
        process.arguments = arguments
        try process.run()
        return process
    }

    private static func run(_ arguments: [String]) throws -> Int32 {
        let process = try launch(arguments)
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// One stored record as text, column by column (stored column names, as history names them).
    struct Row: Hashable, Sendable {
        let entity: String
        let values: [String: String]
    }

    private static func snapshot(_ store: Store) async throws -> [UUID: Row] {
        try await store.performQuery { context in
            var rows: [UUID: Row] = [:]
            for user in try context.fetch(User.request()) {
                rows[user.id.uuid] = Row(
                    entity: "User",
                    values: [
                        "username": user.username, "givenName": user.givenName, "familyName": user.familyName,
                        "namePrefix": "\(user.namePrefix as Any)", "rating": "\(user.rating)", "role": "\(user.role)",
                        "organization": "\(user.organizationID as Any)", "profile": "\(user.profileID as Any)",
                    ])
            }
            for trip in try context.fetch(Trip.request()) {
                rows[trip.id.uuid] = Row(
                    entity: "Trip",
                    values: ["title": trip.title, "budget": "\(trip.budget as Any)", "owner": "\(trip.ownerID)"])
            }
            return rows
        }
    }

    /// The changes that turn `before` into `after`, as history records them.
    private static func difference(_ before: [UUID: Row], _ after: [UUID: Row]) -> Set<Change> {
        var changes: Set<Change> = []
        for (id, row) in after {
            guard let old = before[id] else {
                changes.insert(Change(entity: row.entity, id: id, kind: .insert, attributes: []))
                continue
            }
            let changed = Set(row.values.keys.filter { row.values[$0] != old.values[$0] })
            if !changed.isEmpty {
                changes.insert(Change(entity: row.entity, id: id, kind: .update, attributes: changed))
            }
        }
        for (id, row) in before where after[id] == nil {
            changes.insert(Change(entity: row.entity, id: id, kind: .delete, attributes: []))
        }
        return changes
    }

    struct Change: Hashable {
        let entity: String
        let id: UUID
        let kind: HistoryChange.Kind
        let attributes: Set<String>

        init(entity: String, id: UUID, kind: HistoryChange.Kind, attributes: Set<String>) {
            self.entity = entity
            self.id = id
            self.kind = kind
            self.attributes = attributes
        }

        init(_ change: HistoryChange) {
            self.init(
                entity: change.entity, id: change.recordID, kind: change.kind, attributes: change.changedAttributes)
        }
    }

    private static func makeStore(_ url: URL, author: String = "app") throws -> Store {
        try Store(url: url, schema: Fixture.schema, history: .enabled(author: author))
    }

    private static func seedUsers(_ store: Store, count: Int) async throws {
        try await store.performAndSave { context in
            for index in 0..<count {
                try context.insert(makeUser("seed\(index)-\(UUID().uuidString)", "G\(index)", rating: Int16(index % 5)))
            }
        }
    }

    @Test("each of the child's transactions is recorded as exactly what it changed, under its author")
    func childTransactionsAreTheirDifference() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.probe), "build the HistoryProbe target")
        let url = temporaryStoreURL()
        defer { removeStore(at: url) }
        let store = try Self.makeStore(url)
        defer { try? store.close() }
        try await Self.seedUsers(store, count: 8)
        var recorded = 0
        for seed in UInt64(1)...12 {
            let token = try await store.lastHistoryToken()
            let before = try await Self.snapshot(store)
            #expect(try Self.run(["commit", url.path, "\(seed)", "1"]) == 0)
            let after = try await Self.snapshot(store)
            let history = try await store.fetchHistory(after: token)
            let expected = Self.difference(before, after)
            #expect(history.count == (expected.isEmpty ? 0 : 1), "seed \(seed)")
            #expect(history.allSatisfy { $0.author == "widget" })
            #expect(Set(history.flatMap(\.changes).map(Change.init)) == expected, "seed \(seed)")
            #expect(try await store.fetchHistory(after: token, author: "app").isEmpty)
            #expect(try await store.fetchHistory(after: token, excludingAuthor: "widget").isEmpty)
            for entity in ["User", "Trip"] {
                let changes = try await store.fetchHistory(after: token, entity: entity).flatMap(\.changes)
                #expect(Set(changes.map(Change.init)) == expected.filter { $0.entity == entity })
            }
            recorded += history.count
        }
        #expect(recorded > 6, "most random transactions change something")
    }

    @Test(
        "a write's own author, and its own changes, are recorded in the parent's process too",
        arguments: TestEngine.available) func parentWritesAreRecorded(engine: TestEngine) async throws
    {
        try await engine.withStore(schema: Fixture.schema, history: .enabled(author: "app")) { store in
            let user = makeUser("ada")
            let start = try await store.lastHistoryToken()
            try await store.performAndSave(author: "intent") { context in
                try context.insert(user)
                var renamed = user
                renamed.rating = 4  // merged into the insert
                try context.update(renamed)
                try context.insert(Trip(title: "Lisbon", ownerID: user.id))
            }
            try await store.performAndSave { context in
                var renamed = user
                renamed.rating = 4  // as stored: not a change
                renamed.familyName = "Lovelace"
                try context.update(renamed)
            }
            try await store.performAndSave { context in try context.delete(user.id) }  // cascades to the trip
            let history = try await store.fetchHistory(after: start)
            #expect(history.map(\.author) == ["intent", "app", "app"])
            #expect(history.map(\.token) == history.map(\.token).sorted())
            #expect(history[0].changes.map(\.kind) == [.insert, .insert])
            #expect(
                history[1].changes.map(Change.init) == [
                    Change(entity: "User", id: user.id.uuid, kind: .update, attributes: ["familyName"])
                ])
            #expect(Set(history[2].changes.map(\.entity)) == ["User", "Trip"])
            #expect(history[2].changes.allSatisfy { $0.kind == .delete })
            // A transaction that throws leaves no history.
            await #expect(throws: (any Error).self) {
                try await store.performAndSave { context in
                    try context.insert(makeUser("grace"))
                    throw CancellationError()
                }
            }
            #expect(try await store.lastHistoryToken() == history.last?.token)
        }
    }

    @Test("tokens survive encoding and keep their order", arguments: TestEngine.available) func tokensAreCodable(
        engine: TestEngine
    ) async throws {
        try await engine.withStore(schema: Fixture.schema, history: .enabled(author: "app")) { store in
            for index in 0..<5 {
                try await store.performAndSave { try $0.insert(makeUser("user\(index)", "G\(index)")) }
            }
            let tokens = try await store.fetchHistory(after: nil).map(\.token)
            let decoded = try JSONDecoder().decode([HistoryToken].self, from: JSONEncoder().encode(tokens))
            #expect(decoded == tokens && tokens.count == 5 && tokens == tokens.sorted())
            #expect(try await store.fetchHistory(after: tokens[2]).map(\.token) == Array(tokens[3...]))
        }
    }

    @Test("purging before a token removes exactly the transactions before it, and no data")
    func purgeRemovesOnlyWhatItShould() async throws {
        let url = temporaryStoreURL()
        defer { removeStore(at: url) }
        let store = try Self.makeStore(url)
        defer { try? store.close() }
        try await Self.seedUsers(store, count: 6)
        for seed in UInt64(20)...25 {
            #expect(try Self.run(["commit", url.path, "\(seed)", "2"]) == 0)
            try await Self.seedUsers(store, count: 1)
        }
        let all = try await store.fetchHistory(after: nil)
        let data = try await Self.snapshot(store)
        var random = SplitMix64(seed: 7)
        let cut = all[Int(random.next() % UInt64(all.count))].token
        let deleted = try await store.deleteHistory(before: cut)
        let kept = try await store.fetchHistory(after: nil)
        #expect(deleted == all.filter { $0.token < cut }.count)
        #expect(kept == all.filter { $0.token >= cut })
        #expect(try await Self.snapshot(store) == data)
    }

    /// Replays the whole history: the records it says exist must be exactly the stored ones.
    private static func replayMatchesData(_ store: Store) async throws -> Bool {
        var live: [UUID: String] = [:]
        for transaction in try await store.fetchHistory(after: nil) {
            for change in transaction.changes {
                switch change.kind {
                case .insert:
                    guard live.updateValue(change.entity, forKey: change.recordID) == nil else { return false }
                case .update:
                    guard live[change.recordID] == change.entity else { return false }
                case .delete:
                    guard live.removeValue(forKey: change.recordID) == change.entity else { return false }
                }
            }
        }
        let stored = try await snapshot(store).mapValues(\.entity)
        return live == stored
    }

    @Test("SIGKILL at any moment of the child's commits leaves no data without history and no history without data")
    func killedChildLeavesHistoryAndDataTogether() async throws {
        let url = temporaryStoreURL()
        defer { removeStore(at: url) }
        try Self.makeStore(url).close()
        var random = SplitMix64(seed: 42)
        var transactions = 0
        for round in 0..<16 {
            let child = try Self.launch(["loop", url.path, "\(round + 1)"])
            // The kill's moment is drawn from once the child commits: on a loaded machine its
            // start alone can take longer than any drawn delay, and the kill then hits no commit.
            let started = Date()
            while Date().timeIntervalSince(started) < 60, child.isRunning {
                let store = try Self.makeStore(url)
                let count = try await store.fetchHistory(after: nil).count
                try store.close()
                if count > transactions { break }
                usleep(10_000)
            }
            usleep(useconds_t(30_000 + random.next() % 250_000))
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            #expect(child.terminationReason == .uncaughtSignal, "round \(round)")
            let store = try Self.makeStore(url)
            #expect(try await Self.replayMatchesData(store), "round \(round)")
            transactions = try await store.fetchHistory(after: nil).count
            try store.close()
        }
        #expect(transactions > 16, "the child committed between kills")
    }

    @Test("the parent's observation sees the child's commit within the documented interval", .timeLimit(.minutes(1)))
    func otherProcessesCommitsAreObserved() async throws {
        let url = temporaryStoreURL()
        defer { removeStore(at: url) }
        let store = try Self.makeStore(url)
        defer { try? store.close() }
        var iterator = store.observe(User.request()).makeAsyncIterator()
        #expect(try await iterator.next()?.isEmpty == true)
        for seed in UInt64(100)...103 {
            let before = try await store.performQuery { try $0.count(User.request()) }
            let child = try Self.launch(["commit", url.path, "\(seed)", "1"])
            child.waitUntilExit()
            let exited = ContinuousClock.now
            let after = try await store.performQuery { try $0.count(User.request()) }
            guard after != before else { continue }
            var seen = -1
            while seen != after {
                seen = try await iterator.next()?.count ?? -1
            }
            // The commit happened before the child exited: interval, plus a refresh and a busy machine.
            #expect(ContinuousClock.now - exited < Store.remoteChangeInterval + .seconds(15))
        }
    }

    @Test(
        "a results controller hears of the child's commits with exactly the records they changed",
        .timeLimit(.minutes(1)))
    func resultsControllerSeesOtherProcessesCommits() async throws {
        let url = temporaryStoreURL()
        defer { removeStore(at: url) }
        let store = try Self.makeStore(url)
        defer { try? store.close() }
        try await Self.seedUsers(store, count: 8)
        let controller = FetchedResultsController(store: store, request: User.request())
        var updates = controller.makeAsyncIterator()
        var ids = try await updates.next()?.snapshot.ids ?? []
        for seed in UInt64(200)...205 {
            let before = try await Self.snapshot(store)
            #expect(try Self.run(["commit", url.path, "\(seed)", "1"]) == 0)
            let expected = Self.difference(before, try await Self.snapshot(store)).filter { $0.entity == "User" }
            guard !expected.isEmpty else { continue }
            var inserted: Set<UUID> = []
            var deleted: Set<UUID> = []
            var updated: Set<UUID> = []
            // One commit may reach the controller as more than one update; gather until it shows.
            let want = Set(try await store.performQuery { try $0.fetch(User.request()) }.map(\.id))
            while Set(ids) != want || inserted.count + deleted.count + updated.count < expected.count {
                guard let update = try await updates.next() else { break }
                ids = update.snapshot.ids
                inserted.formUnion(update.changes?.insertedRecords.map(\.id.uuid) ?? [])
                deleted.formUnion(update.changes?.deletedRecords.map(\.id.uuid) ?? [])
                updated.formUnion(update.changes?.updatedRecords.map(\.id.uuid) ?? [])
            }
            #expect(inserted == Set(expected.filter { $0.kind == .insert }.map(\.id)), "seed \(seed)")
            #expect(deleted == Set(expected.filter { $0.kind == .delete }.map(\.id)), "seed \(seed)")
            #expect(updated.isSubset(of: Set(expected.filter { $0.kind == .update }.map(\.id))), "seed \(seed)")
        }
    }

    @Test("without history, another connection's commit still refreshes observers", .timeLimit(.minutes(1)))
    func commitsWithoutHistoryAreObserved() async throws {
        let url = temporaryStoreURL()
        defer { removeStore(at: url) }
        let observed = try Store(url: url, schema: Fixture.schema)
        defer { try? observed.close() }
        let other = try Store(url: url, schema: Fixture.schema)
        defer { try? other.close() }
        var iterator = observed.observe(User.request()).makeAsyncIterator()
        #expect(try await iterator.next()?.isEmpty == true)
        try await other.performAndSave { try $0.insert(makeUser("ada")) }
        #expect(try await iterator.next()?.map(\.username) == ["ada"])
        #expect(try await observed.fetchHistory(after: nil).isEmpty)
    }

    @Test("a migration keeps the history tables and their rows")
    func migrationKeepsHistory() async throws {
        let url = temporaryStoreURL()
        defer { removeStore(at: url) }
        let store = try Self.makeStore(url)
        try await Self.seedUsers(store, count: 3)
        let history = try await store.fetchHistory(after: nil)
        try store.close()
        let badge = EntityDescription(name: "Badge", attributes: [AttributeDescription(name: "label", type: .string)])
        let v2 = SchemaDescription(
            modelName: "Trips", version: 2, entities: Fixture.schema.entities.filter { $0.name != "Order" } + [badge])
        let plan = MigrationPlan(current: v2, stages: [.lightweight(from: Fixture.schema, to: v2)])
        let migrated = try Store(url: url, migrationPlan: plan, history: .enabled(author: "app"))
        defer { try? migrated.close() }
        // The stage recorded itself: one transaction by "migration", with no changes, after the rest.
        let afterMigration = try await migrated.fetchHistory(after: nil)
        #expect(Array(afterMigration.dropLast()) == history)
        #expect(afterMigration.last?.author == "migration" && afterMigration.last?.changes.isEmpty == true)
        try await migrated.performAndSave { try $0.insert(makeUser("after")) }
        #expect(try await migrated.fetchHistory(after: afterMigration.last?.token).count == 1)
        #expect(try await migrated.fetchHistory(after: nil, excludingAuthor: "migration").count == history.count + 1)
    }

    @Test("history written in another format is refused, and the store is left as it is")
    func anotherHistoryFormatIsRefused() async throws {
        let url = temporaryStoreURL()
        defer { removeStore(at: url) }
        try Self.makeStore(url).close()
        do {
            let connection = try SQLiteConnection(path: url.path)
            try connection.execute(
                "UPDATE \"\(SchemaSQL.metadataTable)\" SET \"value\" = '2' WHERE \"key\" = 'historyFormat'")
            #expect(connection.changes == 1, "the store recorded its history format")
        }
        let before = try Data(contentsOf: url)
        #expect {
            try Store(url: url, schema: Fixture.schema, history: .enabled(author: "app"))
        } throws: { error in
            guard case StoreError.unsupportedHistoryFormat(let found, let supported) = error else { return false }
            return found.contains("2") && supported == "1"
        }
        #expect(try Data(contentsOf: url) == before)
        // Without history, the store opens: its data is not in question.
        try Store(url: url, schema: Fixture.schema).close()
    }
}
