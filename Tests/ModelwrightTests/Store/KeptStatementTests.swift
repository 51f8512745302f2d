import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright

/// A connection keeps the prepared statement of each request shape it runs (at most
/// `SQLiteConnection.keptStatementLimit`, the least recently used making room) and rebinds it for
/// the next request of that shape: every answer must be the one a connection that keeps nothing gives.
struct KeptStatementTests {
    /// Users with ratings 0 to 9 and unique names, inserted in one order into each store.
    private static let users = (0..<60).map { index in
        makeUser("user\(index)", "Given\(index)", "Family\(index % 7)", rating: Int16(index % 10))
    }

    /// One drawn read: its shape is the count of ratings in its `OR`, its sort and whether it is
    /// limited, so there are 12 × 3 × 2 = 72 select shapes, more than the connection keeps, and
    /// two lookup shapes; its values are drawn anew each time.
    private struct Draw: Sendable {
        var ratings: [Int16]
        var sort: Int
        var limit: Int?
        var offset: Int
        var username: String
        var id: User.ID
        var nested: Bool

        init(_ random: inout SplitMix64) {
            ratings = (0...random.next(below: 12)).map { _ in Int16(random.next(below: 11)) }
            sort = random.next(below: 3)
            limit = random.next(below: 2) == 0 ? nil : random.next(below: 8)
            offset = limit == nil ? 0 : random.next(below: 3)
            let user = KeptStatementTests.users[random.next(below: KeptStatementTests.users.count)]
            username = random.next(below: 4) == 0 ? "nobody\(random.next(below: 100))" : user.username
            id = random.next(below: 4) == 0 ? User.ID(UUID()) : user.id
            nested = random.next(below: 8) == 0
        }

        var request: FetchRequest<User> {
            let condition = Condition.or(
                ratings.map { .comparison(ColumnPath(column: "rating"), .equal, .integer(Int64($0))) })
            let keys: [SortKey] =
                switch sort {
                case 0: [SortKey(path: ColumnPath(column: "username"), ascending: true)]
                case 1: [SortKey(path: ColumnPath(column: "username"), ascending: false)]
                default:
                    [
                        SortKey(path: ColumnPath(column: "familyName"), ascending: true),
                        SortKey(path: ColumnPath(column: "username"), ascending: true),
                    ]
                }
            return FetchRequest(condition: condition, sortKeys: keys, fetchLimit: limit, fetchOffset: offset)
        }

        /// Everything the draw reads, as names.
        func read(_ context: ReadContext) throws -> [String] {
            var names = try context.fetch(request).map(\.username)
            if nested {
                // The same shape inside its own loop: the kept statement is stepping, so the inner
                // fetch must get its own.
                try context.forEach(request) { outer in
                    names.append(outer.username)
                    names += try context.fetch(request).map(\.username)
                }
            }
            names.append(try context.fetchOne(User.request().filter { $0.username == username })?.username ?? "-")
            names.append(try context.existing(id)?.username ?? "-")
            return names
        }
    }

    @Test func drawnRequestsReadWhatAConnectionKeepingNothingReads() async throws {
        var random = SplitMix64(seed: 0x4EAD_5003)
        let draws = (0..<600).map { _ in Draw(&random) }
        let kept = try Store.inMemory(schema: Fixture.schema)
        let unkept = try Store.inMemory(schema: Fixture.schema)
        for store in [kept, unkept] {
            try await store.performAndSave { context in
                for user in Self.users { try context.insert(user) }
            }
        }
        let answers = try await kept.performQuery { context in try draws.map { try $0.read(context) } }
        let expected = try await unkept.performQuery { context in
            try draws.map { draw in
                context.connection.forgetShapes()
                return try draw.read(context)
            }
        }
        #expect(answers.count == draws.count)
        for (index, (answer, expectation)) in zip(answers, expected).enumerated() {
            #expect(answer == expectation, "draw \(index)")
        }
        // The draws ran more shapes than the connection keeps.
        let shapes = Set(draws.map { "\($0.ratings.count) \($0.sort) \($0.limit == nil)" })
        #expect(shapes.count > SQLiteConnection.keptStatementLimit)
    }

    @Test func aStatementWhoseReadThrewIsKeptAndReusable() async throws {
        let store = try Store.inMemory(schema: Fixture.schema)
        try await store.performAndSave { context in
            for user in Self.users { try context.insert(user) }
            // A role no case of `Role` spells: the row is stored, and fails to decode when read.
            _ = try context.execute(#"UPDATE "User" SET "role" = 'nonsense' WHERE "username" = 'user13'"#)
        }
        try await store.performQuery { context in
            let connection = try #require(context.connection as? SQLiteConnection)
            let lookup = RequestShape.keyLookup(KeyLookupShape(entity: "User", key: "username"))
            // The lookup steps onto the bad row and throws while decoding it; the fetch throws in
            // the middle of its loop, with rows still to step.
            #expect(throws: StoreError.self) { try context.fetchOne(User.request().filter { $0.username == "user13" }) }
            let rating3 = User.request().filter { $0.rating == 3 }.sorted { [$0.username.ascending] }
            #expect(throws: StoreError.self) { try context.fetch(rating3) }
            // Reset after the throw: not stepping, so the connection hands it out again (it hands
            // out none while its statement is stepping).
            let kept = try #require(connection.keptStatement(for: lookup))
            let rating4 = User.request().filter { $0.rating == 4 }.sorted { [$0.username.ascending] }
            let expected = ["user14", "user24", "user34", "user4", "user44", "user54"]
            #expect(try context.fetch(rating4).map(\.username) == expected)
            #expect(try context.fetchOne(User.request().filter { $0.username == "user12" })?.rating == 2)
            #expect(connection.keptStatement(for: lookup) === kept)
        }
    }
}

/// A tag whose one attribute is renamed by a lightweight stage, which also adds one: a lookup kept
/// from before the stage would select the old column. The fixture's `Tag` record reads both
/// versions (its one string is the first column in each).
private enum Tags {
    static let v1 = SchemaDescription(
        modelName: "Tags", version: 1,
        entities: [EntityDescription(name: "Tag", attributes: [AttributeDescription(name: "text", type: .string)])])
    static let v2 = SchemaDescription(
        modelName: "Tags", version: 2,
        entities: [
            EntityDescription(
                name: "Tag",
                attributes: [
                    AttributeDescription(name: "name", type: .string, renamedFrom: "text"),
                    AttributeDescription(name: "title", type: .string, isOptional: true),
                ])
        ])
}

struct KeptStatementMigrationTests {
    @Test func readsAfterAMigrationOnTheSameConnectionSeeTheNewSchema() throws {
        let connection = try SQLiteConnection(path: nil)
        try connection.execute(SchemaSQL.createStatements(for: SchemaLayout(Tags.v1), in: connection.dialect))
        let id = UUID()
        let insert = try connection.prepare(#"INSERT INTO "Tag" ("id", "text") VALUES (?, ?)"#)
        insert.bind(id, 1)
        insert.bind("kept", 2)
        try insert.run()
        let before = ReadContext(connection: connection, layout: try SchemaLayout(Tags.v1))
        #expect(try before.existing(Tag.ID(id))?.name == "kept")
        #expect(try before.fetch(FetchRequest<Tag>()).map(\.name) == ["kept"])

        try Migrator(connection: connection, progress: nil).run(
            .lightweight(from: Tags.v1, to: Tags.v2), number: 1, of: 1)

        let after = ReadContext(connection: connection, layout: try SchemaLayout(Tags.v2))
        #expect(try after.existing(Tag.ID(id))?.name == "kept")
        #expect(try after.fetch(FetchRequest<Tag>()).map(\.name) == ["kept"])
    }
}
