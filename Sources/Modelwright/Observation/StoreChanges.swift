import Foundation

/// What one committed transaction changed, table by table: whether rows came or went, which
/// columns of existing rows took new values, and which rows those were. An update that wrote the
/// values a row already had is not a change. `package` so an engine that hears of other processes'
/// commits (PostgreSQL's change feed) can describe them to the store.
package struct StoreChanges: Sendable {
    /// Tables that gained or lost rows: every reader of such a table may see a new result.
    private(set) var tablesWithNewOrDeletedRows: Set<String> = []
    /// Columns whose values changed in rows that stayed, by table.
    private(set) var changedColumns: [String: Set<String>] = [:]
    /// Rows that stayed and whose records' values changed, by table (a results controller's "updated").
    private(set) var updatedRows: [String: Set<UUID>] = [:]

    /// Whether anything may have changed, unknown what: every request reads again.
    private(set) var mayHaveChangedAnything = false

    /// No change yet.
    package init() {}

    /// Changes that are not known, only possible: a notifying engine's channel was down for a while
    /// (PostgreSQL's `LISTEN` connection dropped and came back), so commits may have gone unheard
    /// and every observer must read again.
    package static var unknown: StoreChanges {
        var changes = StoreChanges()
        changes.mayHaveChangedAnything = true
        return changes
    }

    /// Whether the transaction changed nothing.
    package var isEmpty: Bool {
        !mayHaveChangedAnything && tablesWithNewOrDeletedRows.isEmpty && changedColumns.isEmpty
    }

    /// Records that rows were inserted into, or deleted from, `table`.
    package mutating func rowsInsertedOrDeleted(in table: String) {
        tablesWithNewOrDeletedRows.insert(table)
    }

    /// Records new values in `columns` of existing rows of `table`.
    package mutating func columnsChanged(_ columns: some Sequence<String>, in table: String) {
        changedColumns[table, default: []].formUnion(columns)
    }

    /// Records new values in `columns` of the rows `ids` of `table`, columns that records hold.
    package mutating func rowsUpdated(_ ids: some Sequence<UUID>, columns: some Sequence<String>, in table: String) {
        var rows = updatedRows[table, default: []]
        rows.formUnion(ids)
        guard !rows.isEmpty else { return }
        updatedRows[table] = rows
        columnsChanged(columns, in: table)
    }

    /// Whether a request that reads `reads` could see a different result after these changes.
    func affects(_ reads: ReadSet) -> Bool {
        if mayHaveChangedAnything { return true }
        for (table, columns) in reads.columns {
            if tablesWithNewOrDeletedRows.contains(table) { return true }
            if let changed = changedColumns[table], !changed.isDisjoint(with: columns) { return true }
        }
        return false
    }
}
