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
}
