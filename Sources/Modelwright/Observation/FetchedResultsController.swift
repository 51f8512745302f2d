import Foundation

/// Core Data's `NSFetchedResultsController` for immutable records: a request's result as a
/// sectioned list, delivered again with a change set after every commit that changes it.
///
/// ```swift
/// let controller = FetchedResultsController(
///     store: store,
///     request: Trip.request().sorted { [$0.startsOn.descending] },
///     sectionedBy: { $0.owner.familyName }
/// )
/// for try await update in controller {
///     apply(update.changes, showing: update.snapshot)   // `changes` is nil the first time
/// }
/// ```
///
/// - Sections group the records that share the value of the section key, any field of the
///   record or one reached through to-one relationships; the key is sorted by first (the
///   request's own order follows, then the row's insertion order, so the order is total and
///   moves are real).
/// - A commit that changes no column the request or the section key reads, or writes the
///   values already stored, costs nothing; one that leaves the result as it was delivers nothing.
/// - Snapshots hold IDs and section boundaries, and load records `batchSize` at a time when
///   asked (Core Data's `fetchBatchSize`), so a list of 100,000 rows never holds 100,000 records.
/// - A request for a record's ordered to-many relationship (`user.request { $0.stops }`) keeps
///   the relationship's order only without a section key and a sort order of its own.
/// - Each iteration observes on its own; ending it (the task cancelled, the loop left) or
///   closing the store stops all work. SwiftUI views and view models use ``FetchedResultsModel``.
///
/// ## Topics
///
/// ### Creating a controller
/// - ``init(store:request:batchSize:)``
/// - ``init(store:request:sectionedBy:ascending:sectionName:batchSize:)``
///
/// ### Observing
/// - ``updates()``
public final class FetchedResultsController<Target: Record>: AsyncSequence, Sendable {
    /// Each snapshot with the changes that led to it.
    public typealias Element = ResultsUpdate<Target>
    /// The iterator of ``updates()``.
    public typealias AsyncIterator = AsyncThrowingStream<ResultsUpdate<Target>, Error>.Iterator

    /// The store observed.
    public let store: Store
    /// The request as the controller runs it: sorted by the section key first and, last, by the
    /// order rows were inserted in, which tells apart records equal in every other key.
    public let request: FetchRequest<Target>
    /// How many records a snapshot loads at a time.
    public let batchSize: Int
    private let sectionKey: ColumnPath?
    private let sectionName: @Sendable (SQLValue) -> String

    /// A controller whose snapshots have one section, named "", with every record.
    public init(store: Store, request: FetchRequest<Target>, batchSize: Int = 50) {
        self.store = store
        self.request = Self.totallyOrdered(request, sectionKey: nil, schema: store.schema)
        self.batchSize = batchSize
        sectionKey = nil
        sectionName = { _ in "" }
    }

    /// A controller whose snapshots have a section for each value of `key`, in `ascending` or
    /// descending order of the key, then in the request's order. `sectionName` spells a value as
    /// the section's name (by default, as Swift prints it; a missing value is "").
    public init<Value: ColumnValue>(
        store: Store,
        request: FetchRequest<Target>,
        sectionedBy key: (Target.Fields) -> Field<Value>,
        ascending: Bool = true,
        sectionName: @escaping @Sendable (Value) -> String = FetchedResultsController.describe,
        batchSize: Int = 50
    ) {
        let path = key(Target.Fields(path: .root)).path
        self.store = store
        self.request = Self.totallyOrdered(
            request, sectionKey: SortKey(path: path, ascending: ascending), schema: store.schema)
        self.batchSize = batchSize
        sectionKey = path
        self.sectionName = { value in
            guard value != .null, let decoded = try? Value(sqlValue: value) else { return "" }
            return sectionName(decoded)
        }
    }

    /// A value as Swift prints it, an optional's wrapped value included.
    @Sendable public static func describe<Value>(_ value: Value) -> String {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return "\(value)" }
        return mirror.children.first.map { "\($0.value)" } ?? ""
    }

    /// The request sorted by the section key, then its own order (the entity's default when it
    /// has none), then the row number.
    private static func totallyOrdered(
        _ request: FetchRequest<Target>, sectionKey: SortKey?, schema: SchemaDescription
    ) -> FetchRequest<Target> {
        var ordered = request
        var keys = request.sortKeys
        if keys.isEmpty, request.scope == nil {
            keys = (schema.entity(named: Target.entityName)?.defaultSort ?? []).map {
                SortKey(path: ColumnPath(column: $0.attribute), ascending: $0.ascending)
            }
        }
        if keys.isEmpty, request.scope != nil, sectionKey == nil { return request }
        if let sectionKey, keys.first?.path != sectionKey.path { keys.insert(sectionKey, at: 0) }
        if !keys.contains(where: { $0.path == ColumnPath(column: "id") }) {
            keys.append(SortKey(path: ColumnPath.rowNumber, ascending: true))
        }
        ordered.sortKeys = keys
        return ordered
    }

    /// Starts the observation: the iterator yields the first result, then one update per change.
    public func makeAsyncIterator() -> AsyncIterator {
        updates().makeAsyncIterator()
    }

    /// The first snapshot, then a snapshot with its changes after every commit that changes the
    /// result. The sequence ends when its consumer stops or the store closes, and throws when
    /// the request cannot run.
    public func updates() -> AsyncThrowingStream<ResultsUpdate<Target>, Error> {
        AsyncThrowingStream { continuation in
            let observation = ResultsObservation(controller: self, continuation: continuation)
            let token = store.observe(
                request, extraKeys: sectionKey.map { [$0] } ?? [], changed: observation.hear,
                refresh: observation.refresh,
                failure: { continuation.finish(throwing: $0) }, closed: { continuation.finish() })
            continuation.onTermination = { [store] _ in
                if let token { store.observers.remove(token) }
            }
        }
    }

    /// The current snapshot of the request, read now; `expectedCount` sizes it (see `ReadContext.snapshot`).
    func snapshot(
        in context: ReadContext, loader: RecordLoader<Target>, expectedCount: Int?
    ) throws -> ResultsSnapshot<Target> {
        try context.snapshot(
            request, sectionKey: sectionKey, sectionName: sectionName, loader: loader, expectedCount: expectedCount)
    }
}

extension ColumnPath {
    /// The engine's row number (``SQLDialect/rowNumberColumn``), which results controllers sort by
    /// last: a marker that no schema's column can be named (`#` is not in a name), which the SQL
    /// renderer replaces with the dialect's column.
    static let rowNumber = ColumnPath(column: "#rowNumber")
}

/// One iteration's state: the last snapshot delivered and the records changed since.
private final class ResultsObservation<Target: Record>: Sendable {
    private let controller: FetchedResultsController<Target>
    private let continuation: AsyncThrowingStream<ResultsUpdate<Target>, Error>.Continuation
    private let loader: RecordLoader<Target>
    private let table: String?
    private let last = Locked<ResultsSnapshot<Target>?>(nil)
    private let updated = Locked<Set<Target.ID>>([])

    init(
        controller: FetchedResultsController<Target>,
        continuation: AsyncThrowingStream<ResultsUpdate<Target>, Error>.Continuation
    ) {
        self.controller = controller
        self.continuation = continuation
        loader = RecordLoader(store: controller.store, batchSize: controller.batchSize)
        table = try? controller.store.layout.entity(Target.entityName).table
    }

    /// Notes the records a commit changed; runs on the writer, before the refresh it causes.
    func hear(_ changes: StoreChanges) {
        guard let table, let rows = changes.updatedRows[table] else { return }
        updated.withLock { $0.formUnion(rows.map { RecordID($0) }) }
    }

    /// Reads the new snapshot and delivers it with its changes, unless nothing changed.
    func refresh(_ context: ReadContext) throws {
        let changed = updated.withLock { ids in
            defer { ids = [] }
            return ids
        }
        loader.forget(changed)
        let previous = last.withLock { $0 }
        let snapshot = try controller.snapshot(in: context, loader: loader, expectedCount: previous?.count)
        guard let previous else {
            last.withLock { $0 = snapshot }
            continuation.yield(ResultsUpdate(snapshot: snapshot, changes: nil))
            return
        }
        let changes = ResultsDiff.changes(from: previous, to: snapshot, updated: changed)
        guard !changes.isEmpty else { return }
        last.withLock { $0 = snapshot }
        continuation.yield(ResultsUpdate(snapshot: snapshot, changes: changes))
    }
}
