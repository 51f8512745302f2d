import Foundation

/// One section of a ``ResultsSnapshot``: the records that share a value of the section key.
public struct ResultsSection: Sendable, Hashable {
    /// The section's name: the section key's value, as the controller's `sectionName` spells it.
    public let name: String
    /// The title of the section in a section index: the name's first letter, uppercased.
    public let indexTitle: String
    /// The positions of the section's records in ``ResultsSnapshot/ids``.
    public let range: Range<Int>
    /// The stored value of the section key, which identifies the section across snapshots.
    let key: SQLValue

    /// How many records the section holds.
    public var count: Int { range.count }
}

/// A request's result at one moment, as a list shows it: the IDs of its records in order, in
/// sections. Records load on demand, a batch at a time, so a snapshot of 100,000 rows holds
/// 100,000 IDs and no records.
///
/// ```swift
/// let snapshot = update.snapshot
/// for (index, section) in snapshot.sections.enumerated() {
///     print(section.name, section.count)
///     let first = try snapshot.record(at: IndexPath(indexes: [index, 0]))
/// }
/// ```
///
/// Index paths hold two indexes, the section's and the record's within it, as
/// `IndexPath(row:section:)` makes them on Apple platforms.
///
/// ## Topics
///
/// ### Contents
/// - ``sections``
/// - ``ids``
/// - ``count``
/// - ``sectionIndexTitles``
///
/// ### Finding records
/// - ``id(at:)``
/// - ``indexPath(of:)``
/// - ``record(at:)``
public struct ResultsSnapshot<Target: Record>: Sendable, Equatable {
    /// The sections, in the request's order; a controller without a section key has exactly one, named "".
    public let sections: [ResultsSection]
    /// Every record's ID, in order, section after section.
    public let ids: [Target.ID]
    /// Loads records for ``record(at:)``; shared by the snapshots of one observation.
    let loader: RecordLoader<Target>

    /// How many records the snapshot holds.
    public var count: Int { ids.count }

    /// The distinct section index titles, in order, for a table view's section index.
    public var sectionIndexTitles: [String] {
        var seen: Set<String> = []
        return sections.map(\.indexTitle).filter { seen.insert($0).inserted }
    }

    /// The ID at an index path.
    public func id(at indexPath: IndexPath) -> Target.ID {
        ids[sections[indexPath[0]].range.lowerBound + indexPath[1]]
    }

    /// Where a record is, or `nil` when the snapshot does not hold it.
    public func indexPath(of id: Target.ID) -> IndexPath? {
        ids.firstIndex(of: id).map(indexPath(ofPosition:))
    }

    /// The index path of the record at `position` in ``ids``.
    func indexPath(ofPosition position: Int) -> IndexPath {
        let section = sectionIndex(ofPosition: position)
        return IndexPath(indexes: [section, position - sections[section].range.lowerBound])
    }

    /// The section holding `position`, by binary search over the sections' ranges.
    func sectionIndex(ofPosition position: Int) -> Int {
        var low = 0
        var high = sections.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if sections[middle].range.lowerBound <= position { low = middle } else { high = middle - 1 }
        }
        return low
    }

    /// The record at an index path, loaded with the others of its batch on first use; later
    /// calls in the batch read memory. Throws ``StoreError/recordNotFound(entity:id:)`` when the
    /// record was deleted after this snapshot was taken.
    ///
    /// This reads the store synchronously: call it from the code that shows the record, not from
    /// inside a `performQuery` or `performAndSave` closure.
    public func record(at indexPath: IndexPath) throws -> Target {
        let position = sections[indexPath[0]].range.lowerBound + indexPath[1]
        return try loader.record(at: position, in: ids)
    }

    /// Whether both snapshots have the same sections and IDs in the same order.
    public static func == (lhs: ResultsSnapshot, rhs: ResultsSnapshot) -> Bool {
        lhs.ids == rhs.ids && lhs.sections == rhs.sections
    }
}

/// The records a snapshot has loaded, by ID, a few batches at a time: the controller's
/// `fetchBatchSize`. Loading a batch past the limit forgets the oldest one.
final class RecordLoader<Target: Record>: Sendable {
    private let store: Store
    private let batchSize: Int
    /// How many batches stay loaded.
    private let batchLimit = 8
    private let cache = Locked(Cache())

    private struct Cache {
        var records: [Target.ID: Target] = [:]
        var batches: [[Target.ID]] = []
    }

    init(store: Store, batchSize: Int) {
        self.store = store
        self.batchSize = max(1, batchSize)
    }

    /// The record at `position` of `ids`, loading the batch around it when it is not loaded.
    func record(at position: Int, in ids: [Target.ID]) throws -> Target {
        let id = ids[position]
        if let record = cache.withLock({ $0.records[id] }) { return record }
        let start = position - position % batchSize
        let batch = Array(ids[start..<min(start + batchSize, ids.count)])
        let records = try store.readNow { context in
            try context.fetch(FetchRequest<Target>(condition: .inList(ColumnPath(column: "id"), batch.map(\.sqlValue))))
        }
        cache.withLock { cache in
            if cache.batches.count >= batchLimit {
                for old in cache.batches.removeFirst() { cache.records[old] = nil }
            }
            cache.batches.append(batch)
            for record in records { cache.records[record.id] = record }
        }
        guard let record = records.first(where: { $0.id == id }) else {
            throw StoreError.recordNotFound(entity: Target.entityName, id: id.description)
        }
        return record
    }

    /// Forgets records whose stored values changed.
    func forget(_ ids: Set<Target.ID>) {
        guard !ids.isEmpty else { return }
        cache.withLock { cache in
            for id in ids { cache.records[id] = nil }
        }
    }
}
