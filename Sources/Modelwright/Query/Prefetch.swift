import Foundation

/// A request for records together with the records their relationships reach: Core Data's
/// `relationshipKeyPathsForPrefetching`, typed. Each included relationship costs one query for all
/// the records, however many there are, at every level of nesting.
///
/// ```swift
/// let users = try await store.performQuery { context in
///     try context.fetch(
///         User.request()
///             .including { $0.organization }
///             .including({ $0.trips }, with: { $0.including { $0.stops } }))
/// }
/// for user in users {
///     let trips = try user.destinations { $0.trips }
///     print(user.record.username, try user.destination { $0.organization }?.record.name ?? "-", trips.count)
/// }
/// ```
///
/// A relationship reached through to-one hops is included the same way
/// (`.including { $0.organization.members }`: each user with their organization's members), for two
/// queries: which record each parent reaches, then the relationship's records for all of them.
///
/// A to-many relationship's records come in its order when it is ordered, and by ID otherwise.
public struct PrefetchRequest<Target: Record>: Sendable {
    /// The records fetched.
    public let request: FetchRequest<Target>
    let inclusions: [any PrefetchInclusion]

    /// The request also fetching the records of a to-many relationship, and with `nested` what
    /// those records' own relationships reach.
    public func including<Destination: RecordFields>(
        _ relationship: (Target.Fields) -> ToMany<Destination>,
        with nested: (PrefetchRequest<Destination.Target>) -> PrefetchRequest<Destination.Target> = { $0 }
    ) -> PrefetchRequest {
        let path = relationship(Target.Fields(path: .root)).path
        return adding(path.hops, path.relationship, nested)
    }

    /// The request also fetching the record of a to-one relationship, and with `nested` what that
    /// record's own relationships reach.
    public func including<Destination: RecordFields>(
        _ relationship: (Target.Fields) -> ToOne<Destination>,
        with nested: (PrefetchRequest<Destination.Target>) -> PrefetchRequest<Destination.Target> = { $0 }
    ) -> PrefetchRequest {
        let path = relationship(Target.Fields(path: .root)).path
        return adding(path.hops, path.column, nested)
    }

    private func adding<Destination: Record>(
        _ hops: [String], _ name: String,
        _ nested: (PrefetchRequest<Destination>) -> PrefetchRequest<Destination>
    ) -> PrefetchRequest {
        // A relationship reached through to-one hops (`$0.organization.members`) is loaded for the
        // records at the end of the hops, and handed to each parent that reaches them.
        let inner = nested(PrefetchRequest<Destination>(request: FetchRequest(), inclusions: []))
        let inclusion = Inclusion<Destination>(hops: hops, relationship: name, nested: inner.inclusions)
        return PrefetchRequest(request: request, inclusions: inclusions + [inclusion])
    }
}

extension FetchRequest {
    /// The request's records with the records of a to-many relationship (see ``PrefetchRequest``).
    public func including<Destination: RecordFields>(
        _ relationship: (Target.Fields) -> ToMany<Destination>,
        with nested: (PrefetchRequest<Destination.Target>) -> PrefetchRequest<Destination.Target> = { $0 }
    ) -> PrefetchRequest<Target> {
        PrefetchRequest(request: self, inclusions: []).including(relationship, with: nested)
    }

    /// The request's records with the record of a to-one relationship (see ``PrefetchRequest``).
    public func including<Destination: RecordFields>(
        _ relationship: (Target.Fields) -> ToOne<Destination>,
        with nested: (PrefetchRequest<Destination.Target>) -> PrefetchRequest<Destination.Target> = { $0 }
    ) -> PrefetchRequest<Target> {
        PrefetchRequest(request: self, inclusions: []).including(relationship, with: nested)
    }
}

/// A record with the records its included relationships reach.
public struct Prefetched<Target: Record>: Sendable {
    /// The record.
    public let record: Target
    /// The related records of each included relationship, by name: `[Prefetched<Destination>]`.
    let related: [String: any Sendable]

    /// The records of an included to-many relationship, in its order when it is ordered.
    public func destinations<Destination: RecordFields>(
        _ relationship: (Target.Fields) -> ToMany<Destination>
    ) throws -> [Prefetched<Destination.Target>] {
        let path = relationship(Target.Fields(path: .root)).path
        return try records((path.hops + [path.relationship]).joined(separator: "."))
    }

    /// The record of an included to-one relationship, `nil` when it is empty.
    public func destination<Destination: RecordFields>(
        _ relationship: (Target.Fields) -> ToOne<Destination>
    ) throws -> Prefetched<Destination.Target>? {
        let path = relationship(Target.Fields(path: .root)).path
        let records: [Prefetched<Destination.Target>] = try records((path.hops + [path.column]).joined(separator: "."))
        return records.first
    }

    private func records<Destination: Record>(_ name: String) throws -> [Prefetched<Destination>] {
        guard let records = related[name] as? [Prefetched<Destination>] else {
            throw StoreError.unsupportedQuery(
                "'\(name)' of \(Target.entityName) was not prefetched: add `.including { $0.\(name) }` to the request")
        }
        return records
    }
}

extension ReadContext {
    /// The request's records, each with the records of the relationships the request includes:
    /// one query for the records, then one per included relationship at each level (two for one
    /// reached through to-one hops).
    public func fetch<Target: Record>(_ request: PrefetchRequest<Target>) throws -> [Prefetched<Target>] {
        let entity = try layout.entity(Target.entityName)
        let records = try fetch(request.request)
        guard !request.inclusions.isEmpty, !records.isEmpty else {
            return records.map { Prefetched(record: $0, related: [:]) }
        }
        let ids = try parentIDs(of: records, request.request, entity: entity)
        let loaded = try request.inclusions.map { try $0.load(in: self, parent: entity, ids: ids) }
        return records.map { record in
            var related: [String: any Sendable] = [:]
            for (inclusion, byParent) in zip(request.inclusions, loaded) {
                related[inclusion.name] = byParent[record.id.uuid] ?? inclusion.none
            }
            return Prefetched(record: record, related: related)
        }
    }
}

extension ReadContext {
    /// The most parents whose IDs an inclusion's query binds; above it, the query runs the parents'
    /// request again (SQLite allows 32,766 parameters in a statement, PostgreSQL 65,535).
    static let boundParentsAtMost = 10_000

    /// The subquery that selects the parents' IDs for the inclusions' queries, and its arguments: the
    /// fetched records' IDs, bound, so the database looks each parent up by its key. Running the
    /// parents' request again instead sorted every candidate a second time: for 1,000 of 5,000 owners
    /// by name, 20 M of the 121 M instructions prefetching their pets took, where N+1 took 79.6 M
    /// (BENCHMARKS.md, issue 31, run 6).
    fileprivate func parentIDs<Target: Record>(
        of records: [Target], _ request: FetchRequest<Target>, entity: EntityLayout
    ) throws -> (String, [SQLValue]) {
        guard records.count <= Self.boundParentsAtMost else { return try select("t0.\"id\"", request, entity: entity) }
        // Rendered as a list test, so an engine with few parameters (PostgreSQL) binds one array.
        var renderer = SQLPredicateRenderer(layout: layout, dialect: connection.dialect)
        let test = try renderer.render(
            .inList(ColumnPath(column: "id"), records.map(\.id.sqlValue)), entity: entity, alias: "t0")
        return ("SELECT t0.\"id\" FROM \(quoted(entity.table)) t0 WHERE \(test)", renderer.arguments)
    }
}

extension Store {
    /// The request's records with their included relationships' records now, then again after
    /// every commit that changes any of them: a write to the records, to the related records or to
    /// the links between them. A commit that touches none of these wakes nothing, and a result
    /// equal to the last one delivered is not delivered again.
    ///
    /// ```swift
    /// for try await users in store.observe(User.request().including { $0.trips }) {
    ///     show(users)
    /// }
    /// ```
    public func observe<Target: Record>(
        _ request: PrefetchRequest<Target>
    ) -> AsyncThrowingStream<[Prefetched<Target>], Error> {
        observedValues(
            of: request.request,
            extraReads: { layout, reads in
                let entity = try layout.entity(Target.entityName)
                for inclusion in request.inclusions {
                    try inclusion.collectReads(in: layout, from: entity, into: &reads)
                }
            },
            read: { try $0.fetch(request) },
            isSame: { last, records in
                last.count == records.count
                    && !zip(last, records).contains { !$0.isSame(as: $1, including: request.inclusions) }
            },
            deliver: { $0 })
    }
}

extension Prefetched {
    /// Whether the two hold the same record and the same related records, for the change check
    /// of an observed request.
    func isSame(as other: Prefetched, including inclusions: [any PrefetchInclusion]) -> Bool {
        guard record == other.record else { return false }
        return inclusions.allSatisfy { inclusion in
            inclusion.isSame(related[inclusion.name] ?? inclusion.none, other.related[inclusion.name] ?? inclusion.none)
        }
    }
}

/// One included relationship, whatever its destination type: it loads its records for every
/// parent the `ids` subquery selects, in one query, and those of its nested inclusions.
protocol PrefetchInclusion: Sendable {
    /// What it reads, from `parent`, with its nested inclusions, for observation.
    func collectReads(in layout: SchemaLayout, from parent: EntityLayout, into reads: inout ReadSet) throws
    /// Whether two of its values (`[Prefetched<Destination>]`) hold the same records.
    func isSame(_ left: any Sendable, _ right: any Sendable) -> Bool
    /// The relationship's name on the parent.
    var name: String { get }
    /// Loads the relationship's records, grouped by parent ID: each value is a
    /// `[Prefetched<Destination>]`, boxed once here (casting the whole dictionary out of a box for
    /// every parent cost more than the queries saved).
    func load(in context: ReadContext, parent: EntityLayout, ids: (String, [SQLValue])) throws -> [UUID: any Sendable]
    /// The records of a parent with none: an empty `[Prefetched<Destination>]`.
    var none: any Sendable { get }
}

/// An included relationship whose destination is `Destination`.
private struct Inclusion<Destination: Record>: PrefetchInclusion {
    /// The to-one relationships followed before the included one, from the parent.
    let hops: [String]
    /// The included relationship, on the record the hops reach.
    let relationship: String
    let nested: [any PrefetchInclusion]

    var name: String { (hops + [relationship]).joined(separator: ".") }
    var none: any Sendable { [Prefetched<Destination>]() }

    func collectReads(in layout: SchemaLayout, from parent: EntityLayout, into reads: inout ReadSet) throws {
        let destination = try layout.collectReads(ofIncluded: relationship, through: hops, from: parent, into: &reads)
        for inclusion in nested {
            try inclusion.collectReads(in: layout, from: destination, into: &reads)
        }
    }

    func isSame(_ left: any Sendable, _ right: any Sendable) -> Bool {
        guard let left = left as? [Prefetched<Destination>], let right = right as? [Prefetched<Destination>],
            left.count == right.count
        else { return false }
        return zip(left, right).allSatisfy { $0.isSame(as: $1, including: nested) }
    }

    func load(in context: ReadContext, parent: EntityLayout, ids: (String, [SQLValue])) throws -> [UUID: any Sendable] {
        guard !hops.isEmpty else { return try load(relationship, in: context, parent: parent, ids: ids) }
        // Two queries for the level: which record each parent reaches through the hops, then the
        // relationship's records for all those records at once.
        var joins = "FROM (\(ids.0)) p JOIN \(quoted(parent.table)) h0 ON h0.\"id\" = p.\"id\""
        var reached = parent
        for (index, hop) in hops.enumerated() {
            let (relationship, next) = try context.layout.destination(of: hop, from: reached)
            guard relationship.cardinality == .toOne else {
                throw StoreError.unsupportedQuery("'\(hop)' of \(reached.name) is not a to-one relationship")
            }
            joins +=
                " JOIN \(quoted(next.table)) h\(index + 1) "
                + "ON h\(index + 1).\"id\" = h\(index).\(quoted(reached.columnName(hop)))"
            reached = next
        }
        let end = "h\(hops.count).\"id\""
        var ends: [(parent: UUID, end: UUID)] = []
        // Prepared each time, not cached: the text varies with the number of parents bound.
        let statement = try context.connection.prepare("SELECT p.\"id\", \(end) \(joins)")
        do {
            defer { statement.reset() }
            for (index, argument) in ids.1.enumerated() {
                statement.bind(argument, Int32(index + 1))
            }
            while try statement.step() {
                guard let parent = statement.uuid(0), let end = statement.uuid(1) else { continue }
                ends.append((parent, end))
            }
        }
        let byEnd = try load(
            relationship, in: context, parent: reached, ids: ("SELECT DISTINCT \(end) AS \"id\" \(joins)", ids.1))
        var byParent: [UUID: any Sendable] = [:]
        for (parent, end) in ends {
            byParent[parent] = byEnd[end]
        }
        return byParent
    }

    /// Loads `name`, a relationship of `parent` itself, for every parent the `ids` subquery selects.
    private func load(
        _ name: String, in context: ReadContext, parent: EntityLayout, ids: (String, [SQLValue])
    ) throws -> [UUID: any Sendable] {
        let layout = context.layout
        let (relationship, destination) = try layout.destination(of: name, from: parent)
        guard destination.name == Destination.entityName || destination.entityNames.contains(Destination.entityName)
        else { throw StoreError.unsupportedQuery("'\(name)' does not reach \(Destination.entityName)") }
        let (parentIDs, arguments) = ids
        let select = "t0.\"id\"" + destination.columns.map { ", t0." + quoted($0.name) }.joined()
        let discriminator = destination.discriminatorSQL(alias: "t0").map { " WHERE " + $0 } ?? ""
        // The parents drive each query (`FROM (parents) p JOIN …`), so SQLite looks their records
        // up through the relationship's index instead of scanning the destination table for an `IN`.
        let parents = "FROM (\(parentIDs)) p"
        let rows: String
        let childIDs: String
        if relationship.cardinality == .toOne {
            let column = quoted(parent.columnName(name))
            let from = "\(parents) JOIN \(quoted(parent.table)) o ON o.\"id\" = p.\"id\""
            rows =
                "SELECT o.\"id\", \(select) \(from) JOIN \(quoted(destination.table)) t0 "
                + "ON t0.\"id\" = o.\(column)\(discriminator)"
            childIDs = "SELECT DISTINCT o.\(column) AS \"id\" \(from) WHERE o.\(column) IS NOT NULL"
        } else {
            switch try layout.storage(of: relationship, from: parent) {
            case .inverseColumn(let inverse, let position):
                let owner = "t0.\(quoted(inverse))"
                let from = "\(parents) JOIN \(quoted(destination.table)) t0 ON \(owner) = p.\"id\"\(discriminator)"
                rows =
                    "SELECT \(owner), \(select) \(from) "
                    + "ORDER BY \(owner), \(position.map { "t0." + quoted($0) } ?? "t0.\"id\"")"
                childIDs = "SELECT DISTINCT t0.\"id\" AS \"id\" \(from)"
            case .joinTable(let table, let source, let target, let position):
                let from =
                    "\(parents) JOIN \(quoted(table)) j ON j.\(quoted(source)) = p.\"id\" "
                    + "JOIN \(quoted(destination.table)) t0 ON t0.\"id\" = j.\(quoted(target))\(discriminator)"
                rows =
                    "SELECT j.\(quoted(source)), \(select) \(from) "
                    + "ORDER BY j.\(quoted(source)), \(position.map { "j." + quoted($0) } ?? "t0.\"id\"")"
                childIDs = "SELECT DISTINCT t0.\"id\" AS \"id\" \(from)"
            }
        }
        var loaded: [(parent: UUID, record: Destination)] = []
        // Prepared each time, not cached: the text varies with the number of parents bound.
        let statement = try context.connection.prepare(rows)
        do {
            defer { statement.reset() }
            for (index, argument) in arguments.enumerated() {
                statement.bind(argument, Int32(index + 1))
            }
            while try statement.step() {
                guard let owner = statement.uuid(0), let id = statement.uuid(1) else {
                    throw StoreError.invalidValue(entity: destination.name, message: "a row has no valid ID")
                }
                var row = RowDecoder(statement: statement, firstIndex: 2)
                do {
                    loaded.append((owner, try Destination(id: RecordID(id), row: &row)))
                } catch let error as ColumnValueError {
                    throw StoreError.invalidValue(entity: destination.name, message: error.message)
                }
            }
        }
        let nestedLoaded = try nested.map { try $0.load(in: context, parent: destination, ids: (childIDs, arguments)) }
        var byParent: [UUID: [Prefetched<Destination>]] = [:]
        for (owner, record) in loaded {
            var related: [String: any Sendable] = [:]
            for (inclusion, values) in zip(nested, nestedLoaded) {
                related[inclusion.name] = values[record.id.uuid] ?? inclusion.none
            }
            byParent[owner, default: []].append(Prefetched(record: record, related: related))
        }
        return byParent.mapValues { $0 }
    }
}
