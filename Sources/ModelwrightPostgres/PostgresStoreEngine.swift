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

    /// Other processes' commits, heard on the change feed's channel. When the listening
    /// connection drops (the server restarted, an administrator ended it), the feed connects and
    /// listens again, then tells every observer to read again, since commits may have gone unheard
    /// meanwhile (``ChangeFeedSubscription``).
    var commitSignal: CommitSignal {
        let configuration = configuration
        return .notifications { writer, deliver in
            let subscription = ChangeFeedSubscription(
                configuration: configuration, own: (writer as? PostgresConnection)?.serverProcessID, deliver: deliver)
            try subscription.listen()
            return CommitSubscription { subscription.stop() }
        }
    }

    func openWriter() throws -> PostgresConnection {
        try connect()
    }

    func openReaders() throws -> [PostgresConnection] {
        try (0..<readerCount).map { _ in try openReader() }
    }

    func openReader() throws -> PostgresConnection {
        try connect()
    }

    /// A connection of the store's (writer or reader; the listener's and the migrator's are the
    /// writer's configuration too): its `search_path` is exactly the store's schema (fixed at
    /// connect), and it is refused with ``StoreError/unexpectedSchema(path:differences:)`` unless
    /// `session_replication_role` is `origin`, since under `replica` (set by `ALTER DATABASE` or
    /// `ALTER ROLE … SET`) neither foreign keys, cascades nor the change feed's triggers fire.
    private func connect() throws -> PostgresConnection {
        let connection = try PostgresConnection(connectingNow: configuration)
        let statement = try connection.prepare("SELECT current_setting('session_replication_role')")
        let role = try statement.step() ? statement.string(0) : ""
        guard role == "origin" else {
            throw StoreError.unexpectedSchema(
                path: location,
                differences: [
                    "the session's session_replication_role is \(role), under which foreign keys, cascades and "
                        + "triggers do not fire; the store needs origin: reset it where it was set "
                        + "(ALTER DATABASE … RESET session_replication_role, ALTER ROLE … RESET "
                        + "session_replication_role, or the connection's options)"
                ])
        }
        return connection
    }

    /// Nothing to check before the first statement: a server database has no files to judge.
    func prepareForOpening(_ writer: PostgresConnection, layout: SchemaLayout, plan: MigrationPlan?) throws -> Int64 {
        0
    }

    /// In each opening transaction, after its lock: refuses the database while it has an enabled
    /// event trigger (``DatabaseConnection/eventTriggerDifferences()``), which would run on the DDL
    /// of the store's creation or of each migration step, with
    /// ``StoreError/unexpectedSchema(path:differences:)``, before anything is written. The tables
    /// need no second look: PostgreSQL keeps no schema counter (see
    /// `PostgresConnection.verifySchema(_:since:)`), and the schema is compared before a stage and
    /// at open.
    func verifyAgain(_ writer: PostgresConnection, layout: SchemaLayout, plan: MigrationPlan?, since verified: Int64)
        throws
    {
        let differences = try writer.eventTriggerDifferences()
        guard differences.isEmpty else { throw StoreError.unexpectedSchema(path: location, differences: differences) }
    }

    func schemaVersion(of writer: PostgresConnection) throws -> Int64 { 0 }

    /// A database that records this schema's checksum must have its tables and columns; one that
    /// does not is refused with ``StoreError/unexpectedSchema(path:differences:)``, untouched.
    func verifyOpened(_ writer: PostgresConnection, layout: SchemaLayout) throws {
        let differences = try writer.schemaDifferences(from: layout)
        guard differences.isEmpty else { throw StoreError.unexpectedSchema(path: location, differences: differences) }
    }

    /// Creates `unaccent`, which `diacriticInsensitive` string tests call (see the dialect's
    /// `stringTest`), in the transaction that created the schema: a server without it refuses the
    /// store with ``PostgresError/extensionUnavailable(name:reason:)`` and the database stays empty.
    func didCreateSchema(on writer: PostgresConnection) throws {
        try Self.createUnaccentIfAbsent(on: writer)
    }

    /// Creates `unaccent` again if it went missing (dropped by hand, or a restore without its
    /// extensions), so a store never opens to fail its first diacritic-insensitive request, then
    /// installs (or replaces) the change feed's triggers, which cover every table a migration created.
    func didOpen(_ writer: PostgresConnection) throws {
        try writer.inTransaction(.immediate) {
            try Self.createUnaccentIfAbsent(on: writer)
            try writer.execute(PostgresChangeFeed.installation)
        }
    }

    /// The functions `unaccent` 1.1 (PostgreSQL 9.6 to 17) installs, as the schema check reads
    /// them (`serverSchemaDifferences(from:ownedFunctions:extensionFunctions:)`): a function of the
    /// store's schema of one of these names, or a member of the extension, that differs is refused,
    /// since `diacriticInsensitive` tests call `unaccent(text)`.
    static let unaccentFunctions: [String: String] = {
        let file = ", object file $libdir/unaccent, member of extension unaccent, body "
        let dictionary = "function returning text in c, volatility s, strict" + file + "unaccent_dict"
        return [
            "unaccent(regdictionary, text)": dictionary, "unaccent(text)": dictionary,
            "unaccent_init(internal)": "function returning internal in c, volatility v" + file + "unaccent_init",
            "unaccent_lexize(internal, internal, internal, internal)":
                "function returning internal in c, volatility v" + file + "unaccent_lexize",
        ]
    }()

    /// Creates `unaccent` where the database lacks it; a role that may not gets
    /// ``PostgresError/extensionUnavailable(name:reason:)`` with the server's reason.
    private static func createUnaccentIfAbsent(on writer: PostgresConnection) throws {
        do {
            // Created only when absent: IF NOT EXISTS would send a NOTICE, which libpq prints to stderr.
            try writer.execute([
                "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'unaccent') "
                    + "THEN CREATE EXTENSION unaccent; END IF; END $$"
            ])
        } catch {
            var cause = error
            if case PostgresError.transactionAborted(let inner) = error { cause = inner }
            let reason = (cause as? PostgresError).map { failure -> String in
                if case .server(_, let message, _, _) = failure { return message }
                return failure.description
            }
            throw PostgresError.extensionUnavailable(name: "unaccent", reason: reason ?? "\(error)")
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

/// A store's listener on the change feed, started again whenever its connection drops, until
/// the store stops it. Without it, observation across processes would end silently with the
/// connection.
private final class ChangeFeedSubscription: @unchecked Sendable {
    // @unchecked: `listener` and `isStopped` are behind `lock`; the rest is immutable.
    private let lock = NSLock()
    private var listener: PostgresListener?
    private var isStopped = false
    private let configuration: PostgresConfiguration
    private let own: Int32?
    private let deliver: CommitSignal.Delivery

    /// The longest wait between two attempts to connect again.
    private static let longestRetryDelay: Double = 2

    init(configuration: PostgresConfiguration, own: Int32?, deliver: @escaping CommitSignal.Delivery) {
        self.configuration = configuration
        self.own = own
        self.deliver = deliver
    }

    /// Connects and listens, blocking until the server listens.
    func listen() throws {
        let listener = try PostgresListener(
            listeningNow: configuration, channels: [PostgresChangeFeed.channel],
            batches: { [weak self] batch in self?.receive(batch) })
        let stopped = lock.withLock {
            if !isStopped { self.listener = listener }
            return isStopped
        }
        if stopped { listener.stop() }
    }

    /// Stops listening for good.
    func stop() {
        let listener = lock.withLock {
            isStopped = true
            return self.listener
        }
        listener?.stop()
    }

    /// On the listener's thread: passes on others' commits, or, when the connection dropped,
    /// connects again on this thread (which the dropped listener leaves after this call). Once
    /// stopped, passes on nothing: the listener may still be reading when it is told to stop, and
    /// a store that replaced its writer has started another subscription that knows the new
    /// writer's commits as its own.
    private func receive(_ batch: Result<[PostgresNotification], any Error>) {
        guard !lock.withLock({ isStopped }) else { return }
        switch batch {
        case .success(let notifications):
            for committed in PostgresChangeFeed.changes(in: notifications) where committed.senderProcessID != own {
                deliver(committed.storeChanges)
            }
        case .failure:
            var delay = 0.05
            while !lock.withLock({ isStopped }) {
                if (try? listen()) != nil {
                    deliver(.unknown)
                    return
                }
                Thread.sleep(forTimeInterval: delay)
                delay = min(delay * 2, Self.longestRetryDelay)
            }
        }
    }
}
