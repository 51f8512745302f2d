/// The columns a request reads, by table: its entity's selected columns and those its filter,
/// sort order, scope and section key reach. A commit that changes none of them, and adds or
/// removes no row of these tables, cannot change the request's result.
struct ReadSet: Sendable, Hashable {
    /// The columns read, by table.
    private(set) var columns: [String: Set<String>] = [:]

    /// Records that `column` of `table` is read.
    mutating func read(_ column: String, of table: String) {
        columns[table, default: []].insert(column)
    }

    /// Records that `columns` of `table` are read.
    mutating func read(_ columns: some Sequence<String>, of table: String) {
        self.columns[table, default: []].formUnion(columns)
    }
}
