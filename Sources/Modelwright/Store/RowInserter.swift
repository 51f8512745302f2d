import Foundation

/// A batch insert's one statement, run once for each record with its ID and columns bound.
///
/// ``WriteContext/batchInsert(_:)`` hands it to the record type's ``Record/insertRecords(_:with:)``,
/// which generated records implement with ``insert(_:)``. That loop is `@inlinable`, and so are the
/// encoder's binds, so it is specialised for the record in the app's module: on SQLite each record's
/// ID and columns are bound without a Swift call through the ``DatabaseStatement`` seam per column,
/// and the records are read from their array without a witness call or a copy through their type's
/// value witnesses.
@_spi(Generated) public struct RowInserter {
    private let context: WriteContext
    private let statement: any DatabaseStatement
    private let entity: EntityLayout
    /// The index of the first column's parameter: after the ID's, and the discriminator's when the
    /// entity has one.
    @usableFromInline let firstColumn: Int32

    init(context: WriteContext, statement: any DatabaseStatement, entity: EntityLayout) {
        self.context = context
        self.statement = statement
        self.entity = entity
        firstColumn = entity.hasDiscriminator ? 3 : 2
    }

    /// Inserts each record, in order; returns how many were inserted.
    @inlinable public func insert<Target: Record>(_ records: [Target]) throws -> Int {
        // One encoder for every record: its ID is parameter 1, its columns start after the ID's (and
        // the discriminator's).
        var row = encoder
        for record in records {
            start()
            row.index = 1
            try row.encode(record.id)
            row.index = firstColumn
            try record.encode(to: &row)
            try finish(record.id.uuid)
        }
        return records.count
    }

    /// An encoder for the ID and columns of each record.
    @usableFromInline var encoder: RowEncoder {
        RowEncoder(statement: statement, firstIndex: firstColumn, columns: entity.columns)
    }

    /// Resets the statement and binds the entity's discriminator: every parameter is bound for every
    /// record, since a reset clears the bindings (on PostgreSQL too).
    @usableFromInline func start() {
        statement.reset()
        if entity.hasDiscriminator { statement.bind(entity.name, 2) }
    }

    /// Runs the statement with the record's columns bound, and notes the insert for history.
    @usableFromInline func finish(_ id: UUID) throws {
        try statement.run()
        context.history.inserted(id, entity: entity.name)
    }
}
