import Foundation
import Modelwright
import ModelwrightEngineTestSupport
import ModelwrightTestSupport
import Testing
import Trips

/// What SQL written by hand may do, on every engine from one source (``TestEngine``): only read
/// and write rows (an allowlist of first words, SQLite's authorizer, PostgreSQL's functions with
/// lasting effects by name), with names that name something and fit the engine, any number of
/// values up to the engine's parameters (and an error, not a lost store, beyond), and reals that
/// fit the type asked for. Each test draws its cases; `MODELWRIGHT_LARGE=1` draws ten times as many.
@Suite(.heavy)
struct RawSQLAdmissionTests {
    static let cases = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 1000 : 100

    /// Statements that do more than read or write rows, each of which the red team ran: they turn
    /// a setting back on, make later writes fail, hide an entity's table behind a temporary view,
    /// keep a cursor or a lock past the transaction, or change the role for good.
    static func outliving(_ engine: TestEngine) -> [String] {
        let common = [
            #"CREATE TEMP VIEW "User" AS SELECT * FROM "User" WHERE 1 = 0"#, #"CREATE TEMP TABLE "User" (x integer)"#,
            #"DROP TABLE "Trip""#, #"ALTER TABLE "User" ADD COLUMN "x" integer"#, "EXPLAIN SELECT 1",
            #"CREATE VIEW v AS SELECT 1"#, #"CREATE INDEX i ON "User" ("rating")"#, "ANALYZE", "BEGIN", "COMMIT",
            "SAVEPOINT s", "VACUUM",
        ]
        switch engine {
        case .sqlite:
            return common + [
                "EXPLAIN PRAGMA trusted_schema = 1", "EXPLAIN PRAGMA query_only = 1", "PRAGMA query_only = 1",
                "explain query plan pragma query_only = 1", "ATTACH ':memory:' AS other", "REINDEX",
                #"CREATE TEMP TRIGGER t AFTER INSERT ON "User" BEGIN DELETE FROM "User"; END"#,
            ]
        case .postgres:
            return common + [
                #"DECLARE c1 CURSOR WITH HOLD FOR SELECT * FROM "User""#,
                "ALTER ROLE CURRENT_USER SET statement_timeout = '1h'", "SET statement_timeout = 1",
                #"SELECT * INTO TEMP "User" FROM "User" WHERE false"#, "SELECT pg_advisory_lock(4242)",
                "SELECT pg_catalog.pg_try_advisory_lock(1)", #"SELECT "pg_notify"('ch', 'x')"#,
                "SELECT set_config('statement_timeout', '1h', false)", "SELECT lo_from_bytea(0, 'x')::text",
                "SELECT lo_import('/etc/hostname')::text", #"TRUNCATE "User""#, "LOCK TABLE \"User\"",
                #"COMMENT ON TABLE "User" IS 'x'"#, #"TABLE "User""#, "LISTEN x", "GRANT SELECT ON \"User\" TO PUBLIC",
            ]
        }
    }

    /// How a drawn statement is written: in any case, behind space and comments, with a trailing semicolon.
    static func dressed(_ statement: String, _ random: inout SplitMix64, lowercased: Bool = true) -> String {
        let prefix = random.pick(["", " ", "\n", "-- c\n", "/* c */ ", "\t/* a */ -- b\n"])
        let suffix = random.pick(["", ";", " ;", " -- end"])
        let cased = lowercased && random.chance(0.3) ? statement.lowercased() : statement
        return prefix + cased + suffix
    }

    /// Whether the store still reads and writes as before: a typed insert, then a typed fetch that
    /// finds it (a temporary view named after the table would hide it; `query_only` would refuse it).
    static func storeWorks(_ store: Store, _ username: String) async throws -> Bool {
        let user = makeTripsUser(username, familyName: "F")
        try await store.performAndSave { try $0.insert(user) }
        let found = try await store.performAndSave { context in
            try context.fetch(User.request().filter { $0.username == username })
        }
        let read = try await store.performQuery { try $0.fetch(User.request().filter { $0.username == username }) }
        return found == [user] && read == [user]
    }

    /// A statement that does more than read or write rows is refused, naming its word, in both kinds
    /// of transaction however it is written, and the store then reads and writes as before.
    @Test(arguments: TestEngine.available)
    func onlyStatementsThatReadOrWriteRowsRun(engine: TestEngine) async throws {
        let statements = Self.outliving(engine)
        try await engine.withStore(schema: Trips.schema) { store in
            for index in 0..<Self.cases {
                var random = SplitMix64(seed: 311, index: index)
                let text = Self.dressed(random.pick(statements), &random)
                let sql = SQLQuery(stringLiteral: text)
                let write = random.chance(0.5)
                do {
                    if write {
                        _ = try await store.performAndSave { try $0.execute(sql) }
                    } else {
                        _ = try await store.performQuery { try $0.fetch(sql, as: String.self) }
                    }
                    Issue.record("\(engine) case \(index): \(text.debugDescription) ran")
                } catch let error as SQLQueryError {
                    guard case .connectionStatement(let keyword, _) = error, !keyword.isEmpty else {
                        Issue.record("\(engine) case \(index): \(error)")
                        continue
                    }
                } catch {
                    Issue.record("\(engine) case \(index): \(text.debugDescription): \(error)")
                }
                let works = try await Self.storeWorks(store, "u\(index)")
                #expect(works, "\(engine) case \(index): after \(text)")
            }
            if engine == .postgres {
                // Nothing of a refused statement outlived it on the session.
                let (cursors, locks, objects) = try await store.performQuery { context in
                    (
                        try context.fetch("SELECT COUNT(*) FROM pg_cursors WHERE name <> ''", as: Int.self),
                        try context.fetch(
                            "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 4242", as: Int.self),
                        try context.fetch("SELECT COUNT(*) FROM pg_largeobject_metadata", as: Int.self)
                    )
                }
                #expect(cursors == [0], "\(engine)")
                #expect(locks == [0], "\(engine)")
                #expect(objects == [0], "\(engine)")
            }
        }
    }

    /// Statements that only read or write rows still run however they start: SELECT, WITH, VALUES,
    /// a parenthesis, and in a write INSERT, UPDATE, DELETE (and REPLACE on SQLite).
    @Test(arguments: TestEngine.available)
    func readsAndWritesOfRowsStillRun(engine: TestEngine) async throws {
        try await engine.withStore(schema: Trips.schema) { store in
            for index in 0..<(Self.cases / 5) {
                var random = SplitMix64(seed: 313, index: index)
                // SQLite takes no parenthesis before a statement's first word (a syntax error there).
                let reads =
                    [
                        "SELECT 'a'", "WITH x(v) AS (SELECT 'a') SELECT v FROM x", "VALUES ('a')",
                        "SELECT 'a' UNION SELECT 'a'",
                    ]
                    + (engine == .postgres ? ["(SELECT 'a')"] : [])
                let read = Self.dressed(random.pick(reads), &random)
                let rows = try await store.performQuery { try $0.fetch(SQLQuery(stringLiteral: read), as: String.self) }
                #expect(rows.map { $0.lowercased() } == ["a"], "\(engine) case \(index): \(read)")
                var writes = [
                    #"INSERT INTO "User" SELECT * FROM "User" WHERE 1 = 0"#,
                    #"UPDATE "User" SET "rating" = 1 WHERE 1 = 0"#,
                    #"DELETE FROM "User" WHERE 1 = 0"#, #"WITH x AS (SELECT 1) DELETE FROM "User" WHERE 1 = 0"#,
                ]
                if engine == .sqlite { writes.append(#"REPLACE INTO "User" SELECT * FROM "User" WHERE 1 = 0"#) }
                let write = SQLQuery(stringLiteral: Self.dressed(random.pick(writes), &random, lowercased: false))
                #expect(try await store.performAndSave { try $0.execute(write) } == 0, "\(engine) case \(index)")
            }
        }
    }

    /// A drawn name that matches no column, quoted by `\(identifier:)`, in every position a name
    /// takes: an error on both engines, never SQLite's old fallback to a string (which made
    /// `WHERE "user_name" = 'user_name'` hold for every row).
    @Test(arguments: TestEngine.available)
    func aNameThatNamesNoColumnIsAnError(engine: TestEngine) async throws {
        try await engine.withStore(schema: Trips.schema) { store in
            try await store.performAndSave { context in
                try context.insert(makeTripsUser("user_name", familyName: "F"))
                try context.insert(makeTripsUser("other", familyName: "F"))
            }
            for index in 0..<Self.cases {
                var random = SplitMix64(seed: 317, index: index)
                let name =
                    random.pick(["user_name", "x", "rating ", "é", "a\"b", "1", "id2", "user name"])
                    + (random.chance(0.5) ? "\(random.next(below: 100))" : "")
                let statement: SQLQuery =
                    switch random.next(below: 7) {
                    case 0: #"SELECT "username" FROM "User" WHERE \#(identifier: name) = \#(name)"#
                    case 1: #"SELECT \#(identifier: name) FROM "User""#
                    case 2: #"SELECT "username" FROM "User" ORDER BY \#(identifier: name)"#
                    case 3: #"SELECT "username" FROM "User" GROUP BY "username", \#(identifier: name)"#
                    case 4: #"SELECT "username" FROM "User" WHERE lower(\#(identifier: name)) = \#(name)"#
                    case 5: #"UPDATE "User" SET "givenName" = \#(identifier: name)"#
                    default: #"DELETE FROM "User" WHERE \#(identifier: name) = \#(name)"#
                    }
                await #expect(throws: (any Error).self, "\(engine) case \(index): \(name.debugDescription)") {
                    try await store.performAndSave { try $0.fetch(statement, as: String.self) }
                }
            }
            let left = try await store.performQuery { try $0.fetch(User.request()).map(\.givenName).sorted() }
            #expect(left == ["Other", "User_Name"], "\(engine): no statement changed a row")
        }
    }

    /// An interpolated name longer than the engine keeps is refused (PostgreSQL would cut two
    /// names to one); on SQLite, and up to 63 bytes on PostgreSQL, it names exactly itself.
    @Test(arguments: TestEngine.available)
    func aNameLongerThanTheEngineKeepsIsRefused(engine: TestEngine) async throws {
        try await engine.withStore(schema: Trips.schema) { store in
            for index in 0..<Self.cases {
                var random = SplitMix64(seed: 319, index: index)
                let stem = String(repeating: random.pick(["a", "é", "\"", "😀"]), count: 1 + random.next(below: 80))
                let (first, second) = (stem + "X", stem + "Y")
                let query: SQLQuery = "SELECT \(identifier: first) FROM (SELECT 1 AS \(identifier: second)) t"
                let tooLong = engine == .postgres && second.utf8.count > 63
                do {
                    let rows = try await store.performQuery { try $0.fetch(query, as: Int.self) }
                    Issue.record("\(engine) case \(index): \(first.utf8.count) bytes resolved to another name: \(rows)")
                } catch let error as SQLQueryError {
                    guard case .nameTooLong(_, let limit) = error, tooLong, limit == 63 else {
                        Issue.record("\(engine) case \(index): \(error)")
                        continue
                    }
                } catch {
                    #expect(!tooLong, "\(engine) case \(index): \(error)")
                }
                let same: SQLQuery = "SELECT \(identifier: first) FROM (SELECT 1 AS \(identifier: first)) t"
                if tooLong {
                    await #expect(throws: SQLQueryError.self) {
                        try await store.performQuery { try $0.fetch(same, as: Int.self) }
                    }
                } else {
                    let rows = try await store.performQuery { try $0.fetch(same, as: Int.self) }
                    #expect(rows == [1], "\(engine) case \(index)")
                }
            }
        }
    }

    /// Lists of drawn sizes up to 70,000 values: up to the engine's parameters the count is right;
    /// beyond, an error (on PostgreSQL ``SQLQueryError/tooManyValues(count:limit:)`` before
    /// anything is sent), after which the store reads and writes as before.
    @Test(arguments: TestEngine.available)
    func listsOfAnySizeLeaveAWorkingStore(engine: TestEngine) async throws {
        // PostgreSQL: libpq's limit on a statement's description (PostgresDialect.parameterLimit).
        let limit = engine == .postgres ? 7_498 : 32_766
        try await engine.withStore(schema: Trips.schema) { store in
            var random = SplitMix64(seed: 331)
            var sizes = [4_000, 7_498, 7_499, 8_000, 32_766, 32_767, 65_535, 65_536, 70_000]
            for _ in 0..<(Self.cases / 20) { sizes.append(1 + random.next(below: 70_000)) }
            for (index, size) in sizes.enumerated() {
                let hit = random.next(below: size + 10)
                let values = Array(0..<size)
                let query: SQLQuery = "SELECT COUNT(*) FROM (VALUES (1)) v WHERE \(hit) IN \(list: values)"
                for write in [false, true] {
                    do {
                        let counted =
                            write
                            ? try await store.performAndSave { try $0.fetch(query, as: Int.self) }
                            : try await store.performQuery { try $0.fetch(query, as: Int.self) }
                        #expect(counted == [hit < size ? 1 : 0], "\(engine) case \(index): \(size) values")
                    } catch {
                        // The list's values and the one compared with them.
                        #expect(size + 1 > limit, "\(engine) case \(index): \(size) values: \(error)")
                        if engine == .postgres {
                            #expect(
                                error as? SQLQueryError == .tooManyValues(count: size + 1, limit: limit),
                                "\(engine) case \(index): \(error)")
                        }
                    }
                    let works = try await Self.storeWorks(store, "l\(index)\(write)")
                    #expect(works, "\(engine) case \(index): \(size)")
                }
            }
        }
    }

    /// A finite real beyond `Float`'s range is a range error, as 70,000 into `Int16` is, not an
    /// infinity; one within it reads as the nearest `Float`, and infinities stay infinite.
    @Test(arguments: TestEngine.available)
    func aRealBeyondFloatIsARangeError(engine: TestEngine) async throws {
        try await engine.withStore(schema: Trips.schema) { store in
            for index in 0..<Self.cases {
                var random = SplitMix64(seed: 337, index: index)
                let magnitude = Double(1 + random.next(below: 1_000_000)) / 1_000_000
                let exponent = random.next(below: 620) - 310
                let sign: Double = random.chance(0.5) ? -1 : 1
                let value =
                    random.chance(0.05)
                    ? sign * .infinity
                    : random.chance(0.1)
                        ? sign * Double(Float.greatestFiniteMagnitude).nextUp
                        : sign * magnitude * pow(10, Double(exponent))
                let expected = Float(value)
                let beyond = value.isFinite && !expected.isFinite
                do {
                    let read = try await store.performQuery { try $0.fetch("SELECT \(value)", as: Float.self) }
                    #expect(!beyond, "\(engine) case \(index): \(value) read as \(read)")
                    #expect(read == [expected], "\(engine) case \(index): \(value)")
                } catch let error as StoreError {
                    #expect(beyond, "\(engine) case \(index): \(value): \(error)")
                }
            }
        }
    }
}
