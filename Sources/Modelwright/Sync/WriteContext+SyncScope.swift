import Foundation

// A device's side of scopes over time: a row that left the user's scope is dropped from the
// store (not deleted: nothing is pushed), and a to-one link whose target is out of sight is held
// as `nil`. Both write under the sync engine's author, so the engine does not stamp them.
extension WriteContext {
    /// The rows that link to row `key` through a to-one, with a foreign key or without (a to-one
    /// without inverse), by their concrete entity, in key order.
    func syncReferrers(of key: RowKey) throws -> [RowKey] {
        guard let target = layout.entities[key.entity] else { return [] }
        var result: Set<RowKey> = []
        var seen: Set<[String]> = []
        for entity in layout.entities.values.sorted(by: { $0.name < $1.name }) {
            for column in entity.columns where syncTargetTable(of: column) == target.table {
                guard seen.insert([entity.table, column.name]).inserted else { continue }
                let statement = try connection.statement(
                    "SELECT \"id\" FROM \(quoted(entity.table)) WHERE \(quoted(column.name)) = \(marker)")
                statement.bind(key.id, 1)
                var ids: [UUID] = []
                while try statement.step() {
                    if let id = statement.uuid(0) { ids.append(id) }
                }
                statement.reset()
                for id in ids {
                    if let concrete = try concreteEntity(of: id, in: entity) {
                        result.insert(RowKey(entity: concrete.name, id: id))
                    }
                }
            }
        }
        return result.sorted()
    }

    /// The table the to-one link of `column` points into, with a foreign key or without (a to-one
    /// without inverse); `nil` for a column that holds no to-one link.
    func syncTargetTable(of column: ColumnLayout) -> String? {
        column.references ?? column.destination.flatMap { layout.entities[$0]?.table }
    }

    /// Holds the to-one links `attributes` of row `key` as `nil`, and forgets them in sync's
    /// record of the row, so the device neither shows nor pushes a link to a row it may not see;
    /// the server keeps its value, and sends it again when the target comes into sight.
    ///
    /// With `keepingUnpushed` (the server hides its value), a link this device wrote after it
    /// built its last acknowledged push stays: the server's hidden value is older than the write,
    /// which its push sends; the server decides then, and a later pull hides the link again if the
    /// write lost. A link to a row the device drops goes whenever it was written.
    func syncHide(_ attributes: [String], of key: RowKey, keepingUnpushed: Bool = false) throws {
        guard let entity = layout.entities[key.entity] else { return }
        let record = try SyncBookkeeping.record(of: key, on: connection)
        var unpushed: Set<String> = []
        if keepingUnpushed, let record {
            for column in entity.columns where attributes.contains(column.key) {
                // Kept only while the row it points at is here: a link to a row gone (deleted
                // meanwhile) is settled by its delete rule, which must not stamp over the server's value.
                guard let written = record.change.attributes[column.key],
                    try SyncBookkeeping.isUnpushed(written.stamp, pending: record.pending, on: connection),
                    case .uuid(let target) = written.value,
                    let destination = column.destination.flatMap({ layout.entities[$0] }),
                    try concreteEntity(of: target, in: destination) != nil
                else { continue }
                unpushed.insert(column.key)
            }
        }
        let columns = entity.columns.filter {
            attributes.contains($0.key) && syncTargetTable(of: $0) != nil && $0.isOptional && !unpushed.contains($0.key)
        }
        let present = try syncValues(of: key.id, in: entity)
        let set = columns.filter { column in present.map { ($0[column.key] ?? .null) != .null } ?? false }
        if !set.isEmpty {
            let assignments = set.map { "\(quoted($0.name)) = NULL" }.joined(separator: ", ")
            try run("UPDATE \(quoted(entity.table)) SET \(assignments) WHERE \"id\" = \(marker)", entity: entity) {
                $0.bind(key.id, 1)
            }
            rowsUpdated([key.id], columns: set.map(\.name), in: entity)
        }
        guard let record else { return }
        let hidden = record.change.hiding(Set(columns.map(\.key)))
        if hidden != record.change {
            try SyncBookkeeping.write(hidden, cursor: record.cursor, pending: record.pending, on: connection)
        }
    }

    /// Drops row `key` from the device: the row, its join-table links and sync's record of it go
    /// (its pending changes too: the server would refuse them), local rows that need it through a
    /// required to-one are dropped with it, optional to-one links to it are hidden, and pending
    /// changes of other rows lose their links to it (to-many and to-one). Nothing
    /// of this is pushed; the row comes back by a pull once it is in the user's scope again.
    ///
    /// Returns what else it reached (see ``SyncDropOutcome``).
    @discardableResult func syncDrop(_ key: RowKey) throws -> SyncDropOutcome {
        var done: Set<RowKey> = []
        var outcome = SyncDropOutcome()
        try syncDrop(key, done: &done, outcome: &outcome)
        return outcome
    }

    private func syncDrop(_ key: RowKey, done: inout Set<RowKey>, outcome: inout SyncDropOutcome) throws {
        guard done.insert(key).inserted, let target = layout.entities[key.entity] else { return }
        for referrer in try syncReferrers(of: key) where referrer != key {
            let entity = try layout.entity(referrer.entity)
            let columns = entity.columns.filter { syncTargetTable(of: $0) == target.table }
            guard let values = try syncValues(of: referrer.id, in: entity) else { continue }
            let pointing = columns.filter { values[$0.key] == .uuid(key.id) }
            if let record = try SyncBookkeeping.record(of: referrer, on: connection), record.pending != nil {
                outcome.reachedPending = true
                if record.cursor == SyncBookkeeping.madeHere, pointing.contains(where: { !$0.isOptional }) {
                    outcome.discarded.append(record.change)
                }
            }
            if pointing.contains(where: { !$0.isOptional }) {
                try syncDrop(referrer, done: &done, outcome: &outcome)
            } else {
                try syncHide(pointing.map(\.key), of: referrer)
            }
        }
        if let concrete = try concreteEntity(of: key.id, in: target) {
            try run("DELETE FROM \(quoted(concrete.table)) WHERE \"id\" = \(marker)", entity: concrete) {
                $0.bind(key.id, 1)
            }
            try rowsDeleted([key.id], from: concrete)
            try forgetLinks(of: key.id, entity: concrete)
        }
        try SyncBookkeeping.forget(key, on: connection)
        // No pending change may name a row out of sight: the server would refuse the push that
        // carries it, and every later one. Links to the row (to-many and to-one alike) leave the
        // pending records of the other rows; the server keeps the links it had.
        for change in try SyncBookkeeping.pending(on: connection) where change.key != key {
            // Only the to-ones whose destination is the row's table: a plain `UUID` attribute, or
            // a link into another hierarchy, may hold the same ID and is no link to the row.
            let toOnes = Set(
                (layout.entities[change.key.entity]?.columns ?? []).filter { syncTargetTable(of: $0) == target.table }
                    .map(\.key))
            let stripped = change.withoutLinks(to: key.id, toOnes: toOnes)
            guard stripped != change else { continue }
            let marks = try SyncBookkeeping.marks(of: change.key, on: connection)
            try SyncBookkeeping.write(stripped, cursor: marks.cursor, pending: marks.pending, on: connection)
        }
    }
}

/// What dropping a row from a device reached besides it (``WriteContext/syncDrop(_:)``).
struct SyncDropOutcome {
    /// Whether it dropped or hid a link of a row with pending changes: that link may be the
    /// device's own unpushed write (a page moved, offline, into a folder another user took
    /// meanwhile), and the server, which holds the row as it was, did not say to drop or hide it;
    /// the engine then pulls from the beginning, so the server sends such rows again as it holds them.
    var reachedPending = false
    /// The rows made on the device and never pushed that it dropped with the row, as last saved:
    /// they need it through a required to-one and the server never had them (see
    /// ``SyncEngine/Report/discarded``).
    var discarded: [RowChange] = []
}
