import Foundation
import Modelwright
import ModelwrightEngineTestSupport
import ModelwrightTestSupport
import Testing

/// Typed requests whose `in` lists hold more values than libpq can have described in one
/// statement (issue 27: past 7,498 parameters the describe message exceeds 30,000 bytes and the
/// connection is lost). PostgreSQL binds each list as one array parameter, so they give the right
/// rows and leave a store that works.
@Suite(.heavy)
struct LargeListTests {
    private static let stored = 2_000

    @Test(arguments: TestEngine.available, [8_000, 70_000])
    func largeInListsGiveTheRightRowsAndLeaveAWorkingStore(engine: TestEngine, size: Int) async throws {
        try await engine.withStore(schema: Fixture.schema) { store in
            let users = (0..<Self.stored).map { makeUser("user\($0)", "Given\($0)", rating: Int16($0 % 7)) }
            _ = try await store.performAndSave { try $0.batchInsert(users) }
            // Every third stored name, padded with names no record has, up to `size` values.
            let wanted = Set(stride(from: 0, to: Self.stored, by: 3).map { "user\($0)" })
            let names = Array(wanted) + (0..<(size - wanted.count)).map { "absent\($0)" }
            let (fetched, counted) = try await store.performQuery { context in
                (
                    try context.fetch(User.request().filter { $0.username.in(names) }),
                    try context.count(User.request().filter { $0.username.in(names) })
                )
            }
            #expect(Set(fetched.map(\.username)) == wanted)
            #expect(counted == wanted.count)
            let excluded = try await store.performQuery {
                try $0.count(User.request().filter { $0.username.notIn(names) })
            }
            #expect(excluded == Self.stored - wanted.count)
            let deleted = try await store.performAndSave {
                try $0.batchDelete(User.request().filter { $0.username.in(names) })
            }
            #expect(deleted == wanted.count)
            // The store still reads and writes after the large statements.
            try await store.performAndSave { try $0.insert(makeUser("after")) }
            let remaining = try await store.performQuery { try $0.count(User.request()) }
            #expect(remaining == Self.stored - wanted.count + 1)
        }
    }
}
