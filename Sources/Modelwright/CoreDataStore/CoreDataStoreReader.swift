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
        try readObjects { entity, _, _ in rows[entity.entity.name, default: 0] += 1 }
        try readLinks { _ in links += 1 }
        return (rows, links)
    }

    /// Writes every object and link into the empty store at `path`, in one transaction that
    /// commits only when the row counts, the values and the links verify.
    func write(to path: String) throws -> (rows: [String: Int], links: Int) {
        try checkKeys()
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        var rows: [String: Int] = [:]
        var links = 0
        try connection.inTransaction(.immediate) {
            try readObjects { entity, values, _ in
                guard let schemaName = entity.entity.schemaName else { return }
                try insert(values, into: schemaName, on: connection)
                rows[entity.entity.name, default: 0] += 1
            }
            // Links come ordered per source, so a destination's place is its index in the run.
            var run: (relationship: String, source: UUID, next: Int64)?
            try readLinks { link in
                links += 1
                let key = "\(link.entity).\(link.relationship.name)"
                if run?.relationship != key || run?.source != link.source { run = (key, link.source, 0) }
                try write(link, position: run?.next ?? 0, on: connection)
                run?.next += 1
            }
            var expected = schemaLayout.entities.mapValues { _ in 0 }
            for (name, count) in rows {
                if let schemaName = layout.entities[name]?.entity.schemaName { expected[schemaName] = count }
            }
            try Self.verify(on: connection, layout: schemaLayout, expectedRows: expected)
        }
        return (rows, links)
    }

    /// Inserts a row of `entity`, as ``MigrationContext/insert(into:values:)`` does, through a
    /// statement prepared once per entity and set of keys: an import inserts every row of a store.
    private func insert(_ values: [String: SQLValue], into entity: String, on connection: SQLiteConnection) throws {
        let entityLayout = try schemaLayout.entity(entity)
        var values = values
        if entityLayout.hasDiscriminator { values["_entity"] = .text(entity) }
        let names = values.keys.sorted()
        let columns = names.map { quoted(entityLayout.columnName($0)) }.joined(separator: ", ")
        let statement = try connection.statement(
            "INSERT INTO \(quoted(entityLayout.table)) (\(columns)) VALUES (\(names.map { _ in "?" }.joined(separator: ", ")))"
        )
        defer { statement.reset() }
        for (index, name) in names.enumerated() { statement.bind(values[name] ?? .null, Int32(index + 1)) }
        try statement.run()
    }

    // MARK: - Objects

    /// Calls `body` with every object's entity, its values by schema key (the ID and to-one links
    /// included), and its `Z_PK`, table by table.
    private func readObjects(
        _ body: (CoreDataStoreLayout.Entity, [String: SQLValue], Int64) throws -> Void
    ) throws {
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
            var plans: [Int: (CoreDataStoreLayout.Entity, [ValuePlan])] = [:]
            while try statement.step() {
                let key = statement.int64(primaryKey)
                let entityID = Int(statement.int64(entityColumn))
                if plans[entityID] == nil {
                    guard let name = layout.names[entityID], let entity = layout.entities[name], entity.root == root
                    else {
                        throw CoreDataStoreImportError.layoutMismatch(
                            path: source.path,
                            problem:
                                "row Z_PK \(key) of \(rootEntity.table) has Z_ENT \(entityID), which is not an entity of this table"
                        )
                    }
                    plans[entityID] = (entity, try valuePlans(for: entity, index: index))
                }
                guard let (entity, entityPlans) = plans[entityID] else { continue }
                var values: [String: SQLValue] = [
                    "id": uuidValue(
                        ids.id(root, key))
                ]
                for plan in entityPlans {
                    values[plan.key] = try plan.read(statement, key, entity.entity.name)
                }
                try body(entity, values, key)
            }
        }
    }

    /// Checks what SQLite would otherwise report as a bare constraint error, or not at all: a
    /// `Z_PK` held by two rows of a table, and a to-one key naming a row of an entity other than
    /// the relationship's destination (or its subentities), checked by that row's `Z_ENT`.
    private func checkKeys() throws {
        let tables = try CoreDataStoreSource.tableNames(on: source.connection)
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
                ValuePlan(key: key) { statement, _, _ in
                    guard !statement.isNull(position) else { return .null }
                    return uuidValue(
                        ids.id(destination.root, statement.int64(position)))
                })
        }
        return plans
    }

    // MARK: - Links

    /// One to-many link to write: its Core Data relationship, the two objects, and the order key.
    private struct Link {
        var entity: String
        var relationship: CoreDataStoreModel.Relationship
        var source: UUID
        var destination: UUID
        var order: Int64?
        var sourceKey: Int64
        var destinationKey: Int64
    }

    /// Calls `body` with every to-many link each imported relationship holds, each source's links in
    /// their order (ascending `Z_FOK_`, then `Z_PK`) when the relationship is ordered.
    private func readLinks(_ body: (Link) throws -> Void) throws {
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
                for pair in pairs {
                    try body(
                        Link(
                            entity: name, relationship: relationship,
                            source: ids.id(entity.root, pair.source),
                            destination: ids.id(destination.root, pair.destination),
                            order: pair.order, sourceKey: pair.source, destinationKey: pair.destination))
                }
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

    /// Writes one link where the Modelwright store keeps it: a position for an ordered one-to-many
    /// (the to-one column itself was written with the row), a join-table row otherwise.
    private func write(_ link: Link, position: Int64, on connection: SQLiteConnection) throws {
        guard let entityName = layout.entities[link.entity]?.entity.schemaName,
            let entity = schemaLayout.entities[entityName],
            let relationship = entity.relationships.first(where: { $0.name == link.relationship.schemaName }),
            let destination = schemaLayout.entities[relationship.destination]
        else { return }
        let statement: SQLiteStatement
        switch try schemaLayout.storage(of: relationship, from: entity) {
        case .inverseColumn(_, let positionColumn?):
            statement = try connection.statement(
                "UPDATE \(quoted(destination.table)) SET \(quoted(positionColumn)) = \(connection.dialect.parameter) WHERE \"id\" = \(connection.dialect.parameter)"
            )
            statement.bind(.integer(position), 1)
            statement.bind(uuidValue(link.destination), 2)
        case .inverseColumn(_, nil):
            return
        case .joinTable(let table, let sourceColumn, let destinationColumn, let positionColumn):
            // A pair's table belongs to one side; the other side's links are the same rows.
            guard sourceColumn == "source" else { return }
            var columns = [quoted(sourceColumn), quoted(destinationColumn)]
            if let positionColumn { columns.append(quoted(positionColumn)) }
            let dialect = connection.dialect
            statement = try connection.statement(
                dialect.insertIgnoringConflicts(
                    into: quoted(table), columns: columns, "VALUES (\(dialect.parameters(columns.count)))"))
            statement.bind(uuidValue(link.source), 1)
            statement.bind(uuidValue(link.destination), 2)
            if positionColumn != nil { statement.bind(.integer(position), 3) }
        }
        defer { statement.reset() }
        try statement.run()
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
            let own =
                entity.hasDiscriminator ? " WHERE \"_entity\" = \(SQLSyntax.string(name))" : ""
            if let expected = expectedRows?[name] {
                let count = try scalar("SELECT COUNT(*) FROM \(quoted(entity.table))\(own)", on: connection)
                if count != Int64(expected) {
                    problems.append("'\(name)' has \(count) rows, where \(expected) were read")
                }
            }
            for column in entity.columns {
                let unreadable = try scalar(
                    "SELECT COUNT(*) FROM \(quoted(entity.table))\(own.isEmpty ? " WHERE" : own + " AND") \(StoredValues.unreadable(column)) = 1",
                    on: connection)
                if unreadable > 0 {
                    problems.append("\(unreadable) rows of '\(name)' cannot read '\(column.key)'")
                }
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

    private static func scalar(_ sql: String, on connection: SQLiteConnection) throws -> Int64 {
        let statement = try connection.statement(sql)
        defer { statement.reset() }
        guard try statement.step() else { return 0 }
        return statement.int64(0)
    }
}

/// The IDs of imported objects, each computed once: a link names two, and hashing is most of an
/// ID's cost.
private final class ImportedIDs {
    private let storeUUID: String
    private var known: [String: [Int64: UUID]] = [:]

    init(storeUUID: String) {
        self.storeUUID = storeUUID
    }

    func id(_ root: String, _ key: Int64) -> UUID {
        if let id = known[root]?[key] { return id }
        let id = UUIDVersion7.imported(storeUUID: storeUUID, rootEntity: root, primaryKey: key)
        known[root, default: [:]][key] = id
        return id
    }
}

/// A record ID as the store keeps it: 16 bytes.
private func uuidValue(_ uuid: UUID) -> SQLValue {
    withUnsafeBytes(of: uuid.uuid) { .blob(Data($0)) }
}
