import Foundation

/// How one snapshot of a results controller became the next, in the order a table view's batch
/// update (`performBatchUpdates`) or a collection of nested arrays applies it: delete the
/// ``deletedRecords`` and the sources of ``movedRecords`` (by their old index paths, last first),
/// then the ``deletedSections`` (last first), insert the ``insertedSections`` (first first), then
/// the ``insertedRecords`` and the destinations of ``movedRecords`` (by their new index paths,
/// first first). ``updatedRecords`` changed values in place; a moved record whose values changed
/// too is also in ``movedRecordsWithNewValues``, so its cell shows the new values after the move.
///
/// ```swift
/// tableView.performBatchUpdates {
///     tableView.deleteRows(at: changes.deletedRecords.compactMap(\.from), with: .automatic)
///     tableView.deleteSections(changes.deletedSections, with: .automatic)
///     tableView.insertSections(changes.insertedSections, with: .automatic)
///     tableView.insertRows(at: changes.insertedRecords.compactMap(\.to), with: .automatic)
///     for move in changes.movedRecords { tableView.moveRow(at: move.from!, to: move.to!) }
///     tableView.reloadRows(at: changes.updatedRecords.compactMap(\.from), with: .none)
/// }
/// // A moved row is not reloaded in the batch (UIKit refuses a move and a reload of one row).
/// tableView.reconfigureRows(at: changes.movedRecordsWithNewValues.compactMap(\.to))
/// ```
///
/// A diffable data source needs only the new snapshot's IDs and, to reconfigure cells,
/// ``recordsWithNewValues``: every record whose values changed, moved or not.
public struct ResultsChanges<ID: Hashable & Sendable>: Sendable, Hashable {
    /// Sections no longer there, by their index in the old snapshot, in ascending order.
    public var deletedSections: IndexSet
    /// New sections, by their index in the new snapshot, in ascending order.
    public var insertedSections: IndexSet
    /// Records no longer there (`from` only), last index path first.
    public var deletedRecords: [ResultsRecordChange<ID>]
    /// New records (`to` only), first index path first.
    public var insertedRecords: [ResultsRecordChange<ID>]
    /// Records that changed place (`from` and `to`): to another section, or out of order with
    /// their neighbours; in the order of their new index paths.
    public var movedRecords: [ResultsRecordChange<ID>]
    /// Records that stayed in place and whose stored values changed (`from` and `to`), in the
    /// order of their new index paths. A moved record whose values changed is only in ``movedRecords``.
    public var updatedRecords: [ResultsRecordChange<ID>]
    /// The records of ``movedRecords`` whose stored values changed too, in the same order: a
    /// table view reconfigures them at their new index paths after its batch update.
    public var movedRecordsWithNewValues: [ResultsRecordChange<ID>]

    /// Every record whose stored values changed, moved or in place (``updatedRecords`` and
    /// ``movedRecordsWithNewValues``), in the order of their new index paths: what a diffable
    /// data source reconfigures.
    public var recordsWithNewValues: [ResultsRecordChange<ID>] {
        guard !movedRecordsWithNewValues.isEmpty else { return updatedRecords }
        return (updatedRecords + movedRecordsWithNewValues).sorted { ($0.to ?? IndexPath()) < ($1.to ?? IndexPath()) }
    }

    /// A change set; every part defaults to empty.
    public init(
        deletedSections: IndexSet = [], insertedSections: IndexSet = [],
        deletedRecords: [ResultsRecordChange<ID>] = [], insertedRecords: [ResultsRecordChange<ID>] = [],
        movedRecords: [ResultsRecordChange<ID>] = [], updatedRecords: [ResultsRecordChange<ID>] = [],
        movedRecordsWithNewValues: [ResultsRecordChange<ID>] = []
    ) {
        self.deletedSections = deletedSections
        self.insertedSections = insertedSections
        self.deletedRecords = deletedRecords
        self.insertedRecords = insertedRecords
        self.movedRecords = movedRecords
        self.updatedRecords = updatedRecords
        self.movedRecordsWithNewValues = movedRecordsWithNewValues
    }

    /// Whether nothing changed.
    public var isEmpty: Bool {
        deletedSections.isEmpty && insertedSections.isEmpty && deletedRecords.isEmpty && insertedRecords.isEmpty
            && movedRecords.isEmpty && updatedRecords.isEmpty
    }
}

/// One record's part in a ``ResultsChanges``: where it was (`from`, in the old snapshot) and
/// where it is (`to`, in the new one).
public struct ResultsRecordChange<ID: Hashable & Sendable>: Sendable, Hashable {
    /// The record.
    public let id: ID
    /// Its index path in the old snapshot; `nil` for an insertion.
    public let from: IndexPath?
    /// Its index path in the new snapshot; `nil` for a deletion.
    public let to: IndexPath?

    /// A record's change, from one index path to another.
    public init(id: ID, from: IndexPath?, to: IndexPath?) {
        self.id = id
        self.from = from
        self.to = to
    }
}

/// What a results controller delivers: the new snapshot, and how it differs from the one
/// delivered before (`nil` for the first).
public struct ResultsUpdate<Target: Record>: Sendable {
    /// The request's result now.
    public let snapshot: ResultsSnapshot<Target>
    /// The changes since the previous snapshot; `nil` for the first.
    public let changes: ResultsChanges<Target.ID>?
}
