import Foundation
import Modelwright

/// A store on a PostgreSQL database: the engine `Store(postgres:…)` opens.
///
/// The writer is one connection, reads take turns on a few more (`readerCount`), each used by one
/// read at a time on its store queue. The opening itself is the runtime's (create the schema in
/// an empty database, check the recorded checksum, migrate through the one migrator call site);
/// this engine adds the change feed's triggers once the store is open, hears other processes'
/// commits through `LISTEN`/`NOTIFY` (``PostgresChangeFeed``), and at open checks that a database
/// recording this schema has its tables and columns.
struct PostgresStoreEngine: StoreEngine {
    let configuration: PostgresConfiguration
    let readerCount: Int

    /// The connection string without its password, as errors show it.
    var location: String {
        Redaction(connectionString: configuration.connectionString).apply(configuration.connectionString)
    }

    var isShared: Bool { true }

    var commitSignal: CommitSignal {
        let configuration = configuration
        return .notifications { writer, deliver in
            let own = (writer as? PostgresConnection)?.serverProcessID
            let listener = try PostgresListener(
                listeningNow: configuration, channels: [PostgresChangeFeed.channel],
                batches: { batch in
                    guard case .success(let notifications) = batch else { return }
                    for committed in PostgresChangeFeed.changes(in: notifications)
                    where committed.senderProcessID != own {
                        deliver(committed.storeChanges)
                    }
                })
            return CommitSubscription { listener.stop() }
        }
    }

    func openWriter() throws -> PostgresConnection {
        try PostgresConnection(connectingNow: configuration)
    }

    func openReaders() throws -> [PostgresConnection] {
        try (0..<readerCount).map { _ in try PostgresConnection(connectingNow: configuration) }
    }

    /// Nothing to check before the first statement: a server database has no files to judge.
    func prepareForOpening(_ writer: PostgresConnection, layout: SchemaLayout, plan: MigrationPlan?) throws -> Int64 {
        0
    }

    /// Nothing: PostgreSQL keeps no schema counter (see `PostgresConnection.verifySchema(_:since:)`).
    func verifyAgain(_ writer: PostgresConnection, layout: SchemaLayout, plan: MigrationPlan?, since verified: Int64)
        throws
    {}

    func schemaVersion(of writer: PostgresConnection) throws -> Int64 { 0 }

    /// A database that records this schema's checksum must have its tables and columns; one that
    /// does not is refused with ``StoreError/unexpectedSchema(path:differences:)``, untouched.
    func verifyOpened(_ writer: PostgresConnection, layout: SchemaLayout) throws {
        let differences = try writer.schemaDifferences(from: layout)
        guard differences.isEmpty else { throw StoreError.unexpectedSchema(path: location, differences: differences) }
    }

    func didCreateSchema(on writer: PostgresConnection) throws {}

    /// Installs (or replaces) the change feed's triggers, which cover every table a migration created.
    func didOpen(_ writer: PostgresConnection) throws {
        try writer.inTransaction(.immediate) {
            try writer.execute(PostgresChangeFeed.installation)
        }
    }

    func closingStatements(for writer: PostgresConnection) throws -> [String] { [] }
}

extension PostgresCommittedChanges {
    /// The same changes as the runtime's observers read them; rows the feed could not name count
    /// as rows that came or went, which wakes every observer of the table.
    var storeChanges: StoreChanges {
        var changes = StoreChanges()
        for table in tablesWithNewOrDeletedRows.union(tablesWithUnknownUpdatedRows).union(tablesWithUnknownColumns) {
            changes.rowsInsertedOrDeleted(in: table)
        }
        for (table, columns) in changedColumns {
            changes.rowsUpdated(updatedRows[table] ?? [], columns: columns, in: table)
        }
        return changes
    }
}
