import Dispatch
import Foundation
import Modelwright
import ModelwrightEngineTestSupport
import ModelwrightTestSupport
import Testing

/// Transactions commit when their closure returns and change nothing when it throws.
@Suite(.heavy)
struct StoreTests {
    private struct Abort: Error {}

    @Test(arguments: TestEngine.available) func aThrowingWriteLeavesNothingBehind(engine: TestEngine) async throws {
        try await engine.withStore(schema: Fixture.schema) { store in
            let kept = makeUser("kept")
            try await store.performAndSave { try $0.insert(kept) }
            await #expect(throws: Abort.self) {
                try await store.performAndSave { context in
                    try context.insert(makeUser("lost"))
                    var changed = kept
                    changed.rating = 5
                    try context.update(changed)
                    try context.delete(kept.id)
                    throw Abort()
                }
            }
            let users = try await store.performQuery { try $0.fetch(User.request()) }
            #expect(users == [kept])
        }
    }

    @Test(arguments: TestEngine.available) func insertUpdateUpsertDeleteAndLookups(engine: TestEngine) async throws {
        try await engine.withStore(schema: Fixture.schema) { store in
            var ada = makeUser("ada", rating: 3)
            let original = ada
            try await store.performAndSave { try $0.insert(original) }
            ada.rating = 4
            let updated = ada
            try await store.performAndSave { try $0.update(updated) }
            let grace = makeUser("grace", "Grace", "Hopper")
            try await store.performAndSave { context in
                try context.upsert(grace)
                var renamed = grace
                renamed.familyName = "Brewster Hopper"
                try context.upsert(renamed)
            }
            let (count, exists, found, first) = try await store.performQuery { context in
                (
                    try context.count(User.request()),
                    try context.exists(User.request().filter { $0.username == "grace" }),
                    try context.existing(updated.id),
                    try context.fetchOne(User.request())
                )
            }
            #expect(count == 2)
            #expect(exists)
            #expect(found?.rating == 4)
            #expect(first?.familyName == "Ada")  // default sort: familyName, givenName
            try await store.performAndSave { try $0.delete(grace.id) }
            #expect(try await store.performQuery { try $0.existing(grace.id) } == nil)
            await #expect(throws: StoreError.recordNotFound(entity: "User", id: grace.id.description)) {
                try await store.performAndSave { try $0.update(grace) }
            }
        }
    }

    @Test(arguments: TestEngine.available) func uniquenessViolationsNameTheEntityAndAttributes(engine: TestEngine)
        async throws
    {
        try await engine.withStore(schema: Fixture.schema) { store in
            try await store.performAndSave { try $0.insert(makeUser("ada", "Ada", "Lovelace")) }
            await #expect(throws: StoreError.uniquenessViolation(entity: "User", attributes: ["username"])) {
                try await store.performAndSave { try $0.insert(makeUser("ada", "Other", "Person")) }
            }
            await #expect(
                throws: StoreError.uniquenessViolation(entity: "User", attributes: ["givenName", "familyName"])
            ) {
                try await store.performAndSave { try $0.insert(makeUser("ada2", "Ada", "Lovelace")) }
            }
        }
    }

    @Test(arguments: TestEngine.available) func abstractEntitiesHaveNoRecordsButFetchTheirChildren(engine: TestEngine)
        async throws
    {
        try await engine.withStore(schema: Fixture.schema) { store in
            try await store.performAndSave { context in
                try context.insert(Note(title: "b", body: "second"))
                try context.insert(Note(title: "a", body: "first"))
            }
            let items = try await store.performQuery { try $0.fetch(Item.request().sorted { [$0.title.ascending] }) }
            #expect(items.map(\.title) == ["a", "b"])
            let notes = try await store.performQuery { try $0.fetch(Note.request().filter { $0.body == "second" }) }
            #expect(notes.map(\.title) == ["b"])
        }
    }

    @Test(arguments: TestEngine.available) func reservedWordNamesWork(engine: TestEngine) async throws {
        try await engine.withStore(schema: Fixture.schema) { store in
            try await store.performAndSave { context in
                try context.insert(Order(group: "select", index: 2))
                try context.insert(Order(group: "where", index: 1))
            }
            let orders = try await store.performQuery {
                try $0.fetch(Order.request().filter { $0.group != "from" }.sorted { [$0.index.ascending] })
            }
            #expect(orders.map(\.group) == ["where", "select"])
        }
    }

    @Test(arguments: TestEngine.available) func batchOperationsReportHowManyRowsTheyTouched(engine: TestEngine)
        async throws
    {
        try await engine.withStore(schema: Fixture.schema) { store in
            let users = (0..<10).map { makeUser("user\($0)", "Given\($0)", rating: Int16($0)) }
            let inserted = try await store.performAndSave { try $0.batchInsert(users) }
            #expect(inserted == 10)
            let updated = try await store.performAndSave { context in
                try context.batchUpdate(User.request().filter { $0.rating >= 5 }) { [try $0.rating.set(to: 9)] }
            }
            // Five match, but user9 already had rating 9: only four records changed.
            #expect(updated == 4)
            #expect(try await store.performQuery { try $0.count(User.request().filter { $0.rating == 9 }) } == 5)
            let deleted = try await store.performAndSave { try $0.batchDelete(User.request().filter { $0.rating < 3 }) }
            #expect(deleted == 3)
            #expect(try await store.performQuery { try $0.count(User.request()) } == 7)
        }
    }

    @Test func aStoreForAnotherSchemaIsRefusedUntouched() async throws {
        let url = temporaryStoreURL()
        defer { removeStore(at: url) }
        let store = try Store(url: url, schema: Fixture.schema)
        try await store.performAndSave { try $0.insert(makeUser("ada")) }
        var changed = Fixture.schema
        changed.version = 2
        changed.entities[0].attributes[3].isOptional = false
        let before = try Data(contentsOf: url)
        #expect(
            throws: StoreError.schemaMismatch(
                storeChecksum: Fixture.schema.checksum.hexDigits,
                storeVersion: 1,
                expectedChecksum: changed.checksum.hexDigits,
                expectedVersion: 2
            )
        ) {
            try Store(url: url, schema: changed)
        }
        #expect(try Data(contentsOf: url) == before)
        let reopened = try Store(url: url, schema: Fixture.schema)
        #expect(try await reopened.performQuery { try $0.count(User.request()) } == 1)
    }

    @Test(arguments: TestEngine.available) func completionHandlersRunOnTheGivenQueue(engine: TestEngine) async throws {
        try await engine.withStore(schema: Fixture.schema) { store in
            let queue = DispatchQueue(label: "callback")
            let key = DispatchSpecificKey<Bool>()
            queue.setSpecific(key: key, value: true)
            let (count, onQueue) = await withCheckedContinuation { continuation in
                store.performAndSave(on: queue, { try $0.insert(makeUser("ada")) }) { _ in
                    store.performQuery(on: queue, { try $0.count(User.request()) }) { result in
                        continuation.resume(
                            returning: ((try? result.get()) ?? -1, DispatchQueue.getSpecific(key: key) == true))
                    }
                }
            }
            #expect(count == 1)
            #expect(onQueue)
        }
    }

    @Test(arguments: TestEngine.available) func oneToOneRelationshipsStayPaired(engine: TestEngine) async throws {
        try await engine.withStore(schema: Fixture.schema) { store in
            let first = Profile(bio: "first")
            let second = Profile(bio: "second")
            var user = makeUser("ada")
            user.profileID = first.id
            let paired = user
            try await store.performAndSave { context in
                try context.insert(first)
                try context.insert(second)
                try context.insert(paired)
            }
            #expect(try await store.performQuery { try $0.existing(first.id)?.userID } == user.id)
            user.profileID = second.id
            let repaired = user
            try await store.performAndSave { try $0.update(repaired) }
            let (old, new) = try await store.performQuery { (try $0.existing(first.id), try $0.existing(second.id)) }
            #expect(old?.userID == nil)
            #expect(new?.userID == user.id)
        }
    }
}
