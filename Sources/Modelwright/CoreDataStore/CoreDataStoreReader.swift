import Foundation

/// Reads a Core Data store's objects and links by the layout of the version that wrote it, and
/// writes them into a new Modelwright store of the schema that version was imported as.
struct CoreDataStoreReader {
    let source: CoreDataStoreSource
    let layout: CoreDataStoreLayout
    private let schema: SchemaDescription
    let schemaLayout: SchemaLayout
    let ids: ImportedIDs

    init(source: CoreDataStoreSource, layout: CoreDataStoreLayout, schema: SchemaDescription) throws {
        self.source = source
        self.layout = layout
        self.schema = schema
        schemaLayout = try SchemaLayout(schema)
        ids = ImportedIDs(storeUUID: source.storeUUID)
    }

    /// Counts what ``write(to:)`` would write, reading (and so checking) every value.
    func countRows() throws -> (rows: [String: Int], links: Int) {
        try checkKeys()
        var rows: [String: Int] = [:]
        var links = 0
        try readObjects { entity, _, _ in rows[entity.entity.entity.name, default: 0] += 1 }
        try readLinks { _, pairs in links += pairs.count }
        return (rows, links)
    }

    /// Writes every object and link into the empty store at `path`, in one transaction that
    /// commits only when the row counts, the values and the links verify.
    ///
    /// Each entity's insert and each relationship's link statement is prepared once and bound
    /// column by column from the source row: an import writes every row of a store, so nothing
    /// per row builds SQL, a dictionary or a lookup by name.
    func write(to path: String) throws -> (rows: [String: Int], links: Int) {
        try checkKeys()
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        // The store is a temporary file that is placed only when complete and verified, after the
        // caller syncs it once: a crash at any moment leaves a file nothing opens. So it needs no
        // journal (or log, whose every page would be written twice) and no sync of its own; a
        // failed write throws and the file is deleted, never rolled back and reused.
        try connection.execute("PRAGMA journal_mode=OFF")
        try connection.execute("PRAGMA synchronous=OFF")
        // The whole import is one transaction: a cache that holds the tables and indexes being
        // built keeps SQLite from spilling pages and reading them back (about 64 MB at most).
        try connection.execute("PRAGMA cache_size = -65536")
        var rows: [String: Int] = [:]
        var links = 0
        try connection.inTransaction(.immediate) {
            // The store's own indexes are built once the rows are in, by one sort each, rather
            // than updated row by row (the primary and unique keys stay: they check the rows).
            let indexes = try Self.secondaryIndexes(on: connection)
            for index in indexes { try connection.execute("DROP INDEX \(quoted(index.name))") }
            var inserts: [Int: SQLiteStatement] = [:]
            try readObjects { entity, id, values in
                guard let schemaName = entity.entity.entity.schemaName else { return }
                let statement: SQLiteStatement
                if let prepared = inserts[entity.entity.id] {
                    statement = prepared
                } else {
                    statement = try insertStatement(for: entity, into: schemaName, on: connection)
                    inserts[entity.entity.id] = statement
                }
                statement.bind(id, 1)
                for (index, value) in values.enumerated() { statement.bind(value, Int32(index + 2)) }
                try statement.run()
                statement.reset()
                rows[entity.entity.entity.name, default: 0] += 1
            }
            try readLinks { relationship, pairs in
                links += pairs.count
                try write(pairs, of: relationship, on: connection)
            }
            for index in indexes { try connection.execute(index.sql) }
            var expected = schemaLayout.entities.mapValues { _ in 0 }
            for (name, count) in rows {
                if let schemaName = layout.entities[name]?.entity.schemaName { expected[schemaName] = count }
            }
            try Self.verify(on: connection, layout: schemaLayout, expectedRows: expected)
        }
        return (rows, links)
    }

    /// The indexes of the store at `connection` that SQLite did not make for a key or a
    /// constraint, with the SQL that made them.
    private static func secondaryIndexes(on connection: SQLiteConnection) throws -> [(name: String, sql: String)] {
        let statement = try connection.statement(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name")
        defer { statement.reset() }
        var indexes: [(name: String, sql: String)] = []
        while try statement.step() { indexes.append((statement.string(0), statement.string(1))) }
        return indexes
    }

    /// The insert of a row of `entity`, as ``MigrationContext/insert(into:values:)`` writes one, its
    /// parameters the ID, then in the order ``readObjects(_:)`` gives the values: each planned key, then
    /// the entity's name where its table holds several entities.
    private func insertStatement(
        for entity: EntityPlan, into schemaName: String, on connection: SQLiteConnection
    ) throws -> SQLiteStatement {
        let entityLayout = try schemaLayout.entity(schemaName)
        var columns = [quoted("id")] + entity.plans.map { quoted(entityLayout.columnName($0.key)) }
        if entityLayout.hasDiscriminator { columns.append(quoted("_entity")) }
        return try connection.prepare(
            "INSERT INTO \(quoted(entityLayout.table)) (\(columns.joined(separator: ", "))) VALUES (\(connection.dialect.parameters(columns.count)))"
        )
    }

    // MARK: - Objects

    /// How one concrete entity's rows are read: its layout, and a plan per schema key.
    private struct EntityPlan {
        var entity: CoreDataStoreLayout.Entity
        var plans: [ValuePlan]
        var discriminator: SQLValue?
    }

    /// Calls `body` with every object's entity plan, its ID, and its values in the plan's order:
    /// each planned key, then the discriminator when the entity has one. The array is reused from
    /// row to row, so `body` must not keep it.
    private func readObjects(_ body: (EntityPlan, UUID, [SQLValue]) throws -> Void) throws {
        let tables = try CoreDataStoreSource.tableNames(on: source.connection)
        for root in layout.roots {
            guard let rootEntity = layout.entities[root] else { continue }
            guard tables.contains(rootEntity.table) else {
                throw CoreDataStoreImportError.layoutMismatch(
                    path: source.path, problem: "table \(rootEntity.table) of entity '\(root)' is missing")
            }
            let statement = try source.connection.statement("SELECT * FROM \(quoted(rootEntity.table))")
            defer { statement.reset() }
            var index: [String: Int32] = [:]
            for (position, name) in statement.columnNames.enumerated() { index[name] = Int32(position) }
            guard let primaryKey = index["Z_PK"], let entityColumn = index["Z_ENT"] else {
                throw CoreDataStoreImportError.layoutMismatch(
                    path: source.path, problem: "table \(rootEntity.table) has no Z_PK or Z_ENT column")
            }
            // Which columns each entity reads, looked up once per table.
            var plans: [Int: EntityPlan] = [:]
            let rootIDs = ids.table(root)
            var values: [SQLValue] = []
            while try statement.step() {
                let key = statement.int64(primaryKey)
                let entityID = Int(statement.int64(entityColumn))
                let plan: EntityPlan
                if let known = plans[entityID] {
                    plan = known
                } else {
                    guard let name = layout.names[entityID], let entity = layout.entities[name], entity.root == root
                    else {
                        throw CoreDataStoreImportError.layoutMismatch(
                            path: source.path,
                            problem:
                                "row Z_PK \(key) of \(rootEntity.table) has Z_ENT \(entityID), which is not an entity of this table"
                        )
                    }
                    let schemaName = entity.entity.schemaName
                    let hasDiscriminator = try schemaName.map { try schemaLayout.entity($0).hasDiscriminator } ?? false
                    plan = EntityPlan(
                        entity: entity, plans: try valuePlans(for: entity, index: index),
                        discriminator: hasDiscriminator ? schemaName.map(SQLValue.text) : nil)
                    plans[entityID] = plan
                }
                values.removeAll(keepingCapacity: true)
                for valuePlan in plan.plans {
                    values.append(try valuePlan.read(statement, key, plan.entity.entity.name))
                }
                if let discriminator = plan.discriminator { values.append(discriminator) }
                try body(plan, rootIDs.uuid(key), values)
            }
        }
    }

    /// Checks that every bookkeeping column (`Z_PK`, `Z_ENT`, `Z_OPT`, `Z_FOK_…`) of each table,
    /// and every column of each join table (its two member keys and their `Z_FOK_` orders), holds
    /// whole numbers: an integral REAL reads as its integer, as Core Data reads it, but a `Z_ENT`
    /// of 2.5 would be read as 2 for the row and match nothing in the link queries, and a join
    /// row's 2.5 or '2x' would link the object whose key is 2. To-one keys are not checked here:
    /// every read of them casts to an integer, as Core Data's `sqlite3_column_int64` does, so
    /// '3x' and 3.5 read as 3 everywhere.
    private func checkIntegerColumns(_ tables: Set<String>) throws {
        var columns: [String: Set<String>] = [:]
        for entity in layout.entities.values where tables.contains(entity.table) {
            let present = try source.columns(of: entity.table)
            let checked = present.filter { ["Z_PK", "Z_ENT", "Z_OPT"].contains($0) || $0.hasPrefix("Z_FOK_") }
            columns[entity.table, default: []].formUnion(checked)
        }
        var joinTables: Set<String> = []
        for (name, entity) in layout.entities {
            for relationship in entity.entity.relationships where relationship.isToMany && !relationship.isTransient {
                guard case .joinTable(let candidates, _, _, _)? = layout.storage(of: relationship, owner: name),
                    let table = candidates.first(where: tables.contains)
                else { continue }
                joinTables.insert(table)
                columns[table, default: []].formUnion(try source.columns(of: table))
            }
        }
        for (table, names) in columns.sorted(by: { $0.key < $1.key }) {
            // A join row has no Z_PK: it is named by its whole content, every column quoted.
            let isJoin = joinTables.contains(table)
            let row =
                isJoin
                ? names.sorted().map { "'\($0) ' || quote(\(quoted($0)))" }.joined(separator: " || ', ' || ")
                : "'Z_PK ' || quote(Z_PK)"
            for column in names.sorted() {
                let value = quoted(column)
                // Core Data writes every column of a join row (both keys, and each order of an
                // ordered side): a NULL there is damage, and read as a link it would be dropped
                // (a key) or put first (an order) without a word. Elsewhere NULL is normal (a
                // to-one side's Z_FOK_ of an object with no destination).
                let empty = isJoin ? "\(value) IS NULL OR " : "\(value) IS NOT NULL AND "
                let statement = try source.connection.statement(
                    "SELECT \(row), quote(\(value)) FROM \(quoted(table)) WHERE \(empty)"
                        + "NOT (typeof(\(value)) = 'integer' "
                        + "OR (typeof(\(value)) = 'real' AND \(value) = CAST(\(value) AS INTEGER))) LIMIT 1")
                defer { statement.reset() }
                if try statement.step() {
                    let shown = isJoin ? "(\(statement.string(0)))" : statement.string(0)
                    let found = statement.string(1)
                    throw CoreDataStoreImportError.layoutMismatch(
                        path: source.path,
                        problem: found == "NULL"
                            ? "row \(shown) of the join table \(table) has \(column) NULL; Core Data writes both keys and every order of a join row, so the store is damaged"
                            : "row \(shown) of \(table) has \(column) \(found), not a whole number; Core Data keeps whole numbers in its key and bookkeeping columns, so the store is damaged"
                    )
                }
            }
        }
    }

    /// Checks what SQLite would otherwise report as a bare constraint error, or not at all: a
    /// `Z_PK` held by two rows of a table, and a to-one key naming a row of an entity other than
    /// the relationship's destination (or its subentities), checked by that row's `Z_ENT`.
    private func checkKeys() throws {
        let tables = try CoreDataStoreSource.tableNames(on: source.connection)
        try checkIntegerColumns(tables)
        for root in layout.roots {
            guard let table = layout.entities[root]?.table, tables.contains(table) else { continue }
            let statement = try source.connection.statement(
                "SELECT Z_PK FROM \(quoted(table)) GROUP BY Z_PK HAVING COUNT(*) > 1 LIMIT 1")
            defer { statement.reset() }
            if try statement.step() {
                throw CoreDataStoreImportError.layoutMismatch(
                    path: source.path,
                    problem:
                        "two rows of \(table) (entity '\(root)') have Z_PK \(statement.int64(0)); Core Data gives each object its own key, so the store is damaged"
                )
            }
        }
        for (name, entity) in layout.entities.sorted(by: { $0.key < $1.key }) where entity.entity.schemaName != nil {
            for (relationship, owner) in entity.relationships where owner == name && !relationship.isToMany {
                guard relationship.schemaName != nil, let destination = layout.entities[relationship.destination],
                    case .foreignKey(let column, _, _)? = layout.storage(of: relationship, owner: owner),
                    tables.contains(entity.table), tables.contains(destination.table),
                    try source.columns(of: entity.table).contains(column)
                else { continue }
                let sources = subentityIDs(of: entity).map(String.init).joined(separator: ", ")
                let destinations = subentityIDs(of: destination).map(String.init).joined(separator: ", ")
                let statement = try source.connection.statement(
                    """
                    SELECT s.Z_PK, d.Z_PK, d.Z_ENT FROM \(quoted(entity.table)) AS s \
                    JOIN \(quoted(destination.table)) AS d ON d.Z_PK = CAST(s.\(quoted(column)) AS INTEGER) \
                    WHERE s.Z_ENT IN (\(sources)) AND s.\(quoted(column)) IS NOT NULL \
                    AND d.Z_ENT NOT IN (\(destinations)) LIMIT 1
                    """)
                defer { statement.reset() }
                if try statement.step() {
                    let found = layout.names[Int(statement.int64(2))] ?? "Z_ENT \(statement.int64(2))"
                    throw CoreDataStoreImportError.unreadableValue(
                        entity: name, attribute: relationship.name, primaryKey: statement.int64(0),
                        reason:
                            "it points at row Z_PK \(statement.int64(1)) of \(destination.table), a '\(found)', not a '\(destination.entity.name)'"
                    )
                }
            }
        }
    }

    /// How one schema key of an entity's records is read from its row.
    private struct ValuePlan {
        var key: String
        var read: (SQLiteStatement, Int64, String) throws -> SQLValue
    }

    private func valuePlans(
        for entity: CoreDataStoreLayout.Entity, index: [String: Int32]
    ) throws -> [ValuePlan] {
        guard let schemaName = entity.entity.schemaName, let schemaEntity = schemaLayout.entities[schemaName] else {
            return []
        }
        var plans: [ValuePlan] = []
        for (attribute, column) in entity.attributes {
            guard let key = attribute.schemaName, let columnLayout = schemaEntity.column(forKey: key),
                let type = columnLayout.type
            else { continue }
            guard let position = index[column] else {
                throw CoreDataStoreImportError.layoutMismatch(
                    path: source.path,
                    problem: "column \(column) of '\(entity.entity.name).\(attribute.name)' is missing")
            }
            let external = CoreDataExternalData(
                storeFolder: source.storeFolder, components: [source.supportFolder, "_EXTERNAL_DATA"])
            let isOptional = columnLayout.isOptional
            plans.append(
                ValuePlan(key: key) { statement, primaryKey, entityName in
                    let value: SQLValue
                    do {
                        value = try CoreDataValues.value(
                            statement, position, attribute: attribute, type: type, externalData: external)
                    } catch let error as CoreDataValueError {
                        throw CoreDataStoreImportError.unreadableValue(
                            entity: entityName, attribute: attribute.name, primaryKey: primaryKey, reason: error.reason)
                    }
                    if value == .null, !isOptional {
                        throw CoreDataStoreImportError.unreadableValue(
                            entity: entityName, attribute: attribute.name, primaryKey: primaryKey,
                            reason: "it is empty, and the attribute is required")
                    }
                    return value
                })
        }
        for (relationship, owner) in entity.relationships where !relationship.isToMany {
            guard let key = relationship.schemaName, schemaEntity.column(forKey: key) != nil,
                let destination = layout.entities[relationship.destination],
                case .foreignKey(let column, _, _)? = layout.storage(of: relationship, owner: owner)
            else { continue }
            guard let position = index[column] else {
                throw CoreDataStoreImportError.layoutMismatch(
                    path: source.path,
                    problem: "column \(column) of '\(entity.entity.name).\(relationship.name)' is missing")
            }
            plans.append(
                // Core Data reads a key with sqlite3_column_int64, so '1x' is 1 and 2.5 is 2.
                ValuePlan(key: key) { [destinationIDs = ids.table(destination.root)] statement, _, _ in
                    guard !statement.isNull(position) else { return .null }
                    return uuidValue(destinationIDs.uuid(statement.int64(position)))
                })
        }
        return plans
    }
}

/// The IDs of imported objects, each computed once per root table: a link names two objects,
/// and hashing is most of an ID's cost.
final class ImportedIDs {
    private let storeUUID: String
    private var tables: [String: ImportedTableIDs] = [:]

    init(storeUUID: String) {
        self.storeUUID = storeUUID
    }

    /// The IDs of the objects of the root table of `root`.
    func table(_ root: String) -> ImportedTableIDs {
        if let known = tables[root] { return known }
        let table = ImportedTableIDs(storeUUID: storeUUID, root: root)
        tables[root] = table
        return table
    }
}

/// The IDs of one root table's objects, by `Z_PK`. Core Data hands out keys from 1 up, so keys
/// below a bound index an array (no hashing, no allocation per look-up); any other key, a
/// dictionary, so a damaged store's huge key costs no memory.
final class ImportedTableIDs {
    private let storeUUID: String
    private let root: String
    private var dense: [UUID?] = []
    private var sparse: [Int64: UUID] = [:]
    private static let denseLimit: Int64 = 1 << 20

    init(storeUUID: String, root: String) {
        self.storeUUID = storeUUID
        self.root = root
    }

    func uuid(_ key: Int64) -> UUID {
        guard key >= 0, key < Self.denseLimit else {
            if let known = sparse[key] { return known }
            let id = make(key)
            sparse[key] = id
            return id
        }
        let index = Int(key)
        if index < dense.count, let known = dense[index] { return known }
        if index >= dense.count {
            dense.append(contentsOf: repeatElement(nil, count: max(index + 1, dense.count * 2) - dense.count))
        }
        let id = make(key)
        dense[index] = id
        return id
    }

    private func make(_ key: Int64) -> UUID {
        UUIDVersion7.imported(storeUUID: storeUUID, rootEntity: root, primaryKey: key)
    }
}

/// A record ID as the store keeps it: 16 bytes.
private func uuidValue(_ uuid: UUID) -> SQLValue {
    withUnsafeBytes(of: uuid.uuid) { .blob(Data($0)) }
}
