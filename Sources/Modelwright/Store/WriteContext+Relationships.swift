import Foundation

// Relationships: linking, unlinking and ordering to-many relationships, one-to-one pairs kept in step, and the places of ordered relationships.
extension WriteContext {
    /// Adds `destination` to a to-many relationship of `source` (at the end, when it is ordered).
    /// For a relationship whose inverse is to-one, this sets the destination's inverse.
    ///
    /// ```swift
    /// try context.link(user.id, to: trip.id) { $0.favourites }
    /// ```
    public func link<Source: Record, Destination: RecordFields>(
        _ source: RecordID<Source>,
        to destination: RecordID<Destination.Target>,
        through relationship: (Source.Fields) -> ToMany<Destination>
    ) throws {
        try atomically {
            let (entity, description) = try toMany(Source.self, relationship)
            let target = try layout.entity(description.destination)
            switch try layout.storage(of: description, from: entity) {
            case .inverseColumn(let inverse, _):
                let current = try value(of: inverse, in: target, id: destination.uuid)
                guard current != source.sqlValue else { return }
                try execute(
                    "UPDATE \(quoted(target.table)) SET \(quoted(inverse)) = \(marker) WHERE \"id\" = \(marker)",
                    [source.sqlValue, destination.sqlValue],
                    entity: target
                )
                rowsUpdated([destination.uuid], columns: [inverse], in: target)
                try clearPosition(ofInverse: inverse, in: target, id: destination.uuid)
                try appendToOrderedRelationships(destination.uuid, entity: target)
            case .joinTable(let table, let sourceColumn, let targetColumn, let position):
                let columns = [sourceColumn, targetColumn] + (position.map { [$0] } ?? [])
                let values =
                    position.map { position in
                        "SELECT \(marker), \(marker), COALESCE(MAX(\(quoted(position))), -1) + 1 FROM \(quoted(table)) WHERE \(quoted(sourceColumn)) = \(marker)"
                    } ?? "VALUES (\(connection.dialect.parameters(2)))"
                let sql = connection.dialect.insertIgnoringConflicts(
                    into: quoted(table), columns: columns.map(quoted), values)
                let arguments =
                    position == nil
                    ? [source.sqlValue, destination.sqlValue]
                    : [source.sqlValue, destination.sqlValue, source.sqlValue]
                try execute(sql, arguments, entity: entity)
                if connection.changes > 0 {
                    changes.rowsInsertedOrDeleted(in: table)
                    history.updated([source.uuid], columns: [description.name], entity: entity.name)
                }
            }
        }
    }

    /// Removes `destination` from a to-many relationship of `source`. For a relationship whose
    /// inverse is to-one, this clears the destination's inverse (an error if it is required).
    public func unlink<Source: Record, Destination: RecordFields>(
        _ source: RecordID<Source>,
        from destination: RecordID<Destination.Target>,
        through relationship: (Source.Fields) -> ToMany<Destination>
    ) throws {
        try atomically {
            let (entity, description) = try toMany(Source.self, relationship)
            let target = try layout.entity(description.destination)
            switch try layout.storage(of: description, from: entity) {
            case .inverseColumn(let inverse, _):
                if let column = target.columns.first(where: { $0.name == inverse }), !column.isOptional {
                    throw StoreError.requiredRelationshipEmpty(entity: target.name, relationship: column.key)
                }
                try execute(
                    "UPDATE \(quoted(target.table)) SET \(quoted(inverse)) = NULL WHERE \"id\" = \(marker) AND \(quoted(inverse)) = \(marker)",
                    [destination.sqlValue, source.sqlValue],
                    entity: target
                )
                if connection.changes > 0 {
                    rowsUpdated([destination.uuid], columns: [inverse], in: target)
                }
                try clearPosition(ofInverse: inverse, in: target, id: destination.uuid)
            case .joinTable(let table, let sourceColumn, let targetColumn, _):
                try execute(
                    "DELETE FROM \(quoted(table)) WHERE \(quoted(sourceColumn)) = \(marker) AND \(quoted(targetColumn)) = \(marker)",
                    [source.sqlValue, destination.sqlValue],
                    entity: entity
                )
                if connection.changes > 0 {
                    changes.rowsInsertedOrDeleted(in: table)
                    history.updated([source.uuid], columns: [description.name], entity: entity.name)
                }
            }
        }
    }

    /// Puts the destinations of an ordered to-many relationship in the given order; destinations
    /// not listed keep their places after the listed ones.
    public func setOrder<Source: Record, Destination: RecordFields>(
        of source: RecordID<Source>,
        _ destinations: [RecordID<Destination.Target>],
        through relationship: (Source.Fields) -> ToMany<Destination>
    ) throws {
        try atomically {
            let (entity, description) = try toMany(Source.self, relationship)
            guard description.isOrdered else {
                throw StoreError.unsupportedQuery("'\(entity.name).\(description.name)' is not ordered")
            }
            let target = try layout.entity(description.destination)
            let offset = Int64(destinations.count)
            switch try layout.storage(of: description, from: entity) {
            case .inverseColumn(let inverse, let position?):
                try execute(
                    "UPDATE \(quoted(target.table)) SET \(quoted(position)) = \(quoted(position)) + \(marker) WHERE \(quoted(inverse)) = \(marker)",
                    [.integer(offset), source.sqlValue],
                    entity: target
                )
                for (index, destination) in destinations.enumerated() {
                    try execute(
                        "UPDATE \(quoted(target.table)) SET \(quoted(position)) = \(marker) WHERE \"id\" = \(marker) AND \(quoted(inverse)) = \(marker)",
                        [.integer(Int64(index)), destination.sqlValue, source.sqlValue],
                        entity: target
                    )
                }
                changes.columnsChanged([position], in: target.table)
                history.updated([source.uuid], columns: [description.name], entity: entity.name)
            case .joinTable(let table, let sourceColumn, let targetColumn, let position?):
                try execute(
                    "UPDATE \(quoted(table)) SET \(quoted(position)) = \(quoted(position)) + \(marker) WHERE \(quoted(sourceColumn)) = \(marker)",
                    [.integer(offset), source.sqlValue],
                    entity: entity
                )
                for (index, destination) in destinations.enumerated() {
                    try execute(
                        "UPDATE \(quoted(table)) SET \(quoted(position)) = \(marker) WHERE \(quoted(sourceColumn)) = \(marker) AND \(quoted(targetColumn)) = \(marker)",
                        [.integer(Int64(index)), source.sqlValue, destination.sqlValue],
                        entity: entity
                    )
                }
                changes.columnsChanged([position], in: table)
                history.updated([source.uuid], columns: [description.name], entity: entity.name)
            default:
                throw StoreError.unsupportedQuery(
                    "the order of '\(entity.name).\(description.name)' is kept by its other side")
            }
        }
    }

    /// Keeps both sides of a one-to-one relationship pointing at each other after a write of row
    /// `id`; `changed` lists the columns the write changed (`nil` for an insert: all of them).
    func syncOneToOne<Target: Record>(
        _ record: Target, id: UUID, entity: EntityLayout, changed: Set<String>?
    ) throws {
        for relationship in entity.relationships where relationship.cardinality == .toOne {
            let column = entity.columnName(relationship.name)
            guard let inverseName = relationship.inverse, changed?.contains(column) ?? true else { continue }
            let destination = try layout.entity(relationship.destination)
            guard destination.relationships.contains(where: { $0.name == inverseName && $0.cardinality == .toOne })
            else {
                continue
            }
            let target = try value(of: column, in: entity, id: id)
            let inverseColumn = destination.columnName(inverseName)
            let inverse = quoted(inverseColumn)
            let destinationTable = quoted(destination.table)
            // Whatever pointed back at this record no longer does…
            let released = try executeReturningIDs(
                "UPDATE \(destinationTable) SET \(inverse) = NULL WHERE \(inverse) = \(marker)", [id.sqlValue],
                entity: destination)
            rowsUpdated(released, columns: [inverseColumn], in: destination)
            guard let target else { continue }
            // …the new partner points back, and no other record of this entity keeps the partner.
            let paired = try executeReturningIDs(
                "UPDATE \(destinationTable) SET \(inverse) = \(marker) WHERE \"id\" = \(marker)",
                [id.sqlValue, target],
                entity: destination)
            rowsUpdated(paired, columns: [inverseColumn], in: destination)
            let unpaired = try executeReturningIDs(
                "UPDATE \(quoted(entity.table)) SET \(quoted(column)) = NULL "
                    + "WHERE \(quoted(column)) = \(marker) AND \"id\" <> \(marker)",
                [target, id.sqlValue],
                entity: entity
            )
            rowsUpdated(unpaired, columns: [column], in: entity)
        }
    }

    private func toMany<Source: Record, Destination: RecordFields>(
        _ source: Source.Type,
        _ relationship: (Source.Fields) -> ToMany<Destination>
    ) throws -> (EntityLayout, RelationshipDescription) {
        let entity = try layout.entity(Source.entityName)
        let name = relationship(Source.Fields(path: .root)).path.relationship
        guard let description = entity.relationships.first(where: { $0.name == name && $0.cardinality == .toMany })
        else {
            throw StoreError.unknownProperty(entity: entity.name, property: name)
        }
        return (entity, description)
    }

    /// Gives rows that belong to an ordered relationship but have no place yet the last place.
    func appendToOrderedRelationships(_ id: UUID, entity: EntityLayout) throws {
        let table = quoted(entity.table)
        for column in entity.positionColumns {
            let position = quoted(column)
            let inverse = quoted(Self.inverse(ofPosition: column))
            try execute(
                "UPDATE \(table) SET \(position) = (SELECT COALESCE(MAX(other.\(position)), -1) + 1 FROM \(table) other "
                    + "WHERE other.\(inverse) = \(table).\(inverse) AND other.\"id\" <> \(table).\"id\") "
                    + "WHERE \"id\" = \(marker) AND \(inverse) IS NOT NULL AND \(position) IS NULL",
                [id.sqlValue],
                entity: entity
            )
            if connection.changes > 0 {
                changes.columnsChanged([column], in: entity.table)
                history.updated([id], columns: [column], entity: entity.name)
            }
        }
    }

    func clearPosition(ofInverse inverse: String, in entity: EntityLayout, id: UUID) throws {
        let column = ToManyStorage.positionColumn(forInverse: inverse)
        guard entity.positionColumns.contains(column) else { return }
        try clearPosition(column, in: entity, id: id)
    }

    /// Empties one row's position column, when it held a place.
    func clearPosition(_ column: String, in entity: EntityLayout, id: UUID) throws {
        try execute(
            "UPDATE \(quoted(entity.table)) SET \(quoted(column)) = NULL WHERE \"id\" = \(marker) AND \(quoted(column)) IS NOT NULL",
            [id.sqlValue],
            entity: entity)
        if connection.changes > 0 {
            changes.columnsChanged([column], in: entity.table)
            history.updated([id], columns: [column], entity: entity.name)
        }
    }

    /// The to-one relationship a position column goes with.
    static func inverse(ofPosition column: String) -> String {
        String(column.dropLast("._position".count))
    }
}
