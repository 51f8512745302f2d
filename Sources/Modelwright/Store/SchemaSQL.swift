import Foundation

/// The DDL that creates a store for a schema: tables, indexes for uniqueness, lookups and
/// foreign keys, and the metadata row that records which schema the store holds.
package enum SchemaSQL {
    /// The table that records the model name, version and checksum of a store.
    package static let metadataTable = "_modelwright_metadata"

    /// The statement that creates the metadata table.
    static func createMetadata(in dialect: some SQLDialect) -> String {
        let text = dialect.columnType(.text)
        return
            "CREATE TABLE \(quoted(metadataTable)) (\"key\" \(text) PRIMARY KEY NOT NULL, \"value\" \(text) NOT NULL)"
    }

    /// One table of a store with the indexes that belong to it.
    struct Table: Sendable {
        /// The table's name.
        var name: String
        /// What follows the table's name in `CREATE TABLE`: the definitions and any options.
        var body: String
        /// Each index's `CREATE INDEX` statement, with what it indexes.
        var indexes: [Index]
        /// The column definitions, by column name, as `CREATE TABLE` writes them.
        var columns: [String: String]
        /// For a join table, the relationship it stores, as `Entity.relationship`.
        var relationship: String? = nil

        /// The `CREATE TABLE` statement.
        var create: String { create(named: name) }

        /// The `CREATE TABLE` statement for a table of this shape under another name (a rebuild's copy).
        func create(named name: String) -> String {
            "CREATE TABLE \(quoted(name)) \(body)"
        }
    }

    /// One index of a table.
    struct Index: Sendable, Hashable {
        var name: String
        var columns: [String]
        var isUnique: Bool
        /// The `CREATE INDEX` statement.
        var create: String
    }

    /// Every statement that creates the schema in an empty database, in order: the one way a store
    /// of any engine is created (a new store, a migration's fresh comparison, `plan`, the tests).
    ///
    /// Throws ``StoreError/invalidValue(entity:message:)`` naming the declaration when a table or
    /// column name is longer than the engine keeps (``SQLDialect/maximumNameBytes``), which
    /// `validate` refuses in a model file: the engine would cut it and two names could meet.
    static func createStatements(for layout: SchemaLayout, in dialect: some SQLDialect) throws -> [String] {
        if dialect.maximumNameBytes != nil, let problem = layout.schema.nameLengthProblems(layout).first {
            throw StoreError.invalidValue(entity: problem.entity, message: problem.message)
        }
        return createStatements(for: tables(for: layout, in: dialect), in: dialect)
            + (try searchIndexes(for: layout).flatMap { try $0.create(in: dialect) })
    }

    /// Every statement that creates `schema`'s store in an empty database of `dialect`'s engine,
    /// in order (``createStatements(for:in:)``).
    package static func createStatements(for schema: SchemaDescription, in dialect: some SQLDialect) throws
        -> [String]
    {
        try createStatements(for: SchemaLayout(schema), in: dialect)
    }

    /// The statements that create these tables (and the metadata table) in an empty database, in order.
    static func createStatements(for tables: [Table], in dialect: some SQLDialect) -> [String] {
        let (creates, ordered) = tableStatements(for: tables, in: dialect)
        return [createMetadata(in: dialect)] + creates + ordered.flatMap { $0.indexes.map(\.create) }
    }

    /// The statements that create these tables (indexes and the metadata table aside) beside each
    /// other and any tables already there: each after the tables it references where the engine
    /// resolves a reference when it is declared, with the keys of a cycle added after every
    /// table. The one order both a new store and a migration's new tables are created in; with
    /// the tables in that order, for their indexes.
    static func tableStatements(for tables: [Table], in dialect: some SQLDialect) -> (
        statements: [String], tables: [Table]
    ) {
        guard dialect.referencesNeedTheirTable else { return (tables.map(\.create), tables) }
        let (ordered, laterKeys) = referencedFirst(tables, in: dialect)
        return (ordered.map(\.create) + laterKeys, ordered)
    }

    /// The full-text index of one table: the `@searchable` attributes of every entity stored in it.
    struct SearchIndex: Sendable, Hashable {
        /// The index's name: the table's, after a prefix no entity's table can clash with.
        var name: String
        /// The table it indexes.
        var table: String
        /// The columns it indexes, in the order the table's entities declare them.
        var columns: [String]
        /// The table's uniqueness constraints besides `"id"`, as columns, in the order of the
        /// schema's entities: a write can remove a row that holds one's key without deleting it.
        var uniqueKeys: [[String]] = []

        /// The statements that create, fill and maintain it.
        func create(in dialect: some SQLDialect) throws -> [String] {
            try dialect.createSearchIndex(name, of: table, columns: columns, uniqueKeys: uniqueKeys)
        }

        /// The statements that bring it up to date with the rows written since it last was.
        func synchronize(in dialect: some SQLDialect) throws -> [String] {
            try dialect.synchronizeSearchIndex(name, of: table, columns: columns)
        }

        /// The statements that remove it.
        func drop(in dialect: some SQLDialect) throws -> [String] {
            try dialect.dropSearchIndex(name, of: table)
        }
    }

    /// Brings every full-text index of `layout` up to date with the rows written since: before a
    /// write transaction commits, when a store opens, and at the end of a migration stage.
    static func synchronizeSearchIndexes(for layout: SchemaLayout, on connection: any DatabaseConnection) throws {
        for index in searchIndexes(for: layout) {
            try connection.execute(try index.synchronize(in: connection.dialect))
        }
    }

    /// When a store opens: brings every full-text index of `layout` up to date with the rows
    /// another writer noted, then checks it (``SQLDialect/searchIndexChecks(_:of:columns:)``) and
    /// rebuilds from the table's rows one that another program emptied or edited (its tables are
    /// SQLite's to write, and a damaged index silently misses rows). The index holds nothing the
    /// table does not: rebuilding it loses nothing. Returns the names of the indexes rebuilt.
    ///
    /// - Throws: ``StoreError/damagedStore(path:problems:)`` for `path` when a rebuild fails (FTS5
    ///   cannot drop an index whose settings it cannot read, and an index whose structure record it
    ///   cannot read until ``SQLDialect/prepareSearchIndexForDrop(_:on:)`` replaced it), naming the
    ///   index and the way out.
    @discardableResult
    static func checkSearchIndexes(
        for layout: SchemaLayout, on connection: any DatabaseConnection, path: String
    ) throws -> [String] {
        var rebuilt: [String] = []
        for index in searchIndexes(for: layout) where try !isIntact(index, on: connection) {
            do {
                let dialect = connection.dialect
                do {
                    try connection.execute(try index.drop(in: dialect))
                } catch let error as StoreError {
                    throw error
                } catch {
                    // FTS5 cannot open the index to drop it (its structure record is gone or damaged).
                    try dialect.prepareSearchIndexForDrop(index.name, on: connection)
                    try connection.execute(try index.drop(in: dialect))
                }
                try connection.execute(try index.create(in: dialect))
            } catch let error as StoreError {
                throw error
            } catch {
                throw StoreError.damagedStore(
                    path: path,
                    problems: [
                        "the full-text index '\(index.name)' of '\(index.table)' was changed outside the store and "
                            + "cannot be rebuilt (\(error)); restore its settings with sqlite3 (`UPDATE "
                            + "\"\(index.name)_config\" SET v = 4 WHERE k = 'version'`, the only setting it keeps) "
                            + "or the file from a backup"
                    ])
            }
            rebuilt.append(index.name)
        }
        return rebuilt
    }

    /// Whether `index` is up to date and holds exactly the text of its table's rows.
    private static func isIntact(_ index: SearchIndex, on connection: any DatabaseConnection) throws -> Bool {
        let checks = try connection.dialect.searchIndexChecks(index.name, of: index.table, columns: index.columns)
        do {
            try connection.execute(try index.synchronize(in: connection.dialect))
            for sql in checks {
                let statement = try connection.prepare(sql)
                if try statement.step(), !statement.isNull(0), statement.int64(0) != 0 { return false }
            }
            return true
        } catch let error as StoreError {
            // A transaction SQLite ended is not damage to repair: the opening fails with it.
            if case .transactionAborted = error { throw error }
            if case .transactionAbortedByEngine = error { throw error }
            return false
        } catch {
            return false
        }
    }

    /// The name of the full-text index of `table`.
    static func searchIndexName(of table: String) -> String {
        "_modelwright_search_" + table
    }

    /// The full-text indexes of a store of this layout, one per table with a searchable attribute,
    /// in the order of the schema's entities.
    static func searchIndexes(for layout: SchemaLayout) -> [SearchIndex] {
        var indexes: [SearchIndex] = []
        for entity in layout.schema.entities where !entity.searchableAttributes.isEmpty {
            guard let entityLayout = layout.entities[entity.name] else { continue }
            let columns = entity.searchableAttributes.map(entityLayout.columnName)
            if let existing = indexes.firstIndex(where: { $0.table == entityLayout.table }) {
                indexes[existing].columns += columns.filter { !indexes[existing].columns.contains($0) }
            } else {
                indexes.append(
                    SearchIndex(
                        name: searchIndexName(of: entityLayout.table), table: entityLayout.table, columns: columns))
            }
        }
        for (number, index) in indexes.enumerated() {
            for entity in layout.schema.entities {
                guard let entityLayout = layout.entities[entity.name], entityLayout.table == index.table else {
                    continue
                }
                for constraint in entity.uniquenessConstraints {
                    let key = constraint.map(entityLayout.columnName)
                    if key != ["id"], !indexes[number].uniqueKeys.contains(key) {
                        indexes[number].uniqueKeys.append(key)
                    }
                }
            }
        }
        return indexes
    }

    /// `tables` ordered so each comes after the tables its columns reference (itself aside), keeping
    /// the given order otherwise. Tables that reference each other in a cycle (a one-to-one whose
    /// sides both hold a key) keep their order, and a reference to a table created later leaves
    /// its `CREATE TABLE` for an `ALTER TABLE … ADD FOREIGN KEY` after every table: the same
    /// constraint, under the same name PostgreSQL gives an inline one (`Table_column_fkey`).
    private static func referencedFirst(_ tables: [Table], in dialect: some SQLDialect) -> (
        tables: [Table], laterKeys: [String]
    ) {
        let references = tables.map { table in
            Set(
                tables.indices.filter { other in
                    tables[other].name != table.name && table.body.contains("REFERENCES \(quoted(tables[other].name))(")
                })
        }
        var placed: [Int] = []
        var isPlaced = Array(repeating: false, count: tables.count)
        while placed.count < tables.count {
            let ready = tables.indices.first { !isPlaced[$0] && references[$0].allSatisfy { isPlaced[$0] } }
            let next = ready ?? tables.indices.first { !isPlaced[$0] } ?? 0
            isPlaced[next] = true
            placed.append(next)
        }
        var created: Set<String> = []
        var laterKeys: [String] = []
        let ordered = placed.map { index in
            var table = tables[index]
            created.insert(table.name)
            for other in references[index] where !created.contains(tables[other].name) {
                for (column, definition) in table.columns.sorted(by: { $0.key < $1.key }) {
                    let clause = referenceClause(to: tables[other].name, from: column, of: table.name, in: dialect)
                    guard definition.hasSuffix(clause) else { continue }
                    let unreferenced = String(definition.dropLast(clause.count))
                    table.body = table.body.replacingOccurrences(of: definition, with: unreferenced)
                    let name = dialect.foreignKeyName(of: column, in: table.name).map { " CONSTRAINT \(quoted($0))" }
                    laterKeys.append(
                        "ALTER TABLE \(quoted(table.name)) ADD\(name ?? "") FOREIGN KEY (\(quoted(column)))"
                            + referenceClause(to: tables[other].name))
                }
            }
            return table
        }
        return (ordered, laterKeys)
    }

    /// The clause a key column's definition ends with: a reference checked at commit.
    private static func referenceClause(to table: String) -> String {
        " REFERENCES \(quoted(table))(\"id\") DEFERRABLE INITIALLY DEFERRED"
    }

    /// The clause `column` of `table` ends with: the reference, under the name the engine's
    /// dialect gives the key (``SQLDialect/foreignKeyName(of:in:)``), where it names one.
    private static func referenceClause(
        to target: String, from column: String, of table: String, in dialect: some SQLDialect
    ) -> String {
        constraint(dialect.foreignKeyName(of: column, in: table)) + referenceClause(to: target)
    }

    /// ` CONSTRAINT "name"`, or nothing where the dialect names no constraint.
    private static func constraint(_ name: String?) -> String {
        name.map { " CONSTRAINT \(quoted($0))" } ?? ""
    }

    /// The tables a store of this layout has (the metadata table aside), in creation order.
    static func tables(for layout: SchemaLayout, in dialect: some SQLDialect) -> [Table] {
        var tables: [Table] = []
        let schema = layout.schema
        let roots = schema.entities.filter { entity in layout.entities[entity.name]?.table == entity.name }
        var families: [String: [EntityLayout]] = [:]
        for entity in schema.entities {
            guard let entityLayout = layout.entities[entity.name] else { continue }
            families[entityLayout.table, default: []].append(entityLayout)
        }
        let entitiesByName = Dictionary(schema.entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for root in roots {
            guard let rootLayout = layout.entities[root.name] else { continue }
            let family = families[root.name] ?? []
            let rootColumns = Set(rootLayout.columns.map(\.name))
            let key = constraint(dialect.primaryKeyName(of: root.name))
            var definitions = ["\"id\" \(dialect.columnType(.uuid))\(key) PRIMARY KEY NOT NULL"]
            var columns = ["id": definitions[0]]
            if rootLayout.hasDiscriminator {
                definitions.append("\"_entity\" \(dialect.columnType(.text)) NOT NULL")
                columns["_entity"] = definitions[1]
            }
            var foreignKeys: [String] = []
            for member in family {
                for column in member.columns where columns[column.name] == nil {
                    // Only the root's own columns hold a value in every row of the table.
                    let isRootColumn = rootColumns.contains(column.name)
                    let type = dialect.columnType(column.storage)
                    var definition = quoted(column.name) + (type.isEmpty ? "" : " " + type)
                    if isRootColumn && !column.isOptional { definition += " NOT NULL" }
                    if let literal = column.defaultLiteral {
                        definition += " DEFAULT " + dialect.defaultExpression(literal, for: column.storage)
                    }
                    if let target = column.references {
                        definition += referenceClause(to: target, from: column.name, of: root.name, in: dialect)
                        foreignKeys.append(column.name)
                    }
                    definitions.append(definition)
                    columns[column.name] = definition
                }
            }
            for member in family {
                for column in member.positionColumns where columns[column] == nil {
                    let definition = "\(quoted(column)) \(dialect.columnType(.integer64))"
                    definitions.append(definition)
                    columns[column] = definition
                }
            }
            var indexes = foreignKeys.map { column in
                index("\(root.name)_fk_\(column)", table: root.name, columns: [column], unique: false, in: dialect)
            }
            for member in family {
                guard let entity = entitiesByName[member.name] else { continue }
                for constraint in entity.uniquenessConstraints {
                    indexes.append(
                        index(
                            "\(entity.name)_unique_\(constraint.joined(separator: "_"))", table: root.name,
                            columns: constraint.map(member.columnName), unique: true, in: dialect))
                }
                for columns in entity.indexes {
                    indexes.append(
                        index(
                            "\(entity.name)_index_\(columns.joined(separator: "_"))", table: root.name,
                            columns: columns.map(member.columnName), unique: false, in: dialect))
                }
            }
            tables.append(
                Table(
                    name: root.name,
                    body: dialect.tableBody(definitions, clustered: false),
                    indexes: deduplicated(indexes),
                    columns: columns
                )
            )
        }
        for entity in schema.entities {
            guard let entityLayout = layout.entities[entity.name] else { continue }
            // A join table is created from the side that owns it, where its `source` column is this entity's.
            for relationship in entity.relationships where relationship.cardinality == .toMany {
                guard
                    case .joinTable(let name, "source", _, let position)? = try? layout.storage(
                        of: relationship, from: entityLayout),
                    let destination = layout.entities[relationship.destination]
                else { continue }
                let id = dialect.columnType(.uuid)
                let keys = ["source", "destination"].map { constraint(dialect.foreignKeyName(of: $0, in: name)) }
                var definitions = [
                    "\"source\" \(id) NOT NULL\(keys[0]) REFERENCES \(quoted(entityLayout.table))(\"id\") ON DELETE CASCADE",
                    "\"destination\" \(id) NOT NULL\(keys[1]) REFERENCES \(quoted(destination.table))(\"id\") ON DELETE CASCADE",
                ]
                if position != nil {
                    definitions.append("\"position\" \(dialect.columnType(.integer64)) NOT NULL DEFAULT 0")
                }
                var columns = ["source": definitions[0], "destination": definitions[1]]
                if position != nil { columns["position"] = definitions[2] }
                definitions.append(
                    "\(constraint(dialect.primaryKeyName(of: name)).dropFirst()) PRIMARY KEY (\"source\", \"destination\")"
                        .trimmingCharacters(in: .whitespaces))
                tables.append(
                    Table(
                        name: name,
                        body: dialect.tableBody(definitions, clustered: true),
                        indexes: [
                            index(
                                "\(name)_destination", table: name, columns: ["destination", "source"], unique: false,
                                in: dialect)
                        ],
                        columns: columns,
                        relationship: "\(entity.name).\(relationship.name)"
                    )
                )
            }
        }
        return namedApart(tables, in: dialect)
    }

    /// An index of `table`, named as the engine keeps `name` (``SQLDialect/indexName(_:)``).
    private static func index(
        _ name: String, table: String, columns: [String], unique: Bool, in dialect: some SQLDialect
    ) -> Index {
        let list = columns.map(quoted).joined(separator: ", ")
        let name = dialect.indexName(name)
        return Index(
            name: name,
            columns: columns,
            isUnique: unique,
            create: "CREATE \(unique ? "UNIQUE " : "")INDEX \(quoted(name)) ON \(quoted(table)) (\(list))"
        )
    }

    /// Two entities of one hierarchy may declare the same index; the table gets it once.
    private static func deduplicated(_ indexes: [Index]) -> [Index] {
        var seen: Set<[String]> = []
        return indexes.filter { seen.insert([$0.isUnique ? "unique" : "index"] + $0.columns).inserted }
    }

    /// The tables with every index named apart from every other index and table, as SQLite
    /// compares names: without case. Different indexes can get one name (`@unique(a, b)` and
    /// `@unique(a_b)` both make `E_unique_a_b`), and creating the second would fail or, skipped,
    /// leave a constraint unenforced; the later one takes the first free `_2`, `_3` … suffix.
    /// The checksum covers an index's columns, not its name.
    private static func namedApart(_ tables: [Table], in dialect: some SQLDialect) -> [Table] {
        var taken = Set(([metadataTable] + tables.map(\.name)).map { $0.lowercased() })
        return tables.map { table in
            var table = table
            table.indexes = table.indexes.map { index in
                var name = index.name
                var suffix = 2
                while !taken.insert(name.lowercased()).inserted {
                    name = "\(index.name)_\(suffix)"
                    suffix += 1
                }
                return name == index.name
                    ? index
                    : Self.index(name, table: table.name, columns: index.columns, unique: index.isUnique, in: dialect)
            }
            return table
        }
    }
}

extension DefaultValue {
    /// The value as an SQL literal in the store's encoding for `type`, or `nil` for `now`, which
    /// has no constant form. The store's DDL declares it, so rows added by a migration get it,
    /// and the schema checksum covers it.
    func sqlLiteral(for type: AttributeType) -> String? {
        switch self {
        case .bool(let value): return value ? "1" : "0"
        case .integer(let value):
            if type == .double || type == .float { return Self.real(Double(value)) }
            return String(value)
        case .floatingPoint(let value): return Self.real(value)
        case .decimal(let text):
            let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
            return Self.text(value.map { "\($0)" } ?? text)
        case .string(let text):
            if type == .uuid, let uuid = UUID(uuidString: text) {
                return withUnsafeBytes(of: uuid.uuid) { SQLSyntax.blob($0) }
            }
            return Self.text(text)
        case .date(let seconds): return Self.real(seconds - Date.timeIntervalBetween1970AndReferenceDate)
        case .now: return nil
        case .enumCase(let name):
            guard case .enumeration(let description) = type,
                let match = description.cases.first(where: { $0.name == name })
            else { return Self.text(name) }
            return description.rawType == .int ? match.rawValue : Self.text(match.rawValue)
        }
    }

    private static func text(_ value: String) -> String {
        SQLSyntax.string(value)
    }

    private static func real(_ value: Double) -> String {
        // Swift spells the non-finite values `nan` and `inf`, which SQL would read as column names.
        // Validation refuses them; should one still arrive, it becomes what SQLite itself stores.
        guard value.isFinite else { return value.isNaN ? "NULL" : value < 0 ? "-9e999" : "9e999" }
        // Always with a point or exponent, so SQLite reads a REAL; Swift prints the shortest exact form.
        let text = "\(value)"
        return text.contains(".") || text.contains("e") ? text : text + ".0"
    }
}
