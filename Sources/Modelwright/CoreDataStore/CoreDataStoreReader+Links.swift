import Foundation

// The links of a Core Data store: each to-many relationship's pairs, read from a join table or a
// foreign-key column, and written where the Modelwright store keeps them.
extension CoreDataStoreReader {
    /// A to-many relationship whose links are read: the entity declaring it, and the root
    /// entities of its two ends, whose `Z_PK`s the links pair.
    struct LinkedRelationship {
        var entity: String
        var relationship: CoreDataStoreModel.Relationship
        var sourceRoot: String
        var destinationRoot: String
    }

    /// The `(source, destination, order)` keys of a relationship's links, ordered per source.
    typealias LinkPairs = [(source: Int64, destination: Int64, order: Int64?)]

    /// Calls `body` with every to-many relationship imported and its links, each source's links in
    /// their order (ascending `Z_FOK_`, then `Z_PK`) when the relationship is ordered.
    func readLinks(_ body: (LinkedRelationship, LinkPairs) throws -> Void) throws {
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

    /// The `Z_ENT` numbers of `entity` and every entity below it.
    func subentityIDs(of entity: CoreDataStoreLayout.Entity) -> [Int] {
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
    func write(
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
}
