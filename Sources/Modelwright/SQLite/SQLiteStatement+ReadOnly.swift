import CSQLite

extension SQLiteStatement {
    /// Whether the statement leaves the database as it is (SQLite's own verdict), so a read
    /// transaction can refuse an SQL statement written by hand that would write.
    var isReadOnly: Bool { sqlite3_stmt_readonly(handle) != 0 }

    /// Whether the statement's parameters are exactly `count` anonymous `?` markers, the ones an
    /// ``SQLQuery`` writes for its interpolated values: a marker written in the literal text
    /// (`?`, `?1`, `:x`, `@x`, `$x`) would shift the values or leave one unbound.
    func hasOnlyAnonymousParameters(count: Int) -> Bool {
        guard sqlite3_bind_parameter_count(handle) == Int32(count) else { return false }
        return (0..<Int32(count)).allSatisfy { sqlite3_bind_parameter_name(handle, $0 + 1) == nil }
    }
}

extension SQLiteConnection {
    /// The rows changed since the connection opened, by every statement (SQLite's running total):
    /// a statement that leaves it as it was changed nothing, whatever ``changes`` still reports.
    var totalChanges: Int64 { sqlite3_total_changes64(handle) }
}
