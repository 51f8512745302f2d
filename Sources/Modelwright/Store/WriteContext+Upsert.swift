import Foundation

// Upserting records: insert, or update the stored record matched by ID or by a uniqueness constraint.
extension WriteContext {
    /// Inserts the record, or updates the stored record it matches: the one with its ID, or else
    /// the one with the same values for a uniqueness constraint of the entity (a feed refresh keyed
    /// by `guid`, say). A matched record keeps its stored ID, which this returns. A record that
    /// matches different stored records (by ID and by `username`, or by two constraints) is
    /// refused with ``StoreError/ambiguousUpsert(entity:matches:)``.
    ///
    /// ```swift
    /// let stored = try context.upsert(User(username: "ines", rating: 5))  // updates "ines" if present
    /// ```
    ///
    /// A constraint with a missing (nil) value in the record matches nothing, as SQLite's unique
    /// indexes let any number of rows leave a constrained attribute empty.
    @discardableResult
    public func upsert<Target: Record>(_ record: Target) throws -> Target.ID {
        try atomically { try upsertOne(record, entity: try writableEntity(Target.self)) }
    }

    /// Upserts many records, in order, as ``upsert(_:)`` does each; a later record can update one
    /// inserted earlier in the batch. Returns the stored ID of each, in order. One failure undoes
    /// the whole batch.
    @discardableResult
    public func batchUpsert<Target: Record>(_ records: some Sequence<Target>) throws -> [Target.ID] {
        try atomically {
            let entity = try writableEntity(Target.self)
            return try records.map { try upsertOne($0, entity: entity) }
        }
    }

    private func upsertOne<Target: Record>(_ record: Target, entity: EntityLayout) throws -> Target.ID {
        let matches = try storedMatches(of: record, entity: entity)
        let ids = Set(matches.map(\.id))
        guard let id = ids.first else {
            try insertNew(record, entity: entity)
            return record.id
        }
        guard ids.count == 1 else {
            throw StoreError.ambiguousUpsert(entity: entity.name, matches: matches.map(\.key))
        }
        try update(record, storedAs: id, entity: entity)
        return RecordID(id)
    }

    /// The stored rows a record matches, each with what it matched on: `["id"]` or a uniqueness
    /// constraint's attributes.
    private func storedMatches<Target: Record>(
        of record: Target, entity: EntityLayout
    ) throws -> [(key: [String], id: UUID)] {
        let keys = [["id"]] + uniquenessConstraints(coveredBy: entity)
        let dialect = connection.dialect
        let values = entity.columns.map { "\(dialect.parameter(typed: $0.storage)) AS \(quoted($0.name))" }
            .joined(separator: ", ")
        let selects = keys.indices.map { index in
            let tests = keys[index].map { key in
                let column = quoted(entity.columnName(key))
                return "t.\(column) = \"new\".\(column)"
            }.joined(separator: " AND ")
            return "SELECT \(index), t.\"id\" FROM \(quoted(entity.table)) t, \"new\" WHERE \(tests)"
        }
        let sql =
            "WITH \"new\" AS (SELECT \(dialect.parameter(typed: .uuid)) AS \"id\"\(values.isEmpty ? "" : ", " + values)) "
            + selects.joined(separator: " UNION ALL ")
        let statement = try connection.statement(sql)
        defer { statement.reset() }
        statement.bind(record.id.uuid, 1)
        try bindColumns(of: record, entity: entity, to: statement, firstIndex: 2)
        var matches: [(index: Int, id: UUID)] = []
        while try statement.step() {
            if let id = statement.uuid(1) { matches.append((Int(statement.int64(0)), id)) }
        }
        return matches.sorted { $0.index < $1.index }.map { (keys[$0.index], $0.id) }
    }

    /// The uniqueness constraints on the entity's table whose columns the entity's records all have.
    func uniquenessConstraints(coveredBy entity: EntityLayout) -> [[String]] {
        let columns = Set(entity.columns.map(\.key))
        let constraints = layout.schema.entities
            .filter { layout.entities[$0.name]?.table == entity.table }
            .flatMap(\.uniquenessConstraints)
            .filter { !$0.isEmpty && $0.allSatisfy(columns.contains) }
        var seen: Set<[String]> = []
        return constraints.filter { seen.insert($0).inserted }
    }
}
