/// The structure of one version of a data model, as the runtime sees it.
///
/// Generated code describes each schema version as a `SchemaDescription` value; the runtime
/// turns it into SQL and identifies it by its ``checksum``.
///
/// ```swift
/// let schema = SchemaDescription(
///     modelName: "Trips",
///     version: 1,
///     entities: [
///         EntityDescription(name: "User", attributes: [
///             AttributeDescription(name: "username", type: .string),
///         ])
///     ]
/// )
/// print(schema.checksum)  // 64 hexadecimal digits
/// ```
///
/// ## Topics
///
/// ### Structure
/// - ``modelName``
/// - ``version``
/// - ``entities``
/// - ``entity(named:)``
///
/// ### Identity
/// - ``checksum``
public struct SchemaDescription: Sendable, Equatable, Codable {
    /// The model's name, such as `Trips`.
    public var modelName: String
    /// The version number, counted from 1.
    public var version: Int
    /// Every entity, abstract parents included, in declaration order.
    public var entities: [EntityDescription]

    /// Creates a schema description.
    public init(modelName: String, version: Int, entities: [EntityDescription]) {
        self.modelName = modelName
        self.version = version
        self.entities = entities
    }

    /// The entity with the given name, if the schema has one.
    public func entity(named name: String) -> EntityDescription? {
        entities.first { $0.name == name }
    }

    /// The version checksum: a SHA-256 digest of the schema's structure (see ``SchemaChecksum``).
    public var checksum: SchemaChecksum {
        SchemaChecksum(of: self)
    }
}
