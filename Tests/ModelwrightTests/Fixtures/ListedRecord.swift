@_spi(Generated) import Modelwright

/// A hand-written test record that lists its columns once, in column order: `encode(to:)` and
/// `init(id:row:)` both walk ``columns``, so a test's record cannot write its columns in one order
/// and read them in another. Every property has a starting value (the ID a fresh one), so Swift's
/// memberwise initialiser makes the records a test writes and decoding fills one in. (``Fixture``'s
/// records are written out as the generator emits them, on purpose.)
///
/// ```swift
/// struct Tag: ListedRecord {
///     typealias Fields = NoFields<Tag>
///     static let entityName = "Tag"
///     static var columns: [RecordColumn<Tag>] { [RecordColumn(\.name)] }
///     var id = RecordID<Tag>()
///     var name = ""
/// }
/// ```
///
/// The coding goes through `RowEncoder`'s and `RowDecoder`'s generic `ColumnValue` entry points,
/// which read and write exactly what their typed overloads do.
protocol ListedRecord: Record {
    /// The stored properties after the ID, in column order.
    static var columns: [RecordColumn<Self>] { get }
    /// The record's identity, set once by decoding.
    var id: RecordID<Self> { get set }
    /// A record with a fresh ID and every other property at its starting value.
    init()
}

extension ListedRecord {
    func encode(to row: inout RowEncoder) throws {
        for column in Self.columns { try column.write(self, &row) }
    }

    init(id: RecordID<Self>, row: inout RowDecoder) throws {
        self.init()
        self.id = id
        for column in Self.columns { try column.read(&self, &row) }
    }
}

/// One column of a ``ListedRecord``: the property it stores, written to a row and read back.
struct RecordColumn<Root> {
    fileprivate let write: (Root, inout RowEncoder) throws -> Void
    fileprivate let read: (inout Root, inout RowDecoder) throws -> Void

    /// The column that stores the property at `keyPath`.
    init<Value: ColumnValue>(_ keyPath: WritableKeyPath<Root, Value>) {
        write = { record, row in try row.encode(record[keyPath: keyPath]) }
        read = { record, row in record[keyPath: keyPath] = try row.decode(Value.self) }
    }
}

/// The fields of a record that requests neither filter nor sort by: its ID alone.
struct NoFields<Target: Record>: RecordFields {
    let path: FieldPath
}
