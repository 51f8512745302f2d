import Foundation
@_spi(Generated) import Modelwright
import ModelwrightTestSupport
import Testing

/// A fetch reserves its array from the request's limit; whatever the limit (none, negative as
/// SQLite's "no limit", zero, past the rows there are, past the reservation's cap), it returns
/// exactly the rows SQL's LIMIT and OFFSET give, and `forEach` sees the same rows.
struct FetchLimitTests {
    @Test func everyLimitFetchesTheRowsItsSQLGives() async throws {
        let count = 1_100
        let users = (0..<count).map { makeUser(String(format: "user%05d", $0), rating: Int16($0 % 7)) }
        let store = try Store.inMemory(schema: Fixture.schema)
        _ = try await store.performAndSave { context in try context.batchInsert(users) }
        let sorted = users.map(\.username)
        var random = SplitMix64(seed: 0x11_30)
        let limits = [nil, -5, -1, 0, 1, 2, 3, 1_023, 1_024, 1_025, count, Int.max]
        var draws: [(limit: Int?, offset: Int)] = limits.map { ($0, 0) }
        for _ in 0..<60 {
            let limit = Bool.random(using: &random) ? Int.random(in: -2...(count + 5), using: &random) : nil
            draws.append((limit, Int.random(in: 0...(count + 3), using: &random)))
        }
        let checked = try await store.performQuery { [draws] context in
            var checked = 0
            for draw in draws {
                var request = User.request().sorted { [$0.username.ascending] }.offset(draw.offset)
                request.fetchLimit = draw.limit
                let fetched = try context.fetch(request).map(\.username)
                var each: [String] = []
                try context.forEach(request) { each.append($0.username) }
                let rest = sorted.dropFirst(draw.offset)
                let expected = Array(draw.limit.map { $0 < 0 ? rest : rest.prefix($0) } ?? rest)
                #expect(fetched == expected, "limit \(String(describing: draw.limit)), offset \(draw.offset)")
                #expect(each == expected, "limit \(String(describing: draw.limit)), offset \(draw.offset)")
                checked += 1
            }
            return checked
        }
        #expect(checked == limits.count + 60)
    }
}
