import Foundation

// Deleting records: one record with its delete rules, and every record a request matches (batch delete).
extension WriteContext {
    /// Deletes the record with this ID, applying every delete rule: `cascade` deletes what its
    /// relationship reaches, `nullify` clears the inverse, `deny` refuses while the relationship
    /// reaches anything, `noAction` leaves the other side as it is.
    public func delete<Target: Record>(_ id: RecordID<Target>) throws {
        try delete(id.uuid, of: Target.entityName)
    }

    /// Deletes row `id` of the entity named `entityName` (or of one of its subentities), applying
    /// every delete rule: ``delete(_:)-(RecordID<Target>)`` for code that has no record type.
    func delete(_ id: UUID, of entityName: String) throws {
        try atomically {
            let entity = try layout.entity(entityName)
            var deleted: Set<UUID> = []
            guard try deleteRow(id, declaredAs: entity, deleted: &deleted) else {
                throw StoreError.recordNotFound(entity: entity.name, id: id.uuidString)
            }
        }
    }

    /// Deletes a record (by its ID), applying every delete rule.
    public func delete<Target: Record>(_ record: Target) throws {
        try delete(record.id)
    }

    /// Deletes every record the request matches in one SQL statement, as Core Data's
    /// `NSBatchDeleteRequest` does: delete rules are not applied, but foreign keys are still
    /// checked when the transaction commits. Returns how many records were deleted.
    @discardableResult
    public func batchDelete<Target: Record>(_ request: FetchRequest<Target>) throws -> Int {
        return try atomically {
            let entity = try layout.entity(Target.entityName)
            let (selection, arguments) = try select("t0.\"id\"", request, entity: entity, defaultSort: false)
            let ids = try executeReturningIDs(
                "DELETE FROM \(quoted(entity.table)) WHERE \"id\" IN (\(selection))", arguments,
                entity: entity)
            if !ids.isEmpty { try rowsDeleted(ids, from: entity) }
            return ids.count
        }
    }

    /// Deletes one row after applying the delete rules of the entity it really is; `false` when
    /// no such row exists.
    private func deleteRow(_ id: UUID, declaredAs declared: EntityLayout, deleted: inout Set<UUID>) throws -> Bool {
        guard deleted.insert(id).inserted else { return true }
        guard let entity = try actualEntity(of: id, in: declared) else { return false }
        for relationship in entity.relationships {
            let destination = try layout.entity(relationship.destination)
            let reached = try reachedIDs(relationship, from: id, entity: entity, destination: destination)
            guard !reached.isEmpty else { continue }
            switch relationship.deleteRule {
            case .deny:
                throw StoreError.deleteDenied(entity: entity.name, relationship: relationship.name)
            case .cascade:
                for target in reached where !deleted.contains(target) {
                    _ = try deleteRow(target, declaredAs: destination, deleted: &deleted)
                }
            case .nullify:
                try nullifyInverse(of: relationship, at: id, destination: destination, deleted: deleted)
            case .noAction:
                break
            }
        }
        try execute("DELETE FROM \(quoted(entity.table)) WHERE \"id\" = \(marker)", [id.sqlValue], entity: entity)
        try rowsDeleted([id], from: entity)
        return true
    }

    /// The layout of the entity a row really belongs to (a subentity of `declared`, possibly).
    private func actualEntity(of id: UUID, in declared: EntityLayout) throws -> EntityLayout? {
        let column = declared.hasDiscriminator ? "\"_entity\"" : "\"id\""
        let statement = try connection.statement(
            "SELECT \(column) FROM \(quoted(declared.table)) WHERE \"id\" = \(marker)")
        defer { statement.reset() }
        statement.bind(id, 1)
        guard try statement.step() else { return nil }
        return declared.hasDiscriminator ? try layout.entity(statement.string(0)) : declared
    }

    /// The IDs a relationship of one row reaches.
    private func reachedIDs(
        _ relationship: RelationshipDescription,
        from id: UUID,
        entity: EntityLayout,
        destination: EntityLayout
    ) throws -> [UUID] {
        let sql: String
        if relationship.cardinality == .toOne {
            let column = quoted(entity.columnName(relationship.name))
            sql = "SELECT \(column) FROM \(quoted(entity.table)) WHERE \"id\" = \(marker) AND \(column) IS NOT NULL"
        } else {
            switch try layout.storage(of: relationship, from: entity) {
            case .inverseColumn(let inverse, _):
                sql = "SELECT \"id\" FROM \(quoted(destination.table)) WHERE \(quoted(inverse)) = \(marker)"
            case .joinTable(let table, let source, let target, _):
                sql = "SELECT \(quoted(target)) FROM \(quoted(table)) WHERE \(quoted(source)) = \(marker)"
            }
        }
        let statement = try connection.statement(sql)
        defer { statement.reset() }
        statement.bind(id, 1)
        var ids: [UUID] = []
        while try statement.step() {
            if let uuid = statement.uuid(0) { ids.append(uuid) }
        }
        return ids
    }

    /// Clears the inverse column that points back at a row being deleted.
    private func nullifyInverse(
        of relationship: RelationshipDescription,
        at id: UUID,
        destination: EntityLayout,
        deleted: Set<UUID>
    ) throws {
        guard let inverseName = relationship.inverse,
            let inverse = destination.relationships.first(where: { $0.name == inverseName }),
            inverse.cardinality == .toOne
        else { return }
        if !inverse.isOptional {
            // Rows about to be deleted in the same cascade do not count.
            let statement = try connection.statement(
                "SELECT \"id\" FROM \(quoted(destination.table)) WHERE \(quoted(destination.columnName(inverseName))) = \(marker)"
            )
            defer { statement.reset() }
            statement.bind(id, 1)
            while try statement.step() {
                if let other = statement.uuid(0), !deleted.contains(other) {
                    throw StoreError.requiredRelationshipEmpty(entity: destination.name, relationship: inverseName)
                }
            }
            return
        }
        let column = destination.columnName(inverseName)
        let released = try executeReturningIDs(
            "UPDATE \(quoted(destination.table)) SET \(quoted(column)) = NULL WHERE \(quoted(column)) = \(marker)",
            [id.sqlValue],
            entity: destination
        )
        rowsUpdated(released, columns: [column], in: destination)
    }
}
