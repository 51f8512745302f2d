import Foundation

/// A batch insert's one statement, run once for each record with its ID and columns bound.
///
/// ``WriteContext/batchInsert(_:)`` hands it to the record type's ``Record/insertRecords(_:with:)``,
/// which generated records implement with ``insert(_:)``. That loop is `@inlinable`, and so are the
/// encoder's binds, so it is specialised for the record in the app's module: on SQLite each record's
/// columns are bound without a Swift call through the ``DatabaseStatement`` seam per column, and the
/// records are read from the sequence without copying each through its type's value witnesses.
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
    @inlinable public func insert<Target: Record>(_ records: some Sequence<Target>) throws -> Int {
        // One encoder for every record: each record's columns start after its ID.
        var row = encoder
        var count = 0
        for record in records {
            let id = record.id.uuid
            start(id)
            row.index = firstColumn
            try record.encode(to: &row)
            try finish(id)
            count += 1
        }
        return count
    }

    /// An encoder for the columns of each record.
    @usableFromInline var encoder: RowEncoder {
        RowEncoder(statement: statement, firstIndex: firstColumn, columns: entity.columns)
    }

    /// Resets the statement and binds the record's ID and the entity's discriminator: every parameter
    /// is bound for every record, since a reset clears the bindings (on PostgreSQL too).
    @usableFromInline func start(_ id: UUID) {
        statement.reset()
        statement.bind(id, 1)
        if entity.hasDiscriminator { statement.bind(entity.name, 2) }
    }

    /// Runs the statement with the record's columns bound, and notes the insert for history.
    @usableFromInline func finish(_ id: UUID) throws {
        try statement.run()
        context.history.inserted(id, entity: entity.name)
    }
}
