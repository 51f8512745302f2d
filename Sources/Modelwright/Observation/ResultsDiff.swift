import Foundation

/// The ``ResultsChanges`` between two snapshots: sections matched by their key, records by ID.
///
/// Records at the same place at both ends (the common prefix and suffix, in the same section) are
/// skipped without hashing; the rest is compared with a shortest edit script (``EditScript``), so
/// a commit that touches a few rows of a long list costs a pass over its IDs and almost no memory.
/// When the script would be long, every ID of the rest is hashed instead, and records in both
/// snapshots keep their place when they form the longest run still in order. Either way a record
/// whose values changed is the one that moves when it and an unchanged neighbour swap.
enum ResultsDiff {
    /// The changes from `old` to `new`, where `updated` are the records whose values changed;
    /// an edit script longer than `maxEdits` gives way to hashing.
    static func changes<Target: Record>(
        from old: ResultsSnapshot<Target>, to new: ResultsSnapshot<Target>, updated: Set<Target.ID>,
        maxEdits: Int = 256
    ) -> ResultsChanges<Target.ID> {
        var changes = ResultsChanges<Target.ID>()
        let oldKeys = Set(old.sections.map(\.key))
        let newKeys = Set(new.sections.map(\.key))
        changes.deletedSections = IndexSet(old.sections.indices.filter { !newKeys.contains(old.sections[$0].key) })
        changes.insertedSections = IndexSet(new.sections.indices.filter { !oldKeys.contains(new.sections[$0].key) })

        let (oldWindow, newWindow) = differingWindows(old, new)
        let (inserted, deleted, moved) =
            editScriptChanges(old, new, oldWindow, newWindow, updated: updated, maxEdits: maxEdits)
            ?? hashedChanges(old, new, oldWindow, newWindow, updated: updated)
        changes.insertedRecords = inserted.map { position in
            ResultsRecordChange(id: new.ids[position], from: nil, to: new.indexPath(ofPosition: position))
        }
        changes.deletedRecords = deleted.sorted(by: >).map { position in
            ResultsRecordChange(id: old.ids[position], from: old.indexPath(ofPosition: position), to: nil)
        }
        changes.movedRecords = moved.sorted { $0.new < $1.new }.map { pair in
            ResultsRecordChange(
                id: new.ids[pair.new], from: old.indexPath(ofPosition: pair.old),
                to: new.indexPath(ofPosition: pair.new))
        }
        let movedIDs = Set(moved.map { new.ids[$0.new] })
        changes.updatedRecords = updatedRecords(old, new, updated.subtracting(movedIDs))
        changes.movedRecordsWithNewValues = changes.movedRecords.filter { updated.contains($0.id) }
        return changes
    }

    /// Positions inserted (new), deleted (old) and moved (both) inside the windows.
    private typealias WindowChanges = (inserted: [Int], deleted: [Int], moved: [(new: Int, old: Int)])

    /// The window's changes from a shortest edit script, or `nil` when it would take more than a
    /// few hundred edits. Records whose values changed never count as kept by the script: they
    /// are deleted and inserted, then stay in place when they still fit between the kept records.
    private static func editScriptChanges<Target: Record>(
        _ old: ResultsSnapshot<Target>, _ new: ResultsSnapshot<Target>, _ oldWindow: Range<Int>,
        _ newWindow: Range<Int>, updated: Set<Target.ID>, maxEdits: Int
    ) -> WindowChanges? {
        let (oldStart, newStart) = (oldWindow.lowerBound, newWindow.lowerBound)
        guard
            let script = EditScript(
                oldCount: oldWindow.count, newCount: newWindow.count, maxEdits: maxEdits,
                equal: { i, j in
                    let id = old.ids[oldStart + i]
                    guard id == new.ids[newStart + j], !updated.contains(id) else { return false }
                    return sectionKey(of: old, at: oldStart + i) == sectionKey(of: new, at: newStart + j)
                })
        else { return nil }
        var deletedByID: [Target.ID: Int] = [:]
        for position in script.deleted { deletedByID[old.ids[oldStart + position]] = position }
        var result: WindowChanges = ([], [], [])
        var lastStayed = (new: -1, old: -1)
        for position in script.inserted {
            let id = new.ids[newStart + position]
            guard let oldPosition = deletedByID.removeValue(forKey: id) else {
                result.inserted.append(newStart + position)
                continue
            }
            let previous = max(lastStayed.old, script.keptOld(before: position))
            let inOrder: Bool = previous < oldPosition && oldPosition < script.keptOld(after: position)
            let sameSection: Bool =
                sectionKey(of: old, at: oldStart + oldPosition) == sectionKey(of: new, at: newStart + position)
            if updated.contains(id), inOrder, sameSection {
                lastStayed = (position, oldPosition)
            } else {
                result.moved.append((newStart + position, oldStart + oldPosition))
            }
        }
        result.deleted = deletedByID.values.map { oldStart + $0 }
        return result
    }

    /// The window's changes by hashing every ID in it: for commits that change too much for an
    /// edit script to be cheap.
    private static func hashedChanges<Target: Record>(
        _ old: ResultsSnapshot<Target>, _ new: ResultsSnapshot<Target>, _ oldWindow: Range<Int>,
        _ newWindow: Range<Int>, updated: Set<Target.ID>
    ) -> WindowChanges {
        var oldPositions: [Target.ID: Int] = [:]
        oldPositions.reserveCapacity(oldWindow.count)
        for position in oldWindow { oldPositions[old.ids[position]] = position }
        var inserted: [Int] = []
        var stayed: [(new: Int, old: Int)] = []
        var moved: [(new: Int, old: Int)] = []
        for position in newWindow {
            let id = new.ids[position]
            guard let oldPosition = oldPositions.removeValue(forKey: id) else {
                inserted.append(position)
                continue
            }
            if sectionKey(of: old, at: oldPosition) == sectionKey(of: new, at: position) {
                stayed.append((position, oldPosition))
            } else {
                moved.append((position, oldPosition))
            }
        }
        let inOrder = recordsInPlace(stayed.map(\.old), isUpdated: stayed.map { updated.contains(new.ids[$0.new]) })
        for (index, pair) in stayed.enumerated() where !inOrder.contains(index) { moved.append(pair) }
        return (inserted, Array(oldPositions.values), moved)
    }

    /// The positions outside the longest common prefix and suffix of the two snapshots (same ID,
    /// same section key).
    private static func differingWindows<Target: Record>(
        _ old: ResultsSnapshot<Target>, _ new: ResultsSnapshot<Target>
    ) -> (Range<Int>, Range<Int>) {
        let limit = min(old.count, new.count)
        var prefix = 0
        while prefix < limit, old.ids[prefix] == new.ids[prefix],
            sectionKey(of: old, at: prefix) == sectionKey(of: new, at: prefix)
        {
            prefix += 1
        }
        var suffix = 0
        while suffix < limit - prefix {
            let (oldPosition, newPosition) = (old.count - 1 - suffix, new.count - 1 - suffix)
            guard old.ids[oldPosition] == new.ids[newPosition],
                sectionKey(of: old, at: oldPosition) == sectionKey(of: new, at: newPosition)
            else { break }
            suffix += 1
        }
        return (prefix..<(old.count - suffix), prefix..<(new.count - suffix))
    }

    /// Records in both snapshots, not moved, whose values changed: found by one pass over each
    /// snapshot's IDs, only when some record changed.
    private static func updatedRecords<Target: Record>(
        _ old: ResultsSnapshot<Target>, _ new: ResultsSnapshot<Target>, _ updated: Set<Target.ID>
    ) -> [ResultsRecordChange<Target.ID>] {
        guard !updated.isEmpty else { return [] }
        var oldPositions: [Target.ID: Int] = [:]
        for (position, id) in old.ids.enumerated() where updated.contains(id) { oldPositions[id] = position }
        var records: [ResultsRecordChange<Target.ID>] = []
        for (position, id) in new.ids.enumerated() {
            guard let oldPosition = oldPositions[id] else { continue }
            records.append(
                ResultsRecordChange(
                    id: id, from: old.indexPath(ofPosition: oldPosition), to: new.indexPath(ofPosition: position)))
        }
        return records
    }

    private static func sectionKey<Target: Record>(of snapshot: ResultsSnapshot<Target>, at position: Int) -> SQLValue {
        snapshot.sections[snapshot.sectionIndex(ofPosition: position)].key
    }

    /// Which records keep their place, given their old positions in new order: the longest run
    /// still in order among records whose values did not change, plus each changed record that
    /// still fits between its kept neighbours. So when two records swap, the one whose values
    /// changed (a new title, say) is the one that moves.
    static func recordsInPlace(_ oldPositions: [Int], isUpdated: [Bool]) -> Set<Int> {
        let unchanged = oldPositions.indices.filter { !isUpdated[$0] }
        let base = Set(longestIncreasingRun(unchanged.map { oldPositions[$0] }).map { unchanged[$0] })
        var nextKept = [Int](repeating: Int.max, count: oldPositions.count)
        var next = Int.max
        for index in oldPositions.indices.reversed() {
            nextKept[index] = next
            if base.contains(index) { next = oldPositions[index] }
        }
        var kept: Set<Int> = []
        var lastKept = Int.min
        for index in oldPositions.indices {
            let position = oldPositions[index]
            if base.contains(index) || (position > lastKept && position < nextKept[index]) {
                kept.insert(index)
                lastKept = position
            }
        }
        return kept
    }

    /// The indexes of one longest strictly increasing subsequence of `values` (patience sorting).
    static func longestIncreasingRun(_ values: [Int]) -> Set<Int> {
        var tails: [Int] = []
        var previous = [Int](repeating: -1, count: values.count)
        for (index, value) in values.enumerated() {
            var low = 0
            var high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
            }
            previous[index] = low > 0 ? tails[low - 1] : -1
            if low == tails.count { tails.append(index) } else { tails[low] = index }
        }
        var run: Set<Int> = []
        var index = tails.last ?? -1
        while index >= 0 {
            run.insert(index)
            index = previous[index]
        }
        return run
    }
}
