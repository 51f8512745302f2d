import Dispatch
import Foundation

// Over 500 lines on purpose: opening, reading, writing, closing and observing (one MARK section
// each) share the store's private state (the writer and reader queues, the verified schema cookie,
// the observers, the remote-change timer), which splitting into files would have to widen from
// `private`. The operations themselves live elsewhere: `ReadContext`, `WriteContext+…`, `Store+History`.

/// An SQLite store for one schema: one writer, concurrent readers, transactions that commit when
/// their closure returns.
///
/// Apps open their store through the generated `openStore(at:migrations:)` of their model, which
/// creates or migrates it and takes the implementation of every custom stage as a typed argument:
///
/// ```swift
/// let url = applicationSupport.appendingPathComponent("Trips.sqlite")
/// let store = try Trips.openStore(at: url, migrations: AppMigrations())
///
/// try await store.performAndSave { context in
///     try context.insert(User(username: "ines"))
/// }
/// let users = try await store.performQuery { context in
///     try context.fetch(User.request().filter { $0.rating >= 3 })
/// }
/// ```
///
/// A file store uses SQLite's write-ahead log, so readers never wait for the writer and see
/// the last committed state; `synchronous=NORMAL` and foreign keys are on. A store created for
/// another schema (another checksum) is refused, untouched, with both checksums in the error; so is
/// a file whose tables, columns, indexes, triggers or views differ in any way from what its schema
/// creates (see <doc:Security#Store-files-from-outside>).
///
/// ## Topics
///
/// ### Opening
/// - ``init(url:schema:history:)``
/// - ``init(url:migrationPlan:history:progress:)``
/// - ``inMemory(schema:history:)``
/// - ``HistoryTracking``
///
/// ### Reading and writing
/// - ``performQuery(_:)``
/// - ``performAndSave(_:)``
/// - ``performQuery(on:_:completion:)``
/// - ``performAndSave(on:_:completion:)``
/// - ``performAndSave(author:_:)``
///
/// ### Persistent history
/// - ``fetchHistory(after:author:excludingAuthor:entity:)``
/// - ``deleteHistory(before:)``
/// - ``lastHistoryToken()``
/// - ``HistoryToken``
/// - ``HistoryTransaction``
/// - ``HistoryChange``
///
/// ### Observing
/// - ``observe(_:)->AsyncThrowingStream<[Target],Error>``
/// - ``remoteChangeInterval``
///
/// ### Closing
/// - ``close()``
///
/// When the last reference to a store goes away, its connections close as ``close()`` closes
/// them, but in no set order and without the explicit checkpoint: the `-wal` and `-shm` files
/// may stay beside the store until it is next opened. Call ``close()`` for a single file.
public final class Store: Sendable {
    /// How many read connections a file store keeps.
    static let readerCount = 4

    /// The schema the store holds.
    public let schema: SchemaDescription
    let layout: SchemaLayout
    private let writer: ConnectionQueue
    /// Read connections; empty for an in-memory store, whose reads share the writer's connection.
    private let readers: [ConnectionQueue]
    private let nextReader = Locked(0)
    let observers = ObserverRegistry()
    /// Whether the store records persistent history, and its default author.
    public let history: HistoryTracking
    /// How often a file store checks, while it has observers, whether another connection or
    /// process committed: 100 milliseconds, so another process's commit reaches observers within
    /// that time plus the refresh. The check is one `PRAGMA data_version` on the writer's queue.
    public static let remoteChangeInterval: Duration = .milliseconds(100)
    /// What the store last knew of other connections' commits, and the timer that checks for
    /// more while there are observers (file stores only).
    let remote = Locked<RemoteState>(RemoteState())
    /// Where the database is and how its connections open (see `StoreEngine`).
    let engine: any StoreEngine
    private let isClosed = Locked(false)
    /// The schema cookie (`PRAGMA schema_version`) of the last schema this store verified: when a
    /// transaction finds another, some process changed the schema, and it is verified again.
    private let verifiedSchemaCookie: Locked<Int64>

    /// Opens the store at `url`, creating it with the schema if the file does not exist. A store
    /// of any other schema is refused, untouched; to migrate it, open it with a migration plan.
    ///
    /// For tools and tests: this skips migration, and with it the compile-time check that the
    /// app implements every custom stage its model declares, so an app that opens its store this
    /// way refuses every store of an earlier version at launch. Apps use their model's generated
    /// `openStore(at:migrations:)`.
    ///
    /// With `history` enabled, every write records its ``HistoryTransaction`` (see ``HistoryTracking``).
    public convenience init(url: URL, schema: SchemaDescription, history: HistoryTracking = .disabled) throws {
        try self.init(engine: SQLiteEngine(path: url.path), schema: schema, history: history)
    }

    /// Opens the store at `url`, creating it at the plan's current version if the file does not
    /// exist, and migrating it stage by stage if it holds an earlier version.
    ///
    /// Each stage runs in its own transaction and `progress` hears of every stage and copied
    /// table. Stages are found by the version number the store records (see
    /// ``MigrationPlan/stages(fromVersion:checksum:)``). Processes that open the store at the same
    /// moment (an app and its widget) decide under the write lock, so the store is created once and
    /// each stage runs once, in one of them (see <doc:SharedStores>). A store whose version starts
    /// no chain of stages (a newer or unknown version) is
    /// refused with ``MigrationError/unknownStoreVersion(storeChecksum:storeVersion:knownChecksums:)``
    /// and left untouched; a stage that fails leaves the store at the version before it.
    ///
    /// History tables, when the store has them, are kept as they are by every stage; with
    /// `history` enabled they are created if missing (see ``HistoryTracking``).
    public convenience init(
        url: URL, migrationPlan: MigrationPlan, history: HistoryTracking = .disabled,
        progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) throws {
        try self.init(
            engine: SQLiteEngine(path: url.path), schema: migrationPlan.current, history: history, plan: migrationPlan,
            progress: progress)
    }

    /// A new, empty store in memory, private to this instance: for tests and previews.
    public static func inMemory(schema: SchemaDescription, history: HistoryTracking = .disabled) throws -> Store {
        try Store(engine: SQLiteEngine(path: nil), schema: schema, history: history)
    }

    /// Opens a store on `engine`'s database, as the public initializers describe: creating the
    /// schema in an empty database, checking the one found, or migrating it with `plan`. Every
    /// engine (SQLite here, PostgreSQL in `ModelwrightPostgres`) opens through this one path.
    package init<Engine: StoreEngine>(
        engine: Engine, schema: SchemaDescription, history: HistoryTracking, plan: MigrationPlan? = nil,
        progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) throws {
        self.schema = schema
        self.history = history
        self.engine = engine
        layout = try SchemaLayout(schema)
        let connection = try engine.openWriter()
        let cookie = try Self.prepare(
            connection, engine: engine, layout: layout, history: history, plan: plan, progress: progress)
        verifiedSchemaCookie = Locked(cookie)
        try connection.execute(connection.dialect.writerSettings)
        writer = ConnectionQueue(connection, label: "Modelwright.Store.writer")
        readers = try engine.openReaders().enumerated().map { index, reader in
            ConnectionQueue(reader, label: "Modelwright.Store.reader\(index)")
        }
        if case .dataVersion = engine.commitSignal {
            let version = try Self.dataVersion(of: connection)
            let token = try Self.hasHistoryTables(connection) ? try HistorySQL.lastToken(on: connection) : nil
            remote.withLock { $0 = RemoteState(dataVersion: version, token: token) }
        }
        if case .dataVersion = engine.commitSignal {
            observers.activity.withLock { activity in
                activity = { [weak self] _ in self?.watchRemoteChanges() }
            }
        }
        try listenForRemoteChanges(writer: connection)
    }

    /// Creates the schema in an empty database, or checks that the database holds this schema,
    /// migrating it first when a plan leads from its version to this one.
    ///
    /// Other processes may open the same file at the same moment (an app and its widget), so
    /// every decision is taken on what the file holds under the write lock: each transaction
    /// begins with `BEGIN IMMEDIATE`, then reads the file, then creates, migrates one stage or
    /// opens, and commits. A store another process created or migrated meanwhile is then simply
    /// opened, and each stage runs once, in whichever process holds the lock when it is due.
    ///
    /// Verification reads the file before the first of these transactions; each one compares the
    /// schema cookie with the one last verified (or written by this opening) and verifies again
    /// when another process changed the schema in between. Returns the schema cookie the last
    /// opening transaction left, for ``checkSchema(on:)``.
    private static func prepare<Engine: StoreEngine>(
        _ connection: Engine.Connection, engine: Engine, layout: SchemaLayout, history: HistoryTracking,
        plan: MigrationPlan?, progress: (@Sendable (MigrationProgress) -> Void)?
    ) throws -> Int64 {
        var verifiedCookie = try engine.prepareForOpening(connection, layout: layout, plan: plan)
        // A stage's table rebuilds need foreign keys off, and SQLite ignores the pragma inside a transaction.
        if let off = connection.dialect.foreignKeysOff { try connection.execute(off) }
        var stageCount: Int?
        while true {
            let step = try connection.inTransaction(.immediate) { () -> OpeningStep in
                try engine.lockForOpening(connection, modelName: layout.schema.modelName)
                try engine.verifyAgain(connection, layout: layout, plan: plan, since: verifiedCookie)
                defer { verifiedCookie = (try? engine.schemaVersion(of: connection)) ?? verifiedCookie }
                let found = try StoreMetadata.read(on: connection)
                // With a plan, a store of another model would read as an unknown (newer) version.
                if plan != nil, case .store(let values) = found, let model = values[StoreMetadata.modelKey],
                    model != layout.schema.modelName
                {
                    throw StoreError.otherModel(found: model, expected: layout.schema.modelName, path: engine.location)
                }
                if let plan, let stages = try pendingStages(of: found, plan: plan) {
                    if let next = stages.first {
                        // Before the first stage, the store must hold the version it records, as a
                        // store of it is verified at open: a hand-edited one is refused untouched.
                        // (SQLite's check ran before this transaction, in `verifyAgain`.)
                        if stageCount == nil {
                            try engine.verifyOpened(connection, layout: try SchemaLayout(next.source.schema()))
                        }
                        let count = stageCount ?? stages.count
                        stageCount = count
                        // The one call site of the migrator, whatever the engine.
                        let result = try Migrator(connection: connection, progress: progress).runInOpenTransaction(
                            next, number: count - stages.count + 1, of: count, records: plan.records, current: layout)
                        return .migrated(result)
                    }
                    // A store that recorded no number (or another version's) resolved to this
                    // version: it records this version's number now.
                    try StoreMetadata.record(layout.schema, on: connection)
                }
                try open(found, layout: layout, engine: engine, history: history, on: connection)
                return .opened
            }
            switch step {
            case .migrated(let stage):
                Migrator(connection: connection, progress: progress).reportCommitted(stage)
            case .opened:
                try engine.didOpen(connection)
                return verifiedCookie
            }
        }
    }

    /// What one transaction of ``prepare(_:layout:path:history:plan:progress:)`` did.
    private enum OpeningStep {
        /// Ran one stage; the next transaction looks again.
        case migrated(Migrator.StageResult)
        /// Created or checked the store, which now holds this schema.
        case opened
    }

    /// The stages that lead from the store's version to the plan's current one, found by the
    /// version number the store records (see ``MigrationPlan/stages(fromVersion:checksum:)``): none
    /// when a store recording no number resolves to the current version, `nil` when the file is
    /// not a store or already records the current version and checksum.
    private static func pendingStages(of found: StoreMetadata, plan: MigrationPlan) throws -> [MigrationStage]? {
        let expected = plan.current.checksum.hexDigits
        guard case .store = found, let checksum = found.checksum,
            checksum != expected || found.version != plan.current.version
        else { return nil }
        guard let stages = try plan.stages(fromVersion: found.version, checksum: SchemaChecksum(hexDigits: checksum))
        else {
            throw MigrationError.unknownStoreVersion(
                storeChecksum: checksum, storeVersion: found.version,
                knownChecksums: plan.stages.map(\.source.checksum.hexDigits) + [expected])
        }
        return stages
    }

    /// In the opening transaction: creates the schema in an empty file, or checks that the store
    /// holds this schema; then prepares history tables when history is on.
    private static func open<Engine: StoreEngine>(
        _ found: StoreMetadata, layout: SchemaLayout, engine: Engine, history: HistoryTracking,
        on connection: Engine.Connection
    ) throws {
        switch found {
        case .empty:
            try connection.execute(SchemaSQL.createStatements(for: layout, in: connection.dialect))
            try StoreMetadata.record(layout.schema, on: connection)
            try engine.didCreateSchema(on: connection)
        case .foreign:
            throw StoreError.notAStore(path: engine.location)
        case .store:
            guard found.checksum == layout.schema.checksum.hexDigits else {
                throw StoreError.schemaMismatch(
                    storeChecksum: found.checksum ?? "none", storeVersion: found.version,
                    expectedChecksum: layout.schema.checksum.hexDigits, expectedVersion: layout.schema.version)
            }
            try engine.verifyOpened(connection, layout: layout)
            // Rows another writer noted and never indexed (a Core Data import's own transaction,
            // another program writing the file) are indexed now, so a search sees every row; an
            // index another program emptied or edited is rebuilt from the rows.
            try SchemaSQL.checkSearchIndexes(for: layout, on: connection, path: engine.location)
        }
        if case .enabled = history {
            try HistorySQL.prepare(on: connection)
        }
    }

    /// Inside a transaction: throws ``StoreError/schemaMismatch(storeChecksum:storeVersion:expectedChecksum:expectedVersion:)``
    /// when the file no longer holds this store's schema, because another process (a newer app
    /// beside an older widget) migrated it after this store opened it; writing or reading it
    /// with this schema would misplace values. The recorded checksum is read in every transaction:
    /// a stage can change it without changing any table's SQL (`Int16` to `Int32` are both
    /// `INTEGER`), so SQLite's schema cookie does not tell.
    ///
    /// It also reads SQLite's schema cookie, which any change to the schema in any process
    /// increments (a trigger another program added while the store is open): when it differs from
    /// the one last verified, the whole schema is verified again before the transaction goes on,
    /// and ``StoreError/unexpectedSchema(path:differences:)`` refuses it, in this transaction
    /// and every later one.
    ///
    /// `checksum` is what the transaction's first statement read (`StoreMetadata.beginCheckingChecksum`,
    /// sent with the `BEGIN` where the engine can, and on PostgreSQL with a read's first query).
    private func checkSchema(_ checksum: String?, on connection: any DatabaseConnection) throws {
        guard checksum == schema.checksum.hexDigits else {
            throw StoreError.schemaMismatch(
                storeChecksum: checksum ?? "none", storeVersion: try StoreMetadata.read(on: connection).version,
                expectedChecksum: schema.checksum.hexDigits, expectedVersion: schema.version)
        }
        guard engine.isShared else { return }
        let verified = verifiedSchemaCookie.withLock { $0 }
        let cookie = try connection.verifySchema(layout, since: verified)
        if cookie != verified { verifiedSchemaCookie.withLock { $0 = cookie } }
    }

    // MARK: - Reading

    /// Runs `body` in a read transaction on one of the reader connections and returns its result.
    /// Readers run concurrently with each other and with the writer.
    public func performQuery<Result: Sendable>(
        _ body: @escaping @Sendable (ReadContext) throws -> Result
    ) async throws -> Result {
        let reader = pickReader()
        return try await run(on: reader) { try self.read(on: reader, body) }
    }

    /// Runs `work` on `queue` for the calling task and returns its result. A task cancelled before
    /// the work starts gets `CancellationError` and the work never runs; one cancelled while it
    /// runs has the engine told (``DatabaseConnection/watchCancellation(_:)``: on PostgreSQL the
    /// waiting statement is cancelled), so the transaction fails and rolls back, never committing
    /// later behind the caller's back.
    private func run<Result: Sendable>(
        on queue: ConnectionQueue, _ work: @escaping @Sendable () throws -> Result
    ) async throws -> Result {
        let cancelled = Locked(false)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                queue.queue.async {
                    continuation.resume(
                        with: Swift.Result {
                            if cancelled.withLock({ $0 }) { throw CancellationError() }
                            queue.isCancelled = { cancelled.withLock { $0 } }
                            defer {
                                queue.isCancelled = nil
                                queue.connection.watchCancellation(nil)
                            }
                            return try work()
                        })
                }
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
        }
    }

    /// Runs `body` in a read transaction and calls `completion` with its result on `queue`.
    public func performQuery<Result: Sendable>(
        on queue: DispatchQueue,
        _ body: @escaping @Sendable (ReadContext) throws -> Result,
        completion: @escaping @Sendable (Swift.Result<Result, Error>) -> Void
    ) {
        let reader = pickReader()
        reader.queue.async {
            let result = Swift.Result { try self.read(on: reader, body) }
            queue.async { completion(result) }
        }
    }

    /// Runs a read on the caller's thread, which must be `reader`'s queue.
    ///
    /// A read whose connection is found lost (``DatabaseConnection/isLost``: the server ended the
    /// session) runs once more on a fresh one: a read changes nothing, so running it again repeats
    /// nothing, and on PostgreSQL a read's `BEGIN` travels with its first statement, so a link lost
    /// before the read began is only found there (a write's `BEGIN` is retried in ``begin(_:on:)``).
    func read<Result>(on reader: ConnectionQueue, _ body: (ReadContext) throws -> Result) throws -> Result {
        try checkOpen()
        do {
            return try readOnce(on: reader, body)
        } catch {
            guard reader.connection.isLost else { throw error }
            return try readOnce(on: reader, body)
        }
    }

    private func readOnce<Result>(on reader: ConnectionQueue, _ body: (ReadContext) throws -> Result) throws -> Result {
        let connection = try begin(.deferred, on: reader)
        let context = ReadContext(connection: connection, layout: layout)
        do {
            let result = try body(context)
            try connection.commit()
            return result
        } catch {
            connection.rollback()
            throw error
        }
    }

    /// Runs a read on a reader's queue and waits for it: for loading records where an `async`
    /// call cannot be made (a list cell asking for its record).
    func readNow<Result>(_ body: (ReadContext) throws -> Result) throws -> Result {
        let reader = pickReader()
        return try reader.queue.sync { try read(on: reader, body) }
    }

    /// The writer's queue, on which ``writerConnection`` may be used.
    var writerQueue: DispatchQueue { writer.queue }
    /// The writer's connection: only on ``writerQueue``.
    var writerConnection: any DatabaseConnection { writer.connection }

    func pickReader() -> ConnectionQueue {
        guard !readers.isEmpty else { return writer }
        let index = nextReader.withLock { next in
            defer { next = (next + 1) % readers.count }
            return next
        }
        return readers[index]
    }

    // MARK: - Writing

    /// Runs `body` in a write transaction on the store's single writer. The transaction commits
    /// when `body` returns and rolls back, changing nothing, when it throws.
    public func performAndSave<Result: Sendable>(
        _ body: @escaping @Sendable (WriteContext) throws -> Result
    ) async throws -> Result {
        try await performAndSave(author: nil, body)
    }

    /// Runs `body` in a write transaction whose history, when the store records history, names
    /// `author` instead of the store's author: an intent or a background sync saying who it is.
    /// Without history, `author` is ignored.
    public func performAndSave<Result: Sendable>(
        author: String?, _ body: @escaping @Sendable (WriteContext) throws -> Result
    ) async throws -> Result {
        try await run(on: writer) { try self.write(author: author, body) }
    }

    /// Runs `body` in a write transaction and calls `completion` with its result on `queue`.
    public func performAndSave<Result: Sendable>(
        on queue: DispatchQueue,
        _ body: @escaping @Sendable (WriteContext) throws -> Result,
        completion: @escaping @Sendable (Swift.Result<Result, Error>) -> Void
    ) {
        writer.queue.async {
            let result = Swift.Result { try self.write(body) }
            queue.async { completion(result) }
        }
    }

    /// Runs a write transaction on the caller's thread, which must be the writer's queue.
    private func write<Result>(author: String? = nil, _ body: (WriteContext) throws -> Result) throws -> Result {
        try checkOpen()
        try writer.connection.checkInPlace()
        let connection = try begin(.immediate, on: writer)
        let context = WriteContext(connection: connection, layout: layout)
        let storeAuthor: String?
        if case .enabled(let author) = history { storeAuthor = author } else { storeAuthor = nil }
        context.history = HistoryLog(isEnabled: storeAuthor != nil)
        do {
            let result = try body(context)
            // A closure that caught the error of an operation SQLite answered by rolling back the
            // whole transaction (a full disk, a trigger's RAISE(ROLLBACK)) saves nothing: no
            // history, no observers, and this throws.
            try connection.checkTransaction()
            try SchemaSQL.synchronizeSearchIndexes(for: layout, on: connection)
            var recorded: HistoryToken?
            if let storeAuthor {
                let changes = context.history.merged { [layout] entity in
                    Set(layout.entities[entity].map { $0.columns.map(\.key) } ?? [])
                }
                if !changes.isEmpty {
                    recorded = try HistorySQL.record(changes, author: author ?? storeAuthor, on: connection)
                }
            }
            // Nothing else can commit while this transaction holds the write lock: when no other
            // connection committed since the last check, every earlier transaction has been seen.
            let unseenBefore: Int64?
            if case .dataVersion = engine.commitSignal, recorded != nil {
                unseenBefore = try Self.dataVersion(of: connection)
            } else {
                unseenBefore = nil
            }
            // A task cancelled while its closure ran saves nothing, on every engine: its caller
            // hears that, never that the write committed (the engine may not have waited on
            // anything the cancellation could stop).
            if writer.isCancelled?() == true { throw CancellationError() }
            try observers.commit(context.changes) { try commit(connection) }
            if let recorded {
                remote.withLock { state in
                    if state.dataVersion == unseenBefore { state.token = recorded }
                }
            }
            return result
        } catch {
            connection.rollback()
            throw error
        }
    }

    // MARK: - Lost connections

    /// Begins a transaction on `queue`'s connection with the store's schema check
    /// (`StoreMetadata.beginCheckingChecksum(_:on:_:)`, ``checkSchema(_:on:)``), and returns the
    /// connection it began on.
    ///
    /// A connection whose link is gone (``DatabaseConnection/isLost``: the server ended the session
    /// or restarted) is replaced by a fresh one first, so one lost link fails at most the statement
    /// that found it, never every later read or write. A link found lost by the `BEGIN` itself is
    /// replaced and the `BEGIN` sent once more: nothing of the transaction ran, so this repeats no
    /// write. A write that loses its link later fails as before (`COMMIT` saying its outcome is
    /// unknown), and the next transaction gets a fresh connection.
    private func begin(_ kind: TransactionKind, on queue: ConnectionQueue) throws -> any DatabaseConnection {
        let connection = try liveConnection(of: queue)
        connection.watchCancellation(queue.isCancelled)
        do {
            try beginChecked(kind, on: connection)
            return connection
        } catch {
            guard connection.isLost else {
                connection.rollback()
                throw error
            }
            let fresh = try liveConnection(of: queue)
            fresh.watchCancellation(queue.isCancelled)
            do {
                try beginChecked(kind, on: fresh)
                return fresh
            } catch {
                fresh.rollback()
                throw error
            }
        }
    }

    private func beginChecked(_ kind: TransactionKind, on connection: any DatabaseConnection) throws {
        try StoreMetadata.beginCheckingChecksum(kind, on: connection) { checksum in
            try self.checkSchema(checksum, on: connection)
        }
    }

    /// `queue`'s connection, opened afresh (``StoreEngine/openReader()``, or the writer with its
    /// settings) when the one it had is lost; only on `queue`.
    private func liveConnection(of queue: ConnectionQueue) throws -> any DatabaseConnection {
        guard queue.connection.isLost else { return queue.connection }
        let fresh: any DatabaseConnection
        if queue === writer {
            fresh = try engine.openWriter()
            do {
                try fresh.execute(fresh.dialect.writerSettings)
                try listenForRemoteChanges(writer: fresh)
            } catch {
                fresh.close()
                throw error
            }
        } else {
            fresh = try engine.openReader()
        }
        queue.connection.close()
        queue.connection = fresh
        return fresh
    }

    /// Commits, turning a deferred foreign-key failure into an error that names the relationship:
    /// from the engine's error where it names the row (PostgreSQL), or else from the dialect's
    /// query for rows breaking a foreign key (SQLite, whose failed commit leaves the rows in place).
    private func commit(_ connection: any DatabaseConnection) throws {
        do {
            try connection.commit()
        } catch let error {
            switch connection.constraintFailure(in: error) {
            case .danglingReference(let table, let column):
                throw StoreError.danglingReference(entity: table, relationship: column)
            case .foreignKey:
                throw try danglingReference(on: connection) ?? error
            case .unique, .notNull, nil:
                throw error
            }
        }
    }

    /// The first row breaking a foreign key, as the error naming its table and column; `nil` when
    /// the dialect has no query for it or finds no such row.
    private func danglingReference(on connection: any DatabaseConnection) throws -> StoreError? {
        guard let sql = try? connection.dialect.foreignKeyViolations(in: nil) else { return nil }
        let check = try connection.statement(sql)
        defer { check.reset() }
        guard try check.step() else { return nil }
        let table = check.string(0)
        let foreignKey = check.int64(3)
        let list = try connection.statement(try connection.dialect.foreignKeyColumns)
        defer { list.reset() }
        list.bind(table, 1)
        list.bind(foreignKey, 2)
        let column = try list.step() ? list.string(0) : "?"
        return StoreError.danglingReference(entity: table, relationship: column)
    }

    // MARK: - Closing

    /// Closes the store: waits for the reads and writes already started, checkpoints the
    /// write-ahead log into the store file, closes every connection (which removes the `-wal` and
    /// `-shm` files unless another process has the store open), and ends every observation.
    /// Every later read or write throws ``StoreError/storeClosed``; closing again does nothing.
    ///
    /// ```swift
    /// try store.close()
    /// try FileManager.default.copyItem(at: url, to: backupURL)  // one self-contained file
    /// ```
    ///
    /// Call it outside `performQuery` and `performAndSave` closures: it waits for them to return.
    public func close() throws {
        let wasOpen = isClosed.withLock { closed in
            defer { closed = true }
            return !closed
        }
        guard wasOpen else { return }
        observers.closeAll()
        remote.withLock { state in
            state.timer?.cancel()
            state.timer = nil
            state.subscription?.cancel()
            state.subscription = nil
        }
        for reader in readers {
            reader.queue.sync { reader.connection.close() }
        }
        try writer.queue.sync {
            defer { writer.connection.close() }
            try closeWriter(on: engine)
        }
    }

    /// Runs the engine's closing statements on the writer (SQLite's checkpoint); on the writer's queue.
    private func closeWriter<Engine: StoreEngine>(on engine: Engine) throws {
        guard let connection = writer.connection as? Engine.Connection else { return }
        try connection.execute(try engine.closingStatements(for: connection))
    }

    /// Throws ``StoreError/storeClosed`` once ``close()`` has begun.
    func checkOpen() throws {
        if isClosed.withLock({ $0 }) { throw StoreError.storeClosed }
    }

    // MARK: - Observing

    /// The request's results now, then again after every committed write that changed what they
    /// hold. A commit that changes no column the request reads (its records' columns, and those its
    /// filter and sort reach), or writes the values already stored, wakes nothing, and a result
    /// equal to the last one delivered is not delivered again. The sequence ends when the consuming
    /// task is cancelled or the store closes.
    ///
    /// ```swift
    /// for try await users in store.observe(User.request().filter { $0.rating >= 4 }) {
    ///     show(users)
    /// }
    /// ```
    ///
    /// For lists with sections and change sets, use ``FetchedResultsController``.
    public func observe<Target: Record>(_ request: FetchRequest<Target>) -> AsyncThrowingStream<[Target], Error> {
        observedValues(of: request, read: { try $0.fetch(request) }, isSame: ==, deliver: { $0 })
    }

    /// What `read` gives now, then again after every commit that changes what `request` (and
    /// `extraKeys`, `extraReads`) reads, as `deliver` makes it of each value not `isSame` as the
    /// last one read: the one stream behind every public `observe`. It ends when the consuming
    /// task is cancelled or the store closes.
    func observedValues<Target: Record, Value, Element: Sendable>(
        of request: FetchRequest<Target>,
        extraKeys: [ColumnPath] = [],
        extraReads: (SchemaLayout, inout ReadSet) throws -> Void = { _, _ in },
        read: @escaping @Sendable (ReadContext) throws -> Value,
        isSame: @escaping @Sendable (Value, Value) -> Bool,
        deliver: @escaping @Sendable (Value) throws -> Element
    ) -> AsyncThrowingStream<Element, Error> {
        AsyncThrowingStream { continuation in
            let last = Locked<Value?>(nil)
            let token = observe(request, extraKeys: extraKeys, extraReads: extraReads) { (context: ReadContext) in
                let value = try read(context)
                let isNew = last.withLock { last in
                    defer { last = value }
                    return last.map { !isSame($0, value) } ?? true
                }
                if isNew { continuation.yield(try deliver(value)) }
            } failure: { error in
                continuation.finish(throwing: error)
            } closed: {
                continuation.finish()
            }
            continuation.onTermination = { [observers] _ in
                if let token { observers.remove(token) }
            }
        }
    }

    /// Runs `refresh` in a read transaction now, then after every commit that changes what
    /// `request` (and `extraKeys`) reads, one refresh at a time; `changed` hears of each such
    /// commit's changes just before it commits (see `ObserverRegistry.commit`). Returns the
    /// token that stops it, or `nil` after reporting to `failure` that the request cannot be observed.
    func observe<Target: Record>(
        _ request: FetchRequest<Target>,
        extraKeys: [ColumnPath] = [],
        extraReads: (SchemaLayout, inout ReadSet) throws -> Void = { _, _ in },
        changed: @escaping @Sendable (StoreChanges) -> Void = { _ in },
        refresh: @escaping @Sendable (ReadContext) throws -> Void,
        failure: @escaping @Sendable (Error) -> Void,
        closed: @escaping @Sendable () -> Void
    ) -> UUID? {
        let reads: ReadSet
        do {
            var all = try layout.reads(of: request, extraKeys: extraKeys)
            try extraReads(layout, &all)
            reads = all
        } catch {
            failure(error)
            return nil
        }
        let queue = DispatchQueue(label: "Modelwright.Store.observer")
        let run: @Sendable () -> Void = {
            let reader = self.pickReader()
            do {
                try reader.queue.sync { try self.read(on: reader, refresh) }
            } catch StoreError.storeClosed {
                closed()
            } catch {
                failure(error)
            }
        }
        let token = observers.add(reads: reads, hear: changed, refresh: { queue.async(execute: run) }, close: closed)
        queue.async(execute: run)
        return token
    }
}
