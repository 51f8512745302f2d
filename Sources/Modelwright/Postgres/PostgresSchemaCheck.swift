import Foundation

extension DatabaseConnection {
    /// What differs between the store's schema on a PostgreSQL database and the schema `layout`
    /// creates, one sentence each, as ``StoreSchema/differences(from:)`` words them: tables,
    /// columns with their types, `NOT NULL`, defaults and primary keys, indexes and foreign keys,
    /// and checks and other constraints (``otherConstraints()``); not names.
    ///
    /// The expected schema is PostgreSQL's own report of a fresh store: the runtime's DDL runs in
    /// a scratch schema inside a savepoint (in a transaction of its own when none is open) that is
    /// rolled back, and both are read with the dialect's introspection queries. So the comparison
    /// needs no second spelling of the types PostgreSQL reports, and nothing of the scratch schema
    /// stays behind.
    package func serverSchemaDifferences(from layout: SchemaLayout) throws -> [String] {
        guard isInTransaction else {
            return try inTransaction(.deferred) { try serverSchemaDifferences(from: layout) }
        }
        let found = try StoreSchema.read(self)
        let foundConstraints = try otherConstraints()
        let savepoint = "mw_schema_check"
        try execute(dialect.savepoint(savepoint))
        let fresh: StoreSchema
        let freshConstraints: [String]
        do {
            let scratch = dialect.identifier("mw_schema_check_\(UUID().uuidString.prefix(8).lowercased())")
            // SET LOCAL ends with the savepoint's rollback, so the connection's path is as it was.
            try execute(["CREATE SCHEMA \(scratch)", "SET LOCAL search_path TO \(scratch)"])
            try execute(SchemaSQL.createStatements(for: layout, in: dialect))
            fresh = try StoreSchema.read(self)
            freshConstraints = try otherConstraints()
        } catch {
            try? execute([dialect.rollbackToSavepoint(savepoint), dialect.releaseSavepoint(savepoint)])
            throw error
        }
        try execute([dialect.rollbackToSavepoint(savepoint), dialect.releaseSavepoint(savepoint)])
        let tables = Set(fresh.tables.keys)
        let unexpected = foundConstraints.filter { !freshConstraints.contains($0) }.filter { line in
            tables.contains(String(line.prefix { $0 != "\u{0}" }))
        }
        let missing = freshConstraints.filter { !foundConstraints.contains($0) }
        return found.differences(from: fresh)
            + unexpected.map { Self.sentence($0, "has an unexpected") }
            + missing.map { Self.sentence($0, "lacks the") }
    }

    /// The constraints of the current schema's tables that are neither primary nor foreign keys
    /// (checks, unique and exclusion constraints, constraint triggers), as `table NUL kind NUL
    /// definition`, sorted; by definition, not by name. ``StoreSchema`` reads a table's columns,
    /// indexes and keys but not these, and a check the version does not declare can refuse the
    /// values a migration step writes, or a write of the app, so the store is refused for one.
    /// Names are not compared, here or for keys and indexes: every statement the migrator runs
    /// finds a key by its column and an index by its columns in the catalog, never by the name it
    /// was created with, so a renamed one changes nothing a step or the app does.
    private func otherConstraints() throws -> [String] {
        let statement = try prepare(
            "SELECT c.relname::text, k.contype::text, pg_get_constraintdef(k.oid) FROM pg_constraint k "
                + "JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
                + "WHERE n.nspname = current_schema() AND k.contype NOT IN ('p', 'f') ORDER BY 1, 2, 3")
        var result: [String] = []
        while try statement.step() {
            result.append([statement.string(0), statement.string(1), statement.string(2)].joined(separator: "\u{0}"))
        }
        return result
    }

    /// One difference of ``otherConstraints()`` as ``StoreSchema/differences(from:)`` words one.
    private static func sentence(_ line: String, _ verb: String) -> String {
        let parts = line.split(separator: "\u{0}", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3 else { return line }
        let kind =
            switch parts[1] {
            case "c": "check constraint"
            case "u": "unique constraint"
            case "x": "exclusion constraint"
            default: "constraint trigger"
            }
        return "\(parts[0]) \(verb) \(kind) \(parts[2])"
    }
}
