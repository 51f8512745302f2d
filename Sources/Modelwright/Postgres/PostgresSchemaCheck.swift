import Foundation

extension DatabaseConnection {
    /// What differs between the store's schema on a PostgreSQL database and the schema `layout`
    /// creates, one sentence each, as ``StoreSchema/differences(from:)`` words them: tables,
    /// columns with their types, `NOT NULL`, defaults and primary keys, indexes and foreign keys.
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
        let savepoint = "mw_schema_check"
        try execute(dialect.savepoint(savepoint))
        let fresh: StoreSchema
        do {
            let scratch = dialect.identifier("mw_schema_check_\(UUID().uuidString.prefix(8).lowercased())")
            // SET LOCAL ends with the savepoint's rollback, so the connection's path is as it was.
            try execute(["CREATE SCHEMA \(scratch)", "SET LOCAL search_path TO \(scratch)"])
            try execute(SchemaSQL.createStatements(for: layout, in: dialect))
            fresh = try StoreSchema.read(self)
        } catch {
            try? execute([dialect.rollbackToSavepoint(savepoint), dialect.releaseSavepoint(savepoint)])
            throw error
        }
        try execute([dialect.rollbackToSavepoint(savepoint), dialect.releaseSavepoint(savepoint)])
        return found.differences(from: fresh)
    }
}
