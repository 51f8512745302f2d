import Foundation

/// The tables sync keeps beside a store's schema, on a device and on the server alike, and the SQL
/// that reads and writes them: what is known of each row (its ``RowChange``, stamps and
/// tombstone included), the state that lets a node resume (its ID, its clock, its tokens and
/// cursors), and the to-many links last seen in the join tables.
///
/// The names start with the history tables' prefix on purpose: the store's schema verification
/// leaves those tables out (they are not the model's), and every migration stage keeps them, so
/// sync needs no change to either. Every column is `TEXT` or `BIGINT`, which both engines store
/// the same way, and every statement is plain SQL both engines read; they always run inside the
/// caller's write transaction, with the data they describe.
enum SyncBookkeeping {
    static let rows = "_mw_history_sync_rows"
    static let state = "_mw_history_sync_state"
    static let links = "_mw_history_sync_links"

    /// The prefix of the sync tables' names (within the history tables' prefix).
    static let tablePrefix = HistorySQL.tablePrefix + "sync_"

    /// Creates the tables when they are missing.
    static func prepare(on connection: some DatabaseConnection) throws {
        try connection.execute(createStatements)
    }

    /// The statements that create the tables, which store verification also expects when a store
    /// has any of them.
    static let createStatements = [
        "CREATE TABLE IF NOT EXISTS \(quoted(rows)) (\"entity\" TEXT NOT NULL, \"id\" TEXT NOT NULL, "
            + "\"cursor\" BIGINT, \"pending\" BIGINT, \"change\" TEXT NOT NULL, PRIMARY KEY (\"entity\", \"id\"))",
        "CREATE INDEX IF NOT EXISTS \(quoted(rows + "_cursor")) ON \(quoted(rows)) (\"cursor\")",
        "CREATE INDEX IF NOT EXISTS \(quoted(rows + "_pending")) ON \(quoted(rows)) (\"pending\")",
        "CREATE TABLE IF NOT EXISTS \(quoted(state)) (\"key\" TEXT NOT NULL PRIMARY KEY, \"value\" TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS \(quoted(links)) (\"joinTable\" TEXT NOT NULL, \"source\" TEXT NOT NULL, "
            + "\"destination\" TEXT NOT NULL, PRIMARY KEY (\"joinTable\", \"source\", \"destination\"))",
        "CREATE INDEX IF NOT EXISTS \(quoted(links + "_destination")) ON \(quoted(links)) "
            + "(\"joinTable\", \"destination\")",
    ]

    // MARK: - State

    /// The value kept under `key`, or `nil`.
    static func value(_ key: String, on connection: some DatabaseConnection) throws -> String? {
        let marker = connection.dialect.parameter
        let statement = try connection.statement("SELECT \"value\" FROM \(quoted(state)) WHERE \"key\" = \(marker)")
        defer { statement.reset() }
        statement.bind(key, 1)
        guard try statement.step() else { return nil }
        return statement.string(0)
    }

    /// Keeps `value` under `key`.
    static func setValue(_ value: String, for key: String, on connection: some DatabaseConnection) throws {
        let marker = connection.dialect.parameter
        let statement = try connection.statement(
            "INSERT INTO \(quoted(state)) (\"key\", \"value\") VALUES (\(marker), \(marker)) "
                + "ON CONFLICT (\"key\") DO UPDATE SET \"value\" = excluded.\"value\"")
        defer { statement.reset() }
        statement.bind(key, 1)
        statement.bind(value, 2)
        try statement.run()
    }

    /// Removes the value under `key`, if any.
    static func deleteValue(_ key: String, on connection: some DatabaseConnection) throws {
        let statement = try connection.statement(
            "DELETE FROM \(quoted(state)) WHERE \"key\" = \(connection.dialect.parameter)")
        defer { statement.reset() }
        statement.bind(key, 1)
        try statement.run()
    }

    /// The `Codable` value kept under `key`, as JSON.
    static func decoded<Value: Decodable>(
        _ type: Value.Type, _ key: String, on connection: some DatabaseConnection
    ) throws -> Value? {
        guard let text = try value(key, on: connection) else { return nil }
        return try JSONDecoder().decode(Value.self, from: Data(text.utf8))
    }

    /// Keeps a `Codable` value under `key`, as JSON.
    static func setEncoded(_ value: some Encodable, for key: String, on connection: some DatabaseConnection) throws {
        try setValue(String(decoding: try JSONEncoder().encode(value), as: UTF8.self), for: key, on: connection)
    }

    /// The node ID kept in the store, made and kept on first use.
    static func node(on connection: some DatabaseConnection) throws -> SyncNodeID {
        if let node = try decoded(SyncNodeID.self, "node", on: connection) { return node }
        let node = SyncNodeID()
        try setEncoded(node, for: "node", on: connection)
        return node
    }

    /// The node's clock, resumed after the latest timestamp it kept.
    static func clock(maximumDriftMilliseconds: UInt64, on connection: some DatabaseConnection) throws
        -> HybridLogicalClock
    {
        HybridLogicalClock(
            node: try node(on: connection), maximumDriftMilliseconds: maximumDriftMilliseconds,
            after: try decoded(HybridTimestamp.self, "clock", on: connection))
    }

    /// On a device: the key of its clock's latest timestamp when it built the last push the server
    /// acknowledged. A write of its own stamped later has not reached the server yet.
    static let acknowledgedClock = "acknowledgedClock"

    /// On a device: whether the value stamped `stamp` of a row whose pending mark is `pending` is one of
    /// its own writes that has not reached the server yet: the row has local changes the server
    /// has not acknowledged, and the stamp is the device's own and later than its clock when it
    /// built its last acknowledged push. The server's view of the row does not include it, and its
    /// push decides. (A stamp under this device's node that it pulled, forged or its own from
    /// before a restore, is on a row without pending changes.)
    static func isUnpushed(
        _ stamp: HybridTimestamp, pending: Int64?, on connection: some DatabaseConnection
    ) throws -> Bool {
        guard let pending, stamp.node == (try node(on: connection)) else { return false }
        if let acknowledged = try value("acknowledged", on: connection).flatMap({ Int64($0) }), pending <= acknowledged
        {
            return false
        }
        guard let pushed = try decoded(HybridTimestamp.self, acknowledgedClock, on: connection) else { return true }
        return (stamp.milliseconds, stamp.counter) > (pushed.milliseconds, pushed.counter)
    }

    /// On a device: the key of its clock's latest timestamp when the engine opened it, kept until a
    /// pull reaches the server's newest without meeting a stamp of its own that the clock never
    /// reached. A store put back (restored from a backup) opens with its clock gone back: the
    /// writes made since then are the ones a lost stamp may shadow.
    static let unverifiedSince = "unverifiedSince"

    /// Keeps the clock's latest timestamp, so a restart never stamps earlier.
    static func save(_ clock: HybridLogicalClock, on connection: some DatabaseConnection) throws {
        try setEncoded(clock.latest, for: "clock", on: connection)
    }

    // MARK: - Epochs

    /// One epoch of the server's lineage: its ID and the cursor it began at.
    struct EpochStart: Codable, Equatable {
        var epoch: SyncEpoch
        var cursor: Int64
    }

    /// How many epochs the lineage keeps: a device whose epoch was dropped as older pulls again
    /// from the beginning, which is safe, only slower.
    static let maximumEpochs = 256

    /// The server's lineage, oldest first.
    static func epochs(on connection: some DatabaseConnection) throws -> [EpochStart] {
        try decoded([EpochStart].self, "epochs", on: connection) ?? []
    }

    /// Begins a new epoch at the server's current cursor and returns it: the server does so each
    /// time it starts, since it cannot tell a store restored from a copy from the one it left.
    @discardableResult
    static func beginEpoch(on connection: some DatabaseConnection) throws -> SyncEpoch {
        let cursor = Int64(try value("cursor", on: connection) ?? "0") ?? 0
        var lineage = try epochs(on: connection)
        let epoch = SyncEpoch()
        lineage.append(EpochStart(epoch: epoch, cursor: cursor))
        try setEncoded(Array(lineage.suffix(maximumEpochs)), for: "epochs", on: connection)
        return epoch
    }

    /// The server's current epoch (begun now when the lineage is empty).
    static func currentEpoch(on connection: some DatabaseConnection) throws -> SyncEpoch {
        if let last = try epochs(on: connection).last { return last.epoch }
        return try beginEpoch(on: connection)
    }

    /// Whether `cursor`, given out in `epoch`, names the same point of this server's sequence:
    /// `epoch` is in the lineage, and `cursor` is at or before where the lineage left it (the
    /// next epoch's start, or `newest` for the current one).
    static func continues(
        _ epoch: SyncEpoch, at cursor: Int64, newest: Int64, on connection: some DatabaseConnection
    ) throws -> Bool {
        let lineage = try epochs(on: connection)
        guard let index = lineage.firstIndex(where: { $0.epoch == epoch }) else { return false }
        let end = index + 1 < lineage.count ? lineage[index + 1].cursor : newest
        return cursor <= end
    }

    /// Keeps, on a device, the epoch of an answer the server gave and the furthest cursor of it the
    /// device's state depends on (`position`, or the horizon kept before when that is later). The
    /// server checked the previous horizon against its lineage before answering, so it holds in
    /// the answer's epoch too.
    static func advanceHorizon(to position: SyncCursor, in epoch: SyncEpoch?, on connection: some DatabaseConnection)
        throws
    {
        guard let epoch else { return }
        let horizon = try value("horizon", on: connection).flatMap { Int64($0) } ?? 0
        try setEncoded(epoch, for: "epoch", on: connection)
        try setValue(String(max(horizon, position.position)), for: "horizon", on: connection)
    }

    // MARK: - Rows

    /// What is known of row `key`, or `nil`.
    static func change(of key: RowKey, on connection: some DatabaseConnection) throws -> RowChange? {
        try record(of: key, on: connection)?.change
    }

    /// What is known of row `key` with its marks (see ``write(_:cursor:pending:on:)``), in one
    /// read: applying a pulled row needs both, and reading the row twice cost a query per row.
    static func record(of key: RowKey, on connection: some DatabaseConnection) throws -> (
        change: RowChange, cursor: Int64?, pending: Int64?
    )? {
        let marker = connection.dialect.parameter
        let statement = try connection.statement(
            "SELECT \"change\", \"cursor\", \"pending\" FROM \(quoted(rows)) WHERE \"entity\" = \(marker) AND \"id\" = \(marker)"
        )
        defer { statement.reset() }
        statement.bind(key.entity, 1)
        statement.bind(key.id.uuidString, 2)
        guard try statement.step() else { return nil }
        return (
            try decode(statement.string(0)), statement.isNull(1) ? nil : statement.int64(1),
            statement.isNull(2) ? nil : statement.int64(2)
        )
    }

    /// Keeps what is known of a row, with the cursor of its latest change (server) and the token
    /// its pending local changes wait to be acknowledged through (device); `nil` keeps neither.
    static func write(
        _ change: RowChange, cursor: Int64?, pending: Int64?, on connection: some DatabaseConnection
    ) throws {
        let marker = connection.dialect.parameter
        let statement = try connection.statement(
            "INSERT INTO \(quoted(rows)) (\"entity\", \"id\", \"cursor\", \"pending\", \"change\") VALUES (\(marker), \(marker), \(marker), \(marker), \(marker)) "
                + "ON CONFLICT (\"entity\", \"id\") DO UPDATE SET \"cursor\" = excluded.\"cursor\", "
                + "\"pending\" = excluded.\"pending\", \"change\" = excluded.\"change\"")
        defer { statement.reset() }
        statement.bind(change.key.entity, 1)
        statement.bind(change.key.id.uuidString, 2)
        statement.bind(cursor.map(SQLValue.integer) ?? .null, 3)
        statement.bind(pending.map(SQLValue.integer) ?? .null, 4)
        statement.bind(try encode(change), 5)
        try statement.run()
    }

    /// On a device, the cursor a row's record holds while the row was made on this device and the
    /// server has neither acknowledged it nor sent it (every other record of a device holds none):
    /// a row the server may never have heard of, or may hold as another user's under the same ID.
    static let madeHere: Int64 = -1

    /// On a device, the cursor of a row whose local changes the server refused as out of its
    /// user's scope (``SyncError/outOfScope(row:)``): its record is emptied, so the next pull, from
    /// the beginning, brings the server's version whole; a row the server does not send it then
    /// (one the user may not see, or one the server never had) is dropped at that pull's end.
    static let reverted: Int64 = -2

    /// Makes a device's next pull start from the beginning: it forgets its cursor and the ranges
    /// of its own rows (so the server sends those too), and names the rows it holds in it.
    static func pullFromTheBeginning(on connection: some DatabaseConnection) throws {
        for state in ["cursor", "ownRows"] { try deleteValue(state, on: connection) }
    }

    /// The rows marked ``reverted``, in order.
    static func revertedKeys(on connection: some DatabaseConnection) throws -> [RowKey] {
        try keys(where: "\"cursor\" = \(reverted)", on: connection)
    }

    /// The keys of every row a device holds that the server has sent it or acknowledged from it
    /// (the rows it holds and its tombstones, not those only made here: see ``madeHere``), in order.
    static func keys(on connection: some DatabaseConnection) throws -> [RowKey] {
        try keys(where: "\"cursor\" IS NULL OR \"cursor\" <> \(madeHere)", on: connection)
    }

    /// The keys of the rows whose record meets `condition`, in order.
    private static func keys(where condition: String, on connection: some DatabaseConnection) throws -> [RowKey] {
        let statement = try connection.statement(
            "SELECT \"entity\", \"id\" FROM \(quoted(rows)) WHERE \(condition) ORDER BY \"entity\", \"id\"")
        defer { statement.reset() }
        var keys: [RowKey] = []
        while try statement.step() {
            if let id = UUID(uuidString: statement.string(1)) {
                keys.append(RowKey(entity: statement.string(0), id: id))
            }
        }
        return keys
    }

    /// Forgets row `key` and its marks: a device drops a row that left its user's scope, and
    /// keeps no record of it to push.
    static func forget(_ key: RowKey, on connection: some DatabaseConnection) throws {
        let marker = connection.dialect.parameter
        let statement = try connection.statement(
            "DELETE FROM \(quoted(rows)) WHERE \"entity\" = \(marker) AND \"id\" = \(marker)")
        defer { statement.reset() }
        statement.bind(key.entity, 1)
        statement.bind(key.id.uuidString, 2)
        try statement.run()
    }

    /// The cursor and pending token kept with row `key`.
    static func marks(of key: RowKey, on connection: some DatabaseConnection) throws -> (
        cursor: Int64?, pending: Int64?
    ) {
        let marker = connection.dialect.parameter
        let statement = try connection.statement(
            "SELECT \"cursor\", \"pending\" FROM \(quoted(rows)) WHERE \"entity\" = \(marker) AND \"id\" = \(marker)")
        defer { statement.reset() }
        statement.bind(key.entity, 1)
        statement.bind(key.id.uuidString, 2)
        guard try statement.step() else { return (nil, nil) }
        return (
            statement.isNull(0) ? nil : statement.int64(0), statement.isNull(1) ? nil : statement.int64(1)
        )
    }

    /// A row of a pull's page: its cursor, its record, and the record's stored text.
    typealias PageRow = (cursor: Int64, change: RowChange, text: String)

    /// The rows whose cursor is after `cursor` and in none of `skipped`, in cursor order, at most
    /// `limit` of them. The ranges are tested in the statement, so a skipped row is neither read
    /// nor decoded, and a page holds `limit` rows that are sent. Each row comes with its stored
    /// text, which a pull's answer copies when it sends the row as it is.
    static func changes(
        after cursor: Int64, skipping skipped: [ClosedRange<Int64>] = [], limit: Int,
        on connection: some DatabaseConnection
    ) throws -> [PageRow] {
        let marker = connection.dialect.parameter
        let skips = skipped.map { _ in " AND \"cursor\" NOT BETWEEN \(marker) AND \(marker)" }.joined()
        let statement = try connection.statement(
            "SELECT \"cursor\", \"change\" FROM \(quoted(rows)) WHERE \"cursor\" > \(marker)\(skips) ORDER BY \"cursor\" LIMIT \(marker)"
        )
        defer { statement.reset() }
        statement.bind(cursor, 1)
        var next: Int32 = 2
        for range in skipped {
            statement.bind(range.lowerBound, next)
            statement.bind(range.upperBound, next + 1)
            next += 2
        }
        statement.bind(Int64(limit), next)
        var result: [PageRow] = []
        while try statement.step() {
            let text = statement.string(1)
            result.append((statement.int64(0), try decode(text), text))
        }
        return result
    }

    // MARK: - Own rows

    /// The most ranges of own rows a pull names, and a server reads: a device that holds more
    /// sends the first ones and is sent the rest of its rows back, which is safe, only larger.
    static let maximumOwnRanges = 32

    /// `ranges` sorted, overlapping and adjacent ones joined, without those that end at or before
    /// `cursor` (no pull after it reaches them), at most ``maximumOwnRanges``.
    static func normalized(_ ranges: [ClosedRange<Int64>], after cursor: Int64) -> [ClosedRange<Int64>] {
        var result: [ClosedRange<Int64>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) where range.upperBound > cursor {
            // The second test runs only when the first fails, so `last.upperBound` is below the maximum.
            if let last = result.last, range.lowerBound <= last.upperBound || range.lowerBound == last.upperBound + 1 {
                result[result.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
            } else {
                result.append(range)
            }
        }
        return Array(result.prefix(maximumOwnRanges))
    }

    /// On a device: the cursor ranges of its own pushed rows that its store holds (see
    /// ``PushResponse/ownRows``), kept with the acknowledgment of the push that took them.
    static func ownRows(on connection: some DatabaseConnection) throws -> [ClosedRange<Int64>] {
        try decoded([[Int64]].self, "ownRows", on: connection)?.compactMap { pair in
            pair.count == 2 && pair[0] <= pair[1] ? pair[0]...pair[1] : nil
        } ?? []
    }

    /// Keeps `ranges` as the device's own rows, without those a pull from `cursor` no longer reaches.
    static func keepOwnRows(_ ranges: [ClosedRange<Int64>], after cursor: Int64, on connection: some DatabaseConnection)
        throws
    {
        let kept = normalized(ranges, after: cursor)
        if kept.isEmpty, try value("ownRows", on: connection) == nil { return }
        try setEncoded(kept.map { [$0.lowerBound, $0.upperBound] }, for: "ownRows", on: connection)
    }

    /// The rows with local changes not yet acknowledged.
    static func pending(on connection: some DatabaseConnection) throws -> [RowChange] {
        let statement = try connection.statement(
            "SELECT \"change\" FROM \(quoted(rows)) WHERE \"pending\" IS NOT NULL ORDER BY \"entity\", \"id\"")
        defer { statement.reset() }
        var result: [RowChange] = []
        while try statement.step() {
            result.append(try decode(statement.string(0)))
        }
        return result
    }

    /// Marks every row the device knows as pending again and forgets its pull cursor and epoch, for
    /// a server that lost what it had acknowledged (restored from an earlier copy): the next push sends
    /// everything again (merges are idempotent, so what the server still has is unchanged) and
    /// the next pull starts from the beginning.
    static func resend(on connection: some DatabaseConnection) throws {
        let marker = connection.dialect.parameter
        let stamped = try value("stamped", on: connection).flatMap { Int64($0) } ?? 0
        if try value("stamped", on: connection) == nil { try setValue("0", for: "stamped", on: connection) }
        let statement = try connection.statement("UPDATE \(quoted(rows)) SET \"pending\" = \(marker)")
        defer { statement.reset() }
        statement.bind(stamped, 1)
        try statement.run()
        let forget = try connection.statement(
            "DELETE FROM \(quoted(state)) WHERE \"key\" IN ('cursor', 'acknowledged', 'epoch', 'horizon', 'ownRows')")
        defer { forget.reset() }
        try forget.run()
    }

    /// Clears the pending mark of every row whose local changes were all made by `token`, and the
    /// ``madeHere`` mark of every row the acknowledged push sent (`pushed`): the server has them.
    static func acknowledge(
        through token: Int64, pushed: [RowKey], on connection: some DatabaseConnection
    ) throws {
        let marker = connection.dialect.parameter
        let statement = try connection.statement(
            "UPDATE \(quoted(rows)) SET \"pending\" = NULL WHERE \"pending\" <= \(marker)")
        defer { statement.reset() }
        statement.bind(token, 1)
        try statement.run()
        try markKnown(pushed, on: connection)
    }

    /// Clears the ``madeHere`` mark of `keys`: the server acknowledged or sent each of them, so
    /// the device names them in its pulls' `held` from now on (and is told when they leave its
    /// scope), whether or not what the server sent changed anything.
    static func markKnown(_ keys: [RowKey], on connection: some DatabaseConnection) throws {
        let marker = connection.dialect.parameter
        let known = try connection.statement(
            "UPDATE \(quoted(rows)) SET \"cursor\" = NULL WHERE \"cursor\" = \(madeHere) AND \"entity\" = \(marker) "
                + "AND \"id\" = \(marker)")
        defer { known.reset() }
        for key in keys {
            known.bind(key.entity, 1)
            known.bind(key.id.uuidString, 2)
            try known.run()
            known.reset()
        }
    }

    /// Deletes the rows that are tombstones whose cursor is at or before `cursor`; returns how many went.
    static func purgeTombstones(through cursor: Int64, on connection: some DatabaseConnection) throws -> Int {
        let marker = connection.dialect.parameter
        let statement = try connection.statement(
            "SELECT \"change\" FROM \(quoted(rows)) WHERE \"cursor\" <= \(marker) AND \"pending\" IS NULL")
        defer { statement.reset() }
        statement.bind(cursor, 1)
        var dead: [RowKey] = []
        while try statement.step() {
            let change = try decode(statement.string(0))
            if !change.isAlive, change.deleted != nil { dead.append(change.key) }
        }
        statement.reset()
        let delete = try connection.statement(
            "DELETE FROM \(quoted(rows)) WHERE \"entity\" = \(marker) AND \"id\" = \(marker)")
        defer { delete.reset() }
        for key in dead {
            delete.reset()
            delete.bind(key.entity, 1)
            delete.bind(key.id.uuidString, 2)
            try delete.run()
        }
        return dead.count
    }

    /// The rows that hold a present link to `target` through `relationship`. The target's ID is
    /// searched in the stored JSON first (a `LIKE` both engines run), then each candidate is read.
    static func rowsLinking(
        to target: UUID, through relationship: String, on connection: some DatabaseConnection
    ) throws -> [RowChange] {
        let marker = connection.dialect.parameter
        let statement = try connection.statement(
            "SELECT \"change\" FROM \(quoted(rows)) WHERE \"change\" LIKE \(marker)")
        defer { statement.reset() }
        statement.bind("%\(target.uuidString)%", 1)
        var result: [RowChange] = []
        let link = LinkKey(relationship: relationship, target: target)
        while try statement.step() {
            let change = try decode(statement.string(0))
            if change.isAlive, change.links[link]?.isPresent == true { result.append(change) }
        }
        return result
    }

    /// Every row whose stored change mentions `id` anywhere (a value or a link's target): the
    /// candidates that may refer to row `id`, each read back for the caller to check.
    static func rows(mentioning id: UUID, on connection: some DatabaseConnection) throws -> [RowChange] {
        let marker = connection.dialect.parameter
        let statement = try connection.statement(
            "SELECT \"change\" FROM \(quoted(rows)) WHERE \"change\" LIKE \(marker) ORDER BY \"entity\", \"id\"")
        defer { statement.reset() }
        statement.bind("%\(id.uuidString)%", 1)
        var result: [RowChange] = []
        while try statement.step() {
            result.append(try decode(statement.string(0)))
        }
        return result
    }

    // MARK: - Links

    /// The pairs of `joinTable` last seen, where `column` (`source` or `destination`) is `id`.
    static func links(
        in joinTable: String, where column: String, is id: UUID, on connection: some DatabaseConnection
    ) throws -> Set<[UUID]> {
        let marker = connection.dialect.parameter
        let statement = try connection.statement(
            "SELECT \"source\", \"destination\" FROM \(quoted(links)) WHERE \"joinTable\" = \(marker) AND \(quoted(column)) = \(marker)"
        )
        defer { statement.reset() }
        statement.bind(joinTable, 1)
        statement.bind(id.uuidString, 2)
        var result: Set<[UUID]> = []
        while try statement.step() {
            if let source = UUID(uuidString: statement.string(0)),
                let destination = UUID(uuidString: statement.string(1))
            {
                result.insert([source, destination])
            }
        }
        return result
    }

    /// Records that the pair is now present, or absent, in `joinTable`.
    static func setLink(
        _ pair: [UUID], present: Bool, in joinTable: String, on connection: some DatabaseConnection
    ) throws {
        let marker = connection.dialect.parameter
        let sql =
            present
            ? connection.dialect.insertIgnoringConflicts(
                into: quoted(links), columns: ["\"joinTable\"", "\"source\"", "\"destination\""],
                "VALUES (\(marker), \(marker), \(marker))")
            : "DELETE FROM \(quoted(links)) WHERE \"joinTable\" = \(marker) AND \"source\" = \(marker) AND \"destination\" = \(marker)"
        let statement = try connection.statement(sql)
        defer { statement.reset() }
        statement.bind(joinTable, 1)
        statement.bind(pair[0].uuidString, 2)
        statement.bind(pair[1].uuidString, 3)
        try statement.run()
    }

    // MARK: - Migration

    /// Carries what sync knows of every row through one migration stage, in the stage's
    /// transaction, so the bookkeeping speaks the destination version as the tables do: a renamed
    /// entity, attribute or relationship takes its new name (read from the destination's
    /// `renamedFrom`), and what the stage removed (an entity, an attribute, a relationship, a
    /// composite's field) is forgotten; the history's changes sync has not stamped yet are renamed
    /// alike. Pending changes stay pending and cursors stay as they are,
    /// so a device pushes its offline writes under the new names and a migrated server serves the
    /// rows it holds to devices of the new version. A store without sync tables is left alone.
    ///
    /// The links last seen in each join table follow the table by `mapping`'s identity of it (a
    /// renamed entity or relationship renames its join table): kept under its new name, each pair
    /// turned round when the other side owns the table now, so the next local edit of a row's links
    /// is told apart from the links it already had. Where the other side owns the table now, the
    /// links' stamps move to the rows of that side, where the destination version keeps them.
    static func migrate(
        from source: SchemaLayout, to destination: SchemaLayout, mapping: TableMapping,
        on connection: some DatabaseConnection
    ) throws {
        let exists = try connection.prepare(connection.dialect.tableExists)
        exists.bind(rows, 1)
        guard try exists.step() else { return }
        try carryLinks(following: mapping.joinTableSource, on: connection)
        let renames = RenameMap(from: source.schema, to: destination.schema)
        // Local writes not yet stamped are read from the history after the migration.
        try HistorySQL.rename(
            after: try value("stamped", on: connection).flatMap { Int64($0) }, on: connection,
            entity: { renames.entities[$0] }, attribute: { renames.property($1, of: $0) })
        let read = try connection.statement(
            "SELECT \"entity\", \"id\", \"cursor\", \"pending\", \"change\" FROM \(quoted(rows)) ORDER BY \"entity\", \"id\""
        )
        var kept: [(change: RowChange, cursor: Int64?, pending: Int64?)] = []
        var changed = false
        while try read.step() {
            let old = try decode(read.string(4))
            let cursor = read.isNull(2) ? nil : read.int64(2)
            let pending = read.isNull(3) ? nil : read.int64(3)
            let new = renames.carry(old, into: destination)
            if new != old { changed = true }
            if let new { kept.append((new, cursor, pending)) }
        }
        read.reset()
        if try turnLinksRound(&kept, in: destination, on: connection) { changed = true }
        guard changed else { return }
        try connection.execute("DELETE FROM \(quoted(rows))")
        for row in kept { try write(row.change, cursor: row.cursor, pending: row.pending, on: connection) }
    }

    /// Keeps the record of each join table's links under the name the stage gives the table
    /// (`origins`: new name → old name, and whether its columns trade places), and forgets the
    /// records of the tables the stage does not continue.
    private static func carryLinks(
        following origins: [String: (table: String, tradesSides: Bool)], on connection: some DatabaseConnection
    ) throws {
        var successors: [String: (table: String, tradesSides: Bool)] = [:]
        for (table, origin) in origins { successors[origin.table] = (table, origin.tradesSides) }
        let read = try connection.statement(
            "SELECT \"joinTable\", \"source\", \"destination\" FROM \(quoted(links)) "
                + "ORDER BY \"joinTable\", \"source\", \"destination\"")
        var kept: [(table: String, pair: [UUID])] = []
        var changed = false
        while try read.step() {
            let table = read.string(0)
            guard let successor = successors[table], let first = UUID(uuidString: read.string(1)),
                let second = UUID(uuidString: read.string(2))
            else {
                changed = true
                continue
            }
            if successor.table != table || successor.tradesSides { changed = true }
            kept.append((successor.table, successor.tradesSides ? [second, first] : [first, second]))
        }
        read.reset()
        guard changed else { return }
        try connection.execute("DELETE FROM \(quoted(links))")
        for link in kept { try setLink(link.pair, present: true, in: link.table, on: connection) }
    }

    /// Moves each link kept on a row whose relationship's join table the other side owns now to
    /// the row at its other end, as a link of the inverse relationship (the one every node spells
    /// a link by, see `WriteContext.syncLinkTable`). The row taking the link takes the pending mark
    /// of the row it came from (a device pushes it), and on the server a new cursor, so a device
    /// that had not pulled the link yet is served it. A link whose other row sync has no record of
    /// is dropped: the server checks every link's target, so it keeps it, and serves it again.
    /// Returns whether any link moved.
    private static func turnLinksRound(
        _ kept: inout [(change: RowChange, cursor: Int64?, pending: Int64?)], in layout: SchemaLayout,
        on connection: some DatabaseConnection
    ) throws -> Bool {
        var moving: [(target: UUID, link: LinkKey, stamps: LinkStamps, cursor: Int64?, pending: Int64?)] = []
        for index in kept.indices {
            let change = kept[index].change
            guard let entity = layout.entities[change.key.entity] else { continue }
            var stay: [LinkKey: LinkStamps] = [:]
            for (link, stamps) in change.links {
                guard let description = entity.relationships.first(where: { $0.name == link.relationship }),
                    case .joinTable(_, let column, _, _)? = try? layout.storage(of: description, from: entity),
                    column != "source", let inverse = description.inverse
                else {
                    stay[link] = stamps
                    continue
                }
                moving.append(
                    (
                        link.target, LinkKey(relationship: inverse, target: change.key.id), stamps,
                        kept[index].cursor, kept[index].pending
                    ))
            }
            if stay.count != change.links.count {
                kept[index].change = RowChange(
                    key: change.key, inserted: change.inserted, deleted: change.deleted,
                    attributes: change.attributes, links: stay)
            }
        }
        guard !moving.isEmpty else { return false }
        var byID: [UUID: [Int]] = [:]
        for (index, row) in kept.enumerated() { byID[row.change.key.id, default: []].append(index) }
        var cursor = Int64(try value("cursor", on: connection) ?? "0") ?? 0
        let start = cursor
        var renewed: Set<Int> = []
        for move in moving.sorted(by: { ($0.target.uuidString, $0.link) < ($1.target.uuidString, $1.link) }) {
            guard
                let index = byID[move.target]?.first(where: { candidate in
                    layout.entities[kept[candidate].change.key.entity]?.relationships.contains {
                        $0.name == move.link.relationship
                    } == true
                })
            else { continue }
            let change = kept[index].change
            var links = change.links
            links[move.link] = links[move.link].map { $0.merged(with: move.stamps) } ?? move.stamps
            kept[index].change = RowChange(
                key: change.key, inserted: change.inserted, deleted: change.deleted, attributes: change.attributes,
                links: links)
            if let pending = move.pending { kept[index].pending = max(kept[index].pending ?? pending, pending) }
            if move.cursor != nil || kept[index].cursor != nil, !renewed.contains(index) {
                cursor += 1
                kept[index].cursor = cursor
                renewed.insert(index)
            }
        }
        if cursor != start { try setValue(String(cursor), for: "cursor", on: connection) }
        return true
    }

    /// The names one migration stage gives the entities and properties it keeps, old to new.
    private struct RenameMap {
        /// Each kept entity's destination name, by its source name.
        var entities: [String: String] = [:]
        /// Each kept property's destination name, by its entity's destination name and its source name.
        var properties: [String: [String: String]] = [:]

        init(from source: SchemaDescription, to destination: SchemaDescription) {
            for entity in destination.entities {
                let oldName = entity.renamedFrom ?? entity.name
                guard let old = source.entity(named: oldName) else { continue }
                entities[oldName] = entity.name
                var names: [String: String] = [:]
                for attribute in entity.attributes {
                    let was = attribute.renamedFrom ?? attribute.name
                    if old.attributes.contains(where: { $0.name == was }) { names[was] = attribute.name }
                }
                for relationship in entity.relationships {
                    let was = relationship.renamedFrom ?? relationship.name
                    if old.relationships.contains(where: { $0.name == was }) { names[was] = relationship.name }
                }
                properties[entity.name] = names
            }
        }

        /// The new name of property `key` (a composite's field as `attribute.field`) of the entity
        /// now called `entity`, or `nil` when the stage removed it.
        func property(_ key: String, of entity: String) -> String? {
            let parts = key.split(separator: ".", maxSplits: 1).map(String.init)
            guard let first = parts.first, let property = properties[entity]?[first] else { return nil }
            return parts.count == 2 ? "\(property).\(parts[1])" : property
        }

        /// `change` under the destination's names, without what the destination no longer has;
        /// `nil` when its entity was removed.
        func carry(_ change: RowChange, into layout: SchemaLayout) -> RowChange? {
            guard let name = entities[change.key.entity], let entity = layout.entities[name] else { return nil }
            func renamed(_ key: String) -> String? { property(key, of: name) }
            var attributes: [String: StampedValue] = [:]
            for (key, value) in change.attributes {
                guard let new = renamed(key), entity.column(forKey: new) != nil else { continue }
                attributes[new] = value
            }
            var links: [LinkKey: LinkStamps] = [:]
            for (link, stamps) in change.links {
                guard let new = renamed(link.relationship), entity.relationships.contains(where: { $0.name == new })
                else { continue }
                links[LinkKey(relationship: new, target: link.target)] = stamps
            }
            return RowChange(
                key: RowKey(entity: name, id: change.key.id), inserted: change.inserted, deleted: change.deleted,
                attributes: attributes, links: links)
        }
    }

    // MARK: - Coding

    /// A record as stored: the JSON `RowChange`'s `Codable` conformance writes, written by hand.
    private static func encode(_ change: RowChange) throws -> String {
        String(decoding: try change.json(), as: UTF8.self)
    }

    /// A stored record, read by hand.
    private static func decode(_ text: String) throws -> RowChange {
        try RowChange(json: text, field: "(a stored sync record)")
    }
}
