import CSQLite

extension SQLiteStatement {
    /// Whether the statement leaves the database as it is (SQLite's own verdict), so a read
    /// transaction can refuse an SQL statement written by hand that would write.
    var isReadOnly: Bool { sqlite3_stmt_readonly(handle) != 0 }
}
