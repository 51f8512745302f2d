import Foundation
@_spi(Generated) import Modelwright
import ModelwrightTestSupport
import Testing

/// `fetchOne` by a unique key (`id`, or `username` with its one-key uniqueness constraint) takes a
/// fast path with its own SQL; it must answer as the general path does, for keys that match, keys
/// that do not, and requests whose limit or offset leave nothing.
struct KeyLookupTests {
    @Test func lookupsByAUniqueKeyAnswerAsTheGeneralPathDoes() async throws {
        var random = SplitMix64(seed: 0x10_0C_0F)
        let users = (0..<40).map { index in
            makeUser("user\(index)-\(Int.random(in: 0..<1_000, using: &random))", "Given\(index)", rating: Int16(index))
        }
        let store = try Store.inMemory(schema: Fixture.schema)
        try await store.performAndSave { context in
            for user in users { try context.insert(user) }
        }
        // Draws: a stored user's key, or a key no user has; each looked up by ID and by username,
        // with or without a limit (which `fetchOne` replaces) and an offset (which it keeps).
        var draws: [(id: User.ID, username: String, limit: Int?, offset: Int)] = []
        for _ in 0..<300 {
            let stored = Bool.random(using: &random)
            let user = users[Int.random(in: 0..<users.count, using: &random)]
            let id = stored ? user.id : User.ID(UUID())
            let username = stored ? user.username : "missing\(Int.random(in: 0..<1_000, using: &random))"
            let limit = [nil, 0, 1, 3][Int.random(in: 0..<4, using: &random)]
            let offset = Int.random(in: 0..<4, using: &random) == 0 ? 1 : 0
            draws.append((id, username, limit, offset))
        }
        let byID = Dictionary(uniqueKeysWithValues: users.map { ($0.id, $0.username) })
        let byName = Set(users.map(\.username))
        let checked = try await store.performQuery { [draws] context in
            var checked = 0
            for draw in draws {
                // `fetchOne` takes the first row after the offset, as `fetch(_:).first` does: none
                // when the limit is 0.
                let expectedID = draw.offset == 0 && draw.limit != 0 ? byID[draw.id] : nil
                let expectedName = byName.contains(draw.username) && draw.offset == 0 ? draw.username : nil
                let expectedFirst = draw.limit == 0 ? nil : expectedName
                var request = User.request().filter { $0.username == draw.username }
                request.fetchLimit = draw.limit
                request.fetchOffset = draw.offset
                let one = try context.fetchOne(request)?.username
                let first = try context.fetch(request).first?.username
                #expect(one == expectedFirst)
                #expect(first == expectedFirst)
                var byIDRequest = FetchRequest<User>(
                    condition: .comparison(ColumnPath(column: "id"), .equal, draw.id.sqlValue))
                byIDRequest.fetchLimit = draw.limit
                byIDRequest.fetchOffset = draw.offset
                let oneByID = try context.fetchOne(byIDRequest)?.username
                let existing = try context.existing(draw.id)?.username
                #expect(oneByID == expectedID)
                #expect(existing == byID[draw.id])
                checked += 1
            }
            return checked
        }
        #expect(checked == 300)
    }

    @Test func aKeyWithoutAUniquenessConstraintStillFindsTheFirstInOrder() async throws {
        // Ratings repeat: `fetchOne` by rating must keep the default sort (family name), which a
        // lookup by a unique key may drop.
        let store = try Store.inMemory(schema: Fixture.schema)
        try await store.performAndSave { context in
            for (index, family) in ["Zeta", "Alpha", "Mu"].enumerated() {
                try context.insert(makeUser("u\(index)", "G\(index)", family, rating: 3))
            }
        }
        let first = try await store.performQuery { context in
            try context.fetchOne(User.request().filter { $0.rating == 3 })?.familyName
        }
        #expect(first == "Alpha")
    }
}
