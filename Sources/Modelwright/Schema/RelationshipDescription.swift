/// A link from one entity to another.
///
/// ```swift
/// let trips = RelationshipDescription(
///     name: "trips", destination: "Trip", inverse: "owner",
///     cardinality: .toMany, deleteRule: .cascade
/// )
/// ```
///
/// ## Topics
///
/// ### Shape
/// - ``destination``
/// - ``inverse``
/// - ``cardinality``
/// - ``isOrdered``
/// - ``isOptional``
///
/// ### Deletion
/// - ``deleteRule``
public struct RelationshipDescription: Sendable, Equatable, Codable {
    /// How many records a relationship reaches.
    public enum Cardinality: String, Sendable, Equatable, Codable {
        /// At most one record.
        case toOne
        /// Any number of records.
        case toMany
    }

    /// What deleting the source record does to the records it reaches (Core Data's delete rules).
    public enum DeleteRule: String, Sendable, Equatable, Codable {
        /// Clear the inverse reference.
        case nullify
        /// Delete the destination records too.
        case cascade
        /// Refuse the delete while the relationship reaches any record.
        case deny
        /// Do nothing; the inverse may be left pointing at a deleted record.
        case noAction
    }

    /// The relationship's name, such as `trips`.
    public var name: String
    /// The destination entity's name.
    public var destination: String
    /// The name of the relationship on the destination that points back, if there is one.
    public var inverse: String?
    /// To-one or to-many.
    public var cardinality: Cardinality
    /// For to-many relationships: whether the destinations keep an order (`[T]` rather than `Set<T>`).
    public var isOrdered: Bool
    /// For to-one relationships: whether the relationship may be empty.
    public var isOptional: Bool
    /// What deleting the source record does.
    public var deleteRule: DeleteRule
    /// The relationship's name in the previous version, when it was renamed.
    public var renamedFrom: String?
    /// Core Data's version hash modifier: a value that changes the checksum, to mark a change
    /// the structure does not show (a new transformer, say) as a new store version.
    public var versionHashModifier: String?

    /// Creates a relationship description.
    public init(
        name: String,
        destination: String,
        inverse: String? = nil,
        cardinality: Cardinality,
        isOrdered: Bool = false,
        isOptional: Bool = true,
        deleteRule: DeleteRule = .nullify,
        renamedFrom: String? = nil,
        versionHashModifier: String? = nil
    ) {
        self.name = name
        self.destination = destination
        self.inverse = inverse
        self.cardinality = cardinality
        self.isOrdered = isOrdered
        self.isOptional = isOptional
        self.deleteRule = deleteRule
        self.renamedFrom = renamedFrom
        self.versionHashModifier = versionHashModifier
    }
}
