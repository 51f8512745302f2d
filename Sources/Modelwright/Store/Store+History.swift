import Dispatch
import Foundation

/// What a file store knows of commits made by other connections: the writer connection's last
/// `PRAGMA data_version`, the last history token it has passed on, and the timer that checks.
struct RemoteState: @unchecked Sendable {
    var dataVersion: Int64?
    var token: HistoryToken?
    /// Touched only under the store's lock; the timer's handler runs on the writer's queue.
    var timer: DispatchSourceTimer?
    /// The engine's delivery of other connections' commits, for an engine that notifies.
    var subscription: CommitSubscription?
}

extension Store {
    // MARK: - Persistent history

    /// The transactions committed after `token` (every recorded one for `nil`), oldest first.
    /// `author` keeps only that author's transactions, `excludingAuthor` drops one author's (a
    /// target's own), and `entity` keeps only the changes to that entity, and the transactions
    /// that have some. A store opened without history returns what earlier writers recorded, if any.
    ///
    /// ```swift
    /// let news = try await store.fetchHistory(after: lastSeen, excludingAuthor: "app")
    /// ```
    public func fetchHistory(
        after token: HistoryToken?, author: String? = nil, excludingAuthor: String? = nil, entity: String? = nil
    ) async throws -> [HistoryTransaction] {
        try await performQuery { context in
            guard try Self.hasHistoryTables(context.connection) else { return [] }
            return try HistorySQL.fetch(
                after: token, author: author, excludingAuthor: excludingAuthor, entity: entity,
                on: context.connection)
        }
    }

    /// Deletes the history of every transaction before `token` (the transaction `token` names
    /// stays) and returns how many transactions went. With several targets, pass the earliest
    /// of the tokens they have each seen.
    @discardableResult
    public func deleteHistory(before token: HistoryToken) async throws -> Int {
        try await performAndSave { context in
            guard try Self.hasHistoryTables(context.connection) else { return 0 }
            return try HistorySQL.delete(before: token, on: context.connection)
        }
    }

    /// The token of the last transaction recorded in the store's history, or `nil` when there is none.
    public func lastHistoryToken() async throws -> HistoryToken? {
        try await performQuery { context in
            guard try Self.hasHistoryTables(context.connection) else { return nil }
            return try HistorySQL.lastToken(on: context.connection)
        }
    }

    static func hasHistoryTables(_ connection: some DatabaseConnection) throws -> Bool {
        let statement = try connection.statement(connection.dialect.tableCount)
        defer { statement.reset() }
        statement.bind(HistorySQL.transactions, 1)
        return try statement.step() && statement.int64(0) > 0
    }

    // MARK: - Other processes' commits

    static func dataVersion(of connection: some DatabaseConnection) throws -> Int64 {
        let statement = try connection.statement(connection.dialect.dataVersion)
        defer { statement.reset() }
        _ = try statement.step()
        return statement.int64(0)
    }

    /// Starts the timer that checks for other connections' commits when the store has observers,
    /// and stops it when it has none; called whenever the first observer comes or the last goes.
    func watchRemoteChanges() {
        guard case .dataVersion = engine.commitSignal else { return }
        let observing = observers.count > 0
        remote.withLock { state in
            if observing, state.timer == nil {
                let timer = DispatchSource.makeTimerSource(queue: writerQueue)
                let interval = Self.remoteChangeInterval.components
                let nanoseconds = Int(interval.seconds) * 1_000_000_000 + Int(interval.attoseconds / 1_000_000_000)
                timer.schedule(
                    deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds),
                    leeway: .nanoseconds(nanoseconds / 10))
                timer.setEventHandler { [weak self] in self?.checkRemoteChanges() }
                timer.resume()
                state.timer = timer
            } else if !observing, let timer = state.timer {
                timer.cancel()
                state.timer = nil
            }
        }
    }

    /// Runs on the writer's queue: when another connection committed since the last check, tells
    /// the observers what it changed — exactly, from the history tables, when its writers record
    /// history, and otherwise as if every table had changed.
    private func checkRemoteChanges() {
        guard (try? checkOpen()) != nil, let version = try? Self.dataVersion(of: writerConnection) else { return }
        let known = remote.withLock { $0 }
        guard version != known.dataVersion else { return }
        var changes = StoreChanges()
        var token = known.token
        let transactions =
            (try? Self.hasHistoryTables(writerConnection)) == true
            ? (try? HistorySQL.fetch(
                after: known.token, author: nil, excludingAuthor: nil, entity: nil, on: writerConnection)) ?? []
            : []
        // Tokens have no gaps but where history was purged: a first token further on than the
        // next one means another process purged what this store had not read yet.
        let isComplete = known.token.map { transactions.first?.token.value == $0.value + 1 } ?? true
        if transactions.isEmpty || !isComplete {
            for table in SchemaSQL.tables(for: layout, in: writerConnection.dialect) {
                changes.rowsInsertedOrDeleted(in: table.name)
            }
        }
        if !transactions.isEmpty {
            token = transactions.last?.token
            for change in transactions.flatMap({ $0.changes }) {
                record(change, in: &changes)
            }
        }
        remote.withLock { state in
            state.dataVersion = version
            state.token = token
        }
        try? observers.commit(changes) {}
    }

    /// Starts hearing of other connections' commits from an engine that notifies (see
    /// ``CommitSignal/notifications(start:)``); each is passed to the observers on the writer's
    /// queue, where the store's own commits reach them too.
    ///
    /// The engine tells the store's own commits apart by `writer`, so a writer opened afresh
    /// (after its link was lost) starts the delivery again: with the old one's, the store's own
    /// commits would wake its observers twice, and a commit of another connection that the server
    /// gave the old writer's session number (PostgreSQL reuses process IDs) would reach none. The
    /// old delivery stops once the new one listens, so no commit goes unheard between them.
    func listenForRemoteChanges(writer: any DatabaseConnection) throws {
        guard case .notifications(let start) = engine.commitSignal else { return }
        let subscription = try start(writer) { [weak self] changes in
            guard let self, !changes.isEmpty else { return }
            self.writerQueue.async {
                guard (try? self.checkOpen()) != nil else { return }
                try? self.observers.commit(changes) {}
            }
        }
        let (replaced, isKept) = remote.withLock { state in
            // A store closed meanwhile keeps no delivery.
            let replaced = state.subscription
            let isKept = (try? checkOpen()) != nil
            state.subscription = isKept ? subscription : nil
            return (replaced, isKept)
        }
        replaced?.cancel()
        if !isKept { subscription.cancel() }
    }

    /// Adds what one recorded change did to the tables observers read.
    private func record(_ change: HistoryChange, in changes: inout StoreChanges) {
        guard let entity = layout.entities[change.entity] else {
            for table in SchemaSQL.tables(for: layout, in: writerConnection.dialect) {
                changes.rowsInsertedOrDeleted(in: table.name)
            }
            return
        }
        let joinTables = SchemaSQL.tables(for: layout, in: writerConnection.dialect).map(\.name).filter { name in
            name != entity.table && layout.entities.values.allSatisfy { $0.table != name }
        }
        switch change.kind {
        case .insert, .delete:
            changes.rowsInsertedOrDeleted(in: entity.table)
            if change.kind == .delete {
                for table in joinTables { changes.rowsInsertedOrDeleted(in: table) }
            }
        case .update:
            let columns = Set(entity.columns.map(\.name) + entity.positionColumns)
            // History names attributes by their keys; observation tracks SQL columns.
            let changed = Set(change.changedAttributes.map(entity.columnName))
            changes.rowsUpdated([change.recordID], columns: changed, in: entity.table)
            // A to-many relationship stored in a join table: its rows came or went.
            if !changed.isSubset(of: columns) {
                for table in joinTables { changes.rowsInsertedOrDeleted(in: table) }
            }
        }
    }
}
