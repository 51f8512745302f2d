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

// Statements written by hand (`SQLQuery`), checked by SQLite's own reading of them when it
// prepares them: its parameters and whether the statement writes.
extension SQLiteConnection {
    /// The rows changed since the connection opened, by every statement (SQLite's running total):
    /// a statement that leaves it as it was changed nothing, whatever ``changes`` still reports.
    var totalChanges: Int64 { sqlite3_total_changes64(handle) }

    /// Prepares the statement's text without a trailing comment or semicolon (which SQLite would
    /// read as a second statement) under the authorizer's allowlist for statements written by hand
    /// (only reading and writing rows: no `PRAGMA`, `ATTACH`, temporary object or schema change,
    /// whatever the text), then refuses it when its parameters are not the values' `?`s or, in a
    /// read, when SQLite says it writes.
    func handWrittenStatement(_ outline: SQLOutline, parameters: Int, readOnly: Bool) throws -> SQLiteStatement {
        isPreparingHandWritten = true
        refusedHandWrittenAction = nil
        let statement: SQLiteStatement
        do {
            defer {
                isPreparingHandWritten = false
                refusedHandWrittenAction = nil
            }
            statement = try prepare(outline.body)
        }
        guard statement.hasOnlyAnonymousParameters(count: parameters) else {
            throw SQLQueryError.parameterMarker(sql: outline.text)
        }
        if readOnly, !statement.isReadOnly { throw SQLQueryError.writeInReadTransaction(sql: outline.text) }
        return statement
    }

    /// Steps through the statement; SQLite's count of changes is the last `INSERT`, `UPDATE` or
    /// `DELETE`'s, stale after any other statement, so one that leaves the running total as it was
    /// changed nothing.
    func runHandWritten(_ statement: SQLiteStatement) throws -> Int {
        let before = totalChanges
        while try statement.step() {}
        return totalChanges == before ? 0 : changes
    }
}
