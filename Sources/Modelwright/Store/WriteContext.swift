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
    var changes = StoreChanges()
    /// What this transaction changed, record by record, for persistent history (empty when it is off).
    var history = HistoryLog(isEnabled: false)

    // MARK: - Statements shared by the operations

    /// Runs one operation in a savepoint: when it throws, its partial effects (the first rows of a
    /// cascade, the first records of a batch, one side of a one-to-one pair) are undone, whether or
    /// not the caller catches the error and goes on.
    func atomically<Result>(_ operation: () throws -> Result) throws -> Result {
        let dialect = connection.dialect
        try connection.statement(dialect.savepoint(Self.savepoint)).run()
        let mark = history.mark
        do {
            let result = try operation()
            try connection.statement(dialect.releaseSavepoint(Self.savepoint)).run()
            return result
        } catch {
            history.truncate(to: mark)
            try? connection.statement(dialect.rollbackToSavepoint(Self.savepoint)).run()
            try? connection.statement(dialect.releaseSavepoint(Self.savepoint)).run()
            throw error
        }
    }

    /// The name of the savepoint each operation runs in.
    private static let savepoint = "mw_operation"

    func writableEntity<Target: Record>(_ type: Target.Type) throws -> EntityLayout {
        let entity = try layout.entity(Target.entityName)
        guard !entity.isAbstract else { throw StoreError.abstractEntity(entity.name) }
        return entity
    }

    /// Binds the record's columns (not its ID) from parameter `firstIndex` on.
    func bindColumns<Target: Record>(
        of record: Target, entity: EntityLayout, to statement: any DatabaseStatement, firstIndex: Int32 = 1
    ) throws {
        do {
            var row = RowEncoder(statement: statement, firstIndex: firstIndex, columns: entity.columns)
            try record.encode(to: &row)
        } catch let error as ColumnValueError {
            throw StoreError.invalidValue(entity: entity.name, message: error.message)
        }
    }

    /// Prepares (or reuses) `sql`, lets `bind` fill it, runs it, and turns constraint failures into
    /// ``StoreError`` values that name the entity and its attributes.
    func run(_ sql: String, entity: EntityLayout, bind: (any DatabaseStatement) throws -> Void) throws {
        try run(try connection.statement(sql), entity: entity, bind: bind)
    }

    /// Runs a prepared statement, with the same error translation.
    func run(
        _ statement: any DatabaseStatement, entity: EntityLayout, bind: (any DatabaseStatement) throws -> Void
    ) throws {
        try translatingFailures(of: entity) {
            try bind(statement)
            try statement.run()
        }
    }

    /// Runs `body`, turning a column value error or an engine's constraint error into a
    /// ``StoreError`` that names `entity` (and its attributes).
    func translatingFailures<Result>(of entity: EntityLayout, _ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch let error as ColumnValueError {
            throw StoreError.invalidValue(entity: entity.name, message: error.message)
        } catch {
            throw translate(error, entity: entity)
        }
    }

    /// An engine's constraint error as a ``StoreError`` naming the entity and its attributes; any
    /// other error as it is.
    private func translate(_ error: any Error, entity: EntityLayout) -> any Error {
        switch connection.constraintFailure(in: error) {
        case .unique(let columns):
            let keys = columns.map { column in
                let name =
                    column.hasPrefix(entity.table + ".") ? String(column.dropFirst(entity.table.count + 1)) : column
                return entity.columns.first { $0.name == name }?.key ?? name
            }
            return StoreError.uniquenessViolation(entity: entity.name, attributes: keys)
        case .notNull(let message):
            return StoreError.invalidValue(entity: entity.name, message: message)
        case .foreignKey, .danglingReference, nil:
            return error
        }
    }

    /// Records new values in `columns` of the rows `ids` of an entity, for observation and history.
    func rowsUpdated(_ ids: [UUID], columns: some Collection<String>, in entity: EntityLayout) {
        changes.rowsUpdated(ids, columns: columns, in: entity.table)
        // History names attributes as the schema does, not by their SQL columns.
        history.updated(ids, columns: columns.map(entity.key(ofColumn:)), entity: entity.name)
    }

    /// Records deleted rows of an entity's table, and of the join tables whose rows went with them
    /// (ON DELETE CASCADE).
    func rowsDeleted(_ ids: [UUID], from entity: EntityLayout) throws {
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

    func value(of column: String, in entity: EntityLayout, id: UUID) throws -> SQLValue? {
        let statement = try connection.statement(
            "SELECT \(quoted(column)) FROM \(quoted(entity.table)) WHERE \"id\" = \(marker)")
        defer { statement.reset() }
        statement.bind(id, 1)
        guard try statement.step() else { return nil }
        let value = statement.value(0)
        return value == .null ? nil : value
    }

    /// Runs an `UPDATE` or `DELETE`, returning the `"id"` of each row it changed, and returns those IDs.
    func executeReturningIDs(_ sql: String, _ arguments: [SQLValue], entity: EntityLayout) throws -> [UUID] {
        let statement = try connection.statement(sql + connection.dialect.returning(["\"id\""]))
        defer { statement.reset() }
        for (index, argument) in arguments.enumerated() {
            statement.bind(argument, Int32(index + 1))
        }
        var ids: [UUID] = []
        do {
            while try statement.step() {
                if let id = statement.uuid(0) { ids.append(id) }
            }
        } catch {
            throw translate(error, entity: entity)
        }
        return ids
    }

    func execute(_ sql: String, _ arguments: [SQLValue], entity: EntityLayout) throws {
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
