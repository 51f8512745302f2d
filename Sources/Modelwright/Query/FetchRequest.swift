import Foundation

/// What to fetch: a record type, a condition, a sort order, a limit and an offset.
///
/// A request is a value: build it once, refine copies, and run it in any context.
///
/// ```swift
/// let request = User.request()
///     .filter { $0.rating >= 3 && $0.familyName.hasPrefix("I", caseInsensitive: true) }
///     .sorted { [$0.familyName.ascending] }
///     .limit(20)
/// let users = try await store.performQuery { try $0.fetch(request) }
/// ```
///
/// Without a sort order, a request uses its entity's default sort (`@sort` in the schema).
///
/// ## Topics
///
/// ### Refining
/// - ``filter(_:)``
/// - ``sorted(_:)``
/// - ``limit(_:)``
/// - ``offset(_:)``
/// - ``after(_:)``
public struct FetchRequest<Target: Record>: Sendable, Hashable {
    /// The condition rows must satisfy; `nil` for every row.
    public var condition: Condition?
    /// The sort order; empty for the entity's default sort.
    public var sortKeys: [SortKey]
    /// The most rows to return.
    public var fetchLimit: Int?
    /// How many matching rows to skip.
    public var fetchOffset: Int
    /// For a request made by ``Record/request(_:)``: the relationship and record whose
    /// destinations it fetches, in the relationship's order when it is ordered.
    public var scope: RelationshipScope?
    /// For a keyset-paged request (``after(_:)``): where its page starts; `nil` for an unpaged request.
    public var pageStart: PageStart<Target>?

    /// A request for every record of the type.
    public init(condition: Condition? = nil, sortKeys: [SortKey] = [], fetchLimit: Int? = nil, fetchOffset: Int = 0) {
        self.condition = condition
        self.sortKeys = sortKeys
        self.fetchLimit = fetchLimit
        self.fetchOffset = fetchOffset
    }

    /// The request with another condition added (both must hold).
    public func filter(_ build: (Target.Fields) -> some ConditionConvertible) -> FetchRequest {
        var copy = self
        let added = build(Target.Fields(path: .root)).condition
        copy.condition = condition.map { $0 && added } ?? added
        return copy
    }

    /// The request sorted by the given keys, replacing any earlier order.
    public func sorted(_ build: (Target.Fields) -> [SortKey]) -> FetchRequest {
        var copy = self
        copy.sortKeys = build(Target.Fields(path: .root))
        return copy
    }

    /// The request returning at most `count` records; a negative `count` is no limit, on every engine.
    public func limit(_ count: Int) -> FetchRequest {
        var copy = self
        copy.fetchLimit = count
        return copy
    }

    /// The request skipping the first `count` records.
    public func offset(_ count: Int) -> FetchRequest {
        var copy = self
        copy.fetchOffset = count
        return copy
    }
}

/// The destinations of one record's to-many relationship, which a request can be limited to.
public struct RelationshipScope: Sendable, Hashable {
    /// The entity that has the relationship.
    public let entity: String
    /// The to-many relationship.
    public let relationship: String
    /// The record whose destinations are fetched.
    public let source: UUID
}

extension Record {
    /// A request for every record of this type, in the entity's default order.
    public static func request() -> FetchRequest<Self> {
        FetchRequest()
    }

    /// A request for the records a to-many relationship of this record reaches: Core Data's
    /// to-many fault, as a request you can filter further. An ordered relationship keeps its order
    /// unless the request is sorted.
    ///
    /// ```swift
    /// let trips = try context.fetch(user.request { $0.trips }.filter { $0.title.hasPrefix("L") })
    /// ```
    public func request<Destination: RecordFields>(
        _ relationship: (Fields) -> ToMany<Destination>
    ) -> FetchRequest<Destination.Target> {
        var request = FetchRequest<Destination.Target>()
        request.scope = RelationshipScope(
            entity: Self.entityName,
            relationship: relationship(Fields(path: .root)).path.relationship,
            source: id.uuid
        )
        return request
    }
}
