/// The typed fields of a record type, used to build conditions and sort orders.
///
/// Generated code declares one per record, with a property per attribute and relationship, so
/// a misspelt name or a value of the wrong type does not compile:
///
/// ```swift
/// extension User {
///     struct Fields: RecordFields {
///         typealias Target = User
///         let path: FieldPath
///         init(path: FieldPath) { self.path = path }
///         var rating: Field<Int16> { path.field("rating") }
///         var home: OptionalComposite<Address.Fields> { path.composite("home") }
///         var organization: ToOne<Organization.Fields> { path.toOne("organization") }
///         var trips: ToMany<Trip.Fields> { path.toMany("trips") }
///     }
/// }
/// ```
public protocol RecordFields: Sendable {
    /// The record type whose fields these are.
    associatedtype Target: Record
    /// Where these fields are reached from the request's entity.
    @_spi(Generated) var path: FieldPath { get }
    /// Creates the fields as reached through `path`.
    @_spi(Generated) init(path: FieldPath)
}

extension RecordFields {
    /// The record's identity: `filter { $0.id == id }`, `$0.id.in(ids)`, `sorted { [$0.id.ascending] }`,
    /// and through a to-one relationship, `$0.owner.id`.
    public var id: Field<Target.ID> { path.field("id") }
}

/// The to-one relationships followed from the request's entity to reach a set of fields: the
/// generated `Fields` types name their columns and relationships through it.
@_spi(Generated) public struct FieldPath: Sendable, Hashable {
    /// The relationship names, in order.
    public let hops: [String]

    /// The request's own entity.
    public static let root = FieldPath(hops: [])

    private init(hops: [String]) {
        self.hops = hops
    }

    /// The column `name` at this point.
    public func field<Value>(_ name: String) -> Field<Value> {
        Field(path: ColumnPath(hops: hops, column: name))
    }

    /// The to-one relationship `name` at this point, through which the destination's fields are reached.
    public func toOne<Destination: RecordFields>(_ name: String) -> ToOne<Destination> {
        ToOne(path: ColumnPath(hops: hops, column: name))
    }

    /// The to-many relationship `name` at this point.
    public func toMany<Destination: RecordFields>(_ name: String) -> ToMany<Destination> {
        ToMany(path: RelationshipPath(hops: hops, relationship: name))
    }
}

/// A column of type `Value`, for comparisons and sorting.
public struct Field<Value>: Sendable, Hashable {
    /// Where the column is.
    public let path: ColumnPath

    /// Ascending order by this field.
    public var ascending: SortKey { SortKey(path: path, ascending: true) }
    /// Descending order by this field.
    public var descending: SortKey { SortKey(path: path, ascending: false) }
}

/// A to-one relationship: its destination's fields are reached by name, and it compares with an ID or nil.
@dynamicMemberLookup
public struct ToOne<Destination: RecordFields>: Sendable, Hashable {
    /// The relationship's own column.
    public let path: ColumnPath

    /// A field of the destination.
    public subscript<Member>(dynamicMember keyPath: KeyPath<Destination, Member>) -> Member {
        Destination(path: FieldPath.root.appending(path.hops + [path.column]))[keyPath: keyPath]
    }

    /// The relationship is empty.
    public var isNil: Condition { .comparison(path, .equal, .null) }
    /// The relationship reaches a record.
    public var isNotNil: Condition { .comparison(path, .notEqual, .null) }
}

/// A to-many relationship: quantified conditions over its destinations and their count.
public struct ToMany<Destination: RecordFields>: Sendable, Hashable {
    /// The relationship.
    public let path: RelationshipPath

    /// At least one destination satisfies the condition.
    public func any(_ condition: (Destination) -> some ConditionConvertible) -> Condition {
        .quantified(path, .any, condition(Destination(path: .root)).condition)
    }

    /// Every destination satisfies the condition (true when there are none).
    public func all(_ condition: (Destination) -> some ConditionConvertible) -> Condition {
        .quantified(path, .all, condition(Destination(path: .root)).condition)
    }

    /// No destination satisfies the condition.
    public func none(_ condition: (Destination) -> some ConditionConvertible) -> Condition {
        .quantified(path, .none, condition(Destination(path: .root)).condition)
    }

    /// The number of destinations, to compare with an integer.
    public var count: RelationshipCount { RelationshipCount(path: path) }
}

/// The number of destinations of a to-many relationship.
public struct RelationshipCount: Sendable, Hashable {
    let path: RelationshipPath

    /// The relationship has exactly `rhs` destinations.
    public static func == (lhs: RelationshipCount, rhs: Int) -> Condition { .count(lhs.path, .equal, rhs) }
    /// The relationship does not have exactly `rhs` destinations.
    public static func != (lhs: RelationshipCount, rhs: Int) -> Condition { .count(lhs.path, .notEqual, rhs) }
    /// The relationship has fewer than `rhs` destinations.
    public static func < (lhs: RelationshipCount, rhs: Int) -> Condition { .count(lhs.path, .less, rhs) }
    /// The relationship has at most `rhs` destinations.
    public static func <= (lhs: RelationshipCount, rhs: Int) -> Condition { .count(lhs.path, .lessOrEqual, rhs) }
    /// The relationship has more than `rhs` destinations.
    public static func > (lhs: RelationshipCount, rhs: Int) -> Condition { .count(lhs.path, .greater, rhs) }
    /// The relationship has at least `rhs` destinations.
    public static func >= (lhs: RelationshipCount, rhs: Int) -> Condition { .count(lhs.path, .greaterOrEqual, rhs) }
}

extension FieldPath {
    fileprivate func appending(_ names: [String]) -> FieldPath {
        FieldPath(hops: hops + names)
    }
}

/// One key of a sort order.
public struct SortKey: Sendable, Hashable {
    /// The column sorted by.
    public let path: ColumnPath
    /// Whether smaller values come first.
    public let ascending: Bool
}
