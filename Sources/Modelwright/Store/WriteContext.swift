import Foundation

/// What a `performAndSave` closure writes through: everything a ``ReadContext`` reads, plus
/// inserts, updates, upserts, deletes with their delete rules, and batch operations.
///
/// There is no save call: the transaction commits when the closure returns and rolls back,
/// leaving the store as it was, when it throws. Each operation is atomic on its own too: one that
/// throws (a delete whose cascade reaches a `deny` rule, a batch with a duplicate) leaves nothing
/// of itself behind, so a closure that catches the error and goes on commits only what succeeded.
/// Unless SQLite rolled back the whole transaction (a full disk, a trigger's `RAISE(ROLLBACK)`):
/// then every later operation throws ``StoreError/transactionAborted(cause:)`` and nothing commits
/// (see <doc:SharedStores>).
///
/// ```swift
/// try await store.performAndSave { context in
///     let user = User(username: "ines", rating: 4)
///     try context.insert(user)
///     try context.insert(Trip(title: "Lisbon", ownerID: user.id))
/// }
/// ```
///
/// ## Topics
///
/// ### Writing records
/// - ``insert(_:)``
/// - ``update(_:)``
/// - ``upsert(_:)``
/// - ``delete(_:)-(Target)``
/// - ``delete(_:)-(RecordID<Target>)``
///
/// ### Batch operations
/// - ``batchInsert(_:)``
/// - ``batchUpdate(_:set:)``
/// - ``batchDelete(_:)``
public final class WriteContext: ReadContext {
    /// What this transaction changed, for observation.
    private(set) var changes = StoreChanges()
    /// What this transaction changed, record by record, for persistent history (empty when it is off).
    var history = HistoryLog(isEnabled: false)

    /// Inserts a new record; a record with the same ID, or the same values for a uniqueness
    /// constraint, is an error.
    public func insert<Target: Record>(_ record: Target) throws {
        try atomically {
            try insertNew(record, entity: try writableEntity(Target.self))
        }
    }

    /// Inserts `record` as a new row, with what every insert brings: its one-to-one relationships
    /// kept in step on both sides, its place in ordered relationships, its change and its history.
    private func insertNew<Target: Record>(_ record: Target, entity: EntityLayout) throws {
        try run(insertSQL(entity), entity: entity) { statement in
            try bind(record, entity: entity, to: statement)
        }
        changes.rowsInsertedOrDeleted(in: entity.table)
        history.inserted(record.id.uuid, entity: entity.name)
        try syncOneToOne(record, id: record.id.uuid, entity: entity, changed: nil)
        try appendToOrderedRelationships(record.id.uuid, entity: entity)
    }

    /// Replaces the stored values of an existing record. Writing the values it already has changes
    /// nothing, and observers do not hear of it.
    public func update<Target: Record>(_ record: Target) throws {
        try atomically {
            try update(record, storedAs: record.id.uuid, entity: try writableEntity(Target.self))
        }
    }

    /// Writes the record's values into the stored row `id`, and keeps one-to-one partners and
    /// ordered relationships in step; only the columns whose values differ count as changes.
    private func update<Target: Record>(_ record: Target, storedAs id: UUID, entity: EntityLayout) throws {
        guard let changed = try changedColumns(record, storedAs: id, entity: entity) else {
            throw StoreError.recordNotFound(entity: entity.name, id: id.uuidString)
        }
        guard !changed.isEmpty else { return }
        let ownersBefore = try entity.positionColumns.map {
            try value(of: Self.inverse(ofPosition: $0), in: entity, id: id)
        }
        let assignments = entity.columns.map { "\(quoted($0.name)) = ?" }.joined(separator: ", ")
        try run("UPDATE \(quoted(entity.table)) SET \(assignments) WHERE \"id\" = ?", entity: entity) { statement in
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
        let tests =
            entity.columns.isEmpty ? "0" : entity.columns.map { "\(quoted($0.name)) IS NOT ?" }.joined(separator: ", ")
        var sql = "SELECT \(tests) FROM \(quoted(entity.table)) WHERE \"id\" = ?"
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
        let values = entity.columns.map { "? AS \(quoted($0.name))" }.joined(separator: ", ")
        let selects = keys.indices.map { index in
            let tests = keys[index].map { key in
                let column = quoted(entity.columnName(key))
                return "t.\(column) = \"new\".\(column)"
            }.joined(separator: " AND ")
            return "SELECT \(index), t.\"id\" FROM \(quoted(entity.table)) t, \"new\" WHERE \(tests)"
        }
        let sql =
            "WITH \"new\" AS (SELECT ? AS \"id\"\(values.isEmpty ? "" : ", " + values)) "
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
    private func uniquenessConstraints(coveredBy entity: EntityLayout) -> [[String]] {
        let columns = Set(entity.columns.map(\.key))
        let constraints = layout.schema.entities
            .filter { layout.entities[$0.name]?.table == entity.table }
            .flatMap(\.uniquenessConstraints)
            .filter { !$0.isEmpty && $0.allSatisfy(columns.contains) }
        var seen: Set<[String]> = []
        return constraints.filter { seen.insert($0).inserted }
    }

    /// Deletes the record with this ID, applying every delete rule: `cascade` deletes what its
    /// relationship reaches, `nullify` clears the inverse, `deny` refuses while the relationship
    /// reaches anything, `noAction` leaves the other side as it is.
    public func delete<Target: Record>(_ id: RecordID<Target>) throws {
        try atomically {
            let entity = try layout.entity(Target.entityName)
            var deleted: Set<UUID> = []
            guard try deleteRow(id.uuid, declaredAs: entity, deleted: &deleted) else {
                throw StoreError.recordNotFound(entity: entity.name, id: id.description)
            }
        }
    }

    /// Deletes a record (by its ID), applying every delete rule.
    public func delete<Target: Record>(_ record: Target) throws {
        try delete(record.id)
    }

    /// Inserts many records with one prepared statement; returns how many were inserted.
    @discardableResult
    public func batchInsert<Target: Record>(_ records: some Sequence<Target>) throws -> Int {
        return try atomically {
            let entity = try writableEntity(Target.self)
            // One statement lookup for the whole batch: hashing the INSERT text per row showed in profiles.
            let statement = try connection.statement(insertSQL(entity))
            var count = 0
            for record in records {
                statement.reset()
                try run(statement, entity: entity) { statement in
                    try bind(record, entity: entity, to: statement)
                }
                history.inserted(record.id.uuid, entity: entity.name)
                count += 1
            }
            if count > 0 { changes.rowsInsertedOrDeleted(in: entity.table) }
            return count
        }
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
            let setters = columns.map { "\(quoted($0)) = ?" }.joined(separator: ", ")
            let differs = columns.map { "\(quoted($0)) IS NOT ?" }.joined(separator: " OR ")
            let sql =
                "UPDATE \(quoted(entity.table)) SET \(setters) WHERE \"id\" IN (\(selection)) AND (\(differs)) RETURNING \"id\""
            let arguments = values.map(\.value) + selectionArguments + values.map(\.value)
            let ids = try executeReturningIDs(sql, arguments, entity: entity)
            rowsUpdated(ids, columns: columns, in: entity)
            return ids.count
        }
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
                "DELETE FROM \(quoted(entity.table)) WHERE \"id\" IN (\(selection)) RETURNING \"id\"", arguments,
                entity: entity)
            if !ids.isEmpty { try rowsDeleted(ids, from: entity) }
            return ids.count
        }
    }

    // MARK: - To-many relationships

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
                    "UPDATE \(quoted(target.table)) SET \(quoted(inverse)) = ? WHERE \"id\" = ?",
                    [source.sqlValue, destination.sqlValue],
                    entity: target
                )
                rowsUpdated([destination.uuid], columns: [inverse], in: target)
                try clearPosition(ofInverse: inverse, in: target, id: destination.uuid)
                try appendToOrderedRelationships(destination.uuid, entity: target)
            case .joinTable(let table, let sourceColumn, let targetColumn, let position):
                var sql = "INSERT OR IGNORE INTO \(quoted(table)) (\(quoted(sourceColumn)), \(quoted(targetColumn))"
                if let position {
                    sql +=
                        ", \(quoted(position))) SELECT ?, ?, COALESCE(MAX(\(quoted(position))), -1) + 1 FROM \(quoted(table)) WHERE \(quoted(sourceColumn)) = ?"
                } else {
                    sql += ") VALUES (?, ?)"
                }
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
                    "UPDATE \(quoted(target.table)) SET \(quoted(inverse)) = NULL WHERE \"id\" = ? AND \(quoted(inverse)) = ?",
                    [destination.sqlValue, source.sqlValue],
                    entity: target
                )
                if connection.changes > 0 {
                    rowsUpdated([destination.uuid], columns: [inverse], in: target)
                }
                try clearPosition(ofInverse: inverse, in: target, id: destination.uuid)
            case .joinTable(let table, let sourceColumn, let targetColumn, _):
                try execute(
                    "DELETE FROM \(quoted(table)) WHERE \(quoted(sourceColumn)) = ? AND \(quoted(targetColumn)) = ?",
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
                    "UPDATE \(quoted(target.table)) SET \(quoted(position)) = \(quoted(position)) + ? WHERE \(quoted(inverse)) = ?",
                    [.integer(offset), source.sqlValue],
                    entity: target
                )
                for (index, destination) in destinations.enumerated() {
                    try execute(
                        "UPDATE \(quoted(target.table)) SET \(quoted(position)) = ? WHERE \"id\" = ? AND \(quoted(inverse)) = ?",
                        [.integer(Int64(index)), destination.sqlValue, source.sqlValue],
                        entity: target
                    )
                }
                changes.columnsChanged([position], in: target.table)
                history.updated([source.uuid], columns: [description.name], entity: entity.name)
            case .joinTable(let table, let sourceColumn, let targetColumn, let position?):
                try execute(
                    "UPDATE \(quoted(table)) SET \(quoted(position)) = \(quoted(position)) + ? WHERE \(quoted(sourceColumn)) = ?",
                    [.integer(offset), source.sqlValue],
                    entity: entity
                )
                for (index, destination) in destinations.enumerated() {
                    try execute(
                        "UPDATE \(quoted(table)) SET \(quoted(position)) = ? WHERE \(quoted(sourceColumn)) = ? AND \(quoted(targetColumn)) = ?",
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

    /// Runs one operation in a savepoint: when it throws, its partial effects (the first rows of a
    /// cascade, the first records of a batch, one side of a one-to-one pair) are undone, whether or
    /// not the caller catches the error and goes on.
    private func atomically<Result>(_ operation: () throws -> Result) throws -> Result {
        try connection.statement("SAVEPOINT \"mw_operation\"").run()
        let mark = history.mark
        do {
            let result = try operation()
            try connection.statement("RELEASE \"mw_operation\"").run()
            return result
        } catch {
            history.truncate(to: mark)
            try? connection.statement("ROLLBACK TO \"mw_operation\"").run()
            try? connection.statement("RELEASE \"mw_operation\"").run()
            throw error
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
    private func appendToOrderedRelationships(_ id: UUID, entity: EntityLayout) throws {
        let table = quoted(entity.table)
        for column in entity.positionColumns {
            let position = quoted(column)
            let inverse = quoted(Self.inverse(ofPosition: column))
            try execute(
                "UPDATE \(table) SET \(position) = (SELECT COALESCE(MAX(other.\(position)), -1) + 1 FROM \(table) other "
                    + "WHERE other.\(inverse) = \(table).\(inverse) AND other.\"id\" <> \(table).\"id\") "
                    + "WHERE \"id\" = ? AND \(inverse) IS NOT NULL AND \(position) IS NULL",
                [id.sqlValue],
                entity: entity
            )
            if connection.changes > 0 {
                changes.columnsChanged([column], in: entity.table)
                history.updated([id], columns: [column], entity: entity.name)
            }
        }
    }

    private func clearPosition(ofInverse inverse: String, in entity: EntityLayout, id: UUID) throws {
        let column = ToManyStorage.positionColumn(forInverse: inverse)
        guard entity.positionColumns.contains(column) else { return }
        try clearPosition(column, in: entity, id: id)
    }

    /// Empties one row's position column, when it held a place.
    private func clearPosition(_ column: String, in entity: EntityLayout, id: UUID) throws {
        try execute(
            "UPDATE \(quoted(entity.table)) SET \(quoted(column)) = NULL WHERE \"id\" = ? AND \(quoted(column)) IS NOT NULL",
            [id.sqlValue],
            entity: entity)
        if connection.changes > 0 {
            changes.columnsChanged([column], in: entity.table)
            history.updated([id], columns: [column], entity: entity.name)
        }
    }

    /// The to-one relationship a position column goes with.
    private static func inverse(ofPosition column: String) -> String {
        String(column.dropLast("._position".count))
    }

    // MARK: - Statements

    private func writableEntity<Target: Record>(_ type: Target.Type) throws -> EntityLayout {
        let entity = try layout.entity(Target.entityName)
        guard !entity.isAbstract else { throw StoreError.abstractEntity(entity.name) }
        return entity
    }

    private func insertSQL(_ entity: EntityLayout) -> String {
        var names = ["\"id\""]
        if entity.hasDiscriminator { names.append("\"_entity\"") }
        names += entity.columns.map { quoted($0.name) }
        let placeholders = Array(repeating: "?", count: names.count).joined(separator: ", ")
        return "INSERT INTO \(quoted(entity.table)) (\(names.joined(separator: ", "))) VALUES (\(placeholders))"
    }

    /// Binds the record's columns (not its ID) from parameter `firstIndex` on.
    private func bindColumns<Target: Record>(
        of record: Target, entity: EntityLayout, to statement: SQLiteStatement, firstIndex: Int32 = 1
    ) throws {
        do {
            var row = RowEncoder(statement: statement, firstIndex: firstIndex, columns: entity.columns)
            try record.encode(to: &row)
        } catch let error as ColumnValueError {
            throw StoreError.invalidValue(entity: entity.name, message: error.message)
        }
    }

    private func bind<Target: Record>(_ record: Target, entity: EntityLayout, to statement: SQLiteStatement) throws {
        statement.bind(record.id.uuid, 1)
        var next: Int32 = 2
        if entity.hasDiscriminator {
            statement.bind(entity.name, 2)
            next = 3
        }
        var row = RowEncoder(statement: statement, firstIndex: next, columns: entity.columns)
        try record.encode(to: &row)
    }

    /// Prepares (or reuses) `sql`, lets `bind` fill it, runs it, and turns constraint failures into
    /// ``StoreError`` values that name the entity and its attributes.
    private func run(_ sql: String, entity: EntityLayout, bind: (SQLiteStatement) throws -> Void) throws {
        try run(try connection.statement(sql), entity: entity, bind: bind)
    }

    /// Runs a prepared statement, with the same error translation.
    private func run(_ statement: SQLiteStatement, entity: EntityLayout, bind: (SQLiteStatement) throws -> Void) throws
    {
        do {
            try bind(statement)
            try statement.run()
        } catch let error as SQLiteError {
            throw translate(error, entity: entity)
        } catch let error as ColumnValueError {
            throw StoreError.invalidValue(entity: entity.name, message: error.message)
        }
    }

    private func translate(_ error: SQLiteError, entity: EntityLayout) -> Error {
        switch error.extendedCode {
        case 2067, 1555:  // SQLITE_CONSTRAINT_UNIQUE, SQLITE_CONSTRAINT_PRIMARYKEY
            // The message lists the columns: "UNIQUE constraint failed: User.givenName, User.familyName".
            let list = error.message.split(separator: ":", maxSplits: 1).last.map(String.init) ?? ""
            let columns = list.split(separator: ",").map { column in
                let trimmed = column.trimmingCharacters(in: .whitespaces)
                let name =
                    trimmed.hasPrefix(entity.table + ".") ? String(trimmed.dropFirst(entity.table.count + 1)) : trimmed
                return entity.columns.first { $0.name == name }?.key ?? name
            }
            return StoreError.uniquenessViolation(entity: entity.name, attributes: columns)
        case 1299:  // SQLITE_CONSTRAINT_NOTNULL
            return StoreError.invalidValue(entity: entity.name, message: error.message)
        default:
            return error
        }
    }

    // MARK: - Relationships

    /// Keeps both sides of a one-to-one relationship pointing at each other after a write of row
    /// `id`; `changed` lists the columns the write changed (`nil` for an insert: all of them).
    private func syncOneToOne<Target: Record>(
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
                "UPDATE \(destinationTable) SET \(inverse) = NULL WHERE \(inverse) = ? RETURNING \"id\"", [id.sqlValue],
                entity: destination)
            rowsUpdated(released, columns: [inverseColumn], in: destination)
            guard let target else { continue }
            // …the new partner points back, and no other record of this entity keeps the partner.
            let paired = try executeReturningIDs(
                "UPDATE \(destinationTable) SET \(inverse) = ? WHERE \"id\" = ? RETURNING \"id\"",
                [id.sqlValue, target],
                entity: destination)
            rowsUpdated(paired, columns: [inverseColumn], in: destination)
            let unpaired = try executeReturningIDs(
                "UPDATE \(quoted(entity.table)) SET \(quoted(column)) = NULL "
                    + "WHERE \(quoted(column)) = ? AND \"id\" <> ? RETURNING \"id\"",
                [target, id.sqlValue],
                entity: entity
            )
            rowsUpdated(unpaired, columns: [column], in: entity)
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
        try execute("DELETE FROM \(quoted(entity.table)) WHERE \"id\" = ?", [id.sqlValue], entity: entity)
        try rowsDeleted([id], from: entity)
        return true
    }

    /// Records new values in `columns` of the rows `ids` of an entity, for observation and history.
    private func rowsUpdated(_ ids: [UUID], columns: some Collection<String>, in entity: EntityLayout) {
        changes.rowsUpdated(ids, columns: columns, in: entity.table)
        // History names attributes as the schema does, not by their SQL columns.
        history.updated(ids, columns: columns.map(entity.key(ofColumn:)), entity: entity.name)
    }

    /// Records deleted rows of an entity's table, and of the join tables whose rows went with them
    /// (ON DELETE CASCADE).
    private func rowsDeleted(_ ids: [UUID], from entity: EntityLayout) throws {
        changes.rowsInsertedOrDeleted(in: entity.table)
        history.deleted(ids, entity: entity.name)
        for source in layout.entities.values {
            for relationship in source.relationships where relationship.cardinality == .toMany {
                guard case .joinTable(let table, _, _, _) = try layout.storage(of: relationship, from: source)
                else { continue }
                let destination = try layout.entity(relationship.destination)
                if source.table == entity.table || destination.table == entity.table {
                    changes.rowsInsertedOrDeleted(in: table)
                }
            }
        }
    }

    /// The layout of the entity a row really belongs to (a subentity of `declared`, possibly).
    private func actualEntity(of id: UUID, in declared: EntityLayout) throws -> EntityLayout? {
        let column = declared.hasDiscriminator ? "\"_entity\"" : "\"id\""
        let statement = try connection.statement("SELECT \(column) FROM \(quoted(declared.table)) WHERE \"id\" = ?")
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
            sql = "SELECT \(column) FROM \(quoted(entity.table)) WHERE \"id\" = ? AND \(column) IS NOT NULL"
        } else {
            switch try layout.storage(of: relationship, from: entity) {
            case .inverseColumn(let inverse, _):
                sql = "SELECT \"id\" FROM \(quoted(destination.table)) WHERE \(quoted(inverse)) = ?"
            case .joinTable(let table, let source, let target, _):
                sql = "SELECT \(quoted(target)) FROM \(quoted(table)) WHERE \(quoted(source)) = ?"
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
                "SELECT \"id\" FROM \(quoted(destination.table)) WHERE \(quoted(destination.columnName(inverseName))) = ?"
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
            "UPDATE \(quoted(destination.table)) SET \(quoted(column)) = NULL WHERE \(quoted(column)) = ? RETURNING \"id\"",
            [id.sqlValue],
            entity: destination
        )
        rowsUpdated(released, columns: [column], in: destination)
    }

    private func value(of column: String, in entity: EntityLayout, id: UUID) throws -> SQLValue? {
        let statement = try connection.statement(
            "SELECT \(quoted(column)) FROM \(quoted(entity.table)) WHERE \"id\" = ?")
        defer { statement.reset() }
        statement.bind(id, 1)
        guard try statement.step() else { return nil }
        let value = statement.value(0)
        return value == .null ? nil : value
    }

    /// Runs an UPDATE … RETURNING "id" and returns the IDs of the rows it changed.
    private func executeReturningIDs(_ sql: String, _ arguments: [SQLValue], entity: EntityLayout) throws -> [UUID] {
        let statement = try connection.statement(sql)
        defer { statement.reset() }
        for (index, argument) in arguments.enumerated() {
            statement.bind(argument, Int32(index + 1))
        }
        var ids: [UUID] = []
        do {
            while try statement.step() {
                if let id = statement.uuid(0) { ids.append(id) }
            }
        } catch let error as SQLiteError {
            throw translate(error, entity: entity)
        }
        return ids
    }

    private func execute(_ sql: String, _ arguments: [SQLValue], entity: EntityLayout) throws {
        try run(sql, entity: entity) { statement in
            for (index, argument) in arguments.enumerated() {
                statement.bind(argument, Int32(index + 1))
            }
        }
    }
}

/// A new value for a field in a batch update: `$0.rating.set(to: 5)`.
public struct FieldAssignment: Sendable, Hashable {
    /// The column set.
    public let path: ColumnPath
    /// Its new value.
    public let value: SQLValue
}

extension Field where Value: ColumnValue {
    /// An assignment of `value` to this field, for ``WriteContext/batchUpdate(_:set:)``.
    public func set(to value: Value) throws -> FieldAssignment {
        FieldAssignment(path: path, value: try value.sqlValue)
    }
}
