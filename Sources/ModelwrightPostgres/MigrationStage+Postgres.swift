import Foundation
import Modelwright

extension MigrationStage {
    /// The statements the migrator sends to run this stage on PostgreSQL, as `plan --engine
    /// postgres` prints them: the stage runs, with each obligation met by a stub as `plan` runs it
    /// on SQLite (``MigrationStage/operations()``), on a fresh store of its source version in a
    /// scratch schema of `connection`'s database, inside one transaction that is rolled back
    /// (PostgreSQL's DDL is transactional), so nothing of it persists. What it sent is recorded by
    /// ``PostgresStatementLog`` and read by ``PostgresStatementLog/printed(_:)``: there is no second
    /// planner, so what is printed is what the migrator runs, by construction.
    ///
    /// The connection must not be in a transaction, nor recorded by the log already; it writes to
    /// the log from now on (``PostgresConnection/attachStatementLog()``), while its database is recorded.
    package func postgresStatements(on connection: PostgresConnection) throws -> [String] {
        let database = try connection.currentDatabase()
        let log = PostgresStatementLog.shared
        connection.attachStatementLog()
        // A name of its own, so a schema of the user's is never touched; no statement the stage
        // sends names it (they name tables unqualified, found through the search path).
        let scratch = "\"_mw_plan_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())\""
        _ = try connection.controlSynchronously("BEGIN ISOLATION LEVEL READ COMMITTED")
        defer {
            _ = log.stop(database)
            connection.rollback()
        }
        try connection.execute("SELECT set_config('client_min_messages', 'warning', true)")
        try connection.execute("CREATE SCHEMA \(scratch)")
        try connection.execute("SELECT set_config('search_path', \(PostgresDialect().string(scratch)), true)")
        _ = try runOnFreshStore(inOpenTransactionOn: connection) {
            // The store's rows are checked now, as a migrated store's were when they committed:
            // ALTER TABLE refuses a table with foreign-key checks still pending.
            try connection.execute(["SET CONSTRAINTS ALL IMMEDIATE", "SET CONSTRAINTS ALL DEFERRED"])
            log.record(database)
        } onOperation: { operation in
            if case .updateRows = operation {
                log.sent("-- " + operation.description.replacingOccurrences(of: "\n", with: " "), to: database)
            }
        }
        return PostgresStatementLog.printed(log.stop(database))
    }
}

extension PostgresConnection {
    /// The name of the connection's database on the server, as ``PostgresStatementLog`` keys it.
    fileprivate func currentDatabase() throws -> String {
        let statement = try prepare("SELECT current_database()")
        defer { statement.reset() }
        guard try statement.step() else { throw PostgresError.connectionFailed("the server named no database") }
        return statement.string(0)
    }
}

extension PostgresStatementLog {
    /// What `plan --engine postgres` prints of the statements a migration stage sent, in the order
    /// sent: every statement that changes the schema (`CREATE`, `ALTER`, `DROP`, `DO` blocks) or
    /// the rows (`INSERT`, `UPDATE`, `DELETE`), the migrator's temporary tables among them (the
    /// links and rows it carries across a rebuild, the defaults it fills), so the printout run
    /// alone reaches the migrator's schema with the same rows. Per-row work with values bound
    /// (the app's custom stages, run by Swift code) is the comment
    /// ``MigrationStage/postgresStatements(on:)`` notes where it ran, and the metadata row is a
    /// comment. Left out: reads, savepoints, and everything inside the scratch schemas the
    /// migrator's own checks enter and leave (``SQLDialect/scratchNamespace``).
    package static func printed(_ log: [String]) -> [String] {
        var result: [String] = []
        var scratch = false
        for statement in log {
            if statement.hasPrefix("CREATE SCHEMA ") { scratch = true }
            if scratch {
                if statement.hasPrefix("DROP SCHEMA ") || statement.hasPrefix("ROLLBACK TO SAVEPOINT") {
                    scratch = false
                }
                continue
            }
            if statement.hasPrefix(boundPrefix) {
                if statement.dropFirst(boundPrefix.count).hasPrefix(
                    "INSERT INTO " + PostgresDialect().identifier(SchemaSQL.metadataTable))
                {
                    let note = "-- records the destination's version and checksum in " + SchemaSQL.metadataTable
                    if !result.contains(note) { result.append(note) }
                }
                continue
            }
            if statement.hasPrefix("--") || Self.changesTheStore(statement) {
                result.append(statement)
            }
        }
        return result
    }

    /// Whether `statement`, sent without values, changes the schema or the rows: its first word is
    /// one of those that do (a `WITH` that writes is not among what the migrator sends).
    private static func changesTheStore(_ statement: String) -> Bool {
        let word = statement.prefix { $0 != " " && $0 != "\n" }.uppercased()
        return ["CREATE", "ALTER", "DROP", "DO", "INSERT", "UPDATE", "DELETE", "TRUNCATE"].contains(word)
    }
}
