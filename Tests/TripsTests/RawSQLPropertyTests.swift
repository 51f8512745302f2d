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

    /// A statement built from literal pieces and integer values in between, as the compiler
    /// builds an interpolated one.
    static func query(_ literals: [String], _ values: [Int]) -> SQLQuery {
        var interpolation = SQLQuery.StringInterpolation(literalCapacity: 0, interpolationCount: values.count)
        for (index, literal) in literals.enumerated() {
            interpolation.appendLiteral(literal)
            if index < values.count { interpolation.appendInterpolation(values[index]) }
        }
        return SQLQuery(stringInterpolation: interpolation)
    }

    /// A parameter marker written in the literal text is refused, wherever it stands among the
    /// interpolated values; inside a quoted string it is only text.
    @Test func aParameterMarkerInTheLiteralTextIsRefused() async throws {
        let store = try Store.inMemory(schema: Trips.schema)
        for index in 0..<(Self.cases / 4) {
            var random = SplitMix64(seed: 63, index: index)
            let values = (0..<(1 + random.next(below: 3))).map { _ in random.next(below: 100) }
            let marker = random.pick(["?", "?1", "?2", "?9", ":x", "@x", "$x", ":v0"])
            var literals = ["SELECT "] + values.indices.dropFirst().map { _ in ", " } + [""]
            let at = random.next(below: values.count)
            let quoted = random.chance(0.3)
            literals[at + 1] = (quoted ? ", '\(marker)'" : ", \(marker)") + literals[at + 1]
            let query = Self.query(literals, values)
            let label = "case \(index): \(literals) with \(values)"
            do {
                let rows = try await store.performQuery { context in
                    try context.fetch(query, as: Int.self, Int.self, Int.self, Int.self, Int.self)
                }
                Issue.record("\(label): expected a refusal, got \(rows.count) rows")
            } catch let error as SQLQueryError {
                if quoted {
                    guard case .columnCount = error else {
                        Issue.record("\(label): a quoted marker is text, got \(error)")
                        continue
                    }
                } else {
                    guard case .parameterMarker = error else {
                        Issue.record("\(label): expected a parameter marker, got \(error)")
                        continue
                    }
                }
            }
            if quoted {
                let echoed = try await store.performQuery { context in
                    try context.fetch(Self.query(["SELECT '\(marker)', ", ""], [values[0]]), as: String.self, Int.self)
                }
                #expect(echoed.count == 1 && echoed[0].0 == marker && echoed[0].1 == values[0], "\(label)")
            }
        }
    }

    /// Plain values decode only from a result with as many columns as types asked for.
    @Test func aColumnCountOtherThanTheTypesAskedForIsRefused() async throws {
        let store = try Store.inMemory(schema: Trips.schema)
        for index in 0..<(Self.cases / 4) {
            var random = SplitMix64(seed: 64, index: index)
            let columns = 1 + random.next(below: 4)
            let asked = 1 + random.next(below: 3)
            let sql = Self.query(["SELECT " + (0..<columns).map { "\($0)" }.joined(separator: ", ")], [])
            let found: [Int?]? = try await store.performQuery { context in
                do {
                    switch asked {
                    case 1: return try context.fetch(sql, as: Int?.self).map { [$0] }.first
                    case 2: return try context.fetch(sql, as: Int?.self, Int?.self).map { [$0.0, $0.1] }.first
                    default:
                        return try context.fetch(sql, as: Int?.self, Int?.self, Int?.self).map { [$0.0, $0.1, $0.2] }
                            .first
                    }
                } catch SQLQueryError.columnCount(let expected, let found, _)
                    where expected == asked && found == columns
                {
                    return nil
                }
            }
            if columns == asked {
                #expect(found == (0..<columns).map { $0 }, "case \(index): \(columns) columns")
            } else {
                #expect(found == nil, "case \(index): \(columns) columns as \(asked) values")
            }
        }
    }

    /// A column a record needs that the result has twice is refused, naming it; a duplicate the
    /// record does not need is ignored.
    @Test func aDuplicateColumnTheRecordNeedsIsRefused() async throws {
        let store = try Store.inMemory(schema: Trips.schema)
        let ada = makeTripsUser("ada", familyName: "Lovelace", rating: 3)
        try await store.performAndSave { try $0.insert(ada) }
        for index in 0..<(Self.cases / 10) {
            var random = SplitMix64(seed: 65, index: index)
            let needed = random.chance(0.7)
            let name = needed ? random.pick(["id", "username", "familyName", "rating"]) : random.pick(["extra", "x"])
            let copies = (0..<(1 + random.next(below: 2))).map { _ in " 0 AS \"\(name)\"" }
            let before = random.chance(0.5)
            let columns = before ? copies + [" *"] : [" *"] + copies
            let sql = Self.query(["SELECT" + columns.joined(separator: ",") + " FROM \"User\""], [])
            do {
                let users = try await store.performQuery { try $0.fetch(sql, as: User.self) }
                #expect(!needed && users == [ada], "case \(index): \(name) twice")
            } catch let error as SQLQueryError {
                #expect(needed && error == .ambiguousColumn(entity: "User", column: name), "case \(index): \(error)")
            }
        }
    }

    /// A statement ending in a comment or semicolons decodes into records as without them.
    @Test func aTrailingCommentOrSemicolonDoesNotBreakRecordDecoding() async throws {
        let store = try Store.inMemory(schema: Trips.schema)
        let ada = makeTripsUser("ada", familyName: "Lovelace", rating: 3)
        try await store.performAndSave { try $0.insert(ada) }
        for index in 0..<(Self.cases / 4) {
            var random = SplitMix64(seed: 66, index: index)
            let tail = (0..<random.next(below: 4)).map { _ in
                random.pick([";", " ", "\n", "-- a comment's end", "/* a ') comment */", "-- ;\n", "\t"])
            }.joined()
            let query = Self.query([#"SELECT * FROM "User" WHERE "rating" = "#, " " + tail], [3])
            let users = try await store.performQuery { try $0.fetch(query, as: User.self) }
            #expect(users == [ada], "case \(index): \(tail.debugDescription)")
        }
    }

    /// `execute` returns the rows the statement itself changed: 0 for one that changes none,
    /// whatever changed before it.
    @Test func executeCountsOnlyTheRowsItsStatementChanged() async throws {
        for index in 0..<(Self.cases / 10) {
            var random = SplitMix64(seed: 67, index: index)
            let store = try Store.inMemory(schema: Trips.schema)
            let users = (0..<(1 + random.next(below: 6))).map {
                makeTripsUser("u\($0)", familyName: "F", rating: Int16(random.next(below: 3)))
            }
            try await store.performAndSave { context in for user in users { try context.insert(user) } }
            var steps: [(String, Int)] = []
            for step in 0..<(1 + random.next(below: 6)) {
                let rating = random.next(below: 3)
                switch random.next(below: 4) {
                case 0:
                    steps.append(
                        (
                            #"UPDATE "User" SET "givenName" = 'x\#(step)' WHERE "rating" = \#(rating)"#,
                            users.filter { $0.rating == Int16(rating) }.count
                        ))
                case 1: steps.append(("SELECT 1", 0))
                case 2: steps.append(("CREATE TEMP TABLE t\(step) (x)", 0))
                default: steps.append((#"UPDATE "User" SET "rating" = 9 WHERE "rating" = 7"#, 0))
                }
            }
            let counts = try await store.performAndSave { [steps] context in
                try steps.map { try context.execute(SQLQuery(stringLiteral: $0.0)) }
            }
            #expect(counts == steps.map(\.1), "case \(index): \(steps.map(\.0))")
        }
    }

    /// Statements that change the connection rather than the data are refused in both kinds of
    /// transaction, and the store keeps working as before.
    @Test func connectionStatementsAreRefused() async throws {
        let statements = [
            "PRAGMA query_only=1", "pragma foreign_keys = off", " /* c */ PRAGMA journal_mode = DELETE",
            "ATTACH ':memory:' AS other", "DETACH other", "VACUUM", "BEGIN", "COMMIT", "END", "ROLLBACK",
            "SAVEPOINT s", "RELEASE s", "\n-- c\nPragma query_only = ON;",
        ]
        let store = try Store.inMemory(schema: Trips.schema)
        for index in 0..<(Self.cases / 10) {
            var random = SplitMix64(seed: 68, index: index)
            let sql = SQLQuery(stringLiteral: random.pick(statements))
            let write = random.chance(0.5)
            do {
                if write {
                    _ = try await store.performAndSave { try $0.execute(sql) }
                } else {
                    _ = try await store.performQuery { try $0.fetch(sql, as: Int.self) }
                }
                Issue.record("case \(index): \(sql) ran")
            } catch let error as SQLQueryError {
                guard case .connectionStatement = error else {
                    Issue.record("case \(index): \(error)")
                    continue
                }
            }
            let user = makeTripsUser("u\(index)", familyName: "F")
            try await store.performAndSave { try $0.insert(user) }
            let found = try await store.performQuery {
                try $0.fetch(User.request().filter { $0.username == "u\(index)" })
            }
            #expect(found == [user], "case \(index): the store writes after \(sql)")
        }
    }

    /// An empty list is in nothing and everything is `NOT IN` it, as with typed `in` and `notIn`.
    @Test func anEmptyListMatchesNothingInAndEverythingNotIn() async throws {
        for index in 0..<(Self.cases / 20) {
            var random = SplitMix64(seed: 69, index: index)
            let store = try Store.inMemory(schema: Trips.schema)
            let users = (0..<random.next(below: 6)).map { makeTripsUser("u\($0)", familyName: "F") }
            try await store.performAndSave { context in for user in users { try context.insert(user) } }
            let none: [String] = []
            let (inside, outside) = try await store.performQuery { context in
                (
                    try context.fetch(#"SELECT COUNT(*) FROM "User" WHERE "username" IN \#(list: none)"#, as: Int.self),
                    try context.fetch(
                        #"SELECT COUNT(*) FROM "User" WHERE "username" NOT IN \#(list: none)"#, as: Int.self)
                )
            }
            #expect(inside == [0] && outside == [users.count], "case \(index)")
        }
    }
}
