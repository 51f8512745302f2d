/// SQLite's spelling of every statement the runtime issues (see ``SQLDialect``): the one place,
/// with the connection, the statement and the store-file checks in this folder, where SQLite's own
/// SQL (`PRAGMA`s, `sqlite_master`, `INSERT OR …`, `WITHOUT ROWID`, `AUTOINCREMENT`, `rowid`) is
/// written.
struct SQLiteDialect: SQLDialect {
    // MARK: - Names, literals and parameters

    func identifier(_ name: String) -> String {
        SQLSyntax.identifier(name)
    }

    /// SQLite keeps a name of any length.
    func indexName(_ name: String) -> String {
        name
    }

    /// None: SQLite's constraints go unnamed, as its stores always made them.
    func primaryKeyName(of table: String) -> String? { nil }

    /// None, as ``primaryKeyName(of:)``.
    func foreignKeyName(of column: String, in table: String) -> String? { nil }

    /// None: SQLite keeps a name of any length.
    var maximumNameBytes: Int? { nil }

    func string(_ text: String) -> String {
        SQLSyntax.string(text)
    }

    package func literal(of expression: String) -> String {
        "quote(\(expression))"
    }

    var parameter: String { "?" }

    func parameters(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }

    func parameter(_ number: Int) -> String {
        "?\(number)"
    }

    /// Backticks and brackets quote names too; a statement starts with `SELECT`, `WITH`, `VALUES`,
    /// `INSERT`, `REPLACE`, `UPDATE`, `DELETE` or a parenthesis, and SQLite's authorizer refuses
    /// whatever else its text would do (``SQLiteConnection/handWrittenStatement(_:parameters:readOnly:)``).
    /// Each value's marker is a plain `?`, and the statement's parameters are checked to be those alone.
    var handWritten: HandWrittenSQLRules {
        var rules = HandWrittenSQLRules(statementWords: [
            "SELECT", "WITH", "VALUES", "INSERT", "REPLACE", "UPDATE", "DELETE", "(",
        ])
        rules.bracketedNames = true
        return rules
    }

    // MARK: - Column types

    func columnType(_ storage: ColumnStorage) -> String {
        switch storage {
        case .boolean, .integer16, .integer32, .integer64: "INTEGER"
        // No declared type: a REAL column stores an integral double as an integer and so turns
        // -0.0 into 0; a column without affinity keeps the IEEE bits.
        case .double, .float: ""
        case .timestamp: "REAL"
        case .decimal, .text, .json: "TEXT"
        case .bytes, .uuid: "BLOB"
        }
    }

    func cast(_ expression: String, to storage: ColumnStorage) -> String {
        // SQLite has no 32-bit float: `mw_float` rounds as Swift's `Float(_:)` does, from the
        // integer itself (not through a double, which would round twice) or the double.
        if storage == .float { return "mw_float(\(expression))" }
        let type =
            switch storage {
            case .double, .float, .timestamp: "REAL"
            default: columnType(storage)
            }
        return "CAST(\(expression) AS \(type))"
    }

    // MARK: - Tables and migration steps

    func tableBody(_ definitions: [String], clustered: Bool) -> String {
        "(\(definitions.joined(separator: ", ")))" + (clustered ? " WITHOUT ROWID" : "")
    }

    /// Whether a table's `CREATE TABLE` text, as `sqlite_master` keeps it, makes it clustered.
    func isClustered(definition: String) -> Bool {
        definition.uppercased().hasSuffix("WITHOUT ROWID")
    }

    func createHistoryTables(transactions: String, changes: String) -> [String] {
        [
            // AUTOINCREMENT: a token is never handed out twice, even after the last rows are purged.
            "CREATE TABLE IF NOT EXISTS \(quoted(transactions)) (\"token\" INTEGER PRIMARY KEY AUTOINCREMENT, "
                + "\"timestamp\" REAL NOT NULL, \"author\" TEXT NOT NULL)",
            "CREATE TABLE IF NOT EXISTS \(quoted(changes)) (\"token\" INTEGER NOT NULL, \"seq\" INTEGER NOT NULL, "
                + "\"entity\" TEXT NOT NULL, \"recordIDs\" BLOB NOT NULL, \"kind\" INTEGER NOT NULL, "
                + "\"changedAttributes\" TEXT NOT NULL, PRIMARY KEY (\"token\", \"seq\")) WITHOUT ROWID",
        ]
    }

    /// Column names FTS5 keeps for itself in a full-text index's table (its hidden columns),
    /// compared without case: ``StoreLimits`` refuses a `@searchable` attribute that takes one.
    static let reservedSearchColumns = ["rank", "rowid"]

    /// The suffixes of the tables and indexes (one namespace in SQLite) a full-text index adds
    /// to its name: FTS5's shadow tables and the runtime's own. Its triggers have a namespace of
    /// their own, where two indexes' names never meet.
    static let searchIndexTableSuffixes = [
        "", "_pending", "_content", "_data", "_idx", "_docsize", "_config", "_ids",
    ]

    /// The suffixes of a full-text index's triggers (see ``createSearchIndex(_:of:columns:uniqueKeys:)``),
    /// the ones earlier releases created included.
    static let searchIndexTriggerSuffixes = ["_insert", "_update", "_delete", "_replacinginsert", "_replacingupdate"]

    /// An FTS5 table beside `table`: the ID unindexed, then the columns, each in NFKC (FTS5's
    /// tokenizer normalises nothing, see ``SearchTokenizer``), with the tokenizer of
    /// ``FTS5Tokenizer/arguments`` (`unicode61`, folding every diacritic), which `SearchQuery.matches`
    /// also asks; an index on the FTS5 table's content (its `c0` column
    /// holds the ID) finds a row's entry without a scan, since FTS5 cannot look up an unindexed
    /// column.
    ///
    /// Triggers cannot write the FTS5 table: every connection turns `SQLITE_DBCONFIG_TRUSTED_SCHEMA`
    /// off, and SQLite then refuses a virtual table in a trigger (see <doc:Security>). So the
    /// triggers only note the IDs of the rows a statement wrote in a plain table beside it, whatever
    /// the statement (a batch, an upsert, a migration step, the app's own SQL), and the writer
    /// brings the index up to date from those rows before it commits
    /// (``synchronizeSearchIndex(_:of:columns:)``).
    ///
    /// A `REPLACE` conflict policy deletes the rows that hold a new row's unique key without
    /// firing their delete triggers (unless `recursive_triggers` is on, which no other connection
    /// need have). So a `BEFORE` trigger notes every row that holds one of the new values of a
    /// uniqueness constraint: the rows a `REPLACE` may remove are noted whatever the connection
    /// (a row noted and kept is indexed again, unchanged). A conflict on `"id"` needs no such
    /// trigger: the row written has the removed row's ID, which the `AFTER` triggers note.
    func createSearchIndex(_ index: String, of table: String, columns: [String], uniqueKeys: [[String]]) -> [String] {
        let names = (["id"] + columns).map(quoted).joined(separator: ", ")
        let definitions = (["\"id\" UNINDEXED"] + columns.map(quoted)).joined(separator: ", ")
        let pending = quoted(index + "_pending")
        // The pending table has no key: a trigger's statement takes the conflict policy of the
        // statement that fired it (`UPDATE OR ABORT` …), so a key there would fail the app's own
        // SQL on an ID noted twice. Synchronizing reads each ID once.
        let note = { (row: String) in "INSERT INTO \(pending) (\"id\") VALUES (\(row).\"id\");" }
        let changed = (["id"] + columns).map { "old.\(quoted($0)) IS NOT new.\(quoted($0))" }
            .joined(separator: " OR ")
        return [
            "CREATE VIRTUAL TABLE \(quoted(index)) USING fts5(\(definitions), "
                + "tokenize = '\(FTS5Tokenizer.arguments.joined(separator: " "))')",
            "CREATE INDEX \(quoted(index + "_ids")) ON \(quoted(index + "_content")) (\"c0\")",
            "CREATE TABLE \(pending) (\"id\" \(columnType(.uuid)) NOT NULL)",
            "INSERT INTO \(quoted(index)) (\(names)) SELECT \(searchText(columns, of: nil)) FROM \(quoted(table))",
            "CREATE TRIGGER \(quoted(index + "_insert")) AFTER INSERT ON \(quoted(table)) BEGIN \(note("new")) END",
            "CREATE TRIGGER \(quoted(index + "_update")) AFTER UPDATE ON \(quoted(table)) WHEN \(changed) "
                + "BEGIN \(note("old")) \(note("new")) END",
            "CREATE TRIGGER \(quoted(index + "_delete")) AFTER DELETE ON \(quoted(table)) BEGIN \(note("old")) END",
        ] + replacedRowTriggers(index, of: table, pending: pending, uniqueKeys: uniqueKeys)
    }

    /// The `BEFORE` triggers that note the rows holding the new values of `uniqueKeys`, which a
    /// `REPLACE` would delete unseen; none when the table has no uniqueness constraint but `"id"`.
    /// Their names end in a word without `_`, so no other table's index can take them.
    private func replacedRowTriggers(
        _ index: String, of table: String, pending: String, uniqueKeys: [[String]]
    ) -> [String] {
        guard !uniqueKeys.isEmpty else { return [] }
        // `=`, not `IS`: a NULL in a key never conflicts, as in a unique index.
        let holders =
            "INSERT INTO \(pending) (\"id\") SELECT \"id\" FROM \(quoted(table)) WHERE "
            + uniqueKeys.map { key in
                "(" + key.map { "\(quoted($0)) = new.\(quoted($0))" }.joined(separator: " AND ") + ")"
            }.joined(separator: " OR ") + ";"
        let changed = Set(uniqueKeys.joined()).sorted().map { "old.\(quoted($0)) IS NOT new.\(quoted($0))" }
            .joined(separator: " OR ")
        return [
            "CREATE TRIGGER \(quoted(index + "_replacinginsert")) BEFORE INSERT ON \(quoted(table)) BEGIN \(holders) END",
            "CREATE TRIGGER \(quoted(index + "_replacingupdate")) BEFORE UPDATE ON \(quoted(table)) WHEN \(changed) "
                + "BEGIN \(holders) END",
        ]
    }

    func synchronizeSearchIndex(_ index: String, of table: String, columns: [String]) -> [String] {
        let pending = quoted(index + "_pending")
        let names = (["id"] + columns).map(quoted)
        return [
            "DELETE FROM \(quoted(index)) WHERE rowid IN (SELECT c.\"id\" FROM \(quoted(index + "_content")) AS c "
                + "WHERE c.\"c0\" IN (SELECT \"id\" FROM \(pending)))",
            "INSERT INTO \(quoted(index)) (\(names.joined(separator: ", "))) SELECT \(searchText(columns, of: "t")) "
                + "FROM \(quoted(table)) AS t WHERE t.\"id\" IN (SELECT \"id\" FROM \(pending))",
            "DELETE FROM \(pending)",
        ]
    }

    /// The select list that fills a full-text index from `table` (under the alias `alias`): the ID,
    /// then each column in the form ``SearchTokenizer`` reads queries in (NFKC), through the SQL
    /// function ``StringFunctions`` registers on every connection.
    private func searchText(_ columns: [String], of alias: String?) -> String {
        let prefix = alias.map { "\($0)." } ?? ""
        return ([prefix + "\"id\""] + columns.map { "mw_search_text(\(prefix)\(quoted($0)))" }).joined(separator: ", ")
    }

    /// Its triggers, its FTS5 table (which takes its shadow tables and their index along), the
    /// pending table, and then any of those names left as a plain table or index (the FTS5 table
    /// dropped by another program leaves its shadow tables behind as plain ones).
    func dropSearchIndex(_ index: String, of table: String) -> [String] {
        Self.searchIndexTriggerSuffixes.map { "DROP TRIGGER IF EXISTS \(quoted(index + $0))" }
            + ["DROP TABLE IF EXISTS \(quoted(index))", "DROP INDEX IF EXISTS \(quoted(index + "_ids"))"]
            + Self.searchIndexTableSuffixes.filter { !$0.isEmpty }.map {
                "DROP TABLE IF EXISTS \(quoted(index + $0))"
            }
    }

    /// Four checks, cheapest first: FTS5's settings are the ones it was created with (only its
    /// format version: a changed `pgsz`, `automerge` or `rank` is a change nobody made through the
    /// store); it holds as many rows and sizes as the table has rows; each row's text is the table's
    /// (a join through the index on the IDs); and FTS5's own `integrity-check`, which reads the
    /// whole inverted index against the stored text, so an entry removed from `_data` or `_idx` is
    /// found. The last two read every row.
    func searchIndexChecks(_ index: String, of table: String, columns: [String]) -> [String] {
        let content = quoted(index + "_content")
        let config = quoted(index + "_config")
        let rows = "(SELECT count(*) FROM \(quoted(table)))"
        // Most text is already in NFKC: compared as it is first, so the function runs only on the rest.
        let differs = columns.enumerated().map {
            "c.\"c\($0.offset + 1)\" IS NOT t.\(quoted($0.element)) "
                + "AND c.\"c\($0.offset + 1)\" IS NOT mw_search_text(t.\(quoted($0.element)))"
        }
        return [
            "SELECT (SELECT count(*) FROM \(config)) <> 1 "
                + "OR NOT EXISTS (SELECT 1 FROM \(config) WHERE \"k\" = 'version' AND \"v\" = 4)",
            "SELECT \(rows) <> (SELECT count(*) FROM \(content)) "
                + "OR \(rows) <> (SELECT count(*) FROM \(quoted(index + "_docsize")))",
            "SELECT EXISTS (SELECT 1 FROM \(quoted(table)) AS t LEFT JOIN \(content) AS c ON c.\"c0\" = t.\"id\" "
                + "WHERE c.\"c0\" IS NULL OR (\(differs.joined(separator: ") OR ("))))",
            "INSERT INTO \(quoted(index)) (\(quoted(index)), \"rank\") VALUES ('integrity-check', 0)",
        ]
    }

    // MARK: - Writes

    /// Replaces the structure record of the FTS5 index `index` with an empty one: FTS5 cannot even
    /// open, so cannot drop, a table whose structure record is missing or damaged; the index is
    /// dropped and built again next. SQLite's defensive mode forbids writing FTS5's storage, so it
    /// is off for that one statement. A `_data` table that is gone is left to the drop.
    func prepareSearchIndexForDrop(_ index: String, on connection: any DatabaseConnection) throws {
        guard let connection = connection as? SQLiteConnection else { return }
        try connection.withDefensiveModeOff {
            try connection.execute(
                "INSERT OR REPLACE INTO \(quoted(index + "_data")) (\"id\", \"block\") VALUES (10, X'00000000000000')")
        }
    }

    func insertIgnoringConflicts(into table: String, columns: [String], _ source: String) -> String {
        "INSERT OR IGNORE INTO \(table) (\(columns.joined(separator: ", "))) \(source)"
    }

    func insertReplacing(into table: String, columns: [String]?, key: [String], _ source: String) -> String {
        let list = columns.map { " (\($0.joined(separator: ", ")))" } ?? ""
        return "INSERT OR REPLACE INTO \(table)\(list) \(source)"
    }

    func limit(_ limit: String, offset: String?) -> String {
        " LIMIT \(limit)" + (offset.map { " OFFSET \($0)" } ?? "")
    }

    var noLimit: SQLValue { .integer(-1) }

    func differs(_ lhs: String, _ rhs: String) -> String {
        "\(lhs) IS NOT \(rhs)"
    }

    func returning(_ columns: [String]) -> String {
        " RETURNING " + columns.joined(separator: ", ")
    }

    // MARK: - Queries

    /// A call of `mw_string`, the function ``StringFunctions`` registers on every connection.
    func stringTest(
        _ operation: StringOperation, options: StringComparisonOptions, value: String, needle: String
    ) -> String {
        "mw_string(\(operation.rawValue), \(options.rawValue), \(value), \(needle))"
    }

    func searchQuery(_ query: SearchQuery) -> String {
        query.ftsText
    }

    func searchTest(row: String, index: String, column: String, query: String) -> String {
        "\(row) IN (SELECT \"id\" FROM \(quoted(index)) WHERE \(quoted(index)).\(quoted(column)) MATCH \(query))"
    }

    func rankedSearch(
        index: String, column: String, position: Int, query: String, candidates: String,
        marks: (open: String, close: String, ellipsis: String, words: String)
    ) -> String {
        let table = quoted(index)
        return "SELECT \(table).\"id\", bm25(\(table)), snippet(\(table), \(position + 1), \(marks.open), "
            + "\(marks.close), \(marks.ellipsis), \(marks.words)), \(table).\(quoted(column)) FROM \(table) WHERE \(table).\(quoted(column)) "
            + "MATCH \(query) AND \(table).\"id\" IN (\(candidates)) ORDER BY bm25(\(table)), \(table).\"id\""
    }

    /// SQLite sorts NULL first when ascending, last when descending: the order every engine keeps.
    func sortTerm(_ value: String, ascending: Bool, mayBeNull: Bool) -> String {
        "\(value) \(ascending ? "ASC" : "DESC")"
    }

    // MARK: - Transactions

    func begin(_ kind: TransactionKind) -> String {
        switch kind {
        case .deferred: "BEGIN DEFERRED"
        case .immediate: "BEGIN IMMEDIATE"
        }
    }

    // MARK: - Connections, constraints and changes

    var writerSettings: [String] { ["PRAGMA synchronous=NORMAL", "PRAGMA foreign_keys=ON"] }

    // SQLite ignores this pragma inside a transaction, so a migration sets it around its stage.
    var foreignKeysOff: String? { "PRAGMA foreign_keys=OFF" }

    var foreignKeysOn: String? { "PRAGMA foreign_keys=ON" }

    func foreignKeyViolations(in table: String?) -> String {
        "PRAGMA foreign_key_check" + (table.map { "(\(quoted($0)))" } ?? "")
    }

    var foreignKeyColumns: String { "SELECT \"from\" FROM pragma_foreign_key_list(?) WHERE id = ?" }

    var dataVersion: String { "PRAGMA data_version" }

    var schemaVersion: String { "PRAGMA schema_version" }

    var pageCount: String { "PRAGMA page_count" }

    var checkpoint: String { "PRAGMA wal_checkpoint(TRUNCATE)" }

    var rowNumberColumn: String { Self.rowNumberColumn }

    /// SQLite's row number, `rowid`: also a constant, for ``ColumnPath/rowNumber``, which results
    /// controllers sort by last.
    static let rowNumberColumn = "rowid"

    // MARK: - Reading a database's schema

    var tableNames: String { "SELECT name FROM sqlite_master WHERE type = 'table'" }

    var tableExists: String { "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?" }

    var tableCount: String { "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?" }

    var columnNames: String { "SELECT name FROM pragma_table_info(?)" }

    var schemaIntrospection: SchemaIntrospection { Self.introspection }

    /// Four queries over SQLite's table-valued `pragma_…` functions rather than four `PRAGMA`s per
    /// table: planning a long history reads schemas thousands of times. Full-text indexes (the
    /// prefix of ``SchemaSQL/searchIndexName(of:)``) are left out: a stage builds them after its
    /// tables, and the comparison an opening makes covers them entry by entry. The tables query returns
    /// each table's `CREATE TABLE` text, which ``isClustered(definition:)`` reads.
    private static let introspection = SchemaIntrospection(
        tables:
            "SELECT m.name, m.sql FROM sqlite_master AS m WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND substr(m.name, 1, 12) <> '_mw_history_' AND substr(m.name, 1, 20) <> '_modelwright_search_'",
        columns:
            "SELECT m.name, p.name, p.type, p.\"notnull\", p.dflt_value, p.pk FROM sqlite_master AS m JOIN pragma_table_info(m.name) AS p WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND substr(m.name, 1, 12) <> '_mw_history_' AND substr(m.name, 1, 20) <> '_modelwright_search_'",
        indexes:
            "SELECT m.name, l.name, l.\"unique\", i.seqno, i.name FROM sqlite_master AS m JOIN pragma_index_list(m.name) AS l JOIN pragma_index_info(l.name) AS i WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND substr(m.name, 1, 12) <> '_mw_history_' AND substr(m.name, 1, 20) <> '_modelwright_search_' AND l.origin = 'c'",
        foreignKeys:
            "SELECT m.name, f.\"from\", f.\"table\", f.on_delete FROM sqlite_master AS m JOIN pragma_foreign_key_list(m.name) AS f WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND substr(m.name, 1, 12) <> '_mw_history_' AND substr(m.name, 1, 20) <> '_modelwright_search_'"
    )
}

// MARK: - Migrations

extension SQLiteDialect {
    /// SQLite cannot drop a constraint: a migration rebuilds the table instead
    /// (``SQLDialect/altersTablesInPlace`` is `false`).
    func dropForeignKey(_ column: String, of table: String) throws -> String {
        throw SQLDialectError.unsupported("SQLite cannot drop a foreign key; the table is rebuilt without it")
    }

    /// The runtime's decoding rule for the type (``DecodingFunction``): a storage-class test in SQL
    /// where the rule is one, else `mw_decodes`.
    func decodes(_ column: String, as type: AttributeType?) -> String {
        DecodingFunction.Kind(type).test(column)
    }
}
