import Foundation

// Inserting records: one at a time, and in batches through one prepared statement.
extension WriteContext {
    /// Inserts a new record; a record with the same ID, or the same values for a uniqueness
    /// constraint, is an error.
    public func insert<Target: Record>(_ record: Target) throws {
        try atomically {
            try insertNew(record, entity: try writableEntity(Target.self))
        }
    }

    /// Inserts `record` as a new row, with what every insert brings: its one-to-one relationships
    /// kept in step on both sides, its place in ordered relationships, its change and its history.
    func insertNew<Target: Record>(_ record: Target, entity: EntityLayout) throws {
        try run(insertSQL(entity), entity: entity) { statement in
            try bind(record, entity: entity, to: statement)
        }
        changes.rowsInsertedOrDeleted(in: entity.table)
        history.inserted(record.id.uuid, entity: entity.name)
        try syncOneToOne(record, id: record.id.uuid, entity: entity, changed: nil)
        try appendToOrderedRelationships(record.id.uuid, entity: entity)
    }

    /// Inserts many records with one prepared statement; returns how many were inserted. A sequence
    /// other than an array is taken a thousand records at a time, so a lazy one is never held whole.
    @discardableResult
    public func batchInsert<Target: Record>(_ records: some Sequence<Target>) throws -> Int {
        return try atomically {
            let entity = try writableEntity(Target.self)
            // One statement lookup for the whole batch: hashing the INSERT text per row showed in profiles.
            let statement = try connection.statement(insertSQL(entity))
            // A server engine sends the rows without waiting for each answer; a failure of any
            // (thrown by a later row or at the end) fails the batch, which `atomically` undoes.
            let count = try translatingFailures(of: entity) {
                let rows = RowInserter(context: self, statement: statement, entity: entity)
                // An array is passed as it is (sharing its storage); the records' loop is the
                // record type's own, specialised in its module (``Record/insertRecords(_:with:)``).
                return try connection.batching {
                    if let array = records as? [Target] { return try Target.insertRecords(array, with: rows) }
                    var inserted = 0
                    var chunk: [Target] = []
                    chunk.reserveCapacity(Self.insertChunk)
                    for record in records {
                        chunk.append(record)
                        guard chunk.count == Self.insertChunk else { continue }
                        inserted += try Target.insertRecords(chunk, with: rows)
                        chunk.removeAll(keepingCapacity: true)
                    }
                    return inserted + (chunk.isEmpty ? 0 : try Target.insertRecords(chunk, with: rows))
                }
            }
            if count > 0 { changes.rowsInsertedOrDeleted(in: entity.table) }
            return count
        }
    }

    /// How many records of a sequence other than an array ``batchInsert(_:)`` gathers at a time.
    static let insertChunk = 1_000

    private func insertSQL(_ entity: EntityLayout) -> String {
        var names = ["\"id\""]
        if entity.hasDiscriminator { names.append("\"_entity\"") }
        names += entity.columns.map { quoted($0.name) }
        let placeholders = connection.dialect.parameters(names.count)
        return "INSERT INTO \(quoted(entity.table)) (\(names.joined(separator: ", "))) VALUES (\(placeholders))"
    }

    private func bind<Target: Record>(_ record: Target, entity: EntityLayout, to statement: any DatabaseStatement)
        throws
    {
        statement.bind(record.id.uuid, 1)
        var next: Int32 = 2
        if entity.hasDiscriminator {
            statement.bind(entity.name, 2)
            next = 3
        }
        var row = RowEncoder(statement: statement, firstIndex: next, columns: entity.columns)
        try record.encode(to: &row)
    }
}
