import Foundation

/// The statements the runtime's engine interface sends to chosen databases, in the order sent: how
/// a test sees what the migrator really runs, to compare it with what `plan --engine postgres`
/// prints. Nothing is recorded until a test names a database, and a database is named by its
/// server-side name, so tests on other databases of the same server are not seen.
///
/// A connection asks once, when it opens, whether its database is recorded
/// (``attached(to:)``), and only such a connection writes here: a connection opened while
/// nothing records its database never takes the log's lock, so the log costs a production
/// server nothing per statement. Name the database before opening the store whose statements
/// are wanted.
package final class PostgresStatementLog: @unchecked Sendable {
    // @unchecked: `statements` is touched only under `lock`.
    private let lock = NSLock()
    private var statements: [String: [String]] = [:]

    /// The log every connection of the process writes to.
    package static let shared = PostgresStatementLog()

    /// Starts recording the statements sent to `database` (after any recorded before).
    package func record(_ database: String) {
        lock.withLock { statements[database] = statements[database] ?? [] }
    }

    /// Stops recording `database` and returns what was sent to it.
    package func stop(_ database: String) -> [String] {
        lock.withLock { statements.removeValue(forKey: database) ?? [] }
    }

    /// The log, for a connection to `database` that opens while `database` is recorded; `nil`
    /// otherwise, and that connection records nothing.
    func attached(to database: String) -> PostgresStatementLog? {
        lock.withLock { statements[database] != nil } ? self : nil
    }

    /// What a statement sent with values bound to its markers begins with in the log: its text
    /// alone does not say what it did (per-row work, the metadata row), so a printout cannot run it.
    package static let boundPrefix = "-- with values: "

    /// Notes that `sql` was sent to `database`, if it is recorded; with values bound to its markers
    /// when `bound` (after ``boundPrefix``).
    func sent(_ sql: String, bound: Bool = false, to database: String) {
        lock.withLock {
            guard statements[database] != nil else { return }
            statements[database]?.append(bound ? Self.boundPrefix + sql : sql)
        }
    }
}
