import Foundation
import ModelwrightEngineTestSupport
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright

/// Prepared requests through their typed API, on every engine: each run returns what the request
/// built for its values returns, whatever the parameters' order, types and repetition, beside the
/// values fixed when it was built, a limit and an offset; values a comparison cannot take, and
/// builders that build two different requests, are refused with a clear error.
/// (`ConditionPropertyTests` runs generated condition trees as prepared requests.)
struct PreparedRequestTests {
    /// Users with every rating from -2 to 4, every second one with a name prefix, in two roles.
    private static let users: [User] = (0..<40).map { index in
        var user = makeUser(String(format: "user%02d", index), rating: Int16(index % 7) - 2)
        user.namePrefix = index % 2 == 0 ? "p\(index % 3)" : nil
        user.role = index % 5 == 0 ? .admin : .member
        return user
    }

    @Test(arguments: TestEngine.available) func eachRunReturnsWhatTheRequestForItsValuesReturns(engine: TestEngine)
        async throws
    {
        try await engine.withStore(schema: Fixture.schema) { store in
            _ = try await store.performAndSave { try $0.batchInsert(Self.users) }
            // Two parameters of one type, in the order the builder names them, one used twice, beside
            // a value fixed when it was built, a sort, a limit and an offset.
            let between = PreparedRequest { (low: RequestParameter<Int16>, high: RequestParameter<Int16>) in
                User.request()
                    .filter { $0.rating >= low && $0.rating <= high && $0.role == .member && $0.rating != high }
                    .sorted { [$0.rating.descending, $0.username.ascending] }
                    .limit(4).offset(1)
            }
            // An optional field compared with its wrapped type, and a string parameter.
            let prefixed = PreparedRequest { (prefix: RequestParameter<String>, name: RequestParameter<String>) in
                User.request().filter { $0.namePrefix == prefix || $0.username == name }
                    .sorted { [$0.username.ascending] }
            }
            let checked = try await store.performQuery { context in
                var checked = 0
                for low in Int16(-3)...4 {
                    for high in Int16(-3)...4 {
                        let expected = try context.fetch(
                            User.request()
                                .filter {
                                    $0.rating >= low && $0.rating <= high && $0.role == .member && $0.rating != high
                                }
                                .sorted { [$0.rating.descending, $0.username.ascending] }
                                .limit(4).offset(1))
                        #expect(
                            try context.fetch(between, low, high).map(\.id) == expected.map(\.id), "\(low)...\(high)")
                        #expect(try context.fetchOne(between, low, high)?.id == expected.first?.id)
                        #expect(try context.count(between, low, high) == expected.count)
                        #expect(try context.exists(between, low, high) == !expected.isEmpty)
                        checked += 1
                    }
                }
                for (prefix, name) in [("p0", "user01"), ("p1", "user00"), ("p2", "nobody"), ("none", "user39")] {
                    let expected = try context.fetch(
                        User.request().filter { $0.namePrefix == prefix || $0.username == name }
                            .sorted { [$0.username.ascending] })
                    #expect(!expected.isEmpty)
                    #expect(try context.fetch(prefixed, prefix, name).map(\.id) == expected.map(\.id))
                    #expect(try context.count(prefixed, prefix, name) == expected.count)
                    #expect(try context.exists(prefixed, prefix, name))
                    checked += 1
                }
                return checked
            }
            #expect(checked == 68)
        }
    }

    @Test(arguments: TestEngine.available) func aRequestRunsInEveryTransactionAndOnEveryStore(engine: TestEngine)
        async throws
    {
        let byRating = PreparedRequest { (rating: RequestParameter<Int16>) in
            User.request().filter { $0.rating == rating }.sorted { [$0.username.ascending] }
        }
        for _ in 0..<2 {
            // A new store each time: its connections have not seen the request.
            try await engine.withStore(schema: Fixture.schema) { store in
                _ = try await store.performAndSave { try $0.batchInsert(Self.users) }
                for rating in Int16(-2)...4 {
                    let names = try await store.performQuery { try $0.fetch(byRating, rating).map(\.username) }
                    let expected = Self.users.filter { $0.rating == rating }.map(\.username).sorted()
                    #expect(names == expected)
                }
                // Inside a write, after a change it must see.
                let seen = try await store.performAndSave { context in
                    try context.insert(makeUser("zed", rating: 3))
                    return try context.fetch(byRating, 3).map(\.username)
                }
                #expect(seen.last == "zed")
            }
        }
    }

    @Test func valuesAComparisonCannotTakeAreRefused() async throws {
        let store = try Store.inMemory(schema: Fixture.schema)
        defer { try? store.close() }
        _ = try await store.performAndSave { try $0.batchInsert(Self.users) }
        let byPrefix = PreparedRequest { (prefix: RequestParameter<String?>) in
            User.request().filter { $0.namePrefix == prefix }
        }
        await #expect(throws: StoreError.self) {
            try await store.performQuery { try $0.fetch(byPrefix, nil) }
        }
        #expect(try await store.performQuery { try $0.fetch(byPrefix, "p1").count } > 0)
        let paged = PreparedRequest { (rating: RequestParameter<Int16>) in
            User.request().filter { $0.rating == rating }.sorted { [$0.username.ascending] }
                .after(Self.users[0])
        }
        await #expect(throws: StoreError.self) {
            try await store.performQuery { try $0.fetch(paged, 1) }
        }
    }

    @Test func aBuilderThatBuildsTwoDifferentRequestsIsRefused() async throws {
        let store = try Store.inMemory(schema: Fixture.schema)
        defer { try? store.close() }
        let calls = Counter()
        let changing = PreparedRequest { (rating: RequestParameter<Int16>) in
            calls.value += 1
            return calls.value == 1
                ? User.request().filter { $0.rating == rating }
                : User.request().filter { $0.rating == rating && $0.username == "x" }
        }
        let error = await #expect(throws: StoreError.self) {
            try await store.performQuery { try $0.fetch(changing, 1) }
        }
        #expect("\(error.map { "\($0)" } ?? "")".contains("same one every time"))
    }

    private final class Counter: @unchecked Sendable {
        var value = 0
    }
}
