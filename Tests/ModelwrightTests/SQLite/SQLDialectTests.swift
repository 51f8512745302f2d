import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright

/// The storage-engine seam holds: SQLite's own SQL is written only inside the SQLite dialect and
/// the files of `Sources/Modelwright/SQLite`, generated code carries none of it, and the SQLite
/// dialect keeps the column types every existing store file was created with.
struct SQLDialectTests {
    private static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Spellings that only SQLite understands, or that build its `?` parameters by hand.
    private static let sqliteOnly: [(name: String, pattern: String)] = [
        ("sqlite_master", #"sqlite_(master|schema|sequence)"#),
        ("PRAGMA", #"\bPRAGMA\b|\bpragma_"#),
        ("rowid", #"\browid\b|WITHOUT ROWID"#),
        ("INSERT OR", #"INSERT OR (IGNORE|REPLACE|ABORT|FAIL|ROLLBACK)"#),
        ("AUTOINCREMENT", #"AUTOINCREMENT"#),
        ("strftime", #"\bstrftime\("#),
        ("json_", #"\bjson_[a-z_]+\("#),
        ("IS NOT ?", #"IS NOT \?"#),
        // SQLite's NULL-safe `<>` (`a IS NOT b`); `IS NOT NULL` is standard SQL.
        ("IS NOT", #"IS NOT (?!NULL\b)"#),
        ("mw_string", #"\bmw_string\("#),
        // SQLite's function that writes a value as a literal; ``SQLDialect/literal(of:)`` spells it.
        ("quote()", #"\bquote\("#),
        ("CAST AS REAL", #"AS REAL\)"#),
        ("? list", #"repeating: "\?""#),
        ("? marker", handWrittenMarker),
        ("BEGIN kind", #""BEGIN (DEFERRED|IMMEDIATE|EXCLUSIVE)"#),
    ]

    /// A `?` parameter written by hand in an SQL string (`= ?`, `(?, ?)`, `? AS`, `LIMIT ?`):
    /// the runtime takes markers from ``SQLDialect/parameter`` and ``SQLDialect/parameters(_:)``.
    /// An SQL keyword or an operator (spaced, as SQL is written here) must come before it, so a
    /// ternary (`a ? "b" : "c"`), `??` and an optional generic (`<Target>?`) are not read as markers.
    private static let handWrittenMarker =
        #"(\b(SELECT|VALUES|LIMIT|OFFSET|AND|OR|WHERE|SET|IN)\s*\(?|[=<>+]\s+|[(,]\s*)\?(\d*)(\s*[,)"]|\s+(AND|OR|WHERE|AS|OFFSET|ORDER|LIMIT|THEN|\+)\b)"#

    /// Files that still spell SQLite SQL outside the SQLite dialect, each with why: none since the
    /// escape hatch and FTS5's reserved names moved behind the dialect. The test fails when an entry
    /// is no longer needed, so the list only shrinks.
    private static let notYetRouted: Set<String> = []

    /// Every non-comment line of the Swift files under `folder` (and of templates), by file.
    private static func codeLines(under folder: String, extensions: Set<String>) throws -> [(String, [String])] {
        let root = packageRoot.appendingPathComponent(folder)
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { return [] }
        var result: [(String, [String])] = []
        for case let url as URL in walker where extensions.contains(url.pathExtension) {
            let relative = String(url.path.dropFirst(packageRoot.path.count + 1))
            let text = try String(contentsOf: url, encoding: .utf8)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter {
                !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//")
            }
            result.append((relative, lines))
        }
        return result.sorted { $0.0 < $1.0 }
    }

    private static func findings(in files: [(String, [String])]) throws -> Set<String> {
        var found: Set<String> = []
        for (path, lines) in files {
            for (name, pattern) in sqliteOnly {
                let expression = try Regex(pattern)
                if lines.contains(where: { $0.contains(expression) }) { found.insert("\(path): \(name)") }
            }
        }
        return found
    }

    @Test func sqliteSQLIsWrittenOnlyInsideTheSQLiteEngine() throws {
        let files = try Self.codeLines(under: "Sources", extensions: ["swift"]).filter { path, _ in
            // A Core Data store is a SQLite file whatever engine the app moves to, so its importer
            // reads (and tunes) it with SQLite's own words.
            !path.hasPrefix("Sources/Modelwright/SQLite/") && !path.hasPrefix("Sources/CSQLite/")
                && !path.hasPrefix("Sources/Modelwright/CoreDataStore/")
        }
        #expect(files.count > 100, "the scan found the sources")
        let found = try Self.findings(in: files)
        #expect(found.subtracting(Self.notYetRouted).sorted() == [], "SQLite SQL outside the SQLite dialect")
        #expect(Self.notYetRouted.subtracting(found).sorted() == [], "an exception no longer needed")
    }

    @Test func generatedCodeAndTemplatesCarryNoSQL() throws {
        let files =
            try Self.codeLines(under: "Templates", extensions: ["mustache"])
            + Self.codeLines(under: "Tests/TripsTests/Golden", extensions: ["swift", "golden", "txt"])
        #expect(!files.isEmpty)
        #expect(try Self.findings(in: files).sorted() == [])
        // Nor any SQL statement at all: generated code describes the schema, the runtime writes SQL.
        let statement = try Regex(#""[^"]*\b(SELECT|INSERT INTO|UPDATE [^"]* SET|DELETE FROM|CREATE TABLE)\b"#)
        let offending = files.filter { _, lines in lines.contains { $0.contains(statement) } }.map(\.0)
        #expect(offending == [])
    }

    /// The SQLite types every store file was created with: the affinity table before the seam. A
    /// change here changes the DDL, so existing stores would fail verification at open.
    @Test func sqliteColumnTypesStayAsStoresHaveThem() throws {
        let pinned: [(AttributeType, String)] = [
            (.bool, "INTEGER"), (.int16, "INTEGER"), (.int32, "INTEGER"), (.int64, "INTEGER"), (.int, "INTEGER"),
            (.double, ""), (.float, ""), (.date, "REAL"), (.decimal, "TEXT"), (.string, "TEXT"), (.url, "TEXT"),
            (.data, "BLOB"), (.uuid, "BLOB"),
            (.codable(typeName: "Tags"), "TEXT"),
            (.enumeration(EnumDescription(name: "Role", rawType: .string, cases: [])), "TEXT"),
            (.enumeration(EnumDescription(name: "Level", rawType: .int, cases: [])), "INTEGER"),
        ]
        let dialect = SQLiteDialect()
        for (type, sqliteType) in pinned {
            #expect(dialect.columnType(SchemaLayout.storage(of: type)) == sqliteType, "\(type)")
        }
        #expect(dialect.columnType(.uuid) == "BLOB", "record IDs and to-one columns")
    }

    /// Every DDL statement the dialect spells for hostile names is one statement SQLite prepares
    /// and runs as meant: the table and column end up with exactly the names asked for.
    @Test func migrationStatementsKeepHostileNamesExact() throws {
        var random = SplitMix64(seed: 26)
        let pieces = ["a", "\"", "'", " ", ";", "--", "é", "\u{600}'", "Order", "rowid", "\\", "?", "$1", "]"]
        let dialect = SQLiteDialect()
        for round in 0..<200 {
            func name() -> String {
                "t\(round)_"
                    + (0..<random.next(below: 5)).map { _ in pieces[random.next(below: pieces.count)] }.joined()
            }
            let (table, renamed, column, newColumn) = (name(), name() + "_r", name(), name() + "_c")
            let connection = try SQLiteConnection(path: nil)
            try connection.execute(
                "CREATE TABLE \(quoted(table)) "
                    + dialect.tableBody(["\(quoted("id")) BLOB PRIMARY KEY"], clustered: true))
            try connection.execute(dialect.addColumn("\(quoted(column)) \(dialect.columnType(.text))", to: table))
            try connection.execute(dialect.renameColumn(column, of: table, to: newColumn))
            try connection.execute(dialect.renameTable(table, to: renamed))
            let exists = try connection.statement(dialect.tableExists)
            exists.bind(renamed, 1)
            #expect(try exists.step(), "\(renamed)")
            exists.reset()
            let columns = try connection.statement("SELECT name FROM pragma_table_info(?) ORDER BY cid")
            columns.bind(renamed, 1)
            var names: [String] = []
            while try columns.step() { names.append(columns.string(0)) }
            columns.reset()
            #expect(names == ["id", newColumn])
            try connection.execute(dialect.dropTable(renamed))
        }
    }

    /// A limited query returns the rows Swift's `dropFirst(offset).prefix(limit)` does, over many
    /// drawn limits and offsets, an offset with no limit (bound as ``SQLDialect/noLimit``) included.
    @Test func limitAndOffsetSliceAsSwiftDoes() throws {
        let dialect = SQLiteDialect()
        let connection = try SQLiteConnection(path: nil)
        let values = Array(0..<12)
        try connection.execute("CREATE TABLE \"t\" (\"v\" INTEGER)")
        try connection.execute("INSERT INTO \"t\" VALUES " + values.map { "(\($0))" }.joined(separator: ", "))
        let statement = try connection.prepare(
            "SELECT \"v\" FROM \"t\" ORDER BY \"v\"" + dialect.limit(dialect.parameter, offset: dialect.parameter))
        var random = SplitMix64(seed: 26)
        for _ in 0..<300 {
            let limit = random.next(below: 3) == 0 ? nil : random.next(below: 15)
            let offset = random.next(below: 15)
            statement.reset()
            statement.bind(limit.map { .integer(Int64($0)) } ?? dialect.noLimit, 1)
            statement.bind(.integer(Int64(offset)), 2)
            var rows: [Int] = []
            while try statement.step() { rows.append(Int(statement.int64(0))) }
            #expect(
                rows == Array(values.dropFirst(offset).prefix(limit ?? .max)),
                "limit \(String(describing: limit)), offset \(offset)")
        }
    }
}
