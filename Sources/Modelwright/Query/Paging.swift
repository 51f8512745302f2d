import Foundation

/// Where a page of a keyset-paged request starts: before every record, or after one.
public enum PageStart<Target: Record>: Sendable, Hashable {
    /// The first page.
    case first
    /// The page after this record, by the request's sort and then the ID.
    case after(Target)
}

extension FetchRequest {
    /// The request's records after `record`, in the request's order with the ID breaking ties
    /// (keyset paging): pass the last record of a page to get the next page. `nil` asks for the
    /// first page, which must also be fetched this way so that ties break by ID on every page.
    ///
    /// ```swift
    /// let pageOne = try context.fetch(Trip.request().after(nil).limit(50))
    /// let pageTwo = try context.fetch(Trip.request().after(pageOne.last).limit(50))
    /// ```
    ///
    /// Unlike an offset, a keyset never skips or repeats a record when records before the page
    /// are inserted or deleted, and it costs the same on the thousandth page as on the first.
    /// The record's own values place it, so a record deleted since it was fetched still marks
    /// where its page ended. Missing values sort first when ascending and last when descending,
    /// as the store sorts them. A request over an ordered relationship's positions
    /// (``Record/request(_:)``, unsorted) cannot be paged by key: sort it.
    public func after(_ record: Target?) -> FetchRequest {
        var copy = self
        copy.pageStart = record.map { .after($0) } ?? .first
        return copy
    }
}

/// The records of a request, delivered one at a time and fetched a page at a time: a sequence
/// over any number of records that holds at most one page in memory.
///
/// ```swift
/// for try await trip in store.records(Trip.request(), pageSize: 500) {
///     print(trip.title)
/// }
/// ```
///
/// Each page is read in its own short read transaction (``FetchRequest/after(_:)``), so the
/// sequence never holds a reader or blocks a checkpoint while the app works on a record, and a
/// record inserted or deleted meanwhile is seen or missed as it would be by the next page; the
/// sequence never delivers a record twice. The request's limit and offset apply to the whole sequence.
public struct RecordSequence<Target: Record>: AsyncSequence, Sendable {
    /// The records delivered.
    public typealias Element = Target

    let store: Store
    let request: FetchRequest<Target>
    let pageSize: Int

    /// An iterator fetching the next page when the last one is used up.
    public func makeAsyncIterator() -> Iterator {
        Iterator(sequence: self)
    }

    /// Reads pages of the sequence's records as they are asked for.
    public struct Iterator: AsyncIteratorProtocol {
        private let sequence: RecordSequence
        private var page: [Target] = []
        private var position = 0
        private var delivered = 0
        private var isExhausted = false

        init(sequence: RecordSequence) {
            self.sequence = sequence
        }

        /// The next record, or `nil` after the last.
        public mutating func next() async throws -> Target? {
            if position == page.count {
                let limit = sequence.request.fetchLimit.map { $0 - delivered }
                guard !isExhausted, limit.map({ $0 > 0 }) ?? true else { return nil }
                // The first page starts where the request itself does (it may already be
                // `after(_:)` a record); later pages start after the last record delivered.
                var request = sequence.request
                if let last = page.last {
                    request = request.after(last)
                } else if request.pageStart == nil {
                    request = request.after(nil)
                }
                request.fetchOffset = page.isEmpty && delivered == 0 ? sequence.request.fetchOffset : 0
                request.fetchLimit = Swift.min(sequence.pageSize, limit ?? .max)
                let size = request.fetchLimit ?? 0
                page = try await sequence.store.performQuery { [request] in try $0.fetch(request) }
                position = 0
                isExhausted = page.count < size
                guard !page.isEmpty else { return nil }
            }
            defer {
                position += 1
                delivered += 1
            }
            return page[position]
        }
    }
}

extension Store {
    /// The request's records as an asynchronous sequence, fetched `pageSize` at a time by keyset
    /// (see ``RecordSequence``): for exports and scans over more records than fit in memory.
    public func records<Target: Record>(_ request: FetchRequest<Target>, pageSize: Int = 256) -> RecordSequence<Target>
    {
        RecordSequence(store: self, request: request, pageSize: Swift.max(pageSize, 1))
    }
}

extension ReadContext {
    /// The request with its page start turned into sort keys ending with the ID and, after a
    /// record, a condition that keeps the records sorted after it; a request without a page start
    /// unchanged.
    func resolvingPageStart<Target: Record>(_ request: FetchRequest<Target>) throws -> FetchRequest<Target> {
        guard let start = request.pageStart else { return request }
        var resolved = request
        resolved.pageStart = nil
        let entity = try layout.entity(Target.entityName)
        var keys = request.sortKeys
        if keys.isEmpty {
            guard try !orderedByPosition(request) else {
                throw StoreError.unsupportedQuery(
                    "paging an ordered relationship by its positions: sort the request to page it by key")
            }
            keys = (layout.schema.entity(named: entity.name)?.defaultSort ?? []).map {
                SortKey(path: ColumnPath(column: $0.attribute), ascending: $0.ascending)
            }
        }
        if let index = keys.firstIndex(where: { $0.path == ColumnPath(column: "id") }) {
            keys.removeSubrange((index + 1)...)
        } else {
            keys.append(SortKey(path: ColumnPath(column: "id"), ascending: true))
        }
        resolved.sortKeys = keys
        guard case .after(let record) = start else { return resolved }
        let values = try sortValues(of: record, keys: keys, entity: entity)
        let after = Self.keysetCondition(keys: keys, values: values)
        resolved.condition = request.condition.map { $0 && after } ?? after
        return resolved
    }

    /// Whether an unsorted scoped request is ordered by the positions of an ordered relationship.
    private func orderedByPosition<Target: Record>(_ request: FetchRequest<Target>) throws -> Bool {
        guard let scope = request.scope else { return false }
        let owner = try layout.entity(scope.entity)
        guard let relationship = owner.relationships.first(where: { $0.name == scope.relationship }) else {
            return false
        }
        switch try layout.storage(of: relationship, from: owner) {
        case .inverseColumn(_, let position): return position != nil
        case .joinTable(_, _, _, let position): return position != nil
        }
    }

    /// The values `record` has for the sort keys, computed by the store from the record's own
    /// columns (a one-row table of them), so that keys through to-one hops read the destination
    /// as the request's sort does.
    private func sortValues<Target: Record>(of record: Target, keys: [SortKey], entity: EntityLayout) throws
        -> [SQLValue]
    {
        let renderer = SQLPredicateRenderer(layout: layout, dialect: connection.dialect)
        let values = try keys.map { try renderer.value(at: $0.path, entity: entity, alias: "t0", numeric: false) }
        let columns = ([quoted("id")] + entity.columns.map { quoted($0.name) }).map { "\(marker) AS \($0)" }
        let statement = try connection.statement(
            "SELECT \(values.joined(separator: ", ")) FROM (SELECT \(columns.joined(separator: ", "))) t0")
        defer { statement.reset() }
        statement.bind(record.id.sqlValue, 1)
        do {
            var row = RowEncoder(statement: statement, firstIndex: 2, columns: entity.columns)
            try record.encode(to: &row)
        } catch let error as ColumnValueError {
            throw StoreError.invalidValue(entity: entity.name, message: error.message)
        }
        guard try statement.step() else { return keys.map { _ in .null } }
        return (0..<Int32(keys.count)).map { statement.value($0) }
    }

    /// Rows sorted after the anchor's `values` by `keys`: for some key, every earlier key is equal
    /// and this one comes after. A missing value sorts first ascending and last descending.
    static func keysetCondition(keys: [SortKey], values: [SQLValue]) -> Condition {
        var alternatives: [Condition] = []
        var equalSoFar: [Condition] = []
        for (key, value) in zip(keys, values) {
            let later: Condition
            switch (key.ascending, value) {
            case (true, .null): later = !isMissing(key.path)
            case (true, _): later = .comparison(key.path, .greater, value)
            case (false, .null): later = .constant(false)
            case (false, _): later = .comparison(key.path, .less, value) || isMissing(key.path)
            }
            alternatives.append(equalSoFar.isEmpty ? later : .and(equalSoFar + [later]))
            equalSoFar.append(value == .null ? isMissing(key.path) : .comparison(key.path, .equal, value))
        }
        return .or(alternatives)
    }

    /// The value at `path` is missing: the column is NULL, or a to-one hop on the way is empty
    /// (where the sort's scalar subquery gives NULL too).
    private static func isMissing(_ path: ColumnPath) -> Condition {
        var tests: [Condition] = [.comparison(path, .equal, .null)]
        for index in path.hops.indices {
            tests.append(
                .comparison(ColumnPath(hops: Array(path.hops[..<index]), column: path.hops[index]), .equal, .null))
        }
        return tests.count == 1 ? tests[0] : .or(tests)
    }
}
