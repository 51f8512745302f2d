import Foundation
import Modelwright
import Testing

/// Readers run beside the single writer on a file store without errors or lost writes.
struct ConcurrencyTests {
    @Test func eightReadersAndOneWriter() async throws {
        let url = temporaryStoreURL()
        defer { removeStore(at: url) }
        let store = try Store(url: url, schema: Fixture.schema)
        let writes = 300
        let deadline = ContinuousClock.now + .seconds(3)
        let readCounts = try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                for index in 0..<writes {
                    try await store.performAndSave { try $0.insert(makeUser("user\(index)", "Given\(index)")) }
                }
                return -1
            }
            for _ in 0..<8 {
                group.addTask {
                    var reads = 0
                    var lastSeen = 0
                    // At least one read each, however slow the machine, then as many as fit before the deadline.
                    repeat {
                        let count = try await store.performQuery { try $0.count(User.request()) }
                        #expect(count >= lastSeen, "a reader never sees the store go back in time")
                        lastSeen = count
                        reads += 1
                    } while ContinuousClock.now < deadline
                    return reads
                }
            }
            var counts: [Int] = []
            for try await count in group where count >= 0 {
                counts.append(count)
            }
            return counts
        }
        #expect(readCounts.count == 8)
        #expect(readCounts.allSatisfy { $0 > 0 })
        #expect(try await store.performQuery { try $0.count(User.request()) } == writes)
    }
}
