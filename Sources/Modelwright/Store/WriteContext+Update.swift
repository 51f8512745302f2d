import Foundation

// Updating records: one record by its ID, and every record a request matches (batch update).
extension WriteContext {
    /// Replaces the stored values of an existing record. Writing the values it already has changes
    /// nothing, and observers do not hear of it.
    public func update<Target: Record>(_ record: Target) throws {
        try atomically {
            try update(record, storedAs: record.id.uuid, entity: try writableEntity(Target.self))
        }
    }

    /// Writes the record's values into the stored row `id`, and keeps one-to-one partners and
    /// ordered relationships in step; only the columns whose values differ count as changes.
    func update<Target: Record>(_ record: Target, storedAs id: UUID, entity: EntityLayout) throws {
        guard let changed = try changedColumns(record, storedAs: id, entity: entity) else {
            throw StoreError.recordNotFound(entity: entity.name, id: id.uuidString)
        }
        guard !changed.isEmpty else { return }
        let ownersBefore = try entity.positionColumns.map {
            try value(of: Self.inverse(ofPosition: $0), in: entity, id: id)
        }
        let assignments = entity.columns.map { "\(quoted($0.name)) = \(marker)" }.joined(separator: ", ")
        try run("UPDATE \(quoted(entity.table)) SET \(assignments) WHERE \"id\" = \(marker)", entity: entity) {
            statement in
            var row = RowEncoder(statement: statement, firstIndex: 1, columns: entity.columns)
            try record.encode(to: &row)
            statement.bind(id, row.nextIndex)
        }
        rowsUpdated([id], columns: changed, in: entity)
        try syncOneToOne(record, id: id, entity: entity, changed: changed)
        // A record that moved to another owner goes to the end of that owner's ordered list.
        for (column, before) in zip(entity.positionColumns, ownersBefore) {
            let after = try value(of: Self.inverse(ofPosition: column), in: entity, id: id)
            if after != before {
                try clearPosition(column, in: entity, id: id)
            }
        }
        try appendToOrderedRelationships(id, entity: entity)
    }

    /// The columns whose stored values in row `id` differ from the record's, or `nil` when this
    /// entity has no such row.
    private func changedColumns<Target: Record>(
        _ record: Target, storedAs id: UUID, entity: EntityLayout
    ) throws -> Set<String>? {
        let dialect = connection.dialect
        let tests =
            entity.columns.isEmpty
            ? "0" : entity.columns.map { dialect.differs(quoted($0.name), dialect.parameter) }.joined(separator: ", ")
        var sql = "SELECT \(tests) FROM \(quoted(entity.table)) WHERE \"id\" = \(marker)"
        if let discriminator = entity.discriminatorSQL(alias: quoted(entity.table)) {
            sql += " AND \(discriminator)"
        }
        let statement = try connection.statement(sql)
        defer { statement.reset() }
        try bindColumns(of: record, entity: entity, to: statement)
        statement.bind(id, Int32(entity.columns.count + 1))
        guard try statement.step() else { return nil }
        let changed = entity.columns.indices.filter { statement.int64(Int32($0)) != 0 }
        return Set(changed.map { entity.columns[$0].name })
    }

    /// Sets fields of every record the request matches in one SQL statement, as Core Data's
    /// `NSBatchUpdateRequest` does; returns how many records changed (a record that already held
    /// the new values does not count, and observers do not hear of it). Records already fetched
    /// keep their old values.
    @discardableResult
    public func batchUpdate<Target: Record>(
        _ request: FetchRequest<Target>,
        set assignments: (Target.Fields) throws -> [FieldAssignment]
    ) throws -> Int {
        return try atomically {
            let entity = try layout.entity(Target.entityName)
            let values = try assignments(Target.Fields(path: .root))
            guard !values.isEmpty else { return 0 }
            for value in values
            where !value.path.hops.isEmpty || entity.column(forKey: value.path.column) == nil {
                throw StoreError.unknownProperty(entity: entity.name, property: value.path.keyPath)
            }
            let (selection, selectionArguments) = try select("t0.\"id\"", request, entity: entity, defaultSort: false)
            let columns = values.map { entity.columnName($0.path.column) }
            let setters = columns.map { "\(quoted($0)) = \(marker)" }.joined(separator: ", ")
            let dialect = connection.dialect
            let differs = columns.map { dialect.differs(quoted($0), dialect.parameter) }.joined(separator: " OR ")
            let sql =
                "UPDATE \(quoted(entity.table)) SET \(setters) WHERE \"id\" IN (\(selection)) AND (\(differs))"
            let arguments = values.map(\.value) + selectionArguments + values.map(\.value)
            let ids = try executeReturningIDs(sql, arguments, entity: entity)
            rowsUpdated(ids, columns: columns, in: entity)
            return ids.count
        }
    }
}
