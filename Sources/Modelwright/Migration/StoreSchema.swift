/// The schema of an SQLite database as SQLite reports it: tables, columns, indexes and foreign
/// keys, read with `PRAGMA`s rather than compared as SQL text.
///
/// A migration ends by comparing the migrated store's `StoreSchema` with that of a fresh store
/// of the same version; any difference is an error that names it. Column order and index names
/// are left out of the comparison: the store always names columns, and a renamed column keeps
/// its index under the old name.
struct StoreSchema: Sendable, Equatable {
    struct Column: Sendable, Equatable {
        var type: String
        var isNotNull: Bool
        var defaultValue: String?
        var isPrimaryKey: Bool
    }

    struct Index: Sendable, Hashable {
        var columns: [String]
        var isUnique: Bool
    }

    struct ForeignKey: Sendable, Hashable {
        var column: String
        var table: String
        var onDelete: String
    }

    struct Table: Sendable, Equatable {
        var columns: [String: Column]
        var indexes: Set<Index>
        /// Index names by what they index, for dropping ones no longer wanted.
        var indexNames: [Index: String]
        var foreignKeys: Set<ForeignKey>
        var isWithoutRowID: Bool

        static func == (lhs: Table, rhs: Table) -> Bool {
            lhs.hasShape(of: rhs) && lhs.indexes == rhs.indexes
        }

        /// Whether the two tables have the same columns and foreign keys, whatever their indexes.
        func hasShape(of other: Table) -> Bool {
            columns == other.columns && foreignKeys == other.foreignKeys && isWithoutRowID == other.isWithoutRowID
        }
    }

    var tables: [String: Table]

    /// Reads the schema of the database `connection` is open on (persistent history's tables,
    /// which no schema describes and every migration keeps, are left out), with the dialect's four
    /// introspection queries (``SchemaIntrospection``): planning a long history reads schemas
    /// thousands of times.
    static func read(_ connection: some DatabaseConnection) throws -> StoreSchema {
        var tables: [String: Table] = [:]
        let queries = connection.dialect.schemaIntrospection
        try rows(
            connection,
            queries.tables
        ) { row in
            tables[row.string(0)] = Table(
                columns: [:], indexes: [], indexNames: [:], foreignKeys: [],
                isWithoutRowID: connection.dialect.isClustered(definition: row.string(1)))
        }
        try rows(
            connection,
            queries.columns
        ) { row in
            tables[row.string(0)]?.columns[row.string(1)] = Column(
                type: row.string(2).uppercased(),
                isNotNull: row.int64(3) != 0,
                defaultValue: row.isNull(4) ? nil : row.string(4),
                isPrimaryKey: row.int64(5) != 0
            )
        }
        // Indexes SQLite makes for PRIMARY KEY and UNIQUE clauses (origin "pk", "u") are part of the table.
        var indexColumns: [String: (table: String, unique: Bool, columns: [(Int64, String)])] = [:]
        try rows(
            connection,
            queries.indexes
        ) { row in
            let name = row.string(1)
            indexColumns[name, default: (row.string(0), row.int64(2) != 0, [])].columns.append(
                (row.int64(3), row.string(4)))
        }
        for (name, entry) in indexColumns {
            let index = Index(columns: entry.columns.sorted { $0.0 < $1.0 }.map(\.1), isUnique: entry.unique)
            tables[entry.table]?.indexes.insert(index)
            tables[entry.table]?.indexNames[index] = name
        }
        try rows(
            connection,
            queries.foreignKeys
        ) { row in
            tables[row.string(0)]?.foreignKeys.insert(
                ForeignKey(column: row.string(1), table: row.string(2), onDelete: row.string(3)))
        }
        return StoreSchema(tables: tables)
    }

    private static func rows<Connection: DatabaseConnection>(
        _ connection: Connection, _ sql: String, _ body: (Connection.Statement) -> Void
    ) throws {
        let statement = try connection.statement(sql)
        defer { statement.reset() }
        while try statement.step() { body(statement) }
    }

    /// Reads the schema a fresh store of `schema` has, from a private in-memory database.
    static func fresh(_ layout: SchemaLayout) throws -> StoreSchema {
        try fresh(SchemaSQL.tables(for: layout, in: SQLiteDialect()))
    }

    /// Reads the schema a store with these tables has, from a private in-memory database, or
    /// from `cache` for the tables it has seen created by the same statements.
    static func fresh(_ tables: [SchemaSQL.Table], cache: FreshSchemaCache? = nil) throws -> StoreSchema {
        try cache?.schema(of: tables) ?? created(tables)
    }

    /// The schema a store with these tables has, as the engine of `connection` reports it: where
    /// the dialect has a scratch namespace (``SQLDialect/scratchNamespace``), the tables are created
    /// in it, inside the open transaction, read and dropped; otherwise as ``fresh(_:cache:)``.
    static func fresh(
        _ tables: [SchemaSQL.Table], on connection: some DatabaseConnection, cache: FreshSchemaCache? = nil
    ) throws -> StoreSchema {
        guard let scratch = connection.dialect.scratchNamespace else { return try fresh(tables, cache: cache) }
        try connection.execute(scratch.enter)
        try connection.execute(SchemaSQL.createStatements(for: tables, in: connection.dialect))
        let schema = try read(connection)
        try connection.execute(scratch.leave)
        return schema
    }

    /// Creates the tables (and the metadata table) in a private in-memory database and reads its schema.
    fileprivate static func created(_ tables: [SchemaSQL.Table]) throws -> StoreSchema {
        let connection = try SQLiteConnection(path: nil)
        try connection.execute(
            [SchemaSQL.createMetadata(in: connection.dialect)] + tables.map(\.create)
                + tables.flatMap { $0.indexes.map(\.create) })
        return try read(connection)
    }

    /// What differs between this schema and `expected`, one sentence each; empty when they match.
    func differences(from expected: StoreSchema) -> [String] {
        var result: [String] = []
        for name in Set(tables.keys).union(expected.tables.keys).sorted() {
            guard let table = tables[name] else {
                result.append("table \(name) is missing")
                continue
            }
            guard let wanted = expected.tables[name] else {
                result.append("table \(name) should not exist")
                continue
            }
            for column in Set(table.columns.keys).union(wanted.columns.keys).sorted() {
                switch (table.columns[column], wanted.columns[column]) {
                case (nil, _): result.append("\(name).\(column) is missing")
                case (_, nil): result.append("\(name).\(column) should not exist")
                case (let have?, let want?) where have != want:
                    result.append("\(name).\(column) is \(have.summary), expected \(want.summary)")
                default: break
                }
            }
            for index in table.indexes.subtracting(wanted.indexes) {
                result.append("\(name) has an unexpected \(index.summary)")
            }
            for index in wanted.indexes.subtracting(table.indexes) {
                result.append("\(name) lacks the \(index.summary)")
            }
            // Index names count too: a later version drops and creates indexes by name.
            for index in table.indexes.intersection(wanted.indexes).sorted(by: { $0.summary < $1.summary }) {
                guard let have = table.indexNames[index], let want = wanted.indexNames[index], have != want else {
                    continue
                }
                result.append("\(name)'s \(index.summary) is named \(have), expected \(want)")
            }
            for key in table.foreignKeys.symmetricDifference(wanted.foreignKeys) {
                let verb = table.foreignKeys.contains(key) ? "has an unexpected" : "lacks the"
                result.append("\(name) \(verb) foreign key \(key.column) → \(key.table)")
            }
            if table.isWithoutRowID != wanted.isWithoutRowID {
                result.append("\(name) should\(wanted.isWithoutRowID ? "" : " not") be clustered by its primary key")
            }
        }
        return result.sorted()
    }
}

extension StoreSchema.Column {
    var summary: String {
        var parts = [type.isEmpty ? "untyped" : type, isNotNull ? "NOT NULL" : "nullable"]
        if let defaultValue { parts.append("DEFAULT \(defaultValue)") }
        if isPrimaryKey { parts.append("PRIMARY KEY") }
        return parts.joined(separator: " ")
    }
}

extension StoreSchema.Index {
    var summary: String {
        "\(isUnique ? "unique index" : "index") on (\(columns.joined(separator: ", ")))"
    }
}

/// What fresh stores look like, table by table, keyed by the statements that create each table
/// and its indexes.
///
/// SQLite reports the same schema for the same statements, and a table's schema depends on its
/// own statements alone (a foreign key names its parent table without needing it). Planning a
/// long history checks every step against a fresh store of the newer version, and most of those
/// tables are the same from one version to the next: each is created and read once.
package final class FreshSchemaCache: Sendable {
    private let tables = Locked<[String: StoreSchema.Table]>([:])

    /// Creates an empty cache.
    package init() {}

    /// The schema a fresh store of `definitions` has, from the cache where it can be.
    fileprivate func schema(of definitions: [SchemaSQL.Table]) throws -> StoreSchema {
        // Tables and indexes share one namespace: statements that clash fail together, not one by one.
        let names = [SchemaSQL.metadataTable] + definitions.flatMap { [$0.name] + $0.indexes.map(\.name) }
        guard Set(names).count == names.count else { return try StoreSchema.created(definitions) }
        let keys = definitions.map { ([$0.create] + $0.indexes.map(\.create)).joined(separator: ";\n") }
        var schema = StoreSchema(tables: [:])
        var missing: [(definition: SchemaSQL.Table, key: String)] = []
        tables.withLock { cache in
            schema.tables[SchemaSQL.metadataTable] = cache[SchemaSQL.createMetadata(in: SQLiteDialect())]
            for (definition, key) in zip(definitions, keys) {
                if let table = cache[key] {
                    schema.tables[definition.name] = table
                } else {
                    missing.append((definition, key))
                }
            }
        }
        guard !missing.isEmpty || schema.tables[SchemaSQL.metadataTable] == nil else { return schema }
        let created = try StoreSchema.created(missing.map(\.definition))
        tables.withLock { cache in
            cache[SchemaSQL.createMetadata(in: SQLiteDialect())] = created.tables[SchemaSQL.metadataTable]
            for (definition, key) in missing { cache[key] = created.tables[definition.name] }
        }
        schema.tables.merge(created.tables) { _, new in new }
        return schema
    }
}
