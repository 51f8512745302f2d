/// A record type: an immutable value for one entity of a schema, as generated code declares it.
///
/// A record reads and writes its stored properties by column position, in the order
/// `EntityLayout` defines (from the root entity down: each entity's attributes, composites
/// expanded field by field, then its to-one relationships as IDs). No `Codable` is involved on
/// this path. The generator takes that order from the runtime, and the coding requirements
/// are `@_spi(Generated)`: generated files import them, app code does not see them.
///
/// ```swift
/// @_spi(Generated) import Modelwright
///
/// struct User: Record {
///     static let entityName = "User"
///     let id: RecordID<User>
///     let username: String
///     let rating: Int16
///
///     func encode(to row: inout RowEncoder) throws {
///         try row.encode(username)
///         try row.encode(rating)
///     }
///
///     init(id: RecordID<User>, row: inout RowDecoder) throws {
///         self.id = id
///         username = try row.decode()
///         rating = try row.decode()
///     }
/// }
/// ```
///
/// ## Topics
///
/// ### Identity
/// - ``entityName``
/// - ``id``
public protocol Record: Sendable, Hashable, Identifiable where ID == RecordID<Self> {
    /// The typed fields that requests filter and sort by.
    associatedtype Fields: RecordFields
    /// The entity's name in the schema.
    static var entityName: String { get }
    /// The record's identity.
    var id: RecordID<Self> { get }
    /// Writes every stored property except the ID, in column order.
    @_spi(Generated) func encode(to row: inout RowEncoder) throws
    /// Reads every stored property except the ID, in column order.
    @_spi(Generated) init(id: RecordID<Self>, row: inout RowDecoder) throws
    /// Appends the record of each row left in `rows`, in order. Generated records implement it as
    /// `try rows.append(to: &records)`, so that the fetch loop and the column reads are specialised
    /// for the record in its own module, where they call SQLite directly (fetching 100,000 people:
    /// 377.2 M instructions before, 343.5 M after; BENCHMARKS.md, issue 30). The default runs the
    /// same loop unspecialised.
    @_spi(Generated) static func appendRecords(of rows: RowCursor, to records: inout [Self]) throws
    /// Inserts each record of `records` with `rows`, in order, and returns how many. Generated records
    /// implement it as `try rows.insert(records)`, so that a batch insert's loop and the column binds
    /// are specialised for the record in its own module, where they call SQLite directly (inserting
    /// 100,000 people: 1,954.3 M instructions before, 1,876.7 M after; BENCHMARKS.md, issue 30). The
    /// default runs the same loop unspecialised. The records come as an array, not any sequence: a
    /// loop over a sequence of a type the app's module does not know is not specialised, and asked the
    /// sequence for each record through a witness call (1,937.4 M with a sequence).
    @_spi(Generated) static func insertRecords(_ records: [Self], with rows: RowInserter) throws -> Int
}

extension Record {
    /// Runs ``RowCursor/append(to:)`` unspecialised, for a record written without it.
    @_spi(Generated) public static func appendRecords(of rows: RowCursor, to records: inout [Self]) throws {
        try rows.append(to: &records)
    }

    /// Runs ``RowInserter/insert(_:)`` unspecialised, for a record written without it.
    @_spi(Generated) public static func insertRecords(_ records: [Self], with rows: RowInserter) throws -> Int {
        try rows.insert(records)
    }
}
