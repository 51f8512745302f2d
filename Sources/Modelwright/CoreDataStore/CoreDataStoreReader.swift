import Foundation

/// Reads a Core Data store's objects and links by the layout of the version that wrote it, and
/// writes them into a new Modelwright store of the schema that version was imported as.
struct CoreDataStoreReader {
    private let source: CoreDataStoreSource
    private let layout: CoreDataStoreLayout
    private let schema: SchemaDescription
    private let schemaLayout: SchemaLayout
    private let ids: ImportedIDs

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

    // MARK: - Links

    /// A to-many relationship whose links are read: the entity declaring it, and the root
    /// entities of its two ends, whose `Z_PK`s the links pair.
    private struct LinkedRelationship {
        var entity: String
        var relationship: CoreDataStoreModel.Relationship
        var sourceRoot: String
        var destinationRoot: String
    }

    /// The `(source, destination, order)` keys of a relationship's links, ordered per source.
    private typealias LinkPairs = [(source: Int64, destination: Int64, order: Int64?)]

    /// Calls `body` with every to-many relationship imported and its links, each source's links in
    /// their order (ascending `Z_FOK_`, then `Z_PK`) when the relationship is ordered.
    private func readLinks(_ body: (LinkedRelationship, LinkPairs) throws -> Void) throws {
        let tables = try CoreDataStoreSource.tableNames(on: source.connection)
        for (name, entity) in layout.entities.sorted(by: { $0.value.id < $1.value.id }) {
            guard entity.entity.schemaName != nil else { continue }
            for relationship in entity.entity.relationships
            where relationship.isToMany && !relationship.isTransient && relationship.schemaName != nil {
                guard let destination = layout.entities[relationship.destination],
                    destination.entity.schemaName != nil,
                    let storage = layout.storage(of: relationship, owner: name)
                else { continue }
                let pairs: [(source: Int64, destination: Int64, order: Int64?)]
                switch storage {
                case .foreignKey:
                    continue
                case .inverseForeignKey(let inverse):
                    guard let toOne = destination.relationships.first(where: { $0.relationship.name == inverse }),
                        case .foreignKey(let foreignKey, _, let order)? = layout.storage(
                            of: toOne.relationship, owner: toOne.owner)
                    else { continue }
                    pairs = try select(
                        table: destination.table, source: foreignKey, destination: "Z_PK",
                        order: relationship.isOrdered ? order : nil, entities: subentityIDs(of: destination),
                        tables: tables)
                case .virtualForeignKey(let column, let order):
                    pairs = try select(
                        table: destination.table, source: column, destination: "Z_PK", order: order,
                        entities: subentityIDs(of: destination), tables: tables)
                case .joinTable(let candidates, let sourceColumn, let destinationColumn, let order):
                    guard let table = candidates.first(where: tables.contains) else {
                        throw CoreDataStoreImportError.layoutMismatch(
                            path: source.path,
                            problem:
                                "the join table of '\(name).\(relationship.name)' is missing (looked for \(candidates.joined(separator: " and ")))"
                        )
                    }
                    pairs = try select(
                        table: table, source: sourceColumn, destination: destinationColumn, order: order,
                        entities: nil, tables: tables)
                }
                try body(
                    LinkedRelationship(
                        entity: name, relationship: relationship, sourceRoot: entity.root,
                        destinationRoot: destination.root),
                    pairs)
            }
        }
    }

    private func subentityIDs(of entity: CoreDataStoreLayout.Entity) -> [Int] {
        layout.entities.values.filter { candidate in
            var current: String? = candidate.entity.name
            var seen: Set<String> = []
            while let name = current, seen.insert(name).inserted {
                if name == entity.entity.name { return true }
                current = layout.entities[name]?.entity.parent
            }
            return false
        }.map(\.id).sorted()
    }

    /// The `(source, destination, order)` triples of a link table or column, ordered per source.
    private func select(
        table: String, source sourceColumn: String, destination destinationColumn: String, order: String?,
        entities: [Int]?, tables: Set<String>
    ) throws -> [(source: Int64, destination: Int64, order: Int64?)] {
        let columns = try self.source.columns(of: table)
        for column in [sourceColumn, destinationColumn] + (order.map { [$0] } ?? []) where !columns.contains(column) {
            throw CoreDataStoreImportError.layoutMismatch(
                path: self.source.path, problem: "column \(column) of table \(table) is missing")
        }
        var sql =
            "SELECT \(quoted(sourceColumn)), \(quoted(destinationColumn)), \(order.map(quoted) ?? "NULL") FROM \(quoted(table)) WHERE \(quoted(sourceColumn)) IS NOT NULL"
        if let entities { sql += " AND Z_ENT IN (\(entities.map(String.init).joined(separator: ", ")))" }
        sql += " ORDER BY 1, 3, 2"
        let statement = try self.source.connection.statement(sql)
        defer { statement.reset() }
        var result: [(source: Int64, destination: Int64, order: Int64?)] = []
        while try statement.step() {
            result.append(
                (statement.int64(0), statement.int64(1), statement.isNull(2) ? nil : statement.int64(2)))
        }
        return result
    }

    /// Writes a relationship's links where the Modelwright store keeps them, through one statement:
    /// a position for an ordered one-to-many (the to-one column itself was written with the row),
    /// a join-table row otherwise. The pairs come ordered per source, so a destination's place is
    /// its index in its source's run.
    private func write(
        _ pairs: LinkPairs, of linked: LinkedRelationship, on connection: SQLiteConnection
    ) throws {
        guard let entityName = layout.entities[linked.entity]?.entity.schemaName,
            let entity = schemaLayout.entities[entityName],
            let relationship = entity.relationships.first(where: { $0.name == linked.relationship.schemaName }),
            let destination = schemaLayout.entities[relationship.destination]
        else { return }
        let statement: SQLiteStatement
        let sourceParameter: Int32?
        let destinationParameter: Int32
        let positionParameter: Int32?
        switch try schemaLayout.storage(of: relationship, from: entity) {
        case .inverseColumn(_, let positionColumn?):
            statement = try connection.prepare(
                "UPDATE \(quoted(destination.table)) SET \(quoted(positionColumn)) = \(connection.dialect.parameter(1)) WHERE \"id\" = \(connection.dialect.parameter(2))"
            )
            (sourceParameter, destinationParameter, positionParameter) = (nil, 2, 1)
        case .inverseColumn(_, nil):
            return
        case .joinTable(let table, let sourceColumn, let destinationColumn, let positionColumn):
            // A pair's table belongs to one side; the other side's links are the same rows.
            guard sourceColumn == "source" else { return }
            var columns = [quoted(sourceColumn), quoted(destinationColumn)]
            if let positionColumn { columns.append(quoted(positionColumn)) }
            let dialect = connection.dialect
            statement = try connection.prepare(
                dialect.insertIgnoringConflicts(
                    into: quoted(table), columns: columns, "VALUES (\(dialect.parameters(columns.count)))"))
            (sourceParameter, destinationParameter, positionParameter) = (1, 2, positionColumn == nil ? nil : 3)
        }
        let sources = ids.table(linked.sourceRoot)
        let destinations = ids.table(linked.destinationRoot)
        var runSource: Int64?
        var position: Int64 = 0
        for pair in pairs {
            if pair.source != runSource { (runSource, position) = (pair.source, 0) }
            if let sourceParameter { statement.bind(sources.uuid(pair.source), sourceParameter) }
            statement.bind(destinations.uuid(pair.destination), destinationParameter)
            if let positionParameter { statement.bind(.integer(position), positionParameter) }
            try statement.run()
            statement.reset()
            position += 1
        }
    }

    // MARK: - Verification

    /// Checks the store at `path` (or on `connection`): every row of every entity readable by its
    /// record, every link resolving, and, when given, the row count of each entity.
    static func verify(at path: String, schema: SchemaDescription, expectedRows: [String: Int]?) throws {
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        try verify(on: connection, layout: try SchemaLayout(schema), expectedRows: expectedRows)
    }

    private static func verify(
        on connection: SQLiteConnection, layout: SchemaLayout, expectedRows: [String: Int]?
    ) throws {
        var problems: [String] = []
        for (name, entity) in layout.entities.sorted(by: { $0.key < $1.key }) {
            // One pass over the entity's rows counts them and the unreadable values of every column.
            let own = entity.hasDiscriminator ? " WHERE \"_entity\" = \(SQLSyntax.string(name))" : ""
            let sums = entity.columns.map { "COALESCE(SUM(\(StoredValues.unreadable($0))), 0)" }
            let statement = try connection.statement(
                "SELECT \((["COUNT(*)"] + sums).joined(separator: ", ")) FROM \(quoted(entity.table))\(own)")
            defer { statement.reset() }
            guard try statement.step() else { continue }
            if let expected = expectedRows?[name], statement.int64(0) != Int64(expected) {
                problems.append("'\(name)' has \(statement.int64(0)) rows, where \(expected) were read")
            }
            for (index, column) in entity.columns.enumerated() where statement.int64(Int32(index + 1)) > 0 {
                problems.append("\(statement.int64(Int32(index + 1))) rows of '\(name)' cannot read '\(column.key)'")
            }
        }
        let statement = try connection.statement(connection.dialect.foreignKeyViolations(in: nil))
        defer { statement.reset() }
        var dangling: [String: Int] = [:]
        while try statement.step() { dangling[statement.string(0), default: 0] += 1 }
        for (table, count) in dangling.sorted(by: { $0.key < $1.key }) {
            problems.append("\(count) links in table \(table) lead to no row")
        }
        if !problems.isEmpty { throw CoreDataStoreImportError.verificationFailed(problems: problems) }
    }
}

/// The IDs of imported objects, each computed once per root table: a link names two objects,
/// and hashing is most of an ID's cost.
private final class ImportedIDs {
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
private final class ImportedTableIDs {
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
