import Foundation

/// A device's side of sync: it pushes the store's local changes to the server and applies
/// everyone else's, on demand (``sync()``) or on its own (``start(every:syncsOnLocalCommits:)``): after
/// every local commit and at least every ``defaultInterval``.
///
/// ```swift
/// let store = try Store(url: url, schema: Planner.schema, history: .enabled(author: "app"))
/// let engine = try await SyncEngine(store: store, transport: server)
/// try await engine.sync()
/// engine.start()  // and again after each local commit and every half second, until stop()
/// ```
///
/// The store must record persistent history: the engine reads local changes from it. One sync is:
///
/// 1. **Stamp**: in one write transaction, the history transactions not yet stamped (those of
///    every author but ``author``) are read, each is given the next timestamp of the device's
///    clock, and the rows it touched are read as they are now: an insert or update becomes each
///    changed attribute's value at that stamp, a delete a tombstone, a join-table change a link
///    added or removed. Each row's change is merged into what the device knows of the row and
///    marked pending with the history token.
/// 2. **Push** the pending rows with the tokens they cover; once the server acknowledges, the
///    marks up to the acknowledged token are cleared in one transaction.
/// 3. **Pull** from the device's cursor, page by page; each page is applied in one transaction
///    under ``author``: each row is merged with what the device knows, and the store's tables are
///    brought in line with the result, so observers and results controllers hear of it as of any
///    commit, and the engine does not push it back. Local changes made before the page are
///    stamped first, in the same transaction, so a pulled value never hides an unstamped local one.
///
/// Everything that lets the engine resume (the node ID, the clock, each row's stamps, the pending
/// marks, the last stamped and acknowledged tokens, the cursor) is kept in the store's sync tables
/// and written in the transaction that changes what it describes, so a crash or kill at any point
/// leaves a state from which the next sync neither loses nor repeats a change: a push whose
/// answer was lost is sent again and merges to nothing new on the server; a page whose apply did
/// not commit is pulled again.
public final class SyncEngine: Sendable {
    /// The history author of the transactions that apply pulled changes.
    public static let author = "sync"
    /// The history authors a synced store may not write under: the engine's and the server's own,
    /// whose transactions the stamp step skips (a store opened with one would never sync its writes).
    public static let reservedAuthors: Set<String> = [author, SyncServer.author]
    /// How often ``start(every:syncsOnLocalCommits:)`` polls by default: every 500 milliseconds.
    public static let defaultInterval: Duration = .milliseconds(500)

    /// The device's store.
    public let store: Store
    /// How the engine reaches the server.
    public let transport: any SyncTransport
    /// At most how many rows one pull asks for.
    public let pullLimit: Int
    /// How many rows one pull asks for by default: a page costs a request and a transaction on
    /// each side, so a burst of offline changes comes down in few of them (the server serves at
    /// most ``SyncServer/maximumPullLimit``).
    public static let defaultPullLimit = 5_000
    private let wallClock: @Sendable () -> UInt64
    private let gate = SyncGate()
    private let loop = Locked<(task: Task<Void, Never>, observer: UUID?)?>(nil)
    private let failure = Locked<(any Error)?>(nil)
    /// The rows the running sync discarded (see ``Report/discarded``); one sync runs at a time.
    private let discarded = Locked<[RowChange]>([])
    /// The uniqueness outcomes of the running sync's pushes (see ``Report/resolutions``).
    private let resolutions = Locked<[ConstraintResolution]>([])

    /// An engine for `store`, which must record history; its sync tables are created when missing.
    public init(
        store: Store, transport: any SyncTransport, pullLimit: Int = SyncEngine.defaultPullLimit,
        wallClock: @escaping @Sendable () -> UInt64 = { HybridLogicalClock.wallMilliseconds() }
    ) async throws {
        guard case .enabled(let author) = store.history else { throw SyncError.historyDisabled }
        if Self.reservedAuthors.contains(author) { throw SyncError.reservedAuthor(author) }
        self.store = store
        self.transport = transport
        self.pullLimit = max(1, pullLimit)
        self.wallClock = wallClock
        try await store.performAndSave(author: Self.author) { context in
            let connection = context.connection
            try SyncBookkeeping.prepare(on: connection)
            _ = try SyncBookkeeping.node(on: connection)
            if try SyncBookkeeping.value(SyncBookkeeping.unverifiedSince, on: connection) == nil {
                let clock = try SyncBookkeeping.clock(
                    maximumDriftMilliseconds: HybridLogicalClock.unbounded, on: connection)
                try SyncBookkeeping.setEncoded(clock.latest, for: SyncBookkeeping.unverifiedSince, on: connection)
            }
        }
    }

    deinit {
        loop.withLock { current in
            current?.task.cancel()
            if let token = current?.observer { store.observers.remove(token) }
        }
    }

    /// The model version the device runs.
    public var schemaVersion: SyncSchemaVersion {
        SyncSchemaVersion(
            model: store.schema.modelName, version: store.schema.version, checksum: store.schema.checksum.hexDigits)
    }

    /// The last error of an automatic sync, if the last one failed.
    public var lastError: (any Error)? { failure.withLock { $0 } }

    // MARK: - Syncing

    /// What one ``sync()`` did.
    public struct Report: Sendable, Hashable {
        /// How many rows were pushed.
        public var pushed = 0
        /// How many rows were pulled.
        public var pulled = 0
        /// The rows whose local changes the server refused as out of the user's scope
        /// (``SyncError/outOfScope(row:)``: a write over a link the user may not see, a delete
        /// that would clear another user's row, a row taken from others who hold rows that need
        /// it): each now holds the server's version again, or is gone from the device when its
        /// user may not see it. The device's other changes were pushed.
        public var refused: [RowKey] = []
        /// The rows made on this device and never pushed that it had to drop, each as last saved:
        /// they needed, through a required to-one, a row that left the user's scope before they
        /// reached the server (a page made offline in a folder another user took meanwhile). The
        /// server never had them; the app may make them again where the user may. Also a row the
        /// server refused for a uniqueness constraint (``ConstraintResolution/rejected(entity:constraint:row:kept:)``
        /// or ``ConstraintResolution/refused(entity:constraint:row:)``), and the rows that needed it
        /// through a required to-one, which its delete takes with it.
        public var discarded: [RowChange] = []
        /// How the server settled the uniqueness conflicts of the rows this device pushed (see
        /// <doc:Sync#Conflict-rules>, "Uniqueness"); the device's store follows at the pull.
        public var resolutions: [ConstraintResolution] = []
    }

    /// Stamps, pushes and pulls once; a sync already running finishes first. Throws the server's
    /// refusal (a ``SyncError``) or the transport's error; nothing is lost by a failed sync.
    @discardableResult
    public func sync() async throws -> Report {
        try await gate.run { [self] in
            var report = Report()
            discarded.withLock { $0 = [] }
            resolutions.withLock { $0 = [] }
            try await stamp()
            (report.pushed, report.refused) = try await push()
            report.pulled = try await pull()
            report.discarded = discarded.withLock { $0 }
            report.resolutions = resolutions.withLock { $0 }
            return report
        }
    }

    /// Syncs now, then again after every local commit and at least every `interval`, until
    /// ``stop()``; a failed sync is kept in ``lastError`` and tried again at the next interval.
    ///
    /// A commit to the model's tables wakes the engine at once (unless `syncsOnLocalCommits` is
    /// `false`), so a change leaves the device as soon as it is committed; changes from other
    /// devices arrive at the next poll, within `interval` of the server receiving them. A commit
    /// made while a sync runs is picked up by the next one.
    public func start(every interval: Duration = SyncEngine.defaultInterval, syncsOnLocalCommits: Bool = true) {
        let wakeup = SyncWakeup()
        let observer =
            syncsOnLocalCommits
            ? store.observers.add(
                reads: Self.modelTables(store.layout), hear: { _ in }, refresh: { wakeup.signal() },
                close: { wakeup.signal() })
            : nil
        let task = Task { [weak self] in
            while !Task.isCancelled {
                guard let engine = self else { return }
                do {
                    try await engine.sync()
                    engine.failure.withLock { $0 = nil }
                } catch {
                    engine.failure.withLock { $0 = error }
                }
                await wakeup.wait(upTo: interval)
            }
        }
        loop.withLock { current in
            current?.task.cancel()
            if let token = current?.observer { store.observers.remove(token) }
            current = (task, observer)
        }
    }

    /// Stops the automatic syncs ``start(every:syncsOnLocalCommits:)`` began.
    public func stop() {
        loop.withLock { current in
            current?.task.cancel()
            if let token = current?.observer { store.observers.remove(token) }
            current = nil
        }
    }

    /// Every table of the model: a commit that adds, removes or changes a row of any of them (a
    /// join table's too) wakes a started engine. The sync tables are not among them, so the
    /// engine's own bookkeeping wakes nothing; its applied pulls do, which costs one empty sync.
    private static func modelTables(_ layout: SchemaLayout) -> ReadSet {
        var reads = ReadSet()
        for entity in layout.entities.values {
            reads.read(entity.columns.map(\.name), of: entity.table)
            for relationship in entity.relationships where relationship.cardinality == .toMany {
                if case .joinTable(let table, _, _, _) = try? layout.storage(of: relationship, from: entity) {
                    reads.read([String](), of: table)
                }
            }
        }
        return reads
    }

    // MARK: - Steps

    private func stamp() async throws {
        let wall = wallClock()
        try await store.performAndSave(author: Self.author) { context in
            try Self.stampLocalChanges(context, wall: wall)
        }
    }

    /// Stamps the history transactions of other authors not stamped yet (see the type's steps).
    private static func stampLocalChanges(_ context: WriteContext, wall: UInt64) throws {
        try stampHistory(context, wall: wall, excludingAuthor: author) { merged, token in
            // A row with no record yet is made here; one made here stays so until the server has it.
            let record = try SyncBookkeeping.record(of: merged.key, on: context.connection)
            try SyncBookkeeping.write(
                merged, cursor: record.map(\.cursor) ?? SyncBookkeeping.madeHere, pending: token,
                on: context.connection)
        }
    }

    /// Stamps the history transactions not written by `excludingAuthor` and not stamped yet,
    /// merges each row's change into its sync record and hands the merged record to `write` with
    /// its transaction's token. The device engine marks them pending; the server gives them
    /// cursors (rows its app's own code wrote into the server store).
    static func stampHistory(
        _ context: WriteContext, wall: UInt64, excludingAuthor: String,
        write: (_ merged: RowChange, _ token: Int64) throws -> Void
    ) throws {
        let connection = context.connection
        let stamped = try SyncBookkeeping.value("stamped", on: connection).flatMap { Int64($0) }
        let transactions = try HistorySQL.fetch(
            after: stamped.map(HistoryToken.init), author: nil, excludingAuthor: excludingAuthor, entity: nil,
            on: connection)
        guard let last = transactions.last else { return }
        var clock = try SyncBookkeeping.clock(maximumDriftMilliseconds: HybridLogicalClock.unbounded, on: connection)
        for transaction in transactions where !transaction.changes.isEmpty {
            // Stamped as of its commit, not of this sync (never later than now): a write that waited
            // for a sync (an offline edit, the server's own code between two requests) would beat
            // every edit made meanwhile. The clock still moves forward only.
            // A store file is untrusted: a time that is NaN, infinite or before 1970 reads as 0.
            let committed = transaction.timestamp.timeIntervalSince1970 * 1_000
            let at = committed.isFinite && committed > 0 ? UInt64(min(committed, Double(wall))) : 0
            let stamp = try clock.tick(wallMilliseconds: at)
            var changes = ChangeSet()
            for change in transaction.changes {
                for row in try rowChanges(for: change, at: stamp, context) { changes.merge(row) }
            }
            for change in changes.sortedChanges {
                let merged = try SyncBookkeeping.change(of: change.key, on: connection)?.merged(with: change) ?? change
                try write(merged, transaction.token.value)
            }
        }
        try SyncBookkeeping.save(clock, on: connection)
        try SyncBookkeeping.setValue(String(last.token.value), for: "stamped", on: connection)
    }

    /// What one history change means for sync, with the row's values as they are now.
    private static func rowChanges(
        for change: HistoryChange, at stamp: HybridTimestamp, _ context: WriteContext
    ) throws -> [RowChange] {
        guard let declared = context.layout.entities[change.entity] else { return [] }
        let id = change.recordID
        if change.kind == .delete {
            try context.forgetLinks(of: id, entity: declared)
            let key = RowKey(entity: declared.name, id: id)
            // A row made and deleted before any stamp has no record: no replica ever heard of it,
            // and a bare tombstone, without the values a scope reads, would be refused as out of scope.
            guard try SyncBookkeeping.change(of: key, on: context.connection) != nil else { return [] }
            return [RowChange.delete(key, at: stamp)]
        }
        // A row deleted since: its delete, later in the history, is its whole story.
        guard let entity = try context.concreteEntity(of: id, in: declared),
            let values = try context.syncValues(of: id, in: entity)
        else { return [] }
        let key = RowKey(entity: entity.name, id: id)
        if change.kind == .insert {
            // An undone delete: the links pulled while the row was gone come back with it.
            try context.restoreLinks(to: id, entity: entity)
            var result = [RowChange.insert(key, values: values, at: stamp)]
            for relationship in entity.relationships where relationship.cardinality == .toMany {
                result += try linkChanges(of: id, entity: entity, relationship: relationship.name, at: stamp, context)
            }
            return result
        }
        var result: [RowChange] = []
        let changed = values.filter { change.changedAttributes.contains($0.key) }
        if !changed.isEmpty { result.append(RowChange.update(key, values: changed, at: stamp)) }
        for name in change.changedAttributes.sorted() where values[name] == nil {
            result += try linkChanges(of: id, entity: entity, relationship: name, at: stamp, context)
        }
        return result
    }

    private static func linkChanges(
        of id: UUID, entity: EntityLayout, relationship: String, at stamp: HybridTimestamp, _ context: WriteContext
    ) throws -> [RowChange] {
        try context.localLinkChanges(of: id, entity: entity, relationship: relationship).map { change in
            change.present
                ? RowChange.link(change.source, change.link.relationship, to: change.link.target, at: stamp)
                : RowChange.unlink(change.source, change.link.relationship, from: change.link.target, at: stamp)
        }
    }

    /// Pushes the pending rows; returns how many, and the rows whose changes the server refused
    /// and the device gave up (see ``Report/refused``). A server that lost what it acknowledged
    /// (see ``SyncEpoch``) refuses the push; then everything is marked pending and pushed once more.
    ///
    /// A push refused as out of scope is tried again after a pull, which drops the rows that left
    /// the user's scope since the last one. Refused again, the device gives up its changes of the
    /// row the refusal names (``revert(_:_:)``), pulls from the beginning to get the server's
    /// version, and pushes the rest: a refused change never holds the device's other changes
    /// back. The same row refused twice in one sync is an error.
    private func push(
        resending: Bool = false, pulledFirst: Bool = false, refused: [RowKey] = []
    ) async throws -> (count: Int, refused: [RowKey]) {
        let (node, pending, stamped, acknowledged, epoch, horizon, clock) = try await store.performQuery { context in
            let connection = context.connection
            return (
                try SyncBookkeeping.node(on: connection),
                try SyncBookkeeping.pending(on: connection),
                try SyncBookkeeping.value("stamped", on: connection).flatMap { Int64($0) },
                try SyncBookkeeping.value("acknowledged", on: connection).flatMap { Int64($0) },
                try SyncBookkeeping.decoded(SyncEpoch.self, "epoch", on: connection),
                try SyncBookkeeping.value("horizon", on: connection).flatMap { Int64($0) },
                try SyncBookkeeping.decoded(HybridTimestamp.self, "clock", on: connection)
            )
        }
        guard !pending.isEmpty, let stamped else { return (0, refused) }
        let request = PushRequest(
            device: node, schema: schemaVersion, after: acknowledged.map(HistoryToken.init),
            through: HistoryToken(stamped), changes: ChangeSet(pending), epoch: epoch,
            horizon: horizon.map(SyncCursor.init))
        let response = try await transport.push(request)
        if case .epochChanged? = response.refusal, !resending {
            try await store.performAndSave(author: Self.author) { context in
                try SyncBookkeeping.resend(on: context.connection)
            }
            return try await push(resending: true, pulledFirst: pulledFirst, refused: refused)
        }
        if case .outOfScope(let row)? = response.refusal {
            if pulledFirst {
                guard !refused.contains(row) else { throw SyncError.outOfScope(row: row) }
                try await store.performAndSave(author: Self.author) { try Self.revert(row, $0) }
            }
            // A row this device changed may have left its user's scope since it last pulled: the
            // pull drops it (and its pending change), and what remains is pushed once more.
            _ = try await pull()
            return try await push(
                resending: resending, pulledFirst: true, refused: pulledFirst ? refused + [row] : refused)
        }
        if let refusal = response.refusal { throw refusal }
        guard let through = response.acknowledged else { return (0, refused) }
        let lost = try await store.performAndSave(author: Self.author) { context in
            let connection = context.connection
            let lost = try Self.rowsLost(to: response.resolutions, context)
            try SyncBookkeeping.acknowledge(through: through.value, pushed: pending.map(\.key), on: connection)
            try SyncBookkeeping.setValue(String(through.value), for: "acknowledged", on: connection)
            if let clock {
                try SyncBookkeeping.setEncoded(clock, for: SyncBookkeeping.acknowledgedClock, on: connection)
            }
            try SyncBookkeeping.advanceHorizon(to: response.cursor, in: response.epoch, on: connection)
            // The pushed rows are in this store (a copy of it taken from now on holds them too),
            // so the ranges they took are kept with the acknowledgment, in the same transaction.
            if !response.ownRows.isEmpty {
                try SyncBookkeeping.keepOwnRows(
                    try SyncBookkeeping.ownRows(on: connection)
                        + response.ownRows.map { $0.lowerBound.position...$0.upperBound.position },
                    after: try SyncBookkeeping.value("cursor", on: connection).flatMap { Int64($0) } ?? 0,
                    on: connection)
            }
            return lost
        }
        discarded.withLock { $0 += lost }
        resolutions.withLock { $0 += response.resolutions }
        return (pending.count, refused)
    }

    /// The rows the server deleted to settle `resolutions` that the user made (a row refused or
    /// rejected for its unique values), as this device last saved them, with the rows that need
    /// them through a required to-one (the delete takes those too), read before the pull applies it.
    private static func rowsLost(to resolutions: [ConstraintResolution], _ context: WriteContext) throws -> [RowChange]
    {
        var keys: [RowKey] = resolutions.compactMap { resolution in
            switch resolution {
            case .rejected(let entity, _, let row, _), .refused(let entity, _, let row): RowKey(entity: entity, id: row)
            case .merged: nil
            }
        }
        var seen: Set<RowKey> = []
        var lost: [RowChange] = []
        while let key = keys.popLast() {
            guard seen.insert(key).inserted,
                let record = try SyncBookkeeping.change(of: key, on: context.connection), record.isAlive
            else { continue }
            lost.append(record)
            for referrer in try SyncBookkeeping.rows(mentioning: key.id, on: context.connection)
            where referrer.isAlive && referrer.key != key {
                guard let entity = context.layout.entities[referrer.key.entity] else { continue }
                let needs = entity.columns.contains { column in
                    column.destination != nil && !column.isOptional
                        && referrer.attributes[column.key]?.value == .uuid(key.id)
                }
                if needs { keys.append(referrer.key) }
            }
        }
        return lost.sorted { $0.key < $1.key }
    }

    /// Gives up this device's changes of `key`, which the server refused: a row the device
    /// knows is emptied and marked ``SyncBookkeeping/reverted`` (its pending changes go with it),
    /// and the next pull starts from the beginning, naming it among the rows the device holds, so
    /// the server sends its version whole or tells the device to drop it; a row the device has no
    /// record of (a link's target it never pulled) is dropped, with the pending links to it.
    private static func revert(_ key: RowKey, _ context: WriteContext) throws {
        let connection = context.connection
        if try SyncBookkeeping.change(of: key, on: connection) != nil {
            try SyncBookkeeping.write(
                RowChange(key: key), cursor: SyncBookkeeping.reverted, pending: nil, on: connection)
        } else {
            try context.syncDrop(key)
        }
        try SyncBookkeeping.pullFromTheBeginning(on: connection)
    }

    /// Pulls page by page until the server has no more; returns how many rows came.
    private func pull() async throws -> Int {
        var count = 0
        // Whether this pull names the rows the device holds on every page: after the server
        // refused a cursor it gave out before it forgot this device (see PullRequest.held).
        var namesHeld = false
        var restarts = 0
        // How often the pull started again from the beginning after a drop reached a pending row.
        var startedOver = 0
        while true {
            let namingHeld = namesHeld
            let (node, cursor, epoch, horizon, ownRows, held) = try await store.performQuery { context in
                let cursor = try SyncBookkeeping.value("cursor", on: context.connection).flatMap { Int64($0) }
                return (
                    try SyncBookkeeping.node(on: context.connection),
                    cursor,
                    try SyncBookkeeping.decoded(SyncEpoch.self, "epoch", on: context.connection),
                    try SyncBookkeeping.value("horizon", on: context.connection).flatMap { Int64($0) },
                    try SyncBookkeeping.ownRows(on: context.connection),
                    // From the beginning, the rows it holds, so the server can tell it which to drop.
                    cursor == nil || namingHeld ? try SyncBookkeeping.keys(on: context.connection) : []
                )
            }
            let response = try await transport.pull(
                PullRequest(
                    device: node, schema: schemaVersion, since: cursor.map(SyncCursor.init), limit: pullLimit,
                    epoch: epoch, horizon: horizon.map(SyncCursor.init),
                    ownRows: ownRows.map { SyncCursor($0.lowerBound)...SyncCursor($0.upperBound) },
                    held: namesHeld || (cursor == nil && !held.isEmpty) ? held : nil))
            switch response.refusal {
            case .epochChanged?, .cursorAhead?:
                // The server's sequence no longer contains this device's cursor: it was restored
                // from an earlier copy (or reset), and lost what it acknowledged after it. Send
                // it everything this device knows again, and pull from the beginning.
                try await store.performAndSave(author: Self.author) { context in
                    try SyncBookkeeping.resend(on: context.connection)
                }
                _ = try await push()
                continue
            default:
                break
            }
            if case .cursorExpired = response.refusal {
                if cursor != nil, !namesHeld {
                    // The server forgot this device: the same cursor, naming the rows it holds.
                    namesHeld = true
                    continue
                }
                // Tombstones the device had not pulled were purged: start again from the beginning.
                restarts += 1
                if restarts > 2, let refusal = response.refusal { throw refusal }
                try await store.performAndSave(author: Self.author) { context in
                    let statement = try context.connection.statement(
                        "DELETE FROM \(quoted(SyncBookkeeping.state)) WHERE \"key\" = 'cursor'")
                    defer { statement.reset() }
                    try statement.run()
                }
                continue
            }
            if let refusal = response.refusal { throw refusal }
            let wall = wallClock()
            let page = try await store.performAndSave(author: Self.author) { context in
                try Self.apply(response, wall: wall, context)
            }
            discarded.withLock { $0 += page.discarded }
            count += response.changes.rows.count
            if page.reachedPending, startedOver < 2 {
                startedOver += 1
                continue
            }
            if !response.hasMore { return count }
        }
    }

    /// Applies one page of a pull, after stamping the local changes made before it. Returns what
    /// its drops reached: when they reached a link of a row with pending changes, the page has
    /// forgotten the cursor and the pull starts again from the beginning (see
    /// ``WriteContext/syncDrop(_:)``).
    private static func apply(
        _ response: PullResponse, wall: UInt64, _ context: WriteContext
    ) throws -> SyncDropOutcome {
        let connection = context.connection
        try stampLocalChanges(context, wall: wall)
        var clock = try SyncBookkeeping.clock(maximumDriftMilliseconds: HybridLogicalClock.unbounded, on: connection)
        if let latest = response.changes.latestStamp { try clock.receive(latest, wallMilliseconds: wall) }
        let stamped = try SyncBookkeeping.value("stamped", on: connection).flatMap { Int64($0) }
        let opened = try SyncBookkeeping.decoded(HybridTimestamp.self, SyncBookkeeping.unverifiedSince, on: connection)
        // The pull reached the server's newest: what the server held of this device's writes has been seen.
        if !response.hasMore { try SyncBookkeeping.deleteValue(SyncBookkeeping.unverifiedSince, on: connection) }
        // Deletes first: a row the server deleted to resolve a uniqueness conflict goes before the
        // row that kept its values arrives.
        let page = response.changes.sortedChanges
        for change in page.filter({ !$0.isAlive }) + page.filter(\.isAlive) {
            let record = try SyncBookkeeping.record(of: change.key, on: connection)
            var existing = record?.change
            var pending = record?.pending
            if let local = existing, let opened {
                // The server holds, under this device's own node, a part of the row newer than (or
                // as new as, with another value) the device's own write of it since it opened the
                // store: the device made that write and lost it (its store put back since, its
                // clock with it). The local write is the user's newest: stamped again, and pushed.
                let shadowed = local.ownStamps(shadowedBy: change, node: clock.node, since: opened)
                if !shadowed.isEmpty {
                    var renewed: [HybridTimestamp: HybridTimestamp] = [:]
                    for stamp in shadowed.sorted() { renewed[stamp] = try clock.tick(wallMilliseconds: wall) }
                    existing = local.restamped(renewed)
                    pending = stamped ?? pending ?? 0
                }
            }
            let merged = existing?.merged(with: change) ?? change
            guard merged != record?.change else {
                // The server sent the row (a resend of a push whose answer was lost, say): it
                // knows it, so the made-here mark goes, or later pulls would never name the row.
                if record?.cursor == SyncBookkeeping.madeHere {
                    try SyncBookkeeping.markKnown([change.key], on: connection)
                }
                continue
            }
            guard let (constraint, other) = try context.syncUniquenessConflict(of: merged) else {
                try context.materialize(merged)
                try SyncBookkeeping.write(merged, cursor: nil, pending: pending, on: connection)
                continue
            }
            // A local row the server has not seen holds the pulled row's unique values: resolve
            // as the server will when it arrives, the server's row surviving, and push the outcome.
            let entity = try context.layout.entity(merged.key.entity)
            guard let rule = context.syncUniqueness(of: entity),
                let concrete = try context.concreteEntity(of: other, in: entity),
                let loser = try SyncBookkeeping.change(of: RowKey(entity: concrete.name, id: other), on: connection)
            else {
                throw SyncError.changeRefused(
                    row: merged.key,
                    reason:
                        "its (\(constraint.joined(separator: ", "))) is already local row \(other.uuidString)'s; mark \(entity.name) '@sync(unique: merge)' or '@sync(unique: reject)'"
                )
            }
            let resolved = try context.syncResolve(
                loser, into: merged, by: rule, constraint: constraint, at: try clock.tick(wallMilliseconds: wall))
            for row in resolved.rows {
                try context.materialize(row)
                try SyncBookkeeping.write(row, cursor: nil, pending: stamped ?? pending ?? 0, on: connection)
            }
        }
        // Scopes over time: links to rows out of sight are held as nil, rows out of sight dropped.
        for hidden in response.hiddenLinks {
            try context.syncHide(hidden.attributes, of: hidden.row, keepingUnpushed: true)
        }
        var reached = SyncDropOutcome()
        for key in response.dropped {
            let outcome = try context.syncDrop(key)
            reached.reachedPending = reached.reachedPending || outcome.reachedPending
            reached.discarded += outcome.discarded
        }
        // A pulled delete of a row a local row still links to: settled as the server settles it.
        try context.syncSettleDanglingReferences(
            onlyDeleted: true, stamp: { try clock.tick(wallMilliseconds: wall) },
            write: { row in try SyncBookkeeping.write(row, cursor: nil, pending: stamped ?? 0, on: connection) })
        try SyncBookkeeping.save(clock, on: connection)
        try SyncBookkeeping.setValue(String(response.cursor.position), for: "cursor", on: connection)
        try SyncBookkeeping.advanceHorizon(to: response.cursor, in: response.epoch, on: connection)
        try SyncBookkeeping.keepOwnRows(
            try SyncBookkeeping.ownRows(on: connection), after: response.cursor.position, on: connection)
        if reached.reachedPending {
            try SyncBookkeeping.pullFromTheBeginning(on: connection)
            return reached
        }
        // The pull from the beginning that follows a refusal is done: a reverted row the server
        // did not send is not the user's to hold.
        if !response.hasMore {
            for key in try SyncBookkeeping.revertedKeys(on: connection) {
                reached.discarded += try context.syncDrop(key).discarded
            }
        }
        return reached
    }
}

/// What a started engine waits on between syncs: a signal (a local commit) or the interval,
/// whichever comes first. A signal given while no one waits is kept for the next wait.
private final class SyncWakeup: Sendable {
    private let state = Locked<(pending: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns at the first signal, or after `interval`, or at once when cancelled (the timer's
    /// sleep ends early and signals, so the waiting continuation always resumes).
    func wait(upTo interval: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                try? await Task.sleep(for: interval)
                signal()
            }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.pending {
                        state.pending = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
            group.cancelAll()
        }
        // The timer signalled after a commit had already woken the wait: not a commit.
        state.withLock { $0.pending = false }
    }
}

/// Runs one sync at a time, in the order they were asked for.
private actor SyncGate {
    private var tail: Task<Void, Never>?

    func run<Result: Sendable>(_ operation: @escaping @Sendable () async throws -> Result) async throws -> Result {
        let previous = tail
        let task = Task {
            await previous?.value
            return try await operation()
        }
        tail = Task { _ = try? await task.value }
        return try await task.value
    }
}
