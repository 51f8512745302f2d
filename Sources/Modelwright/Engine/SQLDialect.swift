/// How one storage engine spells the SQL the runtime issues: the one seam between the runtime's
/// statements and the engine that runs them.
///
/// Every statement the runtime builds takes its engine-specific words from a dialect: quoting and
/// literals, parameter markers, column types, DDL and migration steps, upserts and `RETURNING`,
/// savepoints, the settings a connection starts with, foreign-key checks, change detection and
/// the queries that read a database's schema. SQL that is the same in every engine the runtime
/// targets (`SELECT … FROM … WHERE`, `UPDATE … SET`, `DELETE FROM`, `CREATE TABLE` around the
/// definitions, `CREATE INDEX`) stays where it is built. ``SQLiteDialect`` is the only conformance
/// today; a PostgreSQL dialect plugs in beside it (see `Contributing.md`, "Adding a storage
/// engine"), so the requirements are written with that engine's differences in mind.
///
/// Parameters: the runtime's SQL marks each parameter with ``parameter`` and binds values by
/// position, in the order the markers appear, because fragments with their own parameters
/// (a request's `WHERE` clause) are composed into larger statements. An engine with numbered
/// parameters (PostgreSQL's `$1`) numbers the markers when its connection prepares a statement;
/// only a statement that uses one value twice asks for a numbered one, ``parameter(_:)``.
///
/// Requirements that an engine may have no equivalent for are `throws`: such an engine throws
/// ``SQLDialectError/unsupported(_:)`` naming what it lacks and what to use instead, rather than
/// handing out another engine's SQL.
package protocol SQLDialect: Sendable {
    // MARK: - Names, literals and parameters

    /// An identifier, quoted so that any name (`Order`, `index`, one with quotes in it) is safe.
    func identifier(_ name: String) -> String

    /// The name the engine keeps for the runtime's index `name` (`<Entity>_index_<columns>`, which
    /// grows with the names it joins): `name` itself, or, where the engine would cut a long name
    /// silently, a shorter one that still differs for every different `name`.
    func indexName(_ name: String) -> String

    /// The name a store gives the primary key of `table`, or `nil` where the engine's own name is
    /// kept (SQLite names no constraint). Spelled by the runtime where the engine would cut a long
    /// name silently, so two long table names never give their keys one name.
    func primaryKeyName(of table: String) -> String?

    /// The name a store gives the foreign key on `column` of `table`, or `nil` where the engine's
    /// own name is kept; as ``primaryKeyName(of:)``.
    func foreignKeyName(of column: String, in table: String) -> String?

    /// The longest table or column name the engine keeps whole, in UTF-8 bytes, or `nil` when it
    /// keeps any: a store whose schema names a longer one is refused before anything is created
    /// (``StoreLimits/maximumNameBytes``, which `validate` checks on every model).
    var maximumNameBytes: Int? { get }

    /// A string literal.
    func string(_ text: String) -> String

    /// The value of `expression` written as the SQL literal that would give it (`'it''s'`, `X'00FF'`,
    /// `NULL`), as text: what a check's message shows to name the row it found.
    func literal(of expression: String) -> String

    /// The marker of one parameter, bound by its position among the statement's markers.
    var parameter: String { get }

    /// `count` parameter markers separated by commas, for a `VALUES` list.
    func parameters(_ count: Int) -> String

    /// The parameter numbered `number` (from 1), which a statement may use more than once.
    func parameter(_ number: Int) -> String

    /// A parameter marker whose value has `storage`'s type where nothing else in the statement says
    /// so (a `SELECT` list of bound values): an engine that infers parameter types (PostgreSQL would
    /// read it as text) declares it; the standard marker otherwise.
    func parameter(typed storage: ColumnStorage) -> String

    /// Whether a list test binds its whole list as one array parameter (``arrayParameter(of:)``,
    /// bound to ``SQLValueList/argument(_:)``) rather than one parameter per value: where a
    /// statement's parameters are few (PostgreSQL's ``PostgresDialect/parameterLimit``), a list as
    /// long as the data must not add a parameter per value.
    var bindsListsAsArrays: Bool { get }

    /// The marker of one parameter holding a list of `storage` values, as a list test compares a
    /// value of that storage with it (`value = ANY(marker)`); used only where
    /// ``bindsListsAsArrays`` is true.
    func arrayParameter(of storage: ColumnStorage) -> String

    /// How the engine reads a statement written by hand (``SQLQuery``): its quotes and comments,
    /// the statements that change the connection rather than the data, and how an interpolated
    /// value's marker is spelled.
    var handWritten: HandWrittenSQLRules { get }

    // MARK: - Column types

    /// The type a column of this storage class is declared with in `CREATE TABLE`; empty for none.
    func columnType(_ storage: ColumnStorage) -> String

    /// `expression` converted to a storage class, as a migration copies a column whose type changed.
    func cast(_ expression: String, to storage: ColumnStorage) -> String

    /// Whether a `REFERENCES` clause needs its table to exist already (PostgreSQL), so a schema's
    /// tables are created referenced ones first; SQLite resolves references when it uses them.
    var referencesNeedTheirTable: Bool { get }

    /// A column's `DEFAULT`, from the literal the layout writes for it (`1` for true, seconds since
    /// 2001 for a date, `X'…'` for a UUID): SQLite's own spelling, which an engine with typed
    /// columns converts to its type. The standard default keeps the literal as it is.
    func defaultExpression(_ literal: String, for storage: ColumnStorage) -> String

    // MARK: - Tables and migration steps

    /// What follows a table's name in `CREATE TABLE`: its definitions, and the options for a table
    /// stored in the order of its primary key (`clustered`, for join and history tables).
    func tableBody(_ definitions: [String], clustered: Bool) -> String

    /// The statements that create the full-text index `index` of `columns` of `table` (whose rows
    /// are keyed by `"id"`), fill it from the table's rows, and note every row any statement writes
    /// afterwards (a batch, a migration step, the app's SQL included), for
    /// ``synchronizeSearchIndex(_:of:columns:)``. `uniqueKeys` are the table's uniqueness
    /// constraints besides `"id"`: a row a conflict policy removes because it holds another's key
    /// (`INSERT OR REPLACE`, `UPDATE OR REPLACE`) is noted too, though no delete trigger sees it.
    func createSearchIndex(_ index: String, of table: String, columns: [String], uniqueKeys: [[String]]) throws
        -> [String]

    /// The statements that bring the full-text index `index` up to date with the rows of `table`
    /// written since it last was: what a write transaction runs before it commits.
    func synchronizeSearchIndex(_ index: String, of table: String, columns: [String]) throws -> [String]

    /// The statements that remove the full-text index `index` of `table` and what keeps it current.
    func dropSearchIndex(_ index: String, of table: String) throws -> [String]

    /// Statements that each find damage in the full-text index `index` of `columns` of `table`
    /// (rows removed from it or from its storage, text changed in it, its settings changed): a
    /// statement that throws, or whose first row's first column is not 0, found some. A store runs
    /// them when it opens, after bringing the index up to date, and rebuilds a damaged index.
    func searchIndexChecks(_ index: String, of table: String, columns: [String]) throws -> [String]

    /// Makes a damaged full-text index `index` one the engine can drop, before a rebuild drops it
    /// (SQLite's FTS5 cannot even open, so cannot drop, a table whose structure record is gone).
    func prepareSearchIndexForDrop(_ index: String, on connection: any DatabaseConnection) throws

    /// The statements that create the persistent-history tables when they are missing: one row per
    /// transaction, keyed by a token that only grows, and the changes of each transaction.
    func createHistoryTables(transactions: String, changes: String) -> [String]

    /// Renames a table.
    func renameTable(_ table: String, to name: String) -> String

    /// Renames a column of a table.
    func renameColumn(_ column: String, of table: String, to name: String) -> String

    /// Adds a column, given its definition as `CREATE TABLE` writes it.
    func addColumn(_ definition: String, to table: String) -> String

    /// Drops a table.
    func dropTable(_ table: String) -> String

    /// Drops an index.
    func dropIndex(_ name: String) -> String

    /// Whether a migration brings a table to its new shape in place, column by column (`ALTER
    /// COLUMN … TYPE`, `SET NOT NULL`, `DROP COLUMN`, foreign keys added and dropped), instead of
    /// SQLite's create-copy-drop-rename rebuild. PostgreSQL: dropping a table that other tables
    /// reference would take their foreign keys with it, and its DDL is transactional anyway.
    var altersTablesInPlace: Bool { get }

    /// The statements that run before a stage's alterations in place and after them.
    var alterationsBracket: (before: [String], after: [String]) { get }

    /// Drops a column of a table (in-place alteration).
    func dropColumn(_ column: String, of table: String) -> String

    /// Changes a column's type, converting each value with `expression` (in-place alteration).
    func alterColumnType(_ column: String, of table: String, to type: String, using expression: String) -> String

    /// Makes a column required or optional (in-place alteration).
    func setRequired(_ required: Bool, column: String, of table: String) -> String

    /// Sets a column's default to `expression` (SQL as the engine's catalog reports it), or drops it
    /// for `nil` (in-place alteration).
    func setDefault(_ expression: String?, column: String, of table: String) -> String

    /// Adds the runtime's deferred foreign key from `column` of `table` to `target`'s `"id"`
    /// (in-place alteration).
    func addForeignKey(_ column: String, of table: String, referencing target: String) -> String

    /// Drops the foreign key on `column` of `table`, whatever name it was created with (in-place
    /// alteration); an engine that rebuilds tables instead throws ``SQLDialectError/unsupported(_:)``.
    func dropForeignKey(_ column: String, of table: String) throws -> String

    /// Gives the foreign key on `column` of `table` the name a fresh store gives it, whatever name it
    /// was created with (a table or column renamed since keeps its key's old name); `nil` for an
    /// engine whose keys have no names to keep (SQLite).
    func renameForeignKey(_ column: String, of table: String) -> String?

    /// The statements that begin and end a scratch namespace inside the open transaction, in which a
    /// migration creates a fresh store's tables to read their schema as this engine reports it
    /// (types, defaults as the catalog prints them); `nil` where the runtime reads a private
    /// in-memory SQLite database instead.
    var scratchNamespace: (enter: [String], leave: [String])? { get }

    /// SQL that is true when the non-NULL value of `column` reads as a value of `type` (`nil`: a
    /// record ID): what a migration's value check asks of every changed column.
    func decodes(_ column: String, as type: AttributeType?) -> String

    // MARK: - Writes

    /// An `INSERT` of `source` (`VALUES (…)` or a `SELECT`) into `columns` of `table` that skips
    /// a row conflicting with a uniqueness constraint instead of failing.
    func insertIgnoringConflicts(into table: String, columns: [String], _ source: String) -> String

    /// An `INSERT` of `source` that replaces the row with the same `key` values. `columns` may be
    /// `nil` for every column of the table, in order, where the engine allows it.
    func insertReplacing(into table: String, columns: [String]?, key: [String], _ source: String) -> String

    /// A test that is true when two values differ, a NULL and a value included (NULL-safe `<>`).
    func differs(_ lhs: String, _ rhs: String) -> String

    /// The clause that ends a query whose rows are limited: it skips as many rows as the parameter
    /// `offset` holds, when there is one, and returns at most as many as `limit` holds (both
    /// parameter markers), so a request's statement has one text whatever its values.
    func limit(_ limit: String, offset: String?) -> String

    /// The value bound to a limit's parameter for a request with an offset and no limit (SQLite
    /// reads a negative limit as none; PostgreSQL refuses one and reads NULL as `LIMIT ALL`).
    var noLimit: SQLValue { get }

    /// The clause after an `INSERT`, `UPDATE` or `DELETE` that returns `columns` of each row it wrote.
    func returning(_ columns: [String]) -> String

    // MARK: - Queries

    /// A test of `value` (a column) against `needle` (a parameter) that compares Unicode text as
    /// Foundation does: a string operator of a request (`contains`, `beginsWith`, `like`, …).
    func stringTest(
        _ operation: StringOperation, options: StringComparisonOptions, value: String, needle: String
    ) throws -> String

    /// The text a search's query parameter holds: `query` in the engine's own query syntax, every
    /// word quoted, so no text of the user's is read as an operator (FTS5's syntax,
    /// ``SearchQuery/ftsText``, on SQLite; a `tsquery`, ``SearchQuery/tsqueryText``, on PostgreSQL).
    func searchQuery(_ query: SearchQuery) -> String

    /// A test that the row whose ID is `row` (a column) matches `query` (a parameter holding
    /// ``searchQuery(_:)`` of a ``SearchQuery``) in `column` of the full-text index `index`.
    func searchTest(row: String, index: String, column: String, query: String) throws -> String

    /// The matches of `query` (a parameter) in `column` (the `position`-th of the index's columns,
    /// from 0) of the full-text index `index`, among the rows whose IDs `candidates` selects: rows of
    /// (ID, relevance where lower is better, snippet of `column`, `column`'s stored text), best first,
    /// then by ID. The four
    /// parameters `marks` come first: the text that opens and closes a highlight, the ellipsis, and
    /// the most words in a snippet; `query` comes next, the arguments of `candidates` after it.
    func rankedSearch(
        index: String, column: String, position: Int, query: String, candidates: String,
        marks: (open: String, close: String, ellipsis: String, words: String)
    ) throws -> String

    /// The storage a decimal is compared and sorted as: a double on SQLite, which stores decimals
    /// as exact text; `numeric` itself on PostgreSQL, so comparisons there are exact.
    var decimalComparison: ColumnStorage { get }

    /// A condition's truth value as a literal: `1`/`0` on SQLite, which has no boolean type;
    /// `TRUE`/`FALSE` on PostgreSQL, which refuses an integer where a condition belongs.
    func truth(_ value: Bool) -> String

    /// `text` (a text value) as it compares and sorts: by Unicode code point on every engine, as
    /// SQLite's `BINARY` collation does, never by the database's locale.
    func byCodePoint(_ text: String) -> String

    /// One `ORDER BY` term. NULL sorts first when ascending and last when descending on every
    /// engine (SQLite's order; PostgreSQL's default is the reverse), so a request's records come in
    /// the same order wherever it runs; `mayBeNull` false lets an engine leave the term plain.
    func sortTerm(_ value: String, ascending: Bool, mayBeNull: Bool) -> String

    /// An aggregate of `expression` over the rows of a group; a sum of no rows is 0, and every
    /// other aggregate of no rows is NULL (see ``AggregateFunction``).
    func aggregate(_ function: AggregateFunction, of expression: String) -> String

    /// `SELECT columns FROM (source) GROUP BY keys ORDER BY keys`: the rows of `source` in groups
    /// of equal `keys` (all rows in one group when there are none), in the order of the keys.
    func grouped(_ columns: [String], from source: String, by keys: [String]) -> String

    // MARK: - Transactions

    /// The statement that begins a transaction of this kind.
    func begin(_ kind: TransactionKind) -> String

    /// The statements that set, release and roll back to a savepoint (one operation of a write).
    func savepoint(_ name: String) -> String
    /// Releases a savepoint, keeping what was written since it was set.
    func releaseSavepoint(_ name: String) -> String
    /// Undoes what was written since a savepoint was set, keeping the savepoint.
    func rollbackToSavepoint(_ name: String) -> String

    // MARK: - Connections, constraints and changes

    /// The statements every writer connection runs when it opens.
    var writerSettings: [String] { get }

    /// The statement that turns foreign-key enforcement off for a migration's table rebuilds, and
    /// the one that turns it on again; `nil` where the engine checks them at commit anyway.
    var foreignKeysOff: String? { get }
    /// See ``foreignKeysOff``.
    var foreignKeysOn: String? { get }

    /// A query for the rows that break a foreign key, of one table or of all (`nil`): each row
    /// gives the table, the row's key, the referenced table and the foreign key's number.
    func foreignKeyViolations(in table: String?) throws -> String

    /// A query with two parameters (a table and a foreign key's number) for the columns of that key.
    var foreignKeyColumns: String { get throws }

    /// A query for a number that changes whenever another connection commits to the database.
    var dataVersion: String { get throws }

    /// A query for a number that changes whenever the database's schema changes.
    var schemaVersion: String { get throws }

    /// A query for the database's size in pages.
    var pageCount: String { get }

    /// The statement that moves committed writes from the log into the database file, if the
    /// engine keeps one, and empties the log.
    var checkpoint: String { get throws }

    /// The hidden column that numbers rows in insertion order, which results controllers sort by last.
    var rowNumberColumn: String { get throws }

    // MARK: - Reading a database's schema

    /// A query for the names of every table.
    var tableNames: String { get }

    /// A query with one parameter, a table's name, returning one row when that table exists.
    var tableExists: String { get }

    /// A query with one parameter, a table's name, returning how many tables have that name.
    var tableCount: String { get }

    /// A query with one parameter, a table's name, returning the name of each of its columns.
    var columnNames: String { get }

    /// The queries ``StoreSchema`` reads a store's tables with; each names its row shape.
    var schemaIntrospection: SchemaIntrospection { get }

    /// Whether the second column of a row of ``SchemaIntrospection/tables`` says the table is
    /// stored in the order of its primary key.
    func isClustered(definition: String) -> Bool
}

/// Standard SQL (DDL, savepoints and aggregates), the same in every engine the runtime targets: an engine's dialect
/// spells these itself only where it differs.
extension SQLDialect {
    /// Nothing to prepare: the engine drops any index it can read.
    package func prepareSearchIndexForDrop(_ index: String, on connection: any DatabaseConnection) throws {}

    package func aggregate(_ function: AggregateFunction, of expression: String) -> String {
        switch function {
        case .count: "COUNT(\(expression))"
        case .sum: "COALESCE(SUM(\(expression)), 0)"
        case .min: "MIN(\(expression))"
        case .max: "MAX(\(expression))"
        case .average: "AVG(\(expression))"
        }
    }

    package func grouped(_ columns: [String], from source: String, by keys: [String]) -> String {
        let select = "SELECT \(columns.joined(separator: ", ")) FROM (\(source)) g"
        guard !keys.isEmpty else { return select }
        let list = keys.joined(separator: ", ")
        return select + " GROUP BY \(list) ORDER BY \(list)"
    }

    package func parameter(typed storage: ColumnStorage) -> String {
        parameter
    }

    /// False: a list binds one parameter per value (`IN (?, ?, …)`), as SQLite's `IN` takes them.
    package var bindsListsAsArrays: Bool { false }

    package func arrayParameter(of storage: ColumnStorage) -> String {
        parameter
    }

    package var referencesNeedTheirTable: Bool { false }

    package var decimalComparison: ColumnStorage { .double }

    package func truth(_ value: Bool) -> String {
        value ? "1" : "0"
    }

    package func byCodePoint(_ text: String) -> String {
        text
    }

    package func defaultExpression(_ literal: String, for storage: ColumnStorage) -> String {
        literal
    }

    package func renameTable(_ table: String, to name: String) -> String {
        "ALTER TABLE \(identifier(table)) RENAME TO \(identifier(name))"
    }

    package func renameColumn(_ column: String, of table: String, to name: String) -> String {
        "ALTER TABLE \(identifier(table)) RENAME COLUMN \(identifier(column)) TO \(identifier(name))"
    }

    package func addColumn(_ definition: String, to table: String) -> String {
        "ALTER TABLE \(identifier(table)) ADD COLUMN \(definition)"
    }

    package func dropTable(_ table: String) -> String {
        "DROP TABLE \(identifier(table))"
    }

    package func dropIndex(_ name: String) -> String {
        "DROP INDEX \(identifier(name))"
    }

    package var altersTablesInPlace: Bool { false }

    package var alterationsBracket: (before: [String], after: [String]) { ([], []) }

    package func dropColumn(_ column: String, of table: String) -> String {
        "ALTER TABLE \(identifier(table)) DROP COLUMN \(identifier(column))"
    }

    package func alterColumnType(_ column: String, of table: String, to type: String, using expression: String)
        -> String
    {
        "ALTER TABLE \(identifier(table)) ALTER COLUMN \(identifier(column)) TYPE \(type) USING \(expression)"
    }

    package func setRequired(_ required: Bool, column: String, of table: String) -> String {
        "ALTER TABLE \(identifier(table)) ALTER COLUMN \(identifier(column)) \(required ? "SET" : "DROP") NOT NULL"
    }

    package func setDefault(_ expression: String?, column: String, of table: String) -> String {
        "ALTER TABLE \(identifier(table)) ALTER COLUMN \(identifier(column)) "
            + (expression.map { "SET DEFAULT \($0)" } ?? "DROP DEFAULT")
    }

    package func addForeignKey(_ column: String, of table: String, referencing target: String) -> String {
        "ALTER TABLE \(identifier(table)) ADD FOREIGN KEY (\(identifier(column))) REFERENCES \(identifier(target))(\"id\") "
            + "DEFERRABLE INITIALLY DEFERRED"
    }

    package func renameForeignKey(_ column: String, of table: String) -> String? { nil }

    package var scratchNamespace: (enter: [String], leave: [String])? { nil }

    package func savepoint(_ name: String) -> String {
        "SAVEPOINT \(identifier(name))"
    }

    package func releaseSavepoint(_ name: String) -> String {
        "RELEASE SAVEPOINT \(identifier(name))"
    }

    package func rollbackToSavepoint(_ name: String) -> String {
        "ROLLBACK TO SAVEPOINT \(identifier(name))"
    }
}

/// The queries that read the tables of a store (the runtime's own history tables aside), each
/// returning rows of a fixed shape, so the reader does not depend on the engine's catalog.
package struct SchemaIntrospection: Sendable {
    /// Rows of (table, text ``SQLDialect/isClustered(definition:)`` reads).
    package var tables: String
    /// Rows of (table, column, declared type, not null as 0 or 1, default as SQL text or NULL,
    /// place in the primary key from 1, or 0).
    package var columns: String
    /// Rows of (table, index, unique as 0 or 1, place of the column in the index from 0, column),
    /// for indexes created with `CREATE INDEX`.
    package var indexes: String
    /// Rows of (table, column, referenced table, `ON DELETE` action).
    package var foreignKeys: String
}

/// What an engine's dialect cannot spell.
package enum SQLDialectError: Error, Equatable, CustomStringConvertible {
    /// The engine has no equivalent of a statement the runtime issues: what it lacks, and what
    /// stands in for it there.
    case unsupported(String)

    package var description: String {
        switch self {
        case .unsupported(let message): message
        }
    }
}

/// How a transaction takes its locks.
package enum TransactionKind: Sendable {
    /// Reads from a snapshot taken at its first statement; for reads.
    case deferred
    /// Takes the write lock at once, waiting for it: what it reads cannot change before it commits.
    case immediate
}

/// What a column stores, independent of any engine: each dialect declares it with its own type
/// (``SQLDialect/columnType(_:)``). SQLite's and PostgreSQL's types are shown for each.
package enum ColumnStorage: Sendable, Hashable {
    /// `Bool`: `INTEGER`; PostgreSQL `boolean`.
    case boolean
    /// `Int16`: `INTEGER`; PostgreSQL `smallint`.
    case integer16
    /// `Int32`: `INTEGER`; PostgreSQL `integer`.
    case integer32
    /// `Int64`, `Int`, an int-backed enum, a place in an ordered relationship: `INTEGER`;
    /// PostgreSQL `bigint`.
    case integer64
    /// `Double`: no declared type in SQLite (a `REAL` column would store -0.0 as 0); PostgreSQL
    /// `double precision`.
    case double
    /// `Float`: as `Double` in SQLite; PostgreSQL `real`.
    case float
    /// `Date`: `REAL` seconds; PostgreSQL `timestamptz`.
    case timestamp
    /// `Decimal`: `TEXT`; PostgreSQL `numeric`, exact.
    case decimal
    /// `String`, `URL`, a string-backed enum: `TEXT`.
    case text
    /// A `Codable` value, or a composite stored whole: `TEXT` holding JSON; PostgreSQL `jsonb`.
    case json
    /// `Data`: `BLOB`; PostgreSQL `bytea`.
    case bytes
    /// `UUID`, a record's ID and a to-one relationship's column: `BLOB` of 16 bytes; PostgreSQL `uuid`.
    case uuid
}
