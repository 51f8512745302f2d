/// One entity of a schema: a record type and, in the store, its rows.
///
/// ```swift
/// let user = EntityDescription(
///     name: "User",
///     attributes: [AttributeDescription(name: "username", type: .string)],
///     uniquenessConstraints: [["username"]]
/// )
/// ```
///
/// ## Topics
///
/// ### Properties
/// - ``attributes``
/// - ``relationships``
///
/// ### Inheritance
/// - ``parent``
/// - ``isAbstract``
///
/// ### Constraints and ordering
/// - ``uniquenessConstraints``
/// - ``indexes``
/// - ``defaultSort``
public struct EntityDescription: Sendable, Equatable, Codable {
    /// The entity's name, such as `User`.
    public var name: String
    /// The parent entity's name, for an entity that inherits.
    public var parent: String?
    /// Whether the entity only serves as a parent and has no rows of its own.
    public var isAbstract: Bool
    /// The attributes the entity declares itself (inherited ones live on the parent).
    public var attributes: [AttributeDescription]
    /// The relationships the entity declares itself.
    public var relationships: [RelationshipDescription]
    /// Property-name lists whose values are unique together, one list per constraint.
    public var uniquenessConstraints: [[String]]
    /// Property-name lists that are indexed together, one list per index, in column order.
    public var indexes: [[String]]
    /// The `String` attributes a full-text index covers (`@searchable`), which requests search
    /// with ``Field/matches(_:)``: in declaration order, empty for none.
    public var searchableAttributes: [String]
    /// The order a request sorts by when it names none.
    public var defaultSort: [SortDescription]
    /// The entity's name in the previous version, when it was renamed.
    public var renamedFrom: String?
    /// Core Data's version hash modifier: a value that changes the checksum, to mark a change
    /// the structure does not show (a new transformer, say) as a new store version.
    public var versionHashModifier: String?
    /// How the sync server resolves two rows that break a uniqueness constraint of this entity
    /// (`@sync(unique: merge|reject)`); `nil` when the model says nothing, and then such a push
    /// is refused. Sync reads it at run time; it is not part of the checksum, since it does not
    /// shape the store.
    public var syncUniqueness: SyncUniqueness?

    /// Creates an entity description.
    public init(
        name: String,
        parent: String? = nil,
        isAbstract: Bool = false,
        attributes: [AttributeDescription] = [],
        relationships: [RelationshipDescription] = [],
        uniquenessConstraints: [[String]] = [],
        indexes: [[String]] = [],
        searchableAttributes: [String] = [],
        defaultSort: [SortDescription] = [],
        renamedFrom: String? = nil,
        versionHashModifier: String? = nil,
        syncUniqueness: SyncUniqueness? = nil
    ) {
        self.name = name
        self.parent = parent
        self.isAbstract = isAbstract
        self.attributes = attributes
        self.relationships = relationships
        self.uniquenessConstraints = uniquenessConstraints
        self.indexes = indexes
        self.searchableAttributes = searchableAttributes
        self.defaultSort = defaultSort
        self.renamedFrom = renamedFrom
        self.versionHashModifier = versionHashModifier
        self.syncUniqueness = syncUniqueness
    }
}

/// What the sync server does with a pushed row whose values for a uniqueness constraint are
/// already another row's (`@sync(unique: …)`).
public enum SyncUniqueness: String, Sendable, Equatable, Codable, CaseIterable {
    /// The pushed row is folded into the row the server already holds (each attribute by its
    /// latest write, as `upsert` merges), references to it are moved to that row, and it is deleted.
    case merge
    /// The pushed row is deleted: the row that reached the server first keeps the values.
    case reject
}

/// One key of a default sort order.
public struct SortDescription: Sendable, Equatable, Codable {
    /// The attribute sorted by.
    public var attribute: String
    /// Whether smaller values come first.
    public var ascending: Bool

    /// Creates a sort key.
    public init(attribute: String, ascending: Bool = true) {
        self.attribute = attribute
        self.ascending = ascending
    }
}
