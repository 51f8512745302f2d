import Foundation

/// A set of changes, at most one ``RowChange`` per row: what a push or a pull carries, and what a
/// replica holds. Merging is the join of the changes row by row, so it is commutative,
/// associative and idempotent: a change delivered twice, late, or in another order leaves the
/// same result.
///
/// ```swift
/// var clock = HybridLogicalClock(node: SyncNodeID(), maximumDriftMilliseconds: HybridLogicalClock.unbounded)
/// let stamp = try clock.tick(wallMilliseconds: HybridLogicalClock.wallMilliseconds())
/// let key = RowKey(entity: "Trip", id: UUID())
/// var replica = ChangeSet()
/// replica.merge(RowChange.insert(key, values: ["title": .text("Lisbon")], at: stamp))
/// ```
///
/// See <doc:Sync> for the rules.
public struct ChangeSet: Sendable, Hashable {
    /// The change of each row.
    public private(set) var rows: [RowKey: RowChange]

    /// An empty set.
    public init() {
        rows = [:]
    }

    /// The changes, those of one row merged.
    public init(_ changes: some Sequence<RowChange>) {
        rows = [:]
        for change in changes { merge(change) }
    }

    /// Whether it holds no change.
    public var isEmpty: Bool { rows.isEmpty }

    /// The rows' changes in ``RowKey`` order.
    public var sortedChanges: [RowChange] {
        rows.keys.sorted().compactMap { rows[$0] }
    }

    /// The rows that are alive, in ``RowKey`` order.
    public var aliveRows: [RowChange] {
        sortedChanges.filter(\.isAlive)
    }

    /// The latest timestamp of any change: what a receiver checks against its clock.
    public var latestStamp: HybridTimestamp? {
        rows.values.reduce(nil) { latest($0, $1.latestStamp) }
    }

    /// Merges one change into its row's.
    public mutating func merge(_ change: RowChange) {
        if let existing = rows[change.key] {
            rows[change.key] = existing.merged(with: change)
        } else {
            rows[change.key] = change
        }
    }

    /// Merges every change of `other`.
    public mutating func merge(_ other: ChangeSet) {
        for change in other.rows.values { merge(change) }
    }

    /// This set with every change of `other` merged.
    public func merging(_ other: ChangeSet) -> ChangeSet {
        var result = self
        result.merge(other)
        return result
    }
}

// MARK: - Codable

extension ChangeSet: Codable {
    /// Decodes a list of changes; two changes of one row are merged.
    public init(from decoder: any Decoder) throws {
        self.init(try [RowChange](from: decoder))
    }

    /// Encodes the changes as a list in ``RowKey`` order, so equal sets encode to equal bytes.
    public func encode(to encoder: any Encoder) throws {
        try sortedChanges.encode(to: encoder)
    }
}
