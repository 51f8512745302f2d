import Foundation

/// The sync server, as a library: it applies devices' pushes to a ``Store`` of the same model
/// and serves their pulls. An app's HTTP server calls it; it works on any engine the store opens
/// on (PostgreSQL in production, SQLite in tests).
///
/// ```swift
/// let server = try await SyncServer(store: serverStore)
/// let engine = try await SyncEngine(store: deviceStore, transport: server)
/// try await engine.sync()
/// ```
///
/// **A push** is applied whole in one transaction of the server's store, or not at all: every
/// timestamp is checked against the server's clock (see ``HybridLogicalClock``), every row,
/// attribute and link against the model and the user's scope; then each row's change is merged
/// into what the server knows of the row (per-attribute last-writer-wins, tombstones, link sets;
/// see <doc:Sync>), the row is written into the model's tables, and when the merge changed
/// anything the row takes the next ``SyncCursor``. A push sent twice changes nothing the second
/// time and takes no cursor.
///
/// **A pull** returns the rows whose cursor is after the request's, in cursor order, at most the
/// request's limit (at most ``maximumPullLimit``), each with everything the server knows of it (its stamps and tombstone too),
/// and says whether more remain.
///
/// **Tombstones** stay in the server's bookkeeping after the row is deleted, so a device that
/// pulls later still learns of the delete. ``purgeTombstones(forgettingDevicesUnseenFor:)``
/// removes those that every device seen within the period has pulled past; a device that comes
/// back after that, with a cursor before the purge, is answered
/// ``SyncError/cursorExpired(since:purgedThrough:)`` and pulls again from the beginning.
///
/// **Devices** leave state on the server (when each last pulled; under scopes, what each was
/// shown). ``forgetDevices(unseenFor:)`` and ``forgetDevice(_:)`` remove it; a forgotten device
/// that returns pulls everything again from the beginning.
///
/// **Access control**: with an `authenticate` closure and `scopes`, every request's credentials
/// name a user, a pull returns only the rows in that user's scope, and a push that touches a row
/// outside it (before or after the change) is refused whole with ``SyncError/outOfScope(row:)``.
public final class SyncServer: SyncTransport {
    /// Which rows of one entity a user may see and change: called with the user and what the
    /// server knows of the row (its values, even once deleted).
    public typealias Scope = @Sendable (_ user: String, _ row: RowChange) -> Bool
    /// Who sent a request, from its credentials: the user, or `nil` to refuse it.
    public typealias Authenticate = @Sendable (_ credentials: String?) async throws -> String?

    /// The most rows one pull returns, whatever its `limit` asks: a larger limit is served as
    /// this one (with `hasMore`), so no message field reaches arithmetic that could overflow.
    public static let maximumPullLimit = 10_000

    /// The author of the server's transactions in its store's history.
    public static let author = "sync-server"

    /// The store the server applies changes to.
    public let store: Store
    /// How far ahead of the server's clock a pushed timestamp may be.
    public let maximumDriftMilliseconds: UInt64
    private let wallClock: @Sendable () -> UInt64
    private let authenticate: Authenticate?
    private let scopes: [String: Scope]?

    /// A server over `store`, whose sync tables are created beside the model's when missing. It
    /// begins a new ``SyncEpoch`` of the store's lineage: make one server when the process starts,
    /// not one per request.
    ///
    /// - Parameters:
    ///   - store: the store of the model's newest version the server applies changes to.
    ///   - maximumDriftMilliseconds: how far ahead of the server's clock a pushed stamp may be.
    ///   - authenticate: turns a request's credentials into a user; without it, requests are not
    ///     authenticated and every row is in scope.
    ///   - scopes: for each entity, the rows a user may see and change; with `authenticate`, an
    ///     entity without a scope is out of every user's scope.
    ///   - migrationPlan: the model's migration plan: devices at an older version that its
    ///     lightweight stages reach keep syncing, their messages translated; without it, only the
    ///     store's version is served.
    ///   - wallClock: the server's wall clock in milliseconds since 1970 (tests set it).
    /// - Throws: ``SyncError/reservedAuthor(_:)`` when the store's history author is the engine's or
    ///   the server's; the store's error when its sync tables cannot be created.
    public init(
        store: Store, maximumDriftMilliseconds: UInt64 = HybridLogicalClock.defaultMaximumDriftMilliseconds,
        authenticate: Authenticate? = nil, scopes: [String: Scope] = [:], migrationPlan: MigrationPlan? = nil,
        wallClock: @escaping @Sendable () -> UInt64 = { HybridLogicalClock.wallMilliseconds() }
    ) async throws {
        if case .enabled(let author) = store.history, SyncEngine.reservedAuthors.contains(author) {
            throw SyncError.reservedAuthor(author)
        }
        self.store = store
        self.migrationPlan = migrationPlan
        self.maximumDriftMilliseconds = maximumDriftMilliseconds
        self.wallClock = wallClock
        self.authenticate = authenticate
        self.scopes = authenticate == nil ? nil : scopes
        let recordsHistory = store.history != .disabled
        self.recordsHistory = recordsHistory
        let wall = wallClock()
        try await store.performAndSave(author: Self.author) { context in
            try SyncBookkeeping.prepare(on: context.connection)
            _ = try SyncBookkeeping.node(on: context.connection)
            if recordsHistory { try Self.recordOwnWrites(context, wall: wall) }
            try SyncBookkeeping.beginEpoch(on: context.connection)
        }
    }

    /// The plan whose lightweight stages translate the messages of devices at older versions.
    private let migrationPlan: MigrationPlan?
    /// The translations built so far, by device version (`nil`: the version is refused).
    private let translations = Locked<[SyncSchemaVersion: SyncTranslation?]>([:])

    /// Whether the server's store records persistent history, from which the server learns of
    /// rows written into it without sync.
    private let recordsHistory: Bool

    /// Gives a sync record and the next cursors to every row written into the server's store
    /// without sync (before the server started, or by the app's own server code since), read
    /// from the store's history after the last transaction recorded so: devices pull them as
    /// any other change. Runs when the server starts and at the start of every request.
    private static func recordOwnWrites(_ context: WriteContext, wall: UInt64) throws {
        let connection = context.connection
        var cursor = Int64(try SyncBookkeeping.value("cursor", on: connection) ?? "0") ?? 0
        let start = cursor
        try SyncEngine.stampHistory(context, wall: wall, excludingAuthor: author) { merged, _ in
            cursor += 1
            try SyncBookkeeping.write(merged, cursor: cursor, pending: nil, on: connection)
        }
        if cursor != start { try SyncBookkeeping.setValue(String(cursor), for: "cursor", on: connection) }
    }

    /// The model version the server serves.
    public var schemaVersion: SyncSchemaVersion {
        SyncSchemaVersion(
            model: store.schema.modelName, version: store.schema.version, checksum: store.schema.checksum.hexDigits)
    }

    // MARK: - SyncTransport

    /// Applies a push without credentials (see ``push(_:credentials:)``).
    public func push(_ request: PushRequest) async throws -> PushResponse {
        try await push(request, credentials: nil)
    }

    /// Serves a pull without credentials (see ``pull(_:credentials:)``).
    public func pull(_ request: PullRequest) async throws -> PullResponse {
        try await pull(request, credentials: nil)
    }

    /// A transport to this server that sends `credentials` with every request.
    public func transport(credentials: String?) -> some SyncTransport {
        CredentialedTransport(server: self, credentials: credentials)
    }

    // MARK: - Push

    /// Applies a push whole, or refuses it whole: the response carries the acknowledged token and
    /// the server's cursor, or the refusal. Throws only when the store fails.
    public func push(_ request: PushRequest, credentials: String?) async throws -> PushResponse {
        let user: String?
        let translation: SyncTranslation?
        do {
            user = try await self.user(credentials)
            translation = try checkSchema(request.schema)
        } catch let error as SyncError {
            let (cursor, epoch) = try await currentCursor()
            return PushResponse(acknowledged: nil, cursor: cursor, refusal: error, epoch: epoch)
        }
        guard let translation else { return try await apply(request, user: user) }
        let response = try await apply(
            PushRequest(
                device: request.device, schema: schemaVersion, after: request.after, through: request.through,
                changes: ChangeSet(request.changes.sortedChanges.compactMap(translation.up)), epoch: request.epoch,
                horizon: request.horizon),
            user: user)
        return PushResponse(
            acknowledged: response.acknowledged, cursor: response.cursor,
            resolutions: response.resolutions.compactMap(translation.down),
            refusal: response.refusal.map(translation.down), epoch: response.epoch, ownRows: response.ownRows)
    }

    /// Applies a push in the server's names by `user` (see ``push(_:credentials:)``).
    private func apply(_ request: PushRequest, user: String?) async throws -> PushResponse {
        let wall = wallClock()
        let drift = maximumDriftMilliseconds
        let scopes = self.scopes
        let recordsHistory = self.recordsHistory
        do {
            let (cursor, resolutions, epoch, ownRows) = try await store.performAndSave(author: Self.author) { context in
                let connection = context.connection
                // Pushes this server acknowledged and then lost (restored from a copy) must come again first.
                if let theirs = request.epoch, let horizon = request.horizon {
                    let newest = Int64(try SyncBookkeeping.value("cursor", on: connection) ?? "0") ?? 0
                    if try !SyncBookkeeping.continues(theirs, at: horizon.position, newest: newest, on: connection) {
                        throw SyncError.epochChanged(
                            since: horizon, device: theirs, server: try SyncBookkeeping.currentEpoch(on: connection))
                    }
                }
                if recordsHistory { try Self.recordOwnWrites(context, wall: wall) }
                var clock = try SyncBookkeeping.clock(maximumDriftMilliseconds: drift, on: connection)
                if let latest = request.changes.latestStamp { try clock.receive(latest, wallMilliseconds: wall) }
                try Self.bind(request.device, to: user, on: connection)
                var cursor = Int64(try SyncBookkeeping.value("cursor", on: connection) ?? "0") ?? 0
                var resolutions: [ConstraintResolution] = []
                // The cursors of rows now held exactly as the device sent them (see PushResponse.ownRows).
                var ownRows: [ClosedRange<Int64>] = []
                // The links each row's change adds or removes: those whose stamps the server's record lacks.
                var linkChanges: [(row: RowKey, links: [LinkKey])] = []
                // The pushed rows that were alive before the push: a row the push brings to life
                // must hold no link out of sight, whatever the push names.
                var aliveBefore: Set<RowKey> = []
                // The rows other users held before the push that it may withhold from them, with
                // the pushed row that would (see checkNoneWithheld); the users are read once.
                var atRisk: [HeldRow] = []
                var users: [String]?
                // Per row, the links hidden from the user that its insert sent as nil and the server keeps.
                var keptHidden: [RowKey: Set<String>] = [:]
                for sent in request.changes.sortedChanges {
                    try Self.check(sent, in: context.layout, context: context)
                    let existing = try SyncBookkeeping.change(of: sent.key, on: connection)
                    var change = sent
                    if let scopes, let user, let existing {
                        let kept = try Self.hiddenLinksClearedByInsert(
                            sent, over: existing, user: user, scopes: scopes, context: context)
                        if !kept.isEmpty {
                            change = sent.hiding(kept)
                            keptHidden[sent.key] = kept
                        }
                    }
                    let changedLinks = change.links.filter { link, stamps in
                        existing?.links[link].map { $0.merged(with: stamps) != $0 } ?? true
                    }
                    // The removal of a link the server holds writes only the pushed row, which the
                    // user may change: not checked, so a device keeps an unlink made while the
                    // target was in sight after it left. One the server never held is checked as
                    // a link is: the server keeps no record naming another user's row.
                    let checkedLinks = changedLinks.filter { link, stamps in
                        existing?.links[link].map { $0.merged(with: stamps).isPresent } ?? true
                    }
                    linkChanges.append((change.key, checkedLinks.keys.sorted()))
                    if let scopes, let user {
                        // A row the user may not see, named by another entity than its own, is
                        // refused as an unknown ID is: the answer tells neither that it exists nor what it is.
                        let concrete = try Self.rowKey(of: change.key.id, as: change.key.entity, context: context)
                        if concrete != change.key,
                            try !Self.isVisible(concrete, user: user, scopes: scopes, context: context)
                        {
                            throw SyncError.outOfScope(row: change.key)
                        }
                    }
                    let stored = try Self.storedRows(of: change.key, record: existing, context: context)
                    if stored.contains(where: \.isAlive) { aliveBefore.insert(change.key) }
                    if let scopes, let user {
                        guard let scope = scopes[change.key.entity], stored.allSatisfy({ scope(user, $0) })
                        else { throw SyncError.outOfScope(row: change.key) }
                        let merged = existing?.merged(with: change) ?? change
                        guard scope(user, merged) else { throw SyncError.outOfScope(row: change.key) }
                        // The link a write of a to-one leaves is not checked: a user may re-point
                        // (or clear) a link of a row she may change away from a row she may not
                        // see (one another user took, say); the link it makes is checked after.
                    }
                    let merged = existing?.merged(with: change) ?? change
                    guard merged != existing else { continue }
                    var rows = [merged]
                    var asSent = merged == change
                    if let (constraint, other) = try context.syncUniquenessConflict(of: merged) {
                        asSent = false
                        let stamp = try clock.tick(wallMilliseconds: wall)
                        if let scopes, let user,
                            try !Self.isVisible(
                                other, as: merged.key.entity, user: user, scopes: scopes, context: context)
                        {
                            // The other row is not the user's to merge into, change or learn of:
                            // this row alone is refused, as `reject` would, and the push goes on.
                            rows = [merged.merged(with: .delete(merged.key, at: stamp))]
                            resolutions.append(
                                .refused(entity: merged.key.entity, constraint: constraint, row: merged.key.id))
                        } else {
                            let resolved = try Self.resolve(
                                merged, against: other, constraint: constraint, stamp: stamp, context)
                            if let scopes, let user,
                                try !Self.staysInSight(resolved.rows, user: user, scopes: scopes, context: context)
                                    || !Self.keepsEveryoneInSight(resolved.rows, scopes: scopes, context: context)
                            {
                                // A merge that would rewrite a row or link the user may not see is
                                // refused as one into such a row is: this row alone, the push goes on.
                                rows = [merged.merged(with: .delete(merged.key, at: stamp))]
                                resolutions.append(
                                    .refused(entity: merged.key.entity, constraint: constraint, row: merged.key.id))
                            } else {
                                rows = resolved.rows
                                resolutions.append(resolved.resolution)
                            }
                        }
                    }
                    for row in rows {
                        if let scopes, let user, let before = try SyncBookkeeping.change(of: row.key, on: connection) {
                            let others = try users ?? Self.knownUsers(on: connection)
                            users = others
                            atRisk += try Self.rowsOthersHold(
                                whenWriting: row, over: before, cause: change.key, users: others.filter { $0 != user },
                                scopes: scopes, context: context)
                        }
                        do {
                            try context.materialize(row)
                        } catch let error as SyncError {
                            throw error
                        } catch {
                            throw SyncError.changeRefused(row: row.key, reason: "\(error)")
                        }
                        cursor += 1
                        try SyncBookkeeping.write(
                            try context.syncCompleted(row), cursor: cursor, pending: nil, on: connection)
                        if asSent {
                            if let last = ownRows.last, last.upperBound == cursor - 1 {
                                ownRows[ownRows.count - 1] = last.lowerBound...cursor
                            } else {
                                ownRows.append(cursor...cursor)
                            }
                        }
                    }
                }
                if scopes != nil, user != nil {
                    try Self.recordPushed(request.changes.sortedChanges, by: request.device, on: connection)
                }
                if let scopes, let user {
                    try Self.checkLinkTargets(of: linkChanges, user: user, scopes: scopes, context: context)
                    for change in request.changes.sortedChanges
                    where change.deleted != nil && aliveBefore.contains(change.key) {
                        try Self.checkNoLinkCleared(
                            byDeleting: change.key, user: user, scopes: scopes, context: context)
                    }
                    try Self.checkNoneWithheld(atRisk, scopes: scopes, context: context)
                    for change in request.changes.sortedChanges {
                        try Self.checkLinksAfterPush(
                            of: change.hiding(keptHidden[change.key] ?? []),
                            aliveBefore: aliveBefore.contains(change.key),
                            keptHidden: keptHidden[change.key] ?? [], user: user, scopes: scopes, context: context)
                    }
                }
                // The delete rules a push's deletes set off (its own, or a resolution's) write
                // rows too: each must stay in the pusher's scope, or nothing of the push applies.
                let firstPushed = request.changes.sortedChanges.first?.key
                try context.syncSettleDanglingReferences(
                    onlyDeleted: false, stamp: { try clock.tick(wallMilliseconds: wall) },
                    check: { outcome, cause in
                        guard let scopes, let user else { return }
                        try Self.checkEffect(
                            outcome, cause: cause ?? firstPushed ?? outcome.key, user: user, scopes: scopes,
                            context: context)
                    },
                    write: { row in
                        cursor += 1
                        try SyncBookkeeping.write(row, cursor: cursor, pending: nil, on: connection)
                    })
                try SyncBookkeeping.save(clock, on: connection)
                try SyncBookkeeping.setValue(String(cursor), for: "cursor", on: connection)
                return (cursor, resolutions, try SyncBookkeeping.currentEpoch(on: connection), ownRows)
            }
            return PushResponse(
                acknowledged: request.through, cursor: SyncCursor(cursor), resolutions: resolutions, epoch: epoch,
                ownRows: ownRows.map { SyncCursor($0.lowerBound)...SyncCursor($0.upperBound) })
        } catch let error as SyncError {
            let (cursor, epoch) = try await currentCursor()
            return PushResponse(acknowledged: nil, cursor: cursor, refusal: error, epoch: epoch)
        } catch let error as StoreError {
            // What the push's effects leave may break a constraint of the store (a `deny` rule
            // bringing back a row a uniqueness resolution deleted, whose values another row now
            // holds): the push is refused whole, as any push the store cannot hold. The store's
            // error names entities and relationships, never a row.
            switch error {
            case .uniquenessViolation, .deleteDenied, .requiredRelationshipEmpty, .danglingReference:
                let (cursor, epoch) = try await currentCursor()
                let row = request.changes.sortedChanges.first?.key ?? RowKey(entity: "", id: request.device.uuid)
                return PushResponse(
                    acknowledged: nil, cursor: cursor,
                    refusal: .changeRefused(row: row, reason: "what the push sets off breaks the store: \(error)"),
                    epoch: epoch)
            default: throw error
            }
        }
    }

    /// Resolves a pushed row that holds the values of row `other` for `constraint` by the
    /// entity's ``EntityDescription/syncUniqueness``: the row the server already holds survives.
    /// Without a rule the push is refused, with the fix.
    private static func resolve(
        _ row: RowChange, against other: UUID, constraint: [String], stamp: HybridTimestamp, _ context: WriteContext
    ) throws -> (rows: [RowChange], resolution: ConstraintResolution) {
        let entity = try context.layout.entity(row.key.entity)
        guard let rule = context.syncUniqueness(of: entity) else {
            throw SyncError.changeRefused(
                row: row.key,
                reason:
                    "its (\(constraint.joined(separator: ", "))) is already row \(other.uuidString)'s; mark \(entity.name) '@sync(unique: merge)' or '@sync(unique: reject)' so the server resolves such rows"
            )
        }
        guard let concrete = try context.concreteEntity(of: other, in: entity),
            let survivor = try SyncBookkeeping.change(
                of: RowKey(entity: concrete.name, id: other), on: context.connection)
        else {
            throw SyncError.changeRefused(
                row: row.key,
                reason:
                    "its (\(constraint.joined(separator: ", "))) is already row \(other.uuidString)'s, which sync does not know"
            )
        }
        return try context.syncResolve(row, into: survivor, by: rule, constraint: constraint, at: stamp)
    }

    /// Throws unless every part of `change` names something the model has: a concrete entity,
    /// its attributes and to-one relationships, and the join-table relationships it owns.
    private static func check(_ change: RowChange, in layout: SchemaLayout, context: WriteContext) throws {
        guard let entity = layout.entities[change.key.entity], !entity.isAbstract else {
            throw SyncError.changeRefused(
                row: change.key, reason: "the model has no entity \(change.key.entity) with rows of its own")
        }
        for (name, stamped) in change.attributes.sorted(by: { $0.key < $1.key }) {
            guard let column = entity.column(forKey: name) else {
                throw SyncError.changeRefused(
                    row: change.key, reason: "\(entity.name) has no attribute or to-one relationship \(name)")
            }
            if let problem = problem(with: stamped.value, for: column) {
                throw SyncError.malformedMessage(
                    field: "changes[\(change.key)].\(name)",
                    reason: "\(problem): send a value of \(entity.name).\(name)'s type")
            }
        }
        for link in change.links.keys {
            guard let table = try context.syncLinkTable(link.relationship, of: entity), table.isOwnerSide else {
                throw SyncError.changeRefused(
                    row: change.key,
                    reason: "\(entity.name) has no to-many relationship \(link.relationship) stored as links")
            }
        }
    }

    /// Why `value` cannot be stored in `column` (a value of another kind, out of the column's
    /// range, an enum raw value the model does not have, nothing for a required column), or `nil`
    /// when it can: every pushed value is checked before anything is applied, so no device ever
    /// pulls a value its model cannot read.
    private static func problem(with value: SyncValue, for column: ColumnLayout) -> String? {
        if case .null = value { return column.isOptional ? nil : "the value is null and the attribute is required" }
        if case .enumeration(let description) = column.type {
            let raw: String? =
                switch (description.rawType, value) {
                case (.string, .text(let text)): text
                case (.int, .integer(let number)): String(number)
                default: nil
                }
            guard let raw, description.cases.contains(where: { $0.rawValue == raw }) else {
                return "\(value) is no raw value of the enum \(description.name)"
            }
            return nil
        }
        let fits: Bool =
            switch (column.storage, value) {
            case (.boolean, .bool), (.integer64, .integer), (.timestamp, .date), (.text, .text), (.json, .text),
                (.bytes, .bytes), (.uuid, .uuid):
                true
            case (.integer16, .integer(let number)): Int16(exactly: number) != nil
            case (.integer32, .integer(let number)): Int32(exactly: number) != nil
            case (.double, .real(let number)): !number.isNaN
            case (.float, .real(let number)): !number.isNaN && (number.isInfinite || Float(number).isFinite)
            case (.decimal, .decimal(let text)): Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) != nil
            default: false
            }
        return fits ? nil : "\(value) is not a value of type \(column.type?.schemaSpelling ?? "UUID")"
    }

    /// What the server's store holds of row `key`, for the scope check: its sync record and the
    /// row in its table, read from the table itself, so a row written without sync (by the app's
    /// server code, or before the server started) is checked as it is. Throws when the table's
    /// row is of another entity than `key` names (a sibling sharing the hierarchy's table): the
    /// pushed entity name is never trusted.
    /// `record` is the row's sync record when the caller has read it already (a push reads it to merge).
    private static func storedRows(
        of key: RowKey, record: RowChange?? = nil, context: WriteContext
    ) throws -> [RowChange] {
        var rows: [RowChange] = []
        if let record = try record ?? SyncBookkeeping.change(of: key, on: context.connection) { rows.append(record) }
        let entity = try context.layout.entity(key.entity)
        guard let concrete = try context.concreteEntity(of: key.id, in: entity) else { return rows }
        guard concrete.name == entity.name else {
            throw SyncError.changeRefused(
                row: key,
                reason: "the row \(key.id) is a \(concrete.name), not a \(entity.name): send it as \(concrete.name)")
        }
        guard let values = try context.syncValues(of: key.id, in: entity) else { return rows }
        let origin = HybridTimestamp(
            milliseconds: 0, counter: 0, node: SyncNodeID(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))))
        rows.append(
            RowChange(key: key, inserted: origin, attributes: values.mapValues { StampedValue($0, at: origin) }))
        return rows
    }

    /// Throws ``SyncError/outOfScope(row:)`` unless both ends of every link a push adds or removes
    /// are in the user's scope: the target row (read from its table and sync record after the
    /// push is applied, in the same transaction) must exist and be one the user may see. A link
    /// the device sends again as the server holds it changes nothing and is not checked: a device
    /// keeps in its record the links to a row that left the scope (the row dropped, the link kept
    /// on the server), and sends them with every later change of the row.
    private static func checkLinkTargets(
        of changes: [(row: RowKey, links: [LinkKey])], user: String, scopes: [String: Scope], context: WriteContext
    ) throws {
        for change in changes {
            let entity = try context.layout.entity(change.row.entity)
            for link in change.links {
                guard let relationship = entity.relationships.first(where: { $0.name == link.relationship }) else {
                    continue
                }
                guard
                    try isVisible(
                        link.target, as: relationship.destination, user: user, scopes: scopes, context: context)
                else {
                    // Named as the link names it: the same refusal as for an unknown ID.
                    throw SyncError.outOfScope(row: RowKey(entity: relationship.destination, id: link.target))
                }
            }
        }
    }

    /// Throws ``SyncError/outOfScope(row:)`` naming `deleted` when a row the user may not see
    /// holds a to-many link to it: deleting the row would clear that link, a change to another
    /// user's row, which a push refuses as it refuses a delete rule's `nullify` of one (see
    /// ``checkEffect(_:cause:user:scopes:context:)``).
    private static func checkNoLinkCleared(
        byDeleting deleted: RowKey, user: String, scopes: [String: Scope], context: WriteContext
    ) throws {
        for row in try SyncBookkeeping.rows(mentioning: deleted.id, on: context.connection)
        where row.isAlive && row.key != deleted {
            guard row.links.contains(where: { $0.key.target == deleted.id && $0.value.isPresent }) else { continue }
            if scopes[row.key.entity]?(user, row) != true { throw SyncError.outOfScope(row: deleted) }
        }
    }

    /// Throws ``SyncError/outOfScope(row:)`` naming `cause` (the row whose delete set the rule
    /// off: one the push deleted, or one an earlier effect deleted, so one the user may see) unless
    /// the user may see and change `outcome`'s row as sync knew it before and as the effect leaves
    /// it: a delete rule run by a user's push never clears, deletes or brings back a row of
    /// another's, and the refusal names no row the user may not see.
    private static func checkEffect(
        _ outcome: RowChange, cause: RowKey, user: String, scopes: [String: Scope], context: WriteContext
    ) throws {
        guard let scope = scopes[outcome.key.entity], scope(user, outcome) else {
            throw SyncError.outOfScope(row: cause)
        }
        if let before = try SyncBookkeeping.change(of: outcome.key, on: context.connection), !scope(user, before) {
            throw SyncError.outOfScope(row: cause)
        }
    }

    /// Whether the rows a uniqueness resolution writes (the pushed row's tombstone, the survivor,
    /// the rows whose links it moves) stay in the user's sight: each row live after it is one the
    /// user may see, and every part the resolution changes is one the user may be shown (see
    /// ``shown(_:user:scopes:context:visiting:)``): a merge triggered by a user never rewrites another's row.
    private static func staysInSight(
        _ rows: [RowChange], user: String, scopes: [String: Scope], context: WriteContext
    ) throws -> Bool {
        for row in rows where row.isAlive {
            guard try isVisible(row.key, user: user, scopes: scopes, context: context),
                let shownRow = try shown(row, user: user, scopes: scopes, context: context)
            else { return false }
            let before = try SyncBookkeeping.change(of: row.key, on: context.connection)
            for name in Set(row.attributes.keys).subtracting(shownRow.attributes.keys)
            where before?.attributes[name] != row.attributes[name] {
                return false
            }
            for link in Set(row.links.keys).subtracting(shownRow.links.keys)
            where before?.links[link] != row.links[link] {
                return false
            }
        }
        return true
    }

    /// Whether every row a uniqueness resolution leaves alive stays in the scope of every user who
    /// could see it before: a merge folds the pushed row's values into the survivor by stamp, so a
    /// later owner (say) would take a shared row away from the others who see it, which no user's
    /// push may do to another. The users judged are those the server knows, every user a device
    /// is bound to; a user with no device yet has nothing to lose on one.
    private static func keepsEveryoneInSight(
        _ rows: [RowChange], scopes: [String: Scope], context: WriteContext
    ) throws -> Bool {
        let users = try knownUsers(on: context.connection)
        for row in rows where row.isAlive {
            guard let scope = scopes[row.key.entity],
                let before = try SyncBookkeeping.change(of: row.key, on: context.connection)
            else { continue }
            for user in users where scope(user, before) && !scope(user, row) {
                return false
            }
        }
        return true
    }

    /// A row `user` held before a push (in their scope and shown to them: see
    /// ``shown(_:user:scopes:context:visiting:)``), which the push writes or takes a required link of out of
    /// their sight; `cause` is the pushed row that does.
    private struct HeldRow {
        let row: RowKey
        let user: String
        let cause: RowKey
    }

    /// The rows each of `users` holds now that writing `row` over `before` may withhold from
    /// them: the row itself when the write re-points one of its required to-ones, and every row
    /// that links to it through a to-one when the write takes it out of one's scope. Read before
    /// the row is written; ``checkNoneWithheld(_:scopes:context:)`` judges them after the push.
    private static func rowsOthersHold(
        whenWriting row: RowChange, over before: RowChange, cause: RowKey, users: [String], scopes: [String: Scope],
        context: WriteContext
    ) throws -> [HeldRow] {
        guard let scope = scopes[row.key.entity], let entity = context.layout.entities[row.key.entity] else {
            return []
        }
        let repointed = entity.columns.contains { column in
            column.destination != nil && !column.isOptional
                && row.attributes[column.key]?.value != before.attributes[column.key]?.value
        }
        var held: [HeldRow] = []
        var referrers: [RowKey]?
        for user in users where scope(user, before) {
            if repointed, before.isAlive, try shown(before, user: user, scopes: scopes, context: context) != nil {
                held.append(HeldRow(row: row.key, user: user, cause: cause))
            }
            guard !scope(user, row) else { continue }
            let linking = try referrers ?? context.syncReferrers(of: row.key)
            referrers = linking
            for referrer in linking where referrer != row.key {
                guard let record = try SyncBookkeeping.change(of: referrer, on: context.connection), record.isAlive,
                    scopes[referrer.entity]?(user, record) == true,
                    try shown(record, user: user, scopes: scopes, context: context) != nil
                else { continue }
                held.append(HeldRow(row: referrer, user: user, cause: cause))
            }
        }
        return held
    }

    /// Throws ``SyncError/outOfScope(row:)`` naming the pushed row when a row another user held
    /// before the push, still in their scope after it, is no longer shown to them: a required
    /// to-one of it points, as the push leaves the rows, at a row out of their sight (a shared row
    /// the pusher took, a required link re-pointed at the pusher's private row). Their devices
    /// would drop the row with their pending edits, and the pusher may not do that to another
    /// user; the target stays shared until those rows let go of it. An optional to-one is only
    /// hidden from them (the row stays on their devices with the link `nil`), so it does not hold
    /// the target back.
    private static func checkNoneWithheld(_ rows: [HeldRow], scopes: [String: Scope], context: WriteContext) throws {
        for held in rows {
            guard let record = try SyncBookkeeping.change(of: held.row, on: context.connection), record.isAlive,
                scopes[held.row.entity]?(held.user, record) == true,
                try shown(record, user: held.user, scopes: scopes, context: context) == nil
            else { continue }
            throw SyncError.outOfScope(row: held.cause)
        }
    }

    /// Every user a device is bound to (see ``bind(_:to:on:)``), in order.
    private static func knownUsers(on connection: some DatabaseConnection) throws -> [String] {
        let statement = try connection.statement(
            "SELECT DISTINCT \"value\" FROM \(quoted(SyncBookkeeping.state)) WHERE \"key\" LIKE 'owner.%' ORDER BY \"value\""
        )
        defer { statement.reset() }
        var users: [String] = []
        while try statement.step() { users.append(statement.string(0)) }
        return users
    }

    /// Throws ``SyncError/outOfScope(row:)`` unless every link row `change.key` holds as the push
    /// leaves it (read in the push's transaction: what the merge kept, not what the push names)
    /// points at a row the user may see, or is a link the row held before the push and still holds
    /// unwritten (a link hidden from the user, which the server keeps). A row the push brought to
    /// life (new, or an insert after its tombstone) holds only links the user may see: a tombstone's
    /// last values are no link, so they may not come back as one, unless the insert sent them as
    /// `nil` because they were hidden from the user (`keptHidden`: an undo of the user's delete
    /// brings the row back as it was). A row deleted after the push holds none.
    private static func checkLinksAfterPush(
        of change: RowChange, aliveBefore: Bool, keptHidden: Set<String>, user: String, scopes: [String: Scope],
        context: WriteContext
    ) throws {
        guard let record = try SyncBookkeeping.change(of: change.key, on: context.connection), record.isAlive,
            let entity = context.layout.entities[change.key.entity]
        else { return }
        for column in entity.columns where column.destination != nil && !keptHidden.contains(column.key) {
            guard aliveBefore == false || change.attributes[column.key] != nil,
                case .uuid(let target)? = record.attributes[column.key]?.value,
                let key = try outOfScopeTarget(target, of: column, user: user, scopes: scopes, context: context)
            else { continue }
            // Name the target only when the device sent it: the kept value may be a hidden one.
            throw SyncError.outOfScope(
                row: change.attributes[column.key]?.value == .uuid(target) ? key : change.key)
        }
        guard !aliveBefore else { return }
        for (relationship, targets) in record.linkedTargets.sorted(by: { $0.key < $1.key }) {
            guard let destination = entity.relationships.first(where: { $0.name == relationship })?.destination
            else { continue }
            for target in targets.sorted()
            where try !isVisible(target, as: destination, user: user, scopes: scopes, context: context) {
                throw SyncError.outOfScope(row: change.key)
            }
        }
    }

    /// The to-one links that `insert` (an insert of a row the server has a record of: an undo of a
    /// delete, say) sends as `nil` while the server's record holds them pointing at rows the user
    /// may not see. An insert sends every value, and the device holds such a link as `nil` (see
    /// ``shown(_:user:scopes:context:visiting:)``): that `nil` is no write of the link, so the server
    /// keeps its value, as it does for an update that leaves a hidden link unwritten.
    private static func hiddenLinksClearedByInsert(
        _ insert: RowChange, over existing: RowChange, user: String, scopes: [String: Scope], context: WriteContext
    ) throws -> Set<String> {
        guard insert.inserted != nil, let entity = context.layout.entities[insert.key.entity] else { return [] }
        var kept: Set<String> = []
        for column in entity.columns where column.destination != nil && insert.attributes[column.key]?.value == .null {
            guard case .uuid(let target)? = existing.attributes[column.key]?.value,
                try outOfScopeTarget(target, of: column, user: user, scopes: scopes, context: context) != nil
            else { continue }
            kept.insert(column.key)
        }
        return kept
    }

    /// The row `target` that to-one `column` points at, when the user may not see it (it is out of
    /// the scope, or the server does not know it); `nil` when the user may see it. One rule for a
    /// push (which may not make or leave such a link) and a pull (which does not show one).
    private static func outOfScopeTarget(
        _ target: UUID, of column: ColumnLayout, user: String, scopes: [String: Scope], context: WriteContext
    ) throws -> RowKey? {
        guard let destination = column.destination else { return nil }
        let key = try rowKey(of: target, as: destination, context: context)
        // Named as the link names it, so a refusal says no more than it would of an unknown ID.
        return try isVisible(key, user: user, scopes: scopes, context: context)
            ? nil : RowKey(entity: destination, id: target)
    }

    /// The key of row `id`, named by its concrete entity when the store holds it (else by `entity`).
    private static func rowKey(of id: UUID, as entity: String, context: WriteContext) throws -> RowKey {
        let declared = try context.layout.entity(entity)
        if let concrete = try context.concreteEntity(of: id, in: declared) {
            return RowKey(entity: concrete.name, id: id)
        }
        // A deleted row is in no table: its tombstone names its entity (a link to an abstract
        // parent without a foreign key may still point at it).
        for name in declared.entityNames
        where try SyncBookkeeping.change(of: RowKey(entity: name, id: id), on: context.connection) != nil {
            return RowKey(entity: name, id: id)
        }
        return RowKey(entity: declared.name, id: id)
    }

    /// Whether row `id` (of `entity` or one of its sub-entities) is one the user may see.
    private static func isVisible(
        _ id: UUID, as entity: String, user: String, scopes: [String: Scope], context: WriteContext
    ) throws -> Bool {
        try isVisible(rowKey(of: id, as: entity, context: context), user: user, scopes: scopes, context: context)
    }

    /// Whether the user may see row `key`: the server holds it, and it is in the user's scope as
    /// its sync record and its table's row hold it. The one rule every scope check reads.
    private static func isVisible(
        _ key: RowKey, user: String, scopes: [String: Scope], context: WriteContext
    ) throws -> Bool {
        let stored = try storedRows(of: key, context: context)
        guard !stored.isEmpty, let scope = scopes[key.entity] else { return false }
        return stored.allSatisfy { scope(user, $0) }
    }

    /// `row` as the user is shown it: the one rule for what of a row any answer to a device names.
    /// Without the to-one links that point at rows the user may not see, so the device holds no
    /// link to a row it does not have (its foreign key would fail) and learns nothing of the hidden
    /// row; without the many-to-many links to such rows; and a tombstone's last values likewise
    /// (a deleted row holds no link, but its record still names its last targets). The device
    /// never wrote those parts, so its later writes of the row leave the server's as they are.
    /// `nil` when a live row's required to-one is hidden: the row cannot exist on the device
    /// without it, so the user is not shown the row. A row withheld so is out of sight to the rows
    /// that link to it in turn (a note whose page needs a folder the user may not see), else the
    /// device would be sent a link to a row it does not hold, and its foreign key would fail.
    /// `visiting` holds the rows whose links are being followed, so a cycle of required links ends.
    static func shown(
        _ row: RowChange, user: String?, scopes: [String: Scope]?, context: WriteContext,
        visiting: Set<RowKey> = []
    ) throws -> RowChange? {
        guard let scopes, let user, let entity = context.layout.entities[row.key.entity] else { return row }
        var hidden: Set<String> = []
        // Every to-one, with a foreign key or without (no inverse): the link names the row either way.
        for column in entity.columns where column.destination != nil {
            guard case .uuid(let target)? = row.attributes[column.key]?.value,
                try outOfScopeTarget(target, of: column, user: user, scopes: scopes, context: context) != nil
                    || !isHeld(
                        target, of: column, user: user, scopes: scopes, context: context,
                        visiting: visiting.union([row.key]))
            else { continue }
            guard column.isOptional || !row.isAlive else { return nil }
            hidden.insert(column.key)
        }
        var links = row.links
        for link in row.links.keys {
            guard let relationship = entity.relationships.first(where: { $0.name == link.relationship }),
                try isVisible(link.target, as: relationship.destination, user: user, scopes: scopes, context: context)
            else {
                links[link] = nil
                continue
            }
        }
        guard !hidden.isEmpty || links.count != row.links.count else { return row }
        return RowChange(
            key: row.key, inserted: row.inserted, deleted: row.deleted, attributes: row.hiding(hidden).attributes,
            links: links)
    }

    /// Whether the user's devices hold the row `target` that to-one `column` points at, once it is
    /// in their sight: it is not withheld for a required link of its own (see
    /// ``shown(_:user:scopes:context:visiting:)``). A row already being followed counts as held.
    private static func isHeld(
        _ target: UUID, of column: ColumnLayout, user: String, scopes: [String: Scope], context: WriteContext,
        visiting: Set<RowKey>
    ) throws -> Bool {
        guard let destination = column.destination else { return true }
        let key = try rowKey(of: target, as: destination, context: context)
        guard !visiting.contains(key), let entity = context.layout.entities[key.entity],
            entity.columns.contains(where: { $0.destination != nil && !$0.isOptional }),
            let record = try SyncBookkeeping.change(of: key, on: context.connection), record.isAlive
        else { return true }
        return try shown(record, user: user, scopes: scopes, context: context, visiting: visiting) != nil
    }

    // MARK: - Pull

    /// Serves a pull: the rows changed after the request's cursor that the user may see.
    public func pull(_ request: PullRequest, credentials: String?) async throws -> PullResponse {
        try await servePull(request, credentials: credentials).response
    }

    /// Serves a pull, with the stored text of each row the answer sends exactly as the server
    /// keeps it: the HTTP answer copies those texts instead of encoding the rows again.
    func servePull(_ request: PullRequest, credentials: String?) async throws -> (
        response: PullResponse, stored: [RowKey: String]
    ) {
        let user: String?
        let translation: SyncTranslation?
        do {
            user = try await self.user(credentials)
            translation = try checkSchema(request.schema)
        } catch let error as SyncError {
            return (
                PullResponse(
                    changes: ChangeSet(), cursor: request.since ?? SyncCursor(0), hasMore: false, refusal: error),
                [:]
            )
        }
        guard let translation else { return try await serve(request, user: user) }
        let served = try await serve(
            PullRequest(
                device: request.device, schema: schemaVersion, since: request.since, limit: request.limit,
                epoch: request.epoch, horizon: request.horizon, ownRows: request.ownRows,
                held: request.held.map { $0.compactMap(translation.up) }),
            user: user
        ).response
        // The stored texts are in the server's names: the answer is encoded afresh.
        return (
            PullResponse(
                changes: ChangeSet(served.changes.sortedChanges.compactMap(translation.down)), cursor: served.cursor,
                hasMore: served.hasMore, resolutions: served.resolutions.compactMap(translation.down),
                refusal: served.refusal.map(translation.down), epoch: served.epoch,
                dropped: served.dropped.compactMap(translation.down),
                hiddenLinks: served.hiddenLinks.compactMap(translation.down)),
            [:]
        )
    }

    /// Serves a pull in the server's names to `user` (see ``servePull(_:credentials:)``).
    private func serve(_ request: PullRequest, user: String?) async throws -> (
        response: PullResponse, stored: [RowKey: String]
    ) {
        let scopes = self.scopes
        let now = wallClock()
        let recordsHistory = self.recordsHistory
        // A refused pull sends no rows.
        let none: [SyncBookkeeping.PageRow] = []
        let (response, page) = try await store.performAndSave(author: Self.author) { context in
            let connection = context.connection
            if recordsHistory { try Self.recordOwnWrites(context, wall: now) }
            try Self.upgradeForgottenMark(of: request.device, on: connection)
            let since = request.since?.position ?? 0
            let epoch = try SyncBookkeeping.currentEpoch(on: connection)
            let newest = Int64(try SyncBookkeeping.value("cursor", on: connection) ?? "0") ?? 0
            // A cursor means something only in the lineage that gave it out (see SyncEpoch).
            let depends = max(since, request.horizon?.position ?? 0)
            if request.since != nil || request.horizon != nil, let theirs = request.epoch,
                try !SyncBookkeeping.continues(theirs, at: depends, newest: newest, on: connection)
            {
                return (
                    PullResponse(
                        changes: ChangeSet(), cursor: SyncCursor(since), hasMore: false,
                        refusal: .epochChanged(since: SyncCursor(depends), device: theirs, server: epoch), epoch: epoch),
                    none
                )
            }
            let purged = Int64(try SyncBookkeeping.value("purgedThrough", on: connection) ?? "0") ?? 0
            if request.since != nil, since < purged {
                return (
                    PullResponse(
                        changes: ChangeSet(), cursor: SyncCursor(since), hasMore: false,
                        refusal: .cursorExpired(since: SyncCursor(since), purgedThrough: SyncCursor(purged)),
                        epoch: epoch), none
                )
            }
            if since > newest {
                return (
                    PullResponse(
                        changes: ChangeSet(), cursor: SyncCursor(since), hasMore: false,
                        refusal: .cursorAhead(since: SyncCursor(since), newest: SyncCursor(newest)), epoch: epoch), none
                )
            }
            // A cursor given out before the server forgot the device is served only to a request
            // that names the rows it holds (so those that left the scope are dropped on it), whoever
            // pulls under the device's ID: no pull clears the mark, so another connection of the
            // same user cannot spare the device the pull that drops them.
            if request.since != nil, request.held == nil,
                let before = try Self.forgottenBefore(request.device, on: connection), since < before
            {
                return (
                    PullResponse(
                        changes: ChangeSet(), cursor: SyncCursor(since), hasMore: false,
                        refusal: .cursorExpired(since: SyncCursor(since), purgedThrough: SyncCursor(before)),
                        epoch: epoch), none
                )
            }
            do {
                try Self.bind(request.device, to: user, on: connection)
            } catch let error as SyncError {
                return (
                    PullResponse(
                        changes: ChangeSet(), cursor: SyncCursor(since), hasMore: false, refusal: error, epoch: epoch),
                    none
                )
            }
            let seenKey = Self.deviceKey(request.device)
            var seen = try SyncBookkeeping.decoded(DeviceSeen.self, seenKey, on: connection)
            seen = seen?.pulled(from: since, at: now) ?? DeviceSeen(cursor: since, milliseconds: now)
            try SyncBookkeeping.setEncoded(seen, for: seenKey, on: connection)
            let limit = min(max(request.limit, 1), Self.maximumPullLimit)
            // The device's own rows it holds (see PullRequest.ownRows) are left out.
            let own = SyncBookkeeping.normalized(
                request.ownRows.map { $0.lowerBound.position...$0.upperBound.position }, after: since)
            let rows = try SyncBookkeeping.changes(after: since, skipping: own, limit: limit + 1, on: connection)
            let page = rows.prefix(limit)
            // The last page ends at the newest cursor: every row up to it was sent or left out.
            let end = rows.count > limit ? page.last?.cursor ?? since : max(newest, page.last?.cursor ?? since)
            let visible: @Sendable (RowChange) -> Bool = { change in
                guard let scopes, let user else { return true }
                return scopes[change.key.entity].map { $0(user, change) } ?? false
            }
            if let scopes, let user {
                // Under scopes the device's record of what it was shown decides drops and re-sends.
                // A device pulling from the beginning, or from a cursor the server gave out before
                // it forgot the device, names the rows it holds: those in sight are sent as shown
                // now, every other named one is dropped, and no row it did not name is.
                var scoped = ScopedPull(device: request.device, user: user, scopes: scopes, since: since, end: end)
                if let held = request.held { try scoped.reconcile(held: held, context: context) }
                for change in page.map(\.change) { try scoped.offer(change, context: context) }
                // Rows carried for foreign keys may enter the scope too, and so move their referrers.
                var carried: Set<RowKey> = []
                while true {
                    try scoped.followReferrers(context: context)
                    let fresh = try Self.referencedRows(
                        of: scoped.changes.aliveRows, after: end, visible: visible, context: context
                    ).filter { carried.insert($0.key).inserted }
                    guard !fresh.isEmpty else { break }
                    for change in fresh { try scoped.offer(change, context: context) }
                }
                return (
                    PullResponse(
                        changes: scoped.changes, cursor: SyncCursor(end), hasMore: rows.count > limit, epoch: epoch,
                        dropped: Array(scoped.dropped), hiddenLinks: scoped.hiddenLinks), Array(page)
                )
            }
            var changes = ChangeSet()
            let served = page.map(\.change)
            for change in served { changes.merge(change) }
            for change in try Self.referencedRows(of: served, after: end, visible: visible, context: context) {
                changes.merge(change)
            }
            return (
                PullResponse(changes: changes, cursor: SyncCursor(end), hasMore: rows.count > limit, epoch: epoch),
                Array(page)
            )
        }
        // A row is sent as stored when the answer holds it as read: not hidden in part, not merged.
        var stored: [RowKey: String] = [:]
        for row in page where response.changes.rows[row.change.key] == row.change {
            stored[row.change.key] = row.text
        }
        return (response, stored)
    }

    /// The rows that `rows` link to through a to-one with a foreign key, whose latest change is
    /// after `end` (so the device pulling the page up to `end` has not received them as they are
    /// now), and the rows those link to in turn: the device applies a page in one transaction and
    /// its store checks foreign keys when it commits, so a page carries the current state of every
    /// row its links need. A link cycle ends where a row is already carried. The rows come again in
    /// their own page later, where they merge to nothing new.
    private static func referencedRows(
        of rows: [RowChange], after end: Int64, visible: (RowChange) -> Bool, context: WriteContext
    ) throws -> [RowChange] {
        let connection = context.connection
        var carried = Set(rows.map(\.key))
        var waiting = rows
        var result: [RowChange] = []
        while let row = waiting.popLast() {
            guard row.isAlive, let entity = context.layout.entities[row.key.entity] else { continue }
            for column in entity.columns where column.references != nil {
                guard case .uuid(let target)? = row.attributes[column.key]?.value,
                    let destinationName = column.destination
                else { continue }
                for name in try context.layout.entity(destinationName).entityNames {
                    let key = RowKey(entity: name, id: target)
                    guard !carried.contains(key),
                        let cursor = try SyncBookkeeping.marks(of: key, on: connection).cursor,
                        cursor > end, let change = try SyncBookkeeping.change(of: key, on: connection), visible(change)
                    else { continue }
                    carried.insert(key)
                    result.append(change)
                    waiting.append(change)
                }
            }
        }
        return result
    }

    // MARK: - Tombstones

    /// Deletes the tombstones every device seen within `period` has pulled past (a device is
    /// seen when it pulls), and returns how many went. A device not seen for longer no longer
    /// holds them back; when it returns, its pull is refused with
    /// ``SyncError/cursorExpired(since:purgedThrough:)`` and its engine pulls again from the
    /// beginning. With no device seen within the period, nothing is purged.
    @discardableResult
    public func purgeTombstones(forgettingDevicesUnseenFor period: Duration = .seconds(90 * 24 * 3600)) async throws
        -> Int
    {
        let now = wallClock()
        let periodMilliseconds = UInt64(max(0, period.components.seconds)) * 1000
        return try await store.performAndSave(author: Self.author) { context in
            let connection = context.connection
            let statement = try connection.statement(
                "SELECT \"value\" FROM \(quoted(SyncBookkeeping.state)) WHERE \"key\" LIKE 'device.%'")
            defer { statement.reset() }
            var through: Int64?
            while try statement.step() {
                let seen = try JSONDecoder().decode(DeviceSeen.self, from: Data(statement.string(0).utf8))
                let start = now < periodMilliseconds ? 0 : now - periodMilliseconds
                guard seen.milliseconds >= start else { continue }
                let floor = seen.floor(since: start)
                through = min(through ?? floor, floor)
            }
            statement.reset()
            guard let through, through > 0 else { return 0 }
            let count = try SyncBookkeeping.purgeTombstones(through: through, on: connection)
            let purged = Int64(try SyncBookkeeping.value("purgedThrough", on: connection) ?? "0") ?? 0
            try SyncBookkeeping.setValue(String(max(purged, through)), for: "purgedThrough", on: connection)
            return count
        }
    }

    // MARK: - Forgetting devices

    /// Forgets what the server keeps for each device not seen within `period` (a device is seen
    /// when it pulls): what it was shown under scopes, which grows with the rows it was shown, and
    /// when it was last seen. Returns the devices forgotten. Call it from the same scheduled job as
    /// ``purgeTombstones(forgettingDevicesUnseenFor:)``, with a period no shorter.
    ///
    /// A forgotten device that syncs again is told its cursor expired
    /// (``SyncError/cursorExpired(since:purgedThrough:)``) until its pull names the rows it holds
    /// (``PullRequest/held``), which its engine then does; the pages drop those of them out of its
    /// user's scope. Its binding to its user and a mark (the cursor the server took when it forgot
    /// it, which no pull clears) are kept, so no other user can take its ID over and no other
    /// connection can spare it that pull.
    @discardableResult
    public func forgetDevices(unseenFor period: Duration = .seconds(90 * 24 * 3600)) async throws -> [SyncNodeID] {
        let now = wallClock()
        let periodMilliseconds = UInt64(max(0, period.components.seconds)) * 1000
        return try await store.performAndSave(author: Self.author) { context in
            let connection = context.connection
            let statement = try connection.statement(
                "SELECT \"key\", \"value\" FROM \(quoted(SyncBookkeeping.state)) WHERE \"key\" LIKE 'device.%'")
            defer { statement.reset() }
            var unseen: [SyncNodeID] = []
            while try statement.step() {
                let seen = try JSONDecoder().decode(DeviceSeen.self, from: Data(statement.string(1).utf8))
                guard now >= periodMilliseconds, seen.milliseconds < now - periodMilliseconds,
                    let id = UUID(uuidString: String(statement.string(0).dropFirst("device.".count)))
                else { continue }
                unseen.append(SyncNodeID(id))
            }
            statement.reset()
            for device in unseen { try Self.forget(device, on: connection) }
            return unseen.sorted { $0.uuid.uuidString < $1.uuid.uuidString }
        }
    }

    /// Forgets what the server keeps for `device`, seen lately or not: the call an app makes when
    /// it removes a device (signed out, lost). If the device syncs again, it is treated as
    /// ``forgetDevices(unseenFor:)`` says.
    public func forgetDevice(_ device: SyncNodeID) async throws {
        try await store.performAndSave(author: Self.author) { context in
            try Self.forget(device, on: context.connection)
        }
    }

    private static func forget(_ device: SyncNodeID, on connection: some DatabaseConnection) throws {
        let statement = try connection.statement(
            "DELETE FROM \(quoted(SyncBookkeeping.state)) WHERE \"key\" LIKE \(connection.dialect.parameter)")
        defer { statement.reset() }
        statement.bind(shownPrefix(device) + "%", 1)
        try statement.run()
        try SyncBookkeeping.deleteValue(deviceKey(device), on: connection)
        try SyncBookkeeping.setValue(
            String(try takeEmptyCursor(on: connection)), for: forgottenKey(device), on: connection)
    }

    /// Takes the next cursor for no row and returns it: every cursor given out before it is
    /// before it, and every pull from the beginning ends at it or later, so a forgotten device's
    /// mark (see ``forgottenBefore(_:on:)``) tells the cursors it held from those of its next full pull.
    private static func takeEmptyCursor(on connection: some DatabaseConnection) throws -> Int64 {
        let next = (Int64(try SyncBookkeeping.value("cursor", on: connection) ?? "0") ?? 0) + 1
        try SyncBookkeeping.setValue(String(next), for: "cursor", on: connection)
        return next
    }

    /// The cursor the server took when it last forgot `device`: a pull under its ID from a cursor
    /// before it comes from what the device held before it was forgotten (or from the pages of its
    /// pull from the beginning since), so it is refused
    /// (``SyncError/cursorExpired(since:purgedThrough:)``) unless it names the rows the device
    /// holds (``PullRequest/held``), which the server records so its pages drop those out of the
    /// scope. The mark stays (one short row, like the device's binding to its user): nothing a
    /// pull says clears it, so no other connection under the same ID can.
    private static func forgottenBefore(_ device: SyncNodeID, on connection: some DatabaseConnection) throws
        -> Int64?
    {
        try SyncBookkeeping.value(forgottenKey(device), on: connection).flatMap { Int64($0) }
    }

    /// A mark written before marks were cursors (`{"restarted":…}`, cleared by a pull, which
    /// another connection under the device's ID could make) becomes one, as if the device were
    /// forgotten now.
    private static func upgradeForgottenMark(of device: SyncNodeID, on connection: some DatabaseConnection) throws {
        guard let mark = try SyncBookkeeping.value(forgottenKey(device), on: connection), Int64(mark) == nil else {
            return
        }
        try SyncBookkeeping.setValue(
            String(try takeEmptyCursor(on: connection)), for: forgottenKey(device), on: connection)
    }

    /// The key of a forgotten device's mark (not `device.`, which the tombstone purge reads).
    private static func forgottenKey(_ device: SyncNodeID) -> String {
        "forgotten.\(device.uuid.uuidString)"
    }

    /// When a device last pulled, and from which cursor; and the smallest cursor it pulled from
    /// since any moment, which the purge reads. A node ID is no secret (every stamp a device makes
    /// carries it), so another connection with the same user's credentials can pull under it, from
    /// any cursor: the purge never trusts the latest pull alone, but holds tombstones back to the
    /// oldest cursor pulled from under the ID within the period. So an impostor cannot make the
    /// purge pass what the real device pulled from unless the real device was not seen for a whole
    /// period, which forgets it anyway.
    private struct DeviceSeen: Codable {
        var cursor: Int64
        var milliseconds: UInt64
        /// The pulls that may still be the oldest cursor of a period ending now: cursors rising
        /// with time, at most one a day (a day's entry keeps its smallest cursor and its latest time,
        /// which only ever holds tombstones longer). `nil` in a record written before this existed.
        var floors: [Floor]?

        /// A pull from `cursor` at `milliseconds`, and when the entry last did.
        struct Floor: Codable {
            var cursor: Int64
            var milliseconds: UInt64
        }

        init(cursor: Int64, milliseconds: UInt64) {
            self.cursor = cursor
            self.milliseconds = milliseconds
            floors = [Floor(cursor: cursor, milliseconds: milliseconds)]
        }

        /// The record after a pull from `since` at `now`: a later pull from a lower cursor makes
        /// every earlier entry from a cursor as high or higher irrelevant to any period that holds
        /// both, so those go.
        func pulled(from since: Int64, at now: UInt64) -> DeviceSeen {
            let day: UInt64 = 24 * 3600 * 1000
            var copy = self
            var floors = self.floors ?? [Floor(cursor: cursor, milliseconds: milliseconds)]
            while let last = floors.last, last.cursor >= since { floors.removeLast() }
            if let last = floors.last, last.milliseconds / day == now / day {
                floors[floors.count - 1].milliseconds = max(last.milliseconds, now)
            } else {
                floors.append(Floor(cursor: since, milliseconds: now))
            }
            copy.floors = floors
            copy.cursor = since
            copy.milliseconds = now
            return copy
        }

        /// The smallest cursor pulled from under this ID at or after `start` (or earlier the same day).
        func floor(since start: UInt64) -> Int64 {
            (floors ?? []).first { $0.milliseconds >= start }?.cursor ?? cursor
        }
    }

    private static func deviceKey(_ device: SyncNodeID) -> String {
        "device.\(device.uuid.uuidString)"
    }

    /// Binds `device` to `user` at its first authenticated request; throws
    /// ``SyncError/deviceOfAnotherUser(device:)`` when it is bound to someone else, so no user can
    /// pull (and so mark as seen, holding back or releasing the tombstone purge) in another's
    /// device's name.
    private static func bind(_ device: SyncNodeID, to user: String?, on connection: some DatabaseConnection) throws {
        guard let user else { return }
        let key = deviceOwnerKey(device)
        switch try SyncBookkeeping.value(key, on: connection) {
        case nil: try SyncBookkeeping.setValue(user, for: key, on: connection)
        case user?: break
        default: throw SyncError.deviceOfAnotherUser(device: device)
        }
    }

    /// The key of the user a device was bound to by its first authenticated pull (not `device.`,
    /// which the purge reads as devices seen).
    private static func deviceOwnerKey(_ device: SyncNodeID) -> String {
        "owner.\(device.uuid.uuidString)"
    }

    // MARK: - Checks

    /// The user the credentials name, or `nil` without authentication; throws when refused.
    private func user(_ credentials: String?) async throws -> String? {
        guard let authenticate else { return nil }
        guard let user = try await authenticate(credentials) else { throw SyncError.notAuthenticated }
        return user
    }

    /// Throws unless the device runs the server's model version, checksum included.
    /// `nil` for a device at the server's version; the translation for a device at an older
    /// version of the model that the migration plan reaches through lightweight stages that
    /// translate (see ``SyncTranslation``); else throws ``SyncError/schemaVersionUnsupported(device:server:)``.
    private func checkSchema(_ device: SyncSchemaVersion) throws -> SyncTranslation? {
        let server = schemaVersion
        guard device != server else { return nil }
        let translation = try translations.withLock { built in
            if let known = built[device] { return known }
            let made = try Self.translation(from: device, to: server, by: migrationPlan)
            built[device] = made
            return made
        }
        guard let translation else { throw SyncError.schemaVersionUnsupported(device: device, server: server) }
        return translation
    }

    /// The translation for `device`'s version, or `nil` when `plan` has no chain of lightweight
    /// stages from it to `server`'s version that translates. The device's checksum must be the
    /// released one of its version number.
    private static func translation(
        from device: SyncSchemaVersion, to server: SyncSchemaVersion, by plan: MigrationPlan?
    ) throws -> SyncTranslation? {
        guard let plan, device.model == server.model, device.version < server.version,
            let stages = try? plan.stages(
                fromVersion: device.version, checksum: SchemaChecksum(hexDigits: device.checksum)),
            let first = stages.first, first.source.version == device.version,
            first.source.checksum.hexDigits == device.checksum,
            stages.allSatisfy(\.isLightweight)
        else { return nil }
        var chain = [try first.source.schema()]
        for stage in stages { chain.append(try stage.destination.schema()) }
        return SyncTranslation(chain: chain)
    }

    /// The server's latest cursor and its epoch (`nil` before the server began one).
    private func currentCursor() async throws -> (SyncCursor, SyncEpoch?) {
        try await store.performQuery { context in
            (
                SyncCursor(Int64(try SyncBookkeeping.value("cursor", on: context.connection) ?? "0") ?? 0),
                try SyncBookkeeping.epochs(on: context.connection).last?.epoch
            )
        }
    }
}

/// A ``SyncServer`` reached in process with fixed credentials.
private struct CredentialedTransport: SyncTransport {
    let server: SyncServer
    let credentials: String?

    func push(_ request: PushRequest) async throws -> PushResponse {
        try await server.push(request, credentials: credentials)
    }

    func pull(_ request: PullRequest) async throws -> PullResponse {
        try await server.pull(request, credentials: credentials)
    }
}
