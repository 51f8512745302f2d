import Foundation

/// Where a store's database is and how its connections open: the one value that differs between a
/// store on an SQLite file, one in memory and one on a PostgreSQL server.
///
/// ``Store`` runs the same opening for every engine (create the schema in an empty database, or
/// check the recorded checksum, or migrate stage by stage, each decision in a transaction of the
/// writer), and asks the engine only for what differs: its connections, the checks it makes of a
/// database as found (SQLite's files and catalog), and what it does around the opening
/// transactions (SQLite's write-ahead log). It is `package` so that `ModelwrightPostgres` can
/// provide one; apps open stores through `Store`'s initializers.
package protocol StoreEngine: Sendable {
    /// The connections this engine opens.
    associatedtype Connection: DatabaseConnection

    /// What errors call the database: a file's path, `:memory:`, or a server's URL without its password.
    var location: String { get }

    /// Whether other connections (other processes) may commit to the same database, so the store
    /// watches for their commits and verifies the schema in every transaction.
    var isShared: Bool { get }

    /// How the store hears of other connections' commits while it has observers.
    var commitSignal: CommitSignal { get }

    /// Opens the connection every write runs on.
    func openWriter() throws -> Connection

    /// The connections reads run on, each used by one read at a time; none when reads share the writer.
    func openReaders() throws -> [Connection]

    /// One reader, in place of one that was lost (``DatabaseConnection/isLost``).
    func openReader() throws -> Connection

    /// Before the writer's first statement: checks the database as found and prepares it for the
    /// opening transactions; returns the schema version it verified (see ``schemaVersion(of:)``).
    func prepareForOpening(_ writer: Connection, layout: SchemaLayout, plan: MigrationPlan?) throws -> Int64

    /// In each opening transaction, first: takes the lock under which a store of the model named
    /// `modelName` is checked, created or migrated, where the engine's write transaction does not
    /// already serialise that decision across processes (PostgreSQL's advisory lock). Processes that
    /// open together then decide one after another, each on what the last one committed.
    func lockForOpening(_ writer: Connection, modelName: String) throws

    /// In each opening transaction, before it reads the metadata: verifies the schema again when
    /// another process changed it since `verified`.
    func verifyAgain(_ writer: Connection, layout: SchemaLayout, plan: MigrationPlan?, since verified: Int64) throws

    /// The number that changes whenever the database's schema changes; 0 where the engine keeps none.
    func schemaVersion(of writer: Connection) throws -> Int64

    /// In the opening transaction that found a store of this very schema, or before the first
    /// migration stage with the version the store records: the engine's checks of its tables,
    /// where ``prepareForOpening(_:layout:plan:)`` made none.
    func verifyOpened(_ writer: Connection, layout: SchemaLayout) throws

    /// In the opening transaction that created the schema in an empty database, after creating it.
    func didCreateSchema(on writer: Connection) throws

    /// After the last opening transaction committed.
    func didOpen(_ writer: Connection) throws

    /// The statements ``Store/close()`` runs on the writer before closing it.
    func closingStatements(for writer: Connection) throws -> [String]
}

extension StoreEngine {
    /// The first of ``openReaders()``, or the writer's kind of connection where reads share it.
    package func openReader() throws -> Connection {
        try openReaders().first ?? openWriter()
    }

    /// Nothing: SQLite's `BEGIN IMMEDIATE` is the database's one write lock already.
    package func lockForOpening(_ writer: Connection, modelName: String) throws {}
}

/// How a store hears that another connection committed.
package enum CommitSignal: Sendable {
    /// It does not: no other connection reaches the database (an in-memory store).
    case none
    /// It polls a number that changes with every commit (``SQLDialect/dataVersion``), on the writer.
    case dataVersion
    /// The engine calls back: `start` begins delivering what each commit of a connection other than
    /// `writer` changed (several commits may arrive as one), from the moment it returns until the
    /// returned subscription is cancelled. The store starts it once, when it opens.
    case notifications(start: Start)

    /// Starts a notifying engine's delivery for a store whose writer is `writer`.
    package typealias Start =
        @Sendable (_ writer: any DatabaseConnection, _ deliver: @escaping Delivery) throws
        -> CommitSubscription

    /// What a notifying engine calls with each commit's changes.
    package typealias Delivery = @Sendable (StoreChanges) -> Void
}

/// What stops an engine's delivery of commit notifications.
package final class CommitSubscription: Sendable {
    private let stop: @Sendable () -> Void

    /// A subscription that runs `stop` when cancelled.
    package init(stop: @escaping @Sendable () -> Void) {
        self.stop = stop
    }

    /// Stops the delivery.
    package func cancel() {
        stop()
    }
}
