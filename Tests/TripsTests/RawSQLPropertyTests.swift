import Foundation
import Modelwright
import ModelwrightTestSupport
import Testing
import Trips

/// SQL written by hand: interpolated values stay parameters whatever they hold, results decode
/// into generated records (or name the column they lack) and into plain values, and only
/// `performAndSave` may write. `MODELWRIGHT_LARGE=1` draws ten times as many cases.
struct RawSQLPropertyTests {
    static let cases = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 2000 : 200

    /// Pieces that mean something to SQL, or to a careless escaper.
    static let hostilePieces = [
        "'", "''", "\"", "\"\"", ";", "--", "/*", "*/", "?", "?1", "$1", ":name", "@x", "\\", "%", "_", " ",
        "DROP TABLE \"User\"", "') OR 1=1 --", "\" OR \"1\"=\"1", "é", "😀", "\n", "NULL", "x'00'", "`", "]", "[",
    ]

    static func hostileString(_ random: inout SplitMix64) -> String {
        (0..<(1 + random.next(below: 6))).map { _ in random.pick(hostilePieces) }.joined()
    }

    @Test func hostileStringsStayParameters() async throws {
        let store = try Store.inMemory(schema: Trips.schema)
        var random = SplitMix64(seed: 61)
        var inserted: [User] = []
        for index in 0..<Self.cases {
            let hostile = Self.hostileString(&random) + "\(index)"
            let user = makeTripsUser(hostile, familyName: "F\(index)")
            try await store.performAndSave { try $0.insert(user) }
            inserted.append(user)
            let other = Self.hostileString(&random)
            let (found, echoed, counted, named) = try await store.performQuery { context in
                (
                    try context.fetch(#"SELECT * FROM "User" WHERE "username" = \#(hostile)"#, as: User.self),
                    try context.fetch("SELECT \(hostile), \(other)", as: String.self, String.self),
                    try context.fetch(
                        #"SELECT COUNT(*) FROM "User" WHERE "username" IN \#(list: [hostile, other])"#, as: Int.self),
                    try context.fetch("SELECT 7 AS \(identifier: hostile)", as: Int.self)
                )
            }
            #expect(found == [user], "\(hostile.debugDescription) is compared as a value")
            #expect(echoed.count == 1 && echoed[0].0 == hostile && echoed[0].1 == other, "\(hostile.debugDescription)")
            #expect(counted == [1], "\(hostile.debugDescription)")
            #expect(named == [7], "\(hostile.debugDescription) as a name")
        }
        let users = try await store.performQuery { try $0.fetch(User.request().sorted { [$0.username.ascending] }) }
        #expect(Set(users) == Set(inserted), "nothing was dropped or changed")
    }

    @Test func recordsDecodeFromHandWrittenSQLAsTheRequestFetchesThem() async throws {
        for index in 0..<(Self.cases / 10) {
            var random = SplitMix64(seed: 62, index: index)
            let store = try Store.inMemory(schema: Trips.schema)
            let owner = makeTripsUser("ada", familyName: "Lovelace")
            let trips = (0..<random.next(below: 30)).map { day in
                makeTrip("T\(day)", owner: owner.id, day: day).with(
                    budget: random.chance(0.3) ? nil : Decimal(random.next(below: 1000)) / 8,
                    travellers: Int32(random.next(below: 10)))
            }
            try await store.performAndSave { context in
                try context.insert(owner)
                for trip in trips { try context.insert(trip) }
            }
            let minimum = Int32(random.next(below: 10))
            let (raw, requested) = try await store.performQuery { context in
                (
                    try context.fetch(
                        #"SELECT * FROM "Trip" WHERE "travellers" >= \#(minimum) ORDER BY "title""#, as: Trip.self),
                    try context.fetch(
                        Trip.request().filter { $0.travellers >= minimum }.sorted { [$0.title.ascending] })
                )
            }
            #expect(raw == requested, "case \(index)")
            #expect(Set(raw) == Set(trips.filter { $0.travellers >= minimum }), "case \(index)")
        }
    }

    @Test func aResultWithoutAColumnOfTheRecordNamesIt() async throws {
        let store = try Store.inMemory(schema: Trips.schema)
        let error = await #expect(throws: SQLQueryError.self) {
            try await store.performQuery { try $0.fetch(#"SELECT "id", "title" FROM "Trip""#, as: Trip.self) }
        }
        guard case .missingColumn(let entity, let column, let found) = error else {
            Issue.record("expected a missing column, got \(String(describing: error))")
            return
        }
        #expect(entity == "Trip" && column == "identifier" && found == ["id", "title"])
        #expect(error.map { "\($0)" }?.contains("no column 'identifier'") == true)
    }

    @Test func onlyAWriteTransactionWritesAndItsWritesWakeObservers() async throws {
        let store = try Store.inMemory(schema: Trips.schema)
        let ada = makeTripsUser("ada", familyName: "Lovelace", rating: 1)
        try await store.performAndSave { try $0.insert(ada) }
        await #expect(throws: SQLQueryError.self) {
            try await store.performQuery { try $0.fetch(#"DELETE FROM "User""#, as: Int.self) }
        }
        await #expect(throws: SQLQueryError.self) {
            try await store.performQuery { try $0.fetch(#"UPDATE "User" SET "rating" = 5"#, as: Int.self) }
        }
        var updates = store.observe(User.request().filter { $0.rating >= 5 }).makeAsyncIterator()
        #expect(try await updates.next() == [])
        let changed = try await store.performAndSave { try $0.execute(#"UPDATE "User" SET "rating" = \#(5)"#) }
        #expect(changed == 1)
        #expect(try await updates.next()?.map(\.username) == ["ada"])
    }
}
