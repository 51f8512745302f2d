import CSQLite

/// An error SQLite reported, with its result code and message.
///
/// The store turns the ones a user can cause (a uniqueness violation, a refused delete) into
/// ``StoreError`` values that name the entity and attributes; this type carries the rest.
public struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The primary result code, such as `SQLITE_CONSTRAINT` (19).
    public let code: Int32
    /// The extended result code, such as `SQLITE_CONSTRAINT_UNIQUE` (2067).
    public let extendedCode: Int32
    /// SQLite's message.
    public let message: String
    /// The statement that failed, when there was one.
    public let sql: String?

    /// The error in terms of no particular engine: `SQLite`, the extended result code, the message.
    public var engineFailure: EngineFailure {
        EngineFailure(engine: "SQLite", code: String(extendedCode), message: message)
    }

    /// The extended result code and the message, with the statement when there is one.
    public var description: String {
        "SQLite error \(extendedCode): \(message)" + (sql.map { " (in \($0))" } ?? "")
    }

    init(code: Int32, extendedCode: Int32, message: String, sql: String?) {
        self.code = code
        self.extendedCode = extendedCode
        self.message = message
        self.sql = sql
    }

    init(connection: OpaquePointer?, code: Int32, sql: String?) {
        self.init(
            code: code & 0xFF,
            extendedCode: connection.map(sqlite3_extended_errcode) ?? code,
            message: connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
                ?? String(cString: sqlite3_errstr(code)),
            sql: sql
        )
    }

    /// The error for `BEGIN`, `COMMIT` or `ROLLBACK` in SQL the runtime runs for someone else (a
    /// custom migration step's): the store begins and ends its transactions itself.
    static func transactionStatementRefused(sql: String) -> SQLiteError {
        SQLiteError(
            code: SQLITE_AUTH, extendedCode: SQLITE_AUTH,
            message: "BEGIN, COMMIT and ROLLBACK cannot run inside the store's transaction, which the store "
                + "begins and ends itself; use SAVEPOINT and RELEASE for a nested one", sql: sql)
    }

    /// The error for SQL text holding more than one statement, which the runtime never runs.
    static func multipleStatements(sql: String) -> SQLiteError {
        SQLiteError(
            code: SQLITE_ERROR, extendedCode: SQLITE_ERROR,
            message: "the text holds more than one statement; each statement runs on its own", sql: sql)
    }
}
