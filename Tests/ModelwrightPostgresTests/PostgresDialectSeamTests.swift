import Foundation
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing
import Trips

@testable import Modelwright

/// `PostgresDialect` as the runtime's `SQLDialect`: what it spells runs on a real server and means
/// what the SQLite dialect's statement means, and what PostgreSQL lacks is refused by name, never
/// answered with SQLite's SQL.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresDialectSeamTests {
    private let dialect = PostgresDialect()

    /// The NULL-safe `<>` agrees with Swift's `!=` on optionals, over many drawn pairs, NULL included.
    @Test func differsIsNullSafeInequality() async throws {
        let connection = try await makeConnection()
        var random = SplitMix64(seed: 2_026)
        var pairs: [(Int64?, Int64?)] = [(nil, nil), (nil, 0), (0, nil), (1, 1)]
        for _ in 0..<200 {
            func draw() -> Int64? { random.next(below: 4) == 0 ? nil : Int64(random.next(below: 5)) - 2 }
            pairs.append((draw(), draw()))
        }
        func literal(_ value: Int64?) -> String { value.map { "CAST(\($0) AS bigint)" } ?? "CAST(NULL AS bigint)" }
        let tests = pairs.map { dialect.differs(literal($0.0), literal($0.1)) }
        let rows = try await connection.query("SELECT " + tests.joined(separator: ", "))
        for (index, pair) in pairs.enumerated() {
            #expect(rows[0, index] == .bool(pair.0 != pair.1), "\(pair)")
        }
    }

    /// Upserts skip or replace a conflicting row as the SQLite dialect's `INSERT OR …` does, the
    /// history tables are created (twice, harmlessly), and savepoints undo and keep writes.
    @Test func writesAndHistoryTablesRunAsOnSQLite() async throws {
        let connection = try await makeConnection()
        for statement in dialect.createHistoryTables(transactions: "_mw_history_t", changes: "_mw_history_c")
            + dialect.createHistoryTables(transactions: "_mw_history_t", changes: "_mw_history_c")
        {
            try await connection.execute(statement)
        }
        try await connection.execute(
            "CREATE TABLE \"t\" " + dialect.tableBody(["\"id\" bigint PRIMARY KEY", "\"v\" text"], clustered: true))
        let table = dialect.identifier("t")
        try await connection.execute(
            dialect.insertIgnoringConflicts(into: table, columns: ["\"id\"", "\"v\""], "VALUES (1, 'a')"))
        try await connection.execute(
            dialect.insertIgnoringConflicts(into: table, columns: ["\"id\"", "\"v\""], "VALUES (1, 'b')"))
        var rows = try await connection.query("SELECT \"v\" FROM \"t\" WHERE \"id\" = 1")
        #expect(rows[0, 0] == .text("a"), "a conflicting row is skipped")
        try await connection.execute(
            dialect.insertReplacing(into: table, columns: ["\"id\"", "\"v\""], key: ["\"id\""], "VALUES (1, 'c')"))
        rows = try await connection.query("SELECT \"v\" FROM \"t\" WHERE \"id\" = 1")
        #expect(rows[0, 0] == .text("c"), "a conflicting row is replaced")
        try await connection.transaction { connection in
            try await connection.execute(dialect.savepoint("mw_operation"))
            try await connection.execute("INSERT INTO \"t\" VALUES (2, 'undone')")
            try await connection.execute(dialect.rollbackToSavepoint("mw_operation"))
            try await connection.execute(dialect.releaseSavepoint("mw_operation"))
            try await connection.execute(dialect.savepoint("mw_operation"))
            try await connection.execute("INSERT INTO \"t\" VALUES (3, 'kept')")
            try await connection.execute(dialect.releaseSavepoint("mw_operation"))
        }
        rows = try await connection.query("SELECT \"id\" FROM \"t\" ORDER BY \"id\"")
        #expect((0..<rows.count).map { rows[$0, 0] } == [.int64(1), .int64(3)])
        let token = try await connection.query(
            "INSERT INTO \"_mw_history_t\" (\"timestamp\", \"author\") VALUES (1.5, 'app')"
                + dialect.returning(["\"token\""]))
        #expect(token[0, 0] == .int64(1))
    }

    /// The schema-reading queries run on a store created by PostgreSQL's DDL and give one row per
    /// column of each table, in the shape `SchemaIntrospection` fixes.
    @Test func schemaIntrospectionReadsTheTripsStore() async throws {
        let connection = try await makeConnection()
        for statement in try SchemaSQL.createStatements(for: Trips.schema, in: PostgresDialect()) {
            try await connection.execute(statement)
        }
        let queries = dialect.schemaIntrospection
        let tables = try await connection.query(queries.tables)
        let layout = try SchemaLayout(Trips.schema)
        let expectedTables = Set(SchemaSQL.tables(for: layout, in: dialect).map(\.name) + [SchemaSQL.metadataTable])
        let names = Set(
            (0..<tables.count).compactMap { row -> String? in
                if case .text(let name) = tables[row, 0] { name } else { nil }
            })
        #expect(names == expectedTables)
        let columns = try await connection.query(queries.columns)
        #expect(columns.count > names.count)
        let indexes = try await connection.query(queries.indexes)
        #expect(indexes.count > 0)
        let foreignKeys = try await connection.query(queries.foreignKeys)
        #expect(foreignKeys.count > 0)
    }
}

/// What PostgreSQL has no equivalent of is refused by name, and nothing SQLite-only leaks out.
@Suite(.heavy)
struct PostgresDialectRefusalTests {
    private let dialect = PostgresDialect()

    @Test func missingFeaturesThrowUnsupported() throws {
        let refusals: [(String, () throws -> String)] = [
            ("dataVersion", { try dialect.dataVersion }),
            ("schemaVersion", { try dialect.schemaVersion }),
            ("checkpoint", { try dialect.checkpoint }),
            ("foreignKeyColumns", { try dialect.foreignKeyColumns }),
            ("foreignKeyViolations", { try dialect.foreignKeyViolations(in: nil) }),
            ("stringTest matches", { try dialect.stringTest(.matches, options: [], value: "c", needle: "?") }),
        ]
        for (name, requirement) in refusals {
            #expect(throws: SQLDialectError.self, "\(name)") { _ = try requirement() }
        }
        #expect(dialect.foreignKeysOff == nil && dialect.foreignKeysOn == nil)
        #expect(dialect.parameter(3) == "$3")
        // No stable row number: a results controller breaks ties by the ID instead.
        #expect(dialect.rowNumberColumn == "\"id\"")
    }

    /// No statement the dialect spells holds SQLite's words, for every storage class.
    @Test func noSQLiteWordsInItsStatements() throws {
        let sqliteWords = try Regex(
            #"PRAGMA|sqlite_|WITHOUT ROWID|AUTOINCREMENT|INSERT OR|\browid\b|\bIS NOT (?!NULL)|BLOB|REAL\b"#)
        let storages: [ColumnStorage] = [
            .boolean, .integer16, .integer32, .integer64, .double, .float, .timestamp, .decimal, .text, .json,
            .bytes, .uuid,
        ]
        var statements = storages.flatMap { [dialect.columnType($0), dialect.cast("x", to: $0)] }
        statements += dialect.createHistoryTables(transactions: "a", changes: "b")
        statements += [
            dialect.tableBody(["x"], clustered: true), dialect.begin(.deferred), dialect.begin(.immediate),
            dialect.insertIgnoringConflicts(into: "t", columns: ["a"], "VALUES (?)"),
            dialect.insertReplacing(into: "t", columns: ["a", "b"], key: ["a"], "VALUES (?, ?)"),
            dialect.differs("a", "b"), dialect.pageCount, dialect.tableNames, dialect.tableExists,
            dialect.tableCount, dialect.columnNames,
        ]
        let queries = dialect.schemaIntrospection
        statements += [queries.tables, queries.columns, queries.indexes, queries.foreignKeys]
        statements += try SchemaSQL.createStatements(for: Trips.schema, in: PostgresDialect())
        for statement in statements {
            #expect(!statement.contains(sqliteWords), "\(statement)")
        }
    }

    /// A limited query returns on the server the rows Swift's `dropFirst(offset).prefix(limit)`
    /// does, over many drawn limits and offsets; an offset with no limit binds
    /// ``SQLDialect/noLimit``, where SQLite's `-1` is refused.
    @Test func limitAndOffsetSliceAsSwiftDoes() async throws {
        let connection = try await makeConnection()
        try await connection.execute("CREATE TABLE \"t\" (\"v\" bigint)")
        try await connection.execute("INSERT INTO \"t\" SELECT generate_series(0, 11)")
        let sql =
            "SELECT \"v\" FROM \"t\" ORDER BY \"v\"" + dialect.limit(dialect.parameter(1), offset: dialect.parameter(2))
        func postgres(_ value: SQLValue) -> PostgresValue {
            if case .integer(let integer) = value { return .int64(integer) }
            return .null
        }
        var random = SplitMix64(seed: 26)
        for _ in 0..<100 {
            let limit = random.next(below: 3) == 0 ? nil : random.next(below: 15)
            let offset = random.next(below: 15)
            let rows = try await connection.query(
                sql, [postgres(limit.map { .integer(Int64($0)) } ?? dialect.noLimit), .int64(Int64(offset))])
            let expected = Array(0..<12).dropFirst(offset).prefix(limit ?? .max).map { PostgresValue.int64(Int64($0)) }
            #expect(
                (0..<rows.count).map { rows[$0, 0] } == expected, "limit \(String(describing: limit)), offset \(offset)"
            )
        }
    }
}
