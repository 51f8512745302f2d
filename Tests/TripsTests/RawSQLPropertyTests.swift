import Foundation
import Modelwright
import ModelwrightEngineTestSupport
import ModelwrightTestSupport
import Testing
import Trips

/// SQL written by hand, on every engine from one source (``TestEngine``): interpolated values stay
/// parameters whatever they hold, results decode into generated records (or name the column they
/// lack) and into plain values as an in-memory evaluation of the same query says, and only
/// `performAndSave` may write. `MODELWRIGHT_LARGE=1` draws ten times as many cases.
@Suite(.heavy)
struct RawSQLPropertyTests {
    static let cases = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 2000 : 200

    /// Pieces that mean something to SQL on either engine, or to a careless escaper: quotes,
    /// comments, semicolons, markers, PostgreSQL's dollar quotes and `E'…'` escapes, NUL.
    static let hostilePieces = [
        "'", "''", "\"", "\"\"", ";", "--", "/*", "*/", "?", "?1", "$1", ":name", "@x", "\\", "%", "_", " ",
        "DROP TABLE \"User\"", "') OR 1=1 --", "\" OR \"1\"=\"1", "é", "😀", "\n", "NULL", "x'00'", "`", "]", "[",
        "$$", "$tag$", "$$; DROP TABLE \"User\"; $$", "E'\\'", "\\'", "E'", "/* /* */", "::text", "\u{0}",
        "\\copy", "); COMMIT; --",
    ]

    static func hostileString(_ random: inout SplitMix64) -> String {
        (0..<(1 + random.next(below: 6))).map { _ in random.pick(hostilePieces) }.joined()
    }

    /// A name for `AS`: hostile pieces, and now and then one longer than PostgreSQL's 63 bytes.
    static func hostileName(_ random: inout SplitMix64) -> String {
        let name = hostileString(&random)
        return random.chance(0.2) ? name + String(repeating: "n\"", count: 40 + random.next(below: 80)) : name
    }

    @Test(arguments: TestEngine.available)
    func hostileStringsStayParameters(engine: TestEngine) async throws {
        try await engine.withStore(schema: Trips.schema) { store in
            var random = SplitMix64(seed: 61)
            var inserted: [User] = []
            for index in 0..<Self.cases {
                let hostile = Self.hostileString(&random) + "\(index)"
                let other = Self.hostileString(&random)
                let name = Self.hostileName(&random)
                // No name holds NUL on either engine, and PostgreSQL keeps 63 bytes of one: refused
                // before anything runs.
                let refusedName = name.utf8.contains(0) || (engine == .postgres && name.utf8.count > 63)
                if refusedName {
                    await #expect(throws: (any Error).self, "\(engine) case \(index)") {
                        try await store.performQuery { try $0.fetch("SELECT 7 AS \(identifier: name)", as: Int.self) }
                    }
                }
                if engine == .postgres, (hostile + other).utf8.contains(0) {
                    // PostgreSQL's text holds no NUL: such a value is refused, and nothing runs.
                    await #expect(throws: (any Error).self, "\(engine) case \(index)") {
                        try await store.performQuery { context in
                            try context.fetch("SELECT \(hostile), \(other)", as: String.self, String.self)
                        }
                    }
                    continue
                }
                let user = makeTripsUser(hostile, familyName: "F\(index)")
                try await store.performAndSave { try $0.insert(user) }
                inserted.append(user)
                let (found, echoed, counted, named) = try await store.performQuery { context in
                    (
                        try context.fetch(#"SELECT * FROM "User" WHERE "username" = \#(hostile)"#, as: User.self),
                        try context.fetch("SELECT \(hostile), \(other)", as: String.self, String.self),
                        try context.fetch(
                            #"SELECT COUNT(*) FROM "User" WHERE "username" IN \#(list: [hostile, other])"#,
                            as: Int.self),
                        refusedName ? [7] : try context.fetch("SELECT 7 AS \(identifier: name)", as: Int.self)
                    )
                }
                #expect(found == [user], "\(engine) \(hostile.debugDescription) is compared as a value")
                #expect(
                    echoed.count == 1 && echoed[0].0 == hostile && echoed[0].1 == other,
                    "\(engine) \(hostile.debugDescription)")
                #expect(counted == [1], "\(engine) \(hostile.debugDescription)")
                #expect(named == [7], "\(engine) \(name.debugDescription) as a name")
            }
            let users = try await store.performQuery {
                try $0.fetch(User.request().sorted { [$0.username.ascending] })
            }
            #expect(Set(users) == Set(inserted), "\(engine): nothing was dropped or changed")
        }
    }

    /// A condition of a drawn query: its SQL with interpolated values, and what it says of a trip.
    struct DrawnCondition {
        /// Appends the condition to a statement being built.
        let write: @Sendable (inout SQLQuery.StringInterpolation) -> Void
        let holds: @Sendable (Trip) -> Bool
        let label: String
    }

    static func drawCondition(_ random: inout SplitMix64, titles: [String]) -> DrawnCondition {
        let travellers = Int32(random.next(below: 8))
        let distance = Double(random.next(below: 400)) / 4
        let title = random.pick(titles)
        let some = (0..<random.next(below: 4)).map { _ in Int32(random.next(below: 8)) }
        switch random.next(below: 9) {
        case 0:
            return DrawnCondition(
                write: {
                    $0.appendLiteral(#""travellers" >= "#)
                    $0.appendInterpolation(travellers)
                }, holds: { $0.travellers >= travellers }, label: ">= \(travellers)")
        case 1:
            return DrawnCondition(
                write: {
                    $0.appendLiteral(#""travellers" < "#)
                    $0.appendInterpolation(travellers)
                }, holds: { $0.travellers < travellers }, label: "< \(travellers)")
        case 2:
            return DrawnCondition(
                write: {
                    $0.appendLiteral(#""title" = "#)
                    $0.appendInterpolation(title)
                }, holds: { $0.title == title }, label: "title = \(title.debugDescription)")
        case 3:
            return DrawnCondition(
                write: {
                    $0.appendLiteral(#""title" <> "#)
                    $0.appendInterpolation(title)
                }, holds: { $0.title != title }, label: "title <> \(title.debugDescription)")
        case 4:
            return DrawnCondition(
                write: {
                    $0.appendLiteral(#""travellers" IN "#)
                    $0.appendInterpolation(list: some)
                }, holds: { some.contains($0.travellers) }, label: "in \(some)")
        case 5:
            return DrawnCondition(
                write: {
                    $0.appendLiteral(#""travellers" NOT IN "#)
                    $0.appendInterpolation(list: some)
                }, holds: { !some.contains($0.travellers) },
                label: "not in \(some)")
        case 6:
            return DrawnCondition(
                write: { $0.appendLiteral(#""budget" IS NULL"#) }, holds: { $0.budget == nil }, label: "no budget")
        case 7:
            return DrawnCondition(
                write: {
                    $0.appendLiteral(#""distanceKm" <= "#)
                    $0.appendInterpolation(distance)
                }, holds: { $0.distanceKm <= distance }, label: "km <= \(distance)")
        default:
            let start = Date(timeIntervalSince1970: 1_704_067_200 + Double(random.next(below: 30)) * 86_400)
            return DrawnCondition(
                write: {
                    $0.appendLiteral(#""startsOn" >= "#)
                    $0.appendInterpolation(start)
                }, holds: { $0.startsOn >= start }, label: "from \(start)")
        }
    }

    /// Drawn queries (one to three conditions joined by AND or OR, sorted, limited) return, as
    /// records and as plain values, exactly the trips an in-memory evaluation of the same query
    /// picks, in its order, on every engine.
    @Test(arguments: TestEngine.available)
    func drawnQueriesMatchAnInMemoryEvaluation(engine: TestEngine) async throws {
        try await engine.withStore(schema: Trips.schema) { store in
            var random = SplitMix64(seed: 70)
            let owner = makeTripsUser("ada", familyName: "Lovelace")
            let titles = (0..<12).map {
                "T\($0)" + Self.hostileString(&random).replacingOccurrences(of: "\u{0}", with: "")
            }
            let trips = (0..<60).map { index in
                makeTrip(random.pick(titles), owner: owner.id, day: random.next(below: 30)).with(
                    budget: random.chance(0.3) ? nil : Decimal(random.next(below: 1000)) / 8,
                    distanceKm: Double(random.next(below: 400)) / 4, travellers: Int32(random.next(below: 8)),
                    totalSeconds: Int64(index))
            }
            try await store.performAndSave { context in
                try context.insert(owner)
                for trip in trips { try context.insert(trip) }
            }
            for index in 0..<(Self.cases / 2) {
                let conditions = (0..<(1 + random.next(below: 3))).map { _ in
                    Self.drawCondition(&random, titles: titles)
                }
                let conjunction = random.chance(0.5)
                let limit = random.chance(0.3) ? 1 + random.next(below: 20) : nil
                var interpolation = SQLQuery.StringInterpolation(literalCapacity: 0, interpolationCount: 0)
                interpolation.appendLiteral(#"SELECT * FROM "Trip" WHERE "#)
                var valuesInterpolation = SQLQuery.StringInterpolation(literalCapacity: 0, interpolationCount: 0)
                valuesInterpolation.appendLiteral(#"SELECT "title", "travellers" FROM "Trip" WHERE "#)
                for (position, condition) in conditions.enumerated() {
                    let joiner = position == 0 ? "(" : (conjunction ? " AND (" : " OR (")
                    interpolation.appendLiteral(joiner)
                    valuesInterpolation.appendLiteral(joiner)
                    condition.write(&interpolation)
                    condition.write(&valuesInterpolation)
                    interpolation.appendLiteral(")")
                    valuesInterpolation.appendLiteral(")")
                }
                let order = #" ORDER BY "travellers" DESC, "totalSeconds""#
                interpolation.appendLiteral(order)
                valuesInterpolation.appendLiteral(order)
                if let limit {
                    interpolation.appendLiteral(" LIMIT ")
                    interpolation.appendInterpolation(limit)
                    valuesInterpolation.appendLiteral(" LIMIT ")
                    valuesInterpolation.appendInterpolation(limit)
                }
                let query = SQLQuery(stringInterpolation: interpolation)
                let valuesQuery = SQLQuery(stringInterpolation: valuesInterpolation)
                let (records, values) = try await store.performQuery { context in
                    (
                        try context.fetch(query, as: Trip.self),
                        try context.fetch(valuesQuery, as: String.self, Int32.self)
                    )
                }
                var expected = trips.filter { trip in
                    conjunction ? conditions.allSatisfy { $0.holds(trip) } : conditions.contains { $0.holds(trip) }
                }.sorted { ($1.travellers, $0.totalSeconds) < ($0.travellers, $1.totalSeconds) }
                if let limit { expected = Array(expected.prefix(limit)) }
                let label =
                    "\(engine) case \(index): \(conditions.map(\.label)) \(conjunction ? "and" : "or") limit \(limit ?? 0)"
                #expect(records == expected, "\(label)")
                #expect(
                    values.map(\.0) == expected.map(\.title) && values.map(\.1) == expected.map(\.travellers),
                    "\(label)")
            }
        }
    }

    @Test(arguments: TestEngine.available)
    func recordsDecodeFromHandWrittenSQLAsTheRequestFetchesThem(engine: TestEngine) async throws {
        try await engine.withStore(schema: Trips.schema) { store in
            let owner = makeTripsUser("ada", familyName: "Lovelace")
            try await store.performAndSave { try $0.insert(owner) }
            for index in 0..<(Self.cases / 10) {
                var random = SplitMix64(seed: 62, index: index)
                let trips = (0..<random.next(below: 30)).map { day in
                    makeTrip("T\(day)", owner: owner.id, day: day).with(
                        budget: random.chance(0.3) ? nil : Decimal(random.next(below: 1000)) / 8,
                        travellers: Int32(random.next(below: 10)))
                }
                try await store.performAndSave { context in
                    try context.execute(#"DELETE FROM "Trip""#)
                    for trip in trips { try context.insert(trip) }
                }
                let minimum = Int32(random.next(below: 10))
                let (raw, requested) = try await store.performQuery { context in
                    (
                        try context.fetch(
                            #"SELECT * FROM "Trip" WHERE "travellers" >= \#(minimum) ORDER BY "startsOn""#,
                            as: Trip.self),
                        try context.fetch(
                            Trip.request().filter { $0.travellers >= minimum }.sorted { [$0.startsOn.ascending] })
                    )
                }
                #expect(raw == requested, "\(engine) case \(index)")
                #expect(Set(raw) == Set(trips.filter { $0.travellers >= minimum }), "\(engine) case \(index)")
            }
        }
    }

    @Test(arguments: TestEngine.available)
    func aResultWithoutAColumnOfTheRecordNamesIt(engine: TestEngine) async throws {
        try await engine.withStore(schema: Trips.schema) { store in
            let error = await #expect(throws: SQLQueryError.self) {
                try await store.performQuery { try $0.fetch(#"SELECT "id", "title" FROM "Trip""#, as: Trip.self) }
            }
            guard case .missingColumn(let entity, let column, let found) = error else {
                Issue.record("\(engine): expected a missing column, got \(String(describing: error))")
                return
            }
            #expect(entity == "Trip" && column == "identifier" && found == ["id", "title"])
            #expect(error.map { "\($0)" }?.contains("no column 'identifier'") == true)
        }
    }

    /// A write is refused in a read, before it changes anything, and the read goes on; in a write
    /// transaction it runs and wakes the observers.
    @Test(arguments: TestEngine.available)
    func onlyAWriteTransactionWritesAndItsWritesWakeObservers(engine: TestEngine) async throws {
        try await engine.withStore(schema: Trips.schema) { store in
            let ada = makeTripsUser("ada", familyName: "Lovelace", rating: 1)
            try await store.performAndSave { try $0.insert(ada) }
            await #expect(throws: SQLQueryError.self) {
                try await store.performQuery { try $0.fetch(#"DELETE FROM "User""#, as: Int.self) }
            }
            await #expect(throws: SQLQueryError.self) {
                try await store.performQuery { try $0.fetch(#"UPDATE "User" SET "rating" = 5"#, as: Int.self) }
            }
            let (refusals, after) = try await store.performQuery { context in
                var refusals: [SQLQueryError] = []
                for sql: SQLQuery in [
                    #"UPDATE "User" SET "rating" = 5"#, #"WITH gone AS (DELETE FROM "User" RETURNING 1) SELECT 1"#,
                    #"INSERT INTO "User" SELECT * FROM "User" WHERE 1 = 0"#,
                ] {
                    do {
                        _ = try context.fetch(sql, as: Int.self)
                    } catch let error as SQLQueryError {
                        refusals.append(error)
                    } catch {
                        // SQLite has no data-modifying WITH: a syntax error, not a write.
                    }
                }
                return (refusals, try context.fetch(User.request()))
            }
            #expect(refusals.count >= 2, "\(engine): \(refusals)")
            #expect(
                refusals.allSatisfy { if case .writeInReadTransaction = $0 { true } else { false } }, "\(engine)")
            #expect(after == [ada], "\(engine): the read goes on after a refused write, which changed nothing")
            var updates = store.observe(User.request().filter { $0.rating >= 5 }).makeAsyncIterator()
            #expect(try await updates.next() == [])
            let changed = try await store.performAndSave { try $0.execute(#"UPDATE "User" SET "rating" = \#(5)"#) }
            #expect(changed == 1)
            #expect(try await updates.next()?.map(\.username) == ["ada"])
        }
    }

    /// Deletes every user of `store` and inserts `users`, so one store serves every case of a test
    /// (a new database per case would be slow on PostgreSQL).
    static func replaceUsers(in store: Store, with users: [User]) async throws {
        try await store.performAndSave { context in
            try context.execute(#"DELETE FROM "User""#)
            for user in users { try context.insert(user) }
        }
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

    /// The parameter markers each engine reads in a statement's text (PostgreSQL's `:x` is no marker).
    static func markers(_ engine: TestEngine) -> [String] {
        engine == .postgres ? ["?", "$1", "$2", "$9", "$10"] : ["?", "?1", "?2", "?9", ":x", "@x", "$x", ":v0"]
    }

    /// A parameter marker written in the literal text is refused, wherever it stands among the
    /// interpolated values; inside a quoted string (or a dollar-quoted one on PostgreSQL) it is only text.
    @Test(arguments: TestEngine.available)
    func aParameterMarkerInTheLiteralTextIsRefused(engine: TestEngine) async throws {
        try await engine.withStore(schema: Trips.schema) { store in
            for index in 0..<(Self.cases / 4) {
                var random = SplitMix64(seed: 63, index: index)
                let values = (0..<(1 + random.next(below: 3))).map { _ in random.next(below: 100) }
                let marker = random.pick(Self.markers(engine))
                var literals = ["SELECT "] + values.indices.dropFirst().map { _ in ", " } + [""]
                let at = random.next(below: values.count)
                let quoted = random.chance(0.3)
                let quote = engine == .postgres && random.chance(0.5) ? "$$" : "'"
                literals[at + 1] = (quoted ? ", \(quote)\(marker)\(quote)" : ", \(marker)") + literals[at + 1]
                let query = Self.query(literals, values)
                let label = "\(engine) case \(index): \(literals) with \(values)"
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
                        try context.fetch(
                            Self.query(["SELECT \(quote)\(marker)\(quote), ", ""], [values[0]]), as: String.self,
                            Int.self)
                    }
                    #expect(echoed.count == 1 && echoed[0].0 == marker && echoed[0].1 == values[0], "\(label)")
                }
            }
        }
    }

    /// Plain values decode only from a result with as many columns as types asked for.
    @Test(arguments: TestEngine.available)
    func aColumnCountOtherThanTheTypesAskedForIsRefused(engine: TestEngine) async throws {
        try await engine.withStore(schema: Trips.schema) { store in
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
                            return try context.fetch(sql, as: Int?.self, Int?.self, Int?.self).map {
                                [$0.0, $0.1, $0.2]
                            }
                            .first
                        }
                    } catch SQLQueryError.columnCount(let expected, let found, _)
                        where expected == asked && found == columns
                    {
                        return nil
                    }
                }
                if columns == asked {
                    #expect(found == (0..<columns).map { $0 }, "\(engine) case \(index): \(columns) columns")
                } else {
                    #expect(found == nil, "\(engine) case \(index): \(columns) columns as \(asked) values")
                }
            }
        }
    }

    /// A column a record needs that the result has twice is refused, naming it; a duplicate the
    /// record does not need is ignored.
    @Test(arguments: TestEngine.available)
    func aDuplicateColumnTheRecordNeedsIsRefused(engine: TestEngine) async throws {
        try await engine.withStore(schema: Trips.schema) { store in
            let ada = makeTripsUser("ada", familyName: "Lovelace", rating: 3)
            try await store.performAndSave { try $0.insert(ada) }
            for index in 0..<(Self.cases / 10) {
                var random = SplitMix64(seed: 65, index: index)
                let needed = random.chance(0.7)
                let name =
                    needed ? random.pick(["id", "username", "familyName", "rating"]) : random.pick(["extra", "x"])
                let copies = (0..<(1 + random.next(below: 2))).map { _ in " 0 AS \"\(name)\"" }
                let before = random.chance(0.5)
                let columns = before ? copies + [" *"] : [" *"] + copies
                let sql = Self.query(["SELECT" + columns.joined(separator: ",") + " FROM \"User\""], [])
                do {
                    let users = try await store.performQuery { try $0.fetch(sql, as: User.self) }
                    #expect(!needed && users == [ada], "\(engine) case \(index): \(name) twice")
                } catch let error as SQLQueryError {
                    #expect(
                        needed && error == .ambiguousColumn(entity: "User", column: name),
                        "\(engine) case \(index): \(error)")
                }
            }
        }
    }

    /// A statement ending in a comment or semicolons decodes into records as without them.
    @Test(arguments: TestEngine.available)
    func aTrailingCommentOrSemicolonDoesNotBreakRecordDecoding(engine: TestEngine) async throws {
        try await engine.withStore(schema: Trips.schema) { store in
            let ada = makeTripsUser("ada", familyName: "Lovelace", rating: 3)
            try await store.performAndSave { try $0.insert(ada) }
            for index in 0..<(Self.cases / 4) {
                var random = SplitMix64(seed: 66, index: index)
                let tail = (0..<random.next(below: 4)).map { _ in
                    random.pick([";", " ", "\n", "-- a comment's end", "/* a ') comment */", "-- ;\n", "\t"])
                }.joined()
                let query = Self.query([#"SELECT * FROM "User" WHERE "rating" = "#, " " + tail], [3])
                let users = try await store.performQuery { try $0.fetch(query, as: User.self) }
                #expect(users == [ada], "\(engine) case \(index): \(tail.debugDescription)")
            }
        }
    }

    /// `execute` returns the rows the statement itself changed: 0 for one that changes none,
    /// whatever changed before it.
    @Test(arguments: TestEngine.available)
    func executeCountsOnlyTheRowsItsStatementChanged(engine: TestEngine) async throws {
        try await engine.withStore(schema: Trips.schema) { store in
            for index in 0..<(Self.cases / 10) {
                var random = SplitMix64(seed: 67, index: index)
                let users = (0..<(1 + random.next(below: 6))).map {
                    makeTripsUser("u\($0)", familyName: "F", rating: Int16(random.next(below: 3)))
                }
                try await Self.replaceUsers(in: store, with: users)
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
                    case 2: steps.append((#"INSERT INTO "User" SELECT * FROM "User" WHERE 1 = 0"#, 0))
                    default: steps.append((#"UPDATE "User" SET "rating" = 9 WHERE "rating" = 7"#, 0))
                    }
                }
                let counts = try await store.performAndSave { [steps] context in
                    try steps.map { step in
                        // A failing statement is undone alone, and the transaction goes on, on every engine.
                        let failed = (try? context.execute(#"UPDATE "User" SET "nope" = 1"#)) == nil
                        return failed ? try context.execute(SQLQuery(stringLiteral: step.0)) : -1
                    }
                }
                #expect(counts == steps.map(\.1), "\(engine) case \(index): \(steps.map(\.0))")
            }
        }
    }

    /// Statements each engine refuses because they change the connection rather than the data
    /// (``RawSQLAdmissionTests`` draws the ones that got past a list of refused first words).
    static func connectionStatements(_ engine: TestEngine) -> [String] {
        switch engine {
        case .sqlite:
            [
                "PRAGMA query_only=1", "pragma foreign_keys = off", " /* c */ PRAGMA journal_mode = DELETE",
                "ATTACH ':memory:' AS other", "DETACH other", "VACUUM", "BEGIN", "COMMIT", "END", "ROLLBACK",
                "SAVEPOINT s", "RELEASE s", "\n-- c\nPragma query_only = ON;",
            ]
        case .postgres:
            [
                "SET search_path = pg_catalog", "set session authorization default", "RESET ALL", "LISTEN x",
                "UNLISTEN *", "NOTIFY x", "COPY \"User\" TO STDOUT", "DO $$ BEGIN END $$", "CALL p()", "BEGIN",
                "START TRANSACTION", "COMMIT", "END", "ROLLBACK", "ABORT", "SAVEPOINT s", "RELEASE s",
                "PREPARE p AS SELECT 1", "EXECUTE p", "DEALLOCATE ALL", "DISCARD ALL", "LOAD 'x'", "VACUUM",
                "CHECKPOINT", "\\copy \"User\" to 'x'", "\\set x 1", " /* /* nested */ */ SET x = 1",
                "\n-- c\nSet Local statement_timeout = 1;",
            ]
        }
    }

    /// Statements that change the connection rather than the data are refused in both kinds of
    /// transaction, and the store keeps working as before.
    @Test(arguments: TestEngine.available)
    func connectionStatementsAreRefused(engine: TestEngine) async throws {
        let statements = Self.connectionStatements(engine)
        try await engine.withStore(schema: Trips.schema) { store in
            // Every statement of the engine's list, in both kinds of transaction.
            for (index, (text, write)) in statements.flatMap({ text in [(text, false), (text, true)] }).enumerated() {
                let sql = SQLQuery(stringLiteral: text)
                do {
                    if write {
                        _ = try await store.performAndSave { try $0.execute(sql) }
                    } else {
                        _ = try await store.performQuery { try $0.fetch(sql, as: Int.self) }
                    }
                    Issue.record("\(engine) case \(index): \(sql) ran")
                } catch let error as SQLQueryError {
                    guard case .connectionStatement = error else {
                        Issue.record("\(engine) case \(index): \(error)")
                        continue
                    }
                }
                let user = makeTripsUser("u\(index)", familyName: "F")
                try await store.performAndSave { try $0.insert(user) }
                let found = try await store.performQuery {
                    try $0.fetch(User.request().filter { $0.username == "u\(index)" })
                }
                #expect(found == [user], "\(engine) case \(index): the store writes after \(sql)")
            }
        }
    }

    /// An empty list is in nothing and everything is `NOT IN` it, as with typed `in` and `notIn`.
    @Test(arguments: TestEngine.available)
    func anEmptyListMatchesNothingInAndEverythingNotIn(engine: TestEngine) async throws {
        try await engine.withStore(schema: Trips.schema) { store in
            for index in 0..<(Self.cases / 20) {
                var random = SplitMix64(seed: 69, index: index)
                let users = (0..<random.next(below: 6)).map { makeTripsUser("u\($0)", familyName: "F") }
                try await Self.replaceUsers(in: store, with: users)
                let none: [String] = []
                let (inside, outside) = try await store.performQuery { context in
                    (
                        try context.fetch(
                            #"SELECT COUNT(*) FROM "User" WHERE "username" IN \#(list: none)"#, as: Int.self),
                        try context.fetch(
                            #"SELECT COUNT(*) FROM "User" WHERE "username" NOT IN \#(list: none)"#, as: Int.self)
                    )
                }
                #expect(inside == [0] && outside == [users.count], "\(engine) case \(index)")
            }
        }
    }
}
