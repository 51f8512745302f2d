import Foundation

/// A statement's rows as a fetch steps through them: each row's ID, then a decoder for its columns.
///
/// ``ReadContext/fetch(_:)->[Target]`` hands it to the record type's
/// ``Record/appendRecords(of:to:)``, which generated records implement with ``append(to:)``. That
/// loop is `@inlinable`, and so are the decoder's reads, so it is specialised for the record in the
/// app's module: on SQLite each row is stepped, its ID and columns read and its record appended
/// without a Swift call through the ``DatabaseStatement`` seam per column, and without the
/// unspecialised `Array.append` that looks up the array's type on every row.
@_spi(Generated) public struct RowCursor {
    /// The capacity a limited fetch reserves at most, however large its limit.
    static let reservedAtMost = 1_024

    private let statement: any DatabaseStatement
    /// The statement's row when it is SQLite's, read without a call through the seam.
    @usableFromInline let sqlite: SQLiteRow?
    /// The entity the rows belong to, for errors.
    private let entity: String
    /// How many records ``append(to:)`` makes room for before the first row: a limited fetch's
    /// array is allocated once, instead of growing 1, 2, 4, 8… Reserved there, in the loop the
    /// app's module specialises, rather than by the fetch, which is generic over the record type
    /// and would look the array's type up on every fetch.
    @usableFromInline var capacity = 0

    init(statement: any DatabaseStatement, entity: String) {
        self.statement = statement
        sqlite = SQLiteRow.of(statement)
        self.entity = entity
    }

    /// Appends the record of each row left, in order; a column the record cannot read is named as
    /// the store names it.
    @inlinable public func append<Target: Record>(to records: inout [Target]) throws {
        if capacity > 0 { records.reserveCapacity(capacity) }
        // One decoder for every row: each row's columns start at 1, after the ID.
        var row = decoder
        while let id = try next() {
            row.index = 1
            do {
                records.append(try Target(id: RecordID(id), row: &row))
            } catch let error as ColumnValueError {
                throw invalid(error)
            }
        }
    }

    /// Steps to the next row and reads its ID; `nil` after the last row.
    @inlinable func next() throws -> UUID? {
        guard try step() else { return nil }
        let id = if let sqlite { sqlite.uuid(0) } else { statementID() }
        guard let id else { throw noID() }
        return id
    }

    /// Steps the statement; `false` after the last row.
    @usableFromInline func step() throws -> Bool {
        try statement.step()
    }

    /// The current row's ID, read through the seam (another engine than SQLite).
    @usableFromInline func statementID() -> UUID? {
        statement.uuid(0)
    }

    /// The error for a row without a valid ID.
    @usableFromInline func noID() -> StoreError {
        StoreError.invalidValue(entity: entity, message: "a row has no valid ID")
    }

    /// A decoder for the current row's columns after the ID.
    @usableFromInline var decoder: RowDecoder {
        RowDecoder(statement: statement, sqlite: sqlite, firstIndex: 1)
    }

    /// Decodes the current row's columns with `body`, a column the record cannot read named as
    /// the store names it.
    func decode<Value>(_ body: (inout RowDecoder) throws -> Value) throws -> Value {
        var row = decoder
        do {
            return try body(&row)
        } catch let error as ColumnValueError {
            throw invalid(error)
        }
    }

    /// A column error as the store reports it, with the entity.
    @usableFromInline func invalid(_ error: ColumnValueError) -> StoreError {
        StoreError.invalidValue(entity: entity, message: error.message)
    }

    /// Resets the statement, so the connection's cache can hand it out again.
    func close() {
        statement.reset()
    }
}
