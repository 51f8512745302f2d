import Foundation
import Modelwright

// Statements written by hand (`SQLQuery`) on PostgreSQL: their markers are `$1`, `$2` … as the
// dialect renders them, checked against the text's own (a `?` or `$n` written in it) and against
// the server's count; a value alone in a select list gets its own type rather than text; a read
// cannot write, since PostgreSQL cannot tell before running a statement whether it writes.
extension PostgresConnection {
    /// What the server said of a statement written by hand when it prepared it: its parameters'
    /// inferred types, its result's column names, and whether it runs in a read.
    package struct HandWritten: Sendable {
        /// The parameter types the server inferred, `$1` first.
        let parameterTypes: [UInt32]
        /// The names of the columns the statement returns.
        let columnNames: [String]
        /// Whether the statement runs in a read, which it may not write in.
        let readOnly: Bool
    }

    /// Refuses a statement whose markers are not exactly `$1` … `$n` for its `parameters` values,
    /// in order and each once (a `?` or a `$n` of its own would take a value meant for another),
    /// then describes it: the server's count of parameters must agree.
    package func handWrittenStatement(
        _ outline: SQLOutline, parameters: Int, readOnly: Bool
    ) throws -> PostgresStatement {
        guard outline.markers == (0..<parameters).map({ dialect.parameter($0 + 1) }) else {
            throw SQLQueryError.parameterMarker(sql: outline.text)
        }
        let (types, columns) = try inReadSavepoint(readOnly, sql: outline.text) {
            try describeSynchronously(outline.body)
        }
        guard types.count == parameters else { throw SQLQueryError.parameterMarker(sql: outline.text) }
        return PostgresStatement(
            handWritten: outline.body, HandWritten(parameterTypes: types, columnNames: columns, readOnly: readOnly),
            on: self)
    }

    /// Steps through the statement and returns the rows it inserted, updated or deleted.
    package func runHandWritten(_ statement: PostgresStatement) throws -> Int {
        while try statement.step() {}
        return statement.changesOfItsOwn
    }

    /// Runs a statement written by hand with `values`. A parameter the server typed as text for
    /// want of context (a value alone in a select list, `SELECT $1`) takes the type of the value
    /// bound to it, as SQLite would return it: an integer's `bigint`, a double's
    /// `double precision`, bytes' `bytea`.
    func runHandWritten(_ sql: String, _ values: [SQLValue], _ description: HandWritten) throws -> PostgresRows {
        let types = zip(description.parameterTypes, values).map { inferred, value -> UInt32 in
            guard inferred == Self.textType || inferred == Self.unknownType else { return inferred }
            return switch value {
            case .integer: 20
            case .real: 701
            case .blob: 17
            case .text, .null: inferred
            }
        }
        return try inReadSavepoint(description.readOnly, sql: sql) {
            try runSynchronously(sql, values, types: types)
        }
    }

    /// `text` and `unknown`, the types the server gives a parameter nothing else types.
    private static let textType: UInt32 = 25
    private static let unknownType: UInt32 = 705

    /// Runs `body` in a read (`readOnly`) inside a savepoint of its own, after which the
    /// transaction is read-only: a statement that writes fails with SQLSTATE 25006, thrown as
    /// ``SQLQueryError/writeInReadTransaction(sql:)``, and any failure rolls back to the
    /// savepoint, so the read goes on as it does on SQLite, where such a statement is refused
    /// before it runs. Outside a read, `body` runs as it is (a write's operations have their
    /// savepoints already).
    private func inReadSavepoint<Result>(_ readOnly: Bool, sql: String, _ body: () throws -> Result) throws -> Result {
        guard readOnly, isInTransaction else { return try body() }
        _ = try controlSynchronously("SAVEPOINT mw_hand_written; SET TRANSACTION READ ONLY")
        do {
            let result = try body()
            _ = try controlSynchronously("RELEASE SAVEPOINT mw_hand_written")
            return result
        } catch {
            _ = try? controlSynchronously("ROLLBACK TO SAVEPOINT mw_hand_written; RELEASE SAVEPOINT mw_hand_written")
            forgetAbort()
            if case .server(let sqlState, _, _, _) = error as? PostgresError, sqlState == "25006" {
                throw SQLQueryError.writeInReadTransaction(sql: sql)
            }
            throw error
        }
    }
}
