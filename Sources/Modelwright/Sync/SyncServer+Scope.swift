import Foundation

// Scopes over time. A row's place in a user's scope follows what the server knows of it, so it
// changes when the row changes (shared with someone, say): the row then takes a cursor and is in
// the next pull's page. What a pull cannot read from the page is what the device was shown before:
// whether it holds the row, which of its to-one links were hidden. The server keeps that per
// device, in its state table, and a pull compares: a row that left the scope is dropped on the
// device, and the rows whose to-one links point at a row that entered or left it are sent again
// (un-hiding or hiding the link), whatever their own cursor.
extension SyncServer {
    /// What a device was last told of one row: whether it holds the row, which of its to-one links
    /// it holds as hidden, and the cursor of the pull that told it. A device applies a pull's
    /// answer or not at all, and its next pull's cursor says which: an entry whose `at` is after
    /// that cursor belongs to an answer the device may have lost, so it is not trusted and the
    /// row is sent (or dropped) again.
    struct ShownRow: Codable, Equatable {
        var held: Bool
        var hidden: [String]
        var at: Int64
    }

    /// The state key of what `device` was told of row `key` (not `device.` nor `owner.`, which
    /// the purge and the device binding read).
    private static func shownKey(_ device: SyncNodeID, _ key: RowKey) -> String {
        "\(shownPrefix(device))\(key.entity).\(key.id.uuidString)"
    }

    /// The start of every state key of what `device` was told, for forgetting them all at once.
    static func shownPrefix(_ device: SyncNodeID) -> String {
        "shown.\(device.uuid.uuidString)."
    }

    /// Records that `device` holds the rows it pushed, with none of their links hidden: it wrote
    /// them itself, so a later pull that finds them outside the scope must drop them.
    static func recordPushed(_ rows: [RowChange], by device: SyncNodeID, on connection: some DatabaseConnection)
        throws
    {
        try recordHeld(rows.filter(\.isAlive).map(\.key), by: device, on: connection)
    }

    /// Records that `device` holds `keys` (rows it pushed), unless the server already keeps what
    /// it told the device of them: a pull that finds one outside the scope drops it. These are the
    /// only rows without a shown record that a pull drops, so a device is never told of a row it
    /// did not push, name or was not shown.
    private static func recordHeld(_ keys: [RowKey], by device: SyncNodeID, on connection: some DatabaseConnection)
        throws
    {
        // One record for every row, encoded once: a push of thousands of rows writes it thousands of times.
        let held = ShownRow(held: true, hidden: [], at: 0).json
        for key in keys {
            let stateKey = shownKey(device, key)
            if try SyncBookkeeping.value(stateKey, on: connection) == nil {
                try SyncBookkeeping.setValue(held, for: stateKey, on: connection)
            }
        }
    }

    /// One pull's answer to one device under scopes: the rows it is shown, the links hidden from
    /// it, the rows it must drop; built row by row, the device's record kept as it goes.
    struct ScopedPull {
        let device: SyncNodeID
        let user: String
        let scopes: [String: Scope]
        /// The cursor the device pulled from: entries told at or before it were applied.
        let since: Int64
        /// The cursor the answer ends at.
        let end: Int64
        private var rows: [RowKey: RowChange] = [:]
        private(set) var hidden: [RowKey: Set<String>] = [:]
        private(set) var dropped: Set<RowKey> = []
        /// Rows whose holding changed (or may have), whose referrers must be looked at again.
        private var moved: [RowKey] = []
        /// Rows whose referrers were looked at again in this answer.
        private var followed: Set<RowKey> = []

        init(device: SyncNodeID, user: String, scopes: [String: Scope], since: Int64, end: Int64) {
            self.device = device
            self.user = user
            self.scopes = scopes
            self.since = since
            self.end = end
        }

        /// The rows served, as the device is shown them.
        var changes: ChangeSet { ChangeSet(rows.values) }

        /// The hidden links, as the message carries them.
        var hiddenLinks: [HiddenLinks] {
            hidden.map { HiddenLinks(row: $0.key, attributes: $0.value.sorted()) }
        }

        /// Serves `row` as the user may see it now: shown (its hidden links named), or dropped when
        /// the device was shown it before and it is now outside the scope. With `onlyIfChanged`,
        /// a row the device holds as it would be shown now is left out (a referrer looked at again).
        mutating func offer(_ row: RowChange, onlyIfChanged: Bool = false, context: WriteContext) throws {
            let connection = context.connection
            let stateKey = SyncServer.shownKey(device, row.key)
            let before = try SyncBookkeeping.value(stateKey, on: connection).map(ShownRow.init(json:))
            let trusted = before.flatMap { $0.at <= since ? $0 : nil }
            let visible = scopes[row.key.entity].map { $0(user, row) } ?? false
            let shown = visible ? try SyncServer.shown(row, user: user, scopes: scopes, context: context) : nil
            guard let shown else {
                // Out of sight now: a device that held it (or may have: told in an answer it may
                // have lost) drops it. A row the server has no record of for the device (forgotten
                // with the device, or never shown) is not named: the device that holds one names
                // it when it pulls from the beginning (PullRequest.held, `reconcile(held:)`).
                guard let before, before.held || trusted == nil else { return }
                dropped.insert(row.key)
                rows[row.key] = nil
                hidden[row.key] = nil
                moved.append(row.key)
                let now = ShownRow(held: false, hidden: [], at: end)
                if before != now { try SyncBookkeeping.setValue(now.json, for: stateKey, on: connection) }
                return
            }
            // A tombstone's hidden last values are no link the device holds.
            let hiddenNow = row.isAlive ? Set(row.attributes.keys).subtracting(shown.attributes.keys) : []
            let now = ShownRow(held: row.isAlive, hidden: hiddenNow.sorted(), at: end)
            if onlyIfChanged, let trusted, trusted.held == now.held, trusted.hidden == now.hidden { return }
            rows[row.key] = rows[row.key].map { $0.merged(with: shown) } ?? shown
            dropped.remove(row.key)
            if !hiddenNow.isEmpty { hidden[row.key, default: []].formUnion(hiddenNow) }
            if trusted?.held != now.held { moved.append(row.key) }
            if trusted == nil || trusted?.held != now.held || trusted?.hidden != now.hidden {
                try SyncBookkeeping.setValue(now.json, for: stateKey, on: connection)
            }
        }

        /// Answers a device that names the rows it holds (`PullRequest.held`): each one the user
        /// may see is sent as it is shown now, and every other the server has is dropped, so the
        /// server's record of the device is what it has just told it, links hidden included (a
        /// record guessed without its hidden links kept a link from being sent when its target
        /// came into sight). A named ID the server does not have under that entity is left alone:
        /// it may be a row the device made and has not pushed yet.
        mutating func reconcile(held keys: [RowKey], context: WriteContext) throws {
            for key in keys {
                guard let row = try SyncBookkeeping.change(of: key, on: context.connection) else { continue }
                if scopes[key.entity].map({ $0(user, row) }) ?? false {
                    try offer(row, context: context)
                    if rows[key] != nil || dropped.contains(key) { continue }
                }
                dropped.insert(key)
                rows[key] = nil
                hidden[key] = nil
                try SyncBookkeeping.setValue(
                    ShownRow(held: false, hidden: [], at: end).json, for: SyncServer.shownKey(device, key),
                    on: context.connection)
            }
        }

        /// Looks again at every row that links, through a to-one, to a row whose holding changed in
        /// this answer (and at theirs in turn): a link to a row that entered the scope is shown, one
        /// to a row that left it hidden, and a row withheld for a required link to a row out of
        /// sight is sent once its target is in sight.
        mutating func followReferrers(context: WriteContext) throws {
            while let key = moved.popLast() {
                guard followed.insert(key).inserted else { continue }
                for referrer in try context.syncReferrers(of: key) {
                    guard let record = try SyncBookkeeping.change(of: referrer, on: context.connection) else {
                        continue
                    }
                    try offer(record, onlyIfChanged: true, context: context)
                }
            }
        }
    }
}

// MARK: - Coding

extension SyncServer.ShownRow {
    /// The record as JSON, written by hand: a pull writes one for most rows it serves under
    /// scopes, and `JSONEncoder` cost more than the row's own coding.
    var json: String {
        var writer = SyncJSONWriter(reservingCapacity: 48)
        writer.ascii("{\"at\":")
        writer.integer(at)
        writer.ascii(",\"held\":")
        writer.bool(held)
        writer.ascii(",\"hidden\":[")
        for (index, name) in hidden.enumerated() {
            if index > 0 { writer.byte(UInt8(ascii: ",")) }
            writer.string(name)
        }
        writer.ascii("]}")
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// Reads a record written by ``json`` or by `JSONEncoder` (its keys in any order).
    init(json text: String) throws {
        var reader = SyncJSONReader(text, field: "(a device's record of a row it was shown)")
        var at: Int64?
        var held: Bool?
        var hidden: [String]?
        try reader.beginObject()
        var first = true
        while let key = try reader.nextKey(first: first) {
            first = false
            switch key {
            case "at": at = try reader.integer()
            case "held": held = try reader.bool()
            case "hidden":
                var names: [String] = []
                try reader.beginArray()
                while try reader.hasElement(first: names.isEmpty) { names.append(try reader.string()) }
                hidden = names
            default: _ = try reader.rawValue()
            }
        }
        try reader.expectEnd()
        guard let at, let held, let hidden else { throw reader.malformed("a shown row is {at, held, hidden}") }
        self.init(held: held, hidden: hidden, at: at)
    }
}
