import Foundation
import Modelwright
import ModelwrightTestSupport
import Testing

/// An observed request yields its result now and after each commit that touches its tables.
@Suite(.ownThread)
struct ObservationTests {
    private struct Abort: Error {}

    @Test func yieldsAfterCommitsAndNotAfterRollbacks() async throws {
        let store = try Store.inMemory(schema: Fixture.schema)
        let stream = store.observe(User.request().filter { $0.rating >= 3 })
        var iterator = stream.makeAsyncIterator()
        #expect(try await iterator.next()?.map(\.username) == [])

        try await store.performAndSave { try $0.insert(makeUser("ada", rating: 5)) }
        #expect(try await iterator.next()?.map(\.username) == ["ada"])

        await #expect(throws: Abort.self) {
            try await store.performAndSave { context in
                try context.insert(makeUser("ghost", rating: 5))
                throw Abort()
            }
        }
        // A write to another table does not wake the observer; the next value comes from the next commit.
        try await store.performAndSave { try $0.insert(Organization(name: "Acme")) }
        try await store.performAndSave { try $0.insert(makeUser("grace", "Grace", rating: 4)) }
        #expect(try await iterator.next()?.map(\.username) == ["ada", "grace"])
    }

    @Test(.timeLimit(.minutes(1))) func stopsWhenTheConsumingTaskIsCancelled() async throws {
        let store = try Store.inMemory(schema: Fixture.schema)
        let (firstValue, signal) = AsyncStream<Void>.makeStream()
        let task = Task {
            var values = 0
            for try await _ in store.observe(User.request()) {
                values += 1
                signal.yield()
            }
            return values
        }
        var iterator = firstValue.makeAsyncIterator()
        await iterator.next()  // the observer delivered its first result
        task.cancel()
        let values = try await task.value
        #expect(values >= 1, "the loop ended after cancellation instead of waiting forever")
        // After cancellation writes still succeed; nothing is delivered to the finished stream.
        try await store.performAndSave { try $0.insert(makeUser("grace", "Grace")) }
    }
}
