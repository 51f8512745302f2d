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
    /// sent: each statement that changes the schema (`CREATE`, `ALTER`, `DROP`, `DO` blocks), the
    /// row work as the comments ``MigrationStage/postgresStatements(on:)`` notes where it ran (row
    /// updates depend on the rows, and their values are bound, not in the text), and the metadata
    /// row as a comment. Left out: reads, savepoints, everything inside the scratch schemas the
    /// migrator's own checks enter and leave (``SQLDialect/scratchNamespace``), and its temporary
    /// tables (the links it checks are kept), which end with the transaction.
    package static func printed(_ log: [String]) -> [String] {
        var result: [String] = []
        var scratch = false
        var temporary: [String] = []
        for statement in log {
            if statement.hasPrefix("CREATE SCHEMA ") { scratch = true }
            if scratch {
                if statement.hasPrefix("DROP SCHEMA ") || statement.hasPrefix("ROLLBACK TO SAVEPOINT") {
                    scratch = false
                }
                continue
            }
            if statement.hasPrefix("CREATE TEMP TABLE "),
                let name = Self.quotedName(after: "CREATE TEMP TABLE ", in: statement)
            {
                temporary.append(name)
                continue
            }
            if temporary.contains(where: {
                statement.hasPrefix("DROP TABLE \($0)")
                    || (statement.hasPrefix("CREATE INDEX ") && statement.contains(" ON \($0) "))
            }) {
                continue
            }
            if statement.hasPrefix("--") {
                result.append(statement)
            } else if statement.hasPrefix("INSERT INTO " + PostgresDialect().identifier(SchemaSQL.metadataTable)) {
                let note = "-- records the destination's version and checksum in " + SchemaSQL.metadataTable
                if !result.contains(note) { result.append(note) }
            } else if ["CREATE", "ALTER", "DROP", "DO"].contains(statement.prefix { $0 != " " }) {
                result.append(statement)
            }
        }
        return result
    }

    /// The quoted name that follows `prefix` at the start of `statement` (`"name"`, quotes kept).
    private static func quotedName(after prefix: String, in statement: String) -> String? {
        let rest = statement.dropFirst(prefix.count)
        guard rest.first == "\"" else { return nil }
        var name = "\""
        var characters = rest.dropFirst()[...]
        while let character = characters.popFirst() {
            name.append(character)
            if character == "\"" {
                guard characters.first == "\"" else { return name }
                name.append(characters.removeFirst())
            }
        }
        return nil
    }
}
