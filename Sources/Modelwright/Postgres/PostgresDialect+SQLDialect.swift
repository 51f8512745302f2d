import Foundation

// The statements a PostgreSQL store issues: the runtime's `SQLDialect` for PostgreSQL (see
// `PostgresDialect`).

extension PostgresDialect: SQLDialect {
    package func identifier(_ name: String) -> String {
        SQLSyntax.identifier(name)
    }

    /// PostgreSQL keeps 63 bytes of a name: a longer one becomes its first bytes and a digest of
    /// the whole, so two long names that share their first 63 bytes stay apart instead of the
    /// second `CREATE INDEX` failing on the first's cut name.
    package func indexName(_ name: String) -> String {
        Self.shortened(name)
    }

    package func primaryKeyName(of table: String) -> String? {
        Self.primaryKeyName(table: table)
    }

    package func foreignKeyName(of column: String, in table: String) -> String? {
        Self.foreignKeyName(table: table, column: column)
    }

    package var maximumNameBytes: Int? { Self.maximumNameLength }

    /// `CASCADE`: a step drops the tables it removes one by one before it alters the tables it
    /// keeps, and PostgreSQL refuses to drop a table another one's foreign key still names (SQLite,
    /// with foreign keys off for the stage, does not look). The keys it drops with the table are
    /// those of removed tables, or of kept columns the stage drops or points elsewhere: the stage's
    /// alterations drop a key only if it is still there (``dropForeignKey(_:of:)``) and add the
    /// destination's, and its final comparison with a fresh store fails on any key left missing.
    package func dropTable(_ table: String) -> String {
        "DROP TABLE \(identifier(table)) CASCADE"
    }

    /// A standard string literal (`standard_conforming_strings` is on by default since 9.1, so a
    /// backslash is an ordinary character, as in SQLite).
    package func string(_ text: String) -> String {
        SQLSyntax.string(text)
    }

    /// `quote_nullable`, which writes a value of any type as a literal (a `bytea` as `'\x00ff'`).
    package func literal(of expression: String) -> String {
        "quote_nullable(\(expression))"
    }

    /// `?`, as the runtime writes every marker; the connection numbers them `$1`, `$2` … when it
    /// prepares a statement (see ``SQLDialect``), since fragments with their own markers compose.
    package var parameter: String { "?" }

    package func parameters(_ count: Int) -> String {
        Array(repeating: parameter, count: count).joined(separator: ", ")
    }

    /// `$n`, which a statement may use more than once.
    package func parameter(_ number: Int) -> String {
        "$\(number)"
    }

    /// `E'…'` escapes, dollar quotes and nested comments; a statement starts with `SELECT`, `WITH`,
    /// `VALUES`, `INSERT`, `UPDATE`, `DELETE` or a parenthesis, so nothing that changes the session
    /// or the schema (`SET`, `DECLARE … WITH HOLD`, `CREATE TEMP VIEW`, `ALTER ROLE` …) runs. The
    /// functions whose effect outlives the transaction that the store knows of are refused by
    /// name; Runtime.md says what stays possible. An interpolated name longer than PostgreSQL keeps
    /// (``maximumNameLength``) and more values than libpq can have described (``parameterLimit``)
    /// are refused before anything is sent. Each value's marker is numbered, `$1`, `$2` …, and the connection
    /// runs the text as written, without numbering `?`s of its own.
    package var handWritten: HandWrittenSQLRules {
        var rules = HandWrittenSQLRules(statementWords: ["SELECT", "WITH", "VALUES", "INSERT", "UPDATE", "DELETE", "("])
        rules.refusedFunctions = [
            "pg_advisory_lock", "pg_advisory_lock_shared", "pg_try_advisory_lock", "pg_try_advisory_lock_shared",
            "pg_advisory_unlock", "pg_advisory_unlock_shared", "pg_advisory_unlock_all", "set_config", "pg_notify",
            "lo_import", "lo_export", "lo_from_bytea", "lo_create", "lo_creat", "lo_unlink", "lo_put", "lo_truncate",
            "lo_truncate64", "lowrite", "dblink", "dblink_exec", "pg_terminate_backend", "pg_cancel_backend",
            "pg_reload_conf",
        ]
        rules.nameByteLimit = Self.maximumNameLength
        rules.parameterLimit = Self.parameterLimit
        rules.escapeStrings = true
        rules.dollarQuotes = true
        rules.nestedComments = true
        rules.numberedMarkers = true
        return rules
    }

    package func columnType(_ storage: ColumnStorage) -> String {
        switch storage {
        case .boolean: ColumnType.boolean.rawValue
        case .integer16: ColumnType.smallint.rawValue
        case .integer32: ColumnType.integer.rawValue
        case .integer64: ColumnType.bigint.rawValue
        case .double: ColumnType.doublePrecision.rawValue
        case .float: ColumnType.real.rawValue
        case .timestamp: ColumnType.timestamptz.rawValue
        case .decimal: ColumnType.numeric.rawValue
        case .text: ColumnType.text.rawValue
        case .json: ColumnType.jsonb.rawValue
        case .bytes: ColumnType.bytea.rawValue
        case .uuid: ColumnType.uuid.rawValue
        }
    }

    package func cast(_ expression: String, to storage: ColumnStorage) -> String {
        "CAST(\(expression) AS \(columnType(storage)))"
    }

    /// PostgreSQL stores every table as a heap; a primary key is an index beside it, so
    /// `clustered` changes nothing (`CLUSTER` orders a table once, not as it is written).
    /// `CAST(? AS type)`: PostgreSQL reads an untyped parameter in a `SELECT` list as text.
    package func parameter(typed storage: ColumnStorage) -> String {
        cast(parameter, to: storage)
    }

    /// True: a list of 8,000 values as 8,000 parameters passes ``parameterLimit`` and loses the
    /// connection (issue 27), so every list is one array parameter, whatever its length.
    package var bindsListsAsArrays: Bool { true }

    /// `CAST(? AS type[])`, the column's own type, so each element converts exactly as a single
    /// parameter of that column would (`ModelwrightPostgres`'s `PostgresTypeMap` binds it). A decimal
    /// list travels as `text[]` and the server reads each element as `numeric`: numeric's binary
    /// form is not one the runtime writes, and its text is exact.
    package func arrayParameter(of storage: ColumnStorage) -> String {
        guard storage != .decimal else { return "CAST(CAST(\(parameter) AS text[]) AS numeric[])" }
        return "CAST(\(parameter) AS \(columnType(storage))[])"
    }

    /// `numeric`: decimal columns are exact here, and so are their comparisons and sorts.
    package var decimalComparison: ColumnStorage { .decimal }

    /// `TRUE`/`FALSE`: a condition here is a boolean, never an integer.
    package func truth(_ value: Bool) -> String {
        value ? "TRUE" : "FALSE"
    }

    /// `COLLATE "C"`: byte order of UTF-8, which is code point order, whatever the database's
    /// locale (an ICU `en-US` database would sort `a` before `B`).
    package func byCodePoint(_ text: String) -> String {
        "(\(text) COLLATE \"C\")"
    }

    /// `true`: PostgreSQL checks that a referenced table exists when it creates the reference.
    package var referencesNeedTheirTable: Bool { true }

    /// The layout's literal in this engine's type: `true`/`false` for a boolean, `to_timestamp` of
    /// the seconds for a date (microseconds, as every stored date), a UUID's or bytes' hex as
    /// `uuid` or `bytea`, and a cast for any other value (text to `numeric` or `jsonb` is exact).
    package func defaultExpression(_ literal: String, for storage: ColumnStorage) -> String {
        let hex: String? =
            literal.hasPrefix("X'") && literal.hasSuffix("'") ? String(literal.dropFirst(2).dropLast()) : nil
        switch storage {
        case .boolean:
            return literal == "0" ? "false" : "true"
        case .timestamp:
            return "to_timestamp(\(literal) + 978307200)"
        case .uuid where hex != nil:
            return "CAST('\(hex ?? "")' AS uuid)"
        case .bytes where hex != nil:
            return "decode('\(hex ?? "")', 'hex')"
        default:
            return cast(literal, to: storage)
        }
    }

    package func tableBody(_ definitions: [String], clustered: Bool) -> String {
        "(\(definitions.joined(separator: ", ")))"
    }

    package func createHistoryTables(transactions: String, changes: String) -> [String] {
        [
            // An identity column never hands out a number twice, even after the last rows are purged.
            "CREATE TABLE IF NOT EXISTS \(identifier(transactions)) (\"token\" bigint GENERATED ALWAYS AS IDENTITY "
                + "PRIMARY KEY, \"timestamp\" double precision NOT NULL, \"author\" text NOT NULL)",
            "CREATE TABLE IF NOT EXISTS \(identifier(changes)) (\"token\" bigint NOT NULL, \"seq\" bigint NOT NULL, "
                + "\"entity\" text NOT NULL, \"recordIDs\" bytea NOT NULL, \"kind\" bigint NOT NULL, "
                + "\"changedAttributes\" text NOT NULL, PRIMARY KEY (\"token\", \"seq\"))",
        ]
    }

    package func insertIgnoringConflicts(into table: String, columns: [String], _ source: String) -> String {
        "INSERT INTO \(table) (\(columns.joined(separator: ", "))) \(source) ON CONFLICT DO NOTHING"
    }

    /// `ON CONFLICT (key) DO UPDATE` of every other column. PostgreSQL names the columns to set,
    /// so `columns` must be given: with `nil` (every column, in order) the statement has no
    /// assignments and only skips the conflicting row; the runtime passes columns wherever it
    /// replaces on this engine.
    package func insertReplacing(into table: String, columns: [String]?, key: [String], _ source: String) -> String {
        let list = columns.map { " (\($0.joined(separator: ", ")))" } ?? ""
        let assignments = (columns ?? []).filter { !key.contains($0) }.map { "\($0) = EXCLUDED.\($0)" }
        let action = assignments.isEmpty ? "DO NOTHING" : "DO UPDATE SET " + assignments.joined(separator: ", ")
        return "INSERT INTO \(table)\(list) \(source) ON CONFLICT (\(key.joined(separator: ", "))) \(action)"
    }

    package func limit(_ limit: String, offset: String?) -> String {
        " LIMIT \(limit)" + (offset.map { " OFFSET \($0)" } ?? "")
    }

    package var noLimit: SQLValue { .null }

    package func differs(_ lhs: String, _ rhs: String) -> String {
        "\(lhs) IS DISTINCT FROM \(rhs)"
    }

    package func returning(_ columns: [String]) -> String {
        " RETURNING " + columns.joined(separator: ", ")
    }

    /// A string operator in SQL PostgreSQL runs itself, folding as Foundation does where the two
    /// agree: `caseInsensitive` is ICU's `lower()` (the `und-x-icu` collation, whatever the
    /// database's locale) and `diacriticInsensitive` is the `unaccent` extension (installed with
    /// the schema), applied to both sides; the comparison itself is by code point (`"C"`).
    ///
    /// What stays different from SQLite's `mw_string` (Swift's `String`, pinned in
    /// `StringOperatorPropertyTests`): Swift compares characters (grapheme clusters, canonically
    /// equivalent), PostgreSQL code points, so a decomposed `e` + U+0301 is no `é` here and `?` of
    /// `like` matches one code point; and `unaccent` also replaces letters that are not accented
    /// forms (`ø` → `o`, `æ` → `ae`, `ß` → `ss`), which Foundation keeps. `matches` is refused:
    /// PostgreSQL's regular expressions are not ICU's.
    package func stringTest(
        _ operation: StringOperation, options: StringComparisonOptions, value: String, needle: String
    ) throws -> String {
        func folded(_ text: String) -> String {
            var text = text
            if options.contains(.diacriticInsensitive) { text = "unaccent(\(text))" }
            if options.contains(.caseInsensitive) { text = "lower((\(text))::text COLLATE \"und-x-icu\")" }
            return "((\(text))::text COLLATE \"C\")"
        }
        let value = folded(value)
        let needle = folded(needle)
        switch operation {
        case .hasPrefix: return "starts_with(\(value), \(needle))"
        case .hasSuffix: return "starts_with(reverse(\(value)), reverse(\(needle)))"
        case .contains: return "(strpos(\(value), \(needle)) > 0)"
        case .equals: return "(\(value) = \(needle))"
        case .like:
            // NSPredicate's wildcards become LIKE's; LIKE's own and its escape are literal.
            var pattern = needle
            for (character, replacement) in [("\\", "\\\\"), ("%", "\\%"), ("_", "\\_"), ("*", "%"), ("?", "_")] {
                pattern = "replace(\(pattern), '\(character)', '\(replacement)')"
            }
            return "(\(value) LIKE \(pattern) ESCAPE '\\')"
        case .matches:
            throw SQLDialectError.unsupported(
                "PostgreSQL's regular expressions are not ICU's (NSPredicate's MATCHES); "
                    + "use like, contains or hasPrefix, or the SQLite engine for matches")
        }
    }

    /// SQLite's NULL order, which PostgreSQL reverses by default; a term that cannot be NULL stays
    /// plain, so an index on the column still orders the rows.
    package func sortTerm(_ value: String, ascending: Bool, mayBeNull: Bool) -> String {
        let term = "\(value) \(ascending ? "ASC" : "DESC")"
        guard mayBeNull else { return term }
        return term + (ascending ? " NULLS FIRST" : " NULLS LAST")
    }

    /// A deferred transaction is PostgreSQL's default; an immediate one takes the serialisable
    /// level, since PostgreSQL takes no database-wide write lock at `BEGIN` and a writer that must
    /// not see its reads change is told so at commit instead.
    package func begin(_ kind: TransactionKind) -> String {
        switch kind {
        case .deferred: "BEGIN"
        case .immediate: "BEGIN ISOLATION LEVEL SERIALIZABLE"
        }
    }

    /// Foreign keys are always enforced (the runtime declares them `DEFERRABLE INITIALLY DEFERRED`),
    /// so a connection starts with nothing to set.
    package var writerSettings: [String] { [] }

    /// `nil`: PostgreSQL's DDL is transactional and its foreign keys are checked at commit, so a
    /// migration's rebuilds need no switch around them.
    package var foreignKeysOff: String? { nil }

    /// See ``foreignKeysOff``.
    package var foreignKeysOn: String? { nil }

    /// PostgreSQL has no query for rows breaking a foreign key: it never stores one (a deferred
    /// check fails the commit with SQLSTATE 23503, whose detail names the constraint).
    package func foreignKeyViolations(in table: String?) throws -> String {
        throw SQLDialectError.unsupported(
            "PostgreSQL stores no row that breaks a foreign key; read the constraint from the commit's error (SQLSTATE 23503)"
        )
    }

    /// See ``foreignKeyViolations(in:)``.
    package var foreignKeyColumns: String {
        get throws {
            throw SQLDialectError.unsupported(
                "PostgreSQL numbers no foreign keys; read the constraint from the commit's error (SQLSTATE 23503)")
        }
    }

    /// PostgreSQL has no counter of other connections' commits: a connection hears of them through
    /// `LISTEN`/`NOTIFY` (a trigger on the store's tables notifies), not by polling.
    package var dataVersion: String {
        get throws {
            throw SQLDialectError.unsupported(
                "PostgreSQL has no data_version; other connections' commits arrive through LISTEN/NOTIFY")
        }
    }

    /// PostgreSQL keeps no schema cookie; an event trigger on DDL would stand in for it.
    package var schemaVersion: String {
        get throws {
            throw SQLDialectError.unsupported(
                "PostgreSQL has no schema version counter; an event trigger on DDL stands in for it")
        }
    }

    package var pageCount: String {
        "SELECT pg_database_size(current_database()) / current_setting('block_size')::bigint"
    }

    /// PostgreSQL's log is the server's, not the connection's: there is nothing to empty at close.
    package var checkpoint: String {
        get throws {
            throw SQLDialectError.unsupported(
                "PostgreSQL's write-ahead log belongs to the server; a client does not checkpoint it")
        }
    }

    /// PostgreSQL has no stable row number (`ctid` moves with every update): a results controller
    /// breaks ties by `"id"` on this engine, so records that sort equal come in ID order, not in
    /// the order they were inserted as on SQLite (pinned in `PostgresStoreTests`).
    package var rowNumberColumn: String { identifier("id") }

    package var tableNames: String {
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
    }

    package var tableExists: String {
        "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = \(parameter)"
    }

    package var tableCount: String {
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = \(parameter)"
    }

    package var columnNames: String {
        "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
            + "AND table_name = \(parameter) ORDER BY ordinal_position"
    }

    /// The four queries over `information_schema` and `pg_catalog`, each in the row shape
    /// ``SchemaIntrospection`` fixes; the tables query's second column is empty, since no table
    /// is clustered here.
    package var schemaIntrospection: SchemaIntrospection {
        let own = "substr(c.relname, 1, 12) <> '_mw_history_'"
        return SchemaIntrospection(
            tables:
                "SELECT c.relname, '' FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                + "WHERE n.nspname = current_schema() AND c.relkind = 'r' AND \(own)",
            columns:
                "SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), CAST(a.attnotnull AS integer), "
                + "pg_get_expr(d.adbin, d.adrelid), COALESCE(array_position(k.conkey, a.attnum), 0) "
                + "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                + "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped "
                + "LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum "
                + "LEFT JOIN pg_constraint k ON k.conrelid = c.oid AND k.contype = 'p' "
                + "WHERE n.nspname = current_schema() AND c.relkind = 'r' AND \(own)",
            indexes:
                "SELECT c.relname, i.relname, CAST(x.indisunique AS integer), s.place - 1, a.attname "
                + "FROM pg_index x JOIN pg_class c ON c.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid "
                + "JOIN pg_namespace n ON n.oid = c.relnamespace "
                + "CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY AS s(attnum, place) "
                + "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = s.attnum "
                + "WHERE n.nspname = current_schema() AND NOT x.indisprimary AND \(own)",
            foreignKeys:
                "SELECT c.relname, a.attname, r.relname, CASE k.confdeltype WHEN 'c' THEN 'CASCADE' "
                + "WHEN 'n' THEN 'SET NULL' WHEN 'r' THEN 'RESTRICT' ELSE 'NO ACTION' END "
                + "FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class r ON r.oid = k.confrelid "
                + "JOIN pg_namespace n ON n.oid = c.relnamespace "
                + "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.conkey[1] "
                + "WHERE n.nspname = current_schema() AND k.contype = 'f' AND \(own)"
        )
    }

    /// No table is clustered on PostgreSQL (see ``tableBody(_:clustered:)``).
    package func isClustered(definition: String) -> Bool {
        false
    }

    // MARK: - Migrations

    /// `true`: a migration alters a table's columns and foreign keys in place, since dropping a
    /// table would drop the foreign keys of the tables that reference it, and the step's one
    /// transaction already makes the alterations all or nothing.
    package var altersTablesInPlace: Bool { true }

    /// Deferred foreign-key checks the transaction's writes queued run first: PostgreSQL refuses to
    /// alter a table with checks pending (SQLSTATE 55006); they are deferred again after.
    package var alterationsBracket: (before: [String], after: [String]) {
        (["SET CONSTRAINTS ALL IMMEDIATE"], ["SET CONSTRAINTS ALL DEFERRED"])
    }

    /// A block that renames the table and its primary key: a store names a table's primary key
    /// (and its index) after the table when it creates it (``primaryKeyName(table:)``), and a
    /// rename keeps the old name. Renamed with the table, a migrated table
    /// holds the key a fresh store's holds, and a table created later under the old name (a removed
    /// table moved aside, a swap) finds that name free.
    package func renameTable(_ table: String, to name: String) -> String {
        let key = Self.primaryKeyName(table: name)
        return "DO $mw$ DECLARE found text; BEGIN ALTER TABLE \(identifier(table)) RENAME TO \(identifier(name)); "
            + "SELECT k.conname INTO found FROM pg_constraint k "
            + "WHERE k.conrelid = to_regclass(\(string(identifier(name)))) AND k.contype = 'p'; "
            + "IF found IS NOT NULL AND found <> \(string(key)) THEN "
            + "EXECUTE format('ALTER TABLE %I RENAME CONSTRAINT %I TO %I', \(string(name)), found, \(string(key))); "
            + "END IF; END $mw$"
    }

    /// A block that finds the constraint's name in the catalog (a renamed table or column keeps
    /// the name it was created with) and drops it; nothing when there is none.
    package func dropForeignKey(_ column: String, of table: String) -> String {
        "DO $mw$ DECLARE found text; BEGIN SELECT k.conname INTO found FROM pg_constraint k "
            + "JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = k.conkey[1] "
            + "WHERE k.conrelid = to_regclass(\(string(identifier(table)))) AND k.contype = 'f' "
            + "AND a.attname = \(string(column)); IF found IS NOT NULL THEN "
            + "EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', \(string(table)), found); END IF; END $mw$"
    }

    /// A schema of its own, first and alone on the search path until the transaction leaves it
    /// (the path before it is kept in a setting of the transaction), then dropped with its tables.
    package var scratchNamespace: (enter: [String], leave: [String])? {
        (
            enter: [
                // DROP SCHEMA … CASCADE would list every table it drops on standard error.
                "SELECT set_config('client_min_messages', 'warning', true)",
                "CREATE SCHEMA \"_mw_fresh\"",
                "SELECT set_config('modelwright.search_path', current_setting('search_path'), true)",
                "SELECT set_config('search_path', '\"_mw_fresh\"', true)",
            ],
            leave: [
                "SELECT set_config('search_path', current_setting('modelwright.search_path'), true)",
                "DROP SCHEMA \"_mw_fresh\" CASCADE",
            ]
        )
    }

    /// `TRUE`: a typed column holds only values of its type, which the record reads (an enum's
    /// cases and what Swift parses beyond the type, a URL's text, are checked by the caller and by
    /// the decoding of every row at the last stage).
    package func decodes(_ column: String, as type: AttributeType?) -> String {
        "TRUE"
    }
}
