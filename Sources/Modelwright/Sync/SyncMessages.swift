import Foundation

/// The sync protocol's version, written into every message: a side refuses a message of a
/// version it does not speak with ``SyncError/unsupportedProtocolVersion(found:supported:)``
/// before it reads anything else of it.
public enum SyncProtocol {
    /// The version this runtime writes.
    public static let version = 1
    /// The versions this runtime reads.
    public static let supportedVersions = 1...1

    /// Reads the `protocolVersion` of a message and throws unless it is supported: a message
    /// without one, or with one that is not an integer, is not a sync message of any version.
    static func checkVersion<Key: CodingKey>(in container: KeyedDecodingContainer<Key>, key: Key) throws -> Int {
        try checkVersion(field: fieldPath(container.codingPath + [key])) {
            try container.decodeIfPresent(Int.self, forKey: key)
        }
    }

    /// The version `read` reads (`nil` when the message has none), checked: the one rule for a
    /// message read with `Codable` and one read by hand.
    static func checkVersion(field: String, _ read: () throws -> Int?) throws -> Int {
        let found: Int?
        do {
            found = try read()
        } catch {
            throw SyncError.malformedMessage(
                field: field, reason: "the protocol version is not an integer; write `\"protocolVersion\": \(version)`")
        }
        guard let found else {
            throw SyncError.malformedMessage(
                field: field,
                reason: "a sync message starts with its protocol version; write `\"protocolVersion\": \(version)`")
        }
        guard supportedVersions.contains(found) else {
            throw SyncError.unsupportedProtocolVersion(found: found, supported: supportedVersions)
        }
        return found
    }

    /// Whether `name` can name an entity, attribute or relationship in a message: not empty, and
    /// printable ASCII only, as schema names are. Refusing the rest means two names are equal
    /// exactly when their bytes are (no NFC and NFD spelling of one name), so merging never
    /// depends on which spelling arrived first.
    static func isValidName(_ name: String) -> Bool {
        !name.utf8.isEmpty && name.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }

    /// `name`, or ``SyncError/malformedMessage(field:reason:)`` when it is not a valid name.
    static func checkedName(_ name: String, at path: [any CodingKey], _ kind: String) throws -> String {
        try checkedName(name, field: fieldPath(path), kind)
    }

    /// `name`, or ``SyncError/malformedMessage(field:reason:)`` naming `field` when it is not a valid name.
    static func checkedName(_ name: String, field: String, _ kind: String) throws -> String {
        guard isValidName(name) else {
            throw SyncError.malformedMessage(
                field: field,
                reason:
                    "the \(kind) name \(name.debugDescription) is not a schema name (printable ASCII, not empty); send the name as the schema spells it"
            )
        }
        return name
    }

    /// The order names are written in: by their bytes.
    static func namePrecedes(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }

    /// A coding path as `changes[2].limit`, for errors.
    static func fieldPath(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return text.isEmpty ? "(the message)" : text
    }
}

/// A position in the server's sequence of applied changes: opaque, increasing, and kept by each
/// device as the point its next pull starts from.
public struct SyncCursor: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The position.
    public let position: Int64

    /// The cursor at `position`.
    public init(_ position: Int64) {
        self.position = position
    }

    /// Decodes the cursor from one number.
    public init(from decoder: any Decoder) throws {
        position = try decoder.singleValueContainer().decode(Int64.self)
    }

    /// Encodes the cursor as one number.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(position)
    }

    /// Whether `lhs` is an earlier position.
    public static func < (lhs: SyncCursor, rhs: SyncCursor) -> Bool { lhs.position < rhs.position }

    /// `SyncCursor(n)`, for logs.
    public var description: String { "SyncCursor(\(position))" }
}

/// The lineage of the server's cursors: a random ID the server takes each time it starts over its
/// store (first at creation, again when it starts over a store restored from a backup, or over
/// sync tables that were reset), kept in its bookkeeping with the cursor it started at.
///
/// A device keeps the epoch of its last pull beside its cursor and sends both. A cursor is only
/// meaningful in the lineage that gave it out: a server restored from a copy gives out again the
/// cursors after the copy, to other rows. The server therefore serves a pull only when the
/// device's epoch is in its own lineage and the cursor is at or before the point where that epoch
/// ended in it; otherwise it refuses with ``SyncError/epochChanged(since:device:server:)``, and the
/// engine sends everything it knows again and pulls from the beginning. An ordinary restart ends
/// one epoch where the next begins, so a device's cursor stays valid across it.
public struct SyncEpoch: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The epoch's random ID.
    public let id: UUID

    /// A new epoch with a random ID.
    public init() {
        id = UUID()
    }

    /// The epoch `id`.
    public init(_ id: UUID) {
        self.id = id
    }

    /// Decodes the epoch from its ID.
    public init(from decoder: any Decoder) throws {
        id = try decoder.singleValueContainer().decode(UUID.self)
    }

    /// Encodes the epoch as its ID.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(id)
    }

    /// `SyncEpoch(<id>)`, for logs.
    public var description: String { "SyncEpoch(\(id.uuidString))" }
}

/// Which model version a device runs: the server translates its changes through the migration
/// plan, or refuses them, by it.
public struct SyncSchemaVersion: Sendable, Hashable, Codable {
    /// The model's name.
    public let model: String
    /// The version number.
    public let version: Int
    /// The version's checksum (``SchemaDescription``'s), which tells an edited version from the released one.
    public let checksum: String

    /// Version `version` of `model`, with its checksum.
    public init(model: String, version: Int, checksum: String) {
        self.model = model
        self.version = version
        self.checksum = checksum
    }
}

/// What the server did where changes from two devices broke a uniqueness constraint, sent back
/// so each device applies the same outcome.
public enum ConstraintResolution: Sendable, Hashable, Codable {
    /// The rows were merged by the constraint (`@sync(unique: merge)`): `merged` was folded into
    /// `survivor` (the row the server already held), its values merged by timestamp, its links and
    /// the references to it moved to `survivor`, and then deleted. The device learns the outcome
    /// by its next pull (the tombstone, the survivor and the moved references), like any change.
    case merged(entity: String, constraint: [String], merged: UUID, survivor: UUID)
    /// The later row was refused (`@sync(unique: reject)`) and deleted: the first to reach the
    /// server keeps the value.
    case rejected(entity: String, constraint: [String], row: UUID, kept: UUID)
    /// The pushed row was refused and deleted, as with `reject`, because the row that holds its
    /// values is outside the pushing user's scope (see ``SyncServer/Scope``), whatever the
    /// entity's rule: a resolution never merges into, changes or names a row the user may not
    /// see, so the other row is not named. The rest of the push applies.
    case refused(entity: String, constraint: [String], row: UUID)
}

/// A device's push: its local changes since the last token the server acknowledged.
public struct PushRequest: Sendable, Hashable, Codable {
    /// The protocol version the message is written in.
    public let protocolVersion: Int
    /// The device.
    public let device: SyncNodeID
    /// The model version the device runs.
    public let schema: SyncSchemaVersion
    /// The last history token the server acknowledged: the changes start after it (`nil`: from the start).
    public let after: HistoryToken?
    /// The history token of the newest local transaction the changes include: what the server acknowledges.
    public let through: HistoryToken
    /// The changes.
    public let changes: ChangeSet
    /// The server epoch of the device's last answer from the server (`nil`: it has had none).
    public let epoch: SyncEpoch?
    /// The furthest cursor of `epoch` the device's state depends on: its last pull's, or the
    /// cursor its acknowledged pushes reached, whichever is later. The server refuses the push
    /// with ``SyncError/epochChanged(since:device:server:)`` when its lineage does not continue
    /// `epoch` through it (it lost what it acknowledged), and applies nothing.
    public let horizon: SyncCursor?

    /// A push of `changes`, made after `after` through `through`, by a device whose state depends
    /// on the server's sequence up to `horizon` of `epoch`.
    public init(
        device: SyncNodeID, schema: SyncSchemaVersion, after: HistoryToken?, through: HistoryToken,
        changes: ChangeSet, epoch: SyncEpoch? = nil, horizon: SyncCursor? = nil
    ) {
        protocolVersion = SyncProtocol.version
        self.device = device
        self.schema = schema
        self.after = after
        self.through = through
        self.changes = changes
        self.epoch = epoch
        self.horizon = horizon
    }

    private enum CodingKeys: String, CodingKey {
        case protocolVersion, device, schema, after, through, changes, epoch, horizon
    }

    /// Decodes a push, refusing an unsupported protocol version first.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        protocolVersion = try SyncProtocol.checkVersion(in: container, key: .protocolVersion)
        device = try container.decode(SyncNodeID.self, forKey: .device)
        schema = try container.decode(SyncSchemaVersion.self, forKey: .schema)
        after = try container.decodeIfPresent(HistoryToken.self, forKey: .after)
        through = try container.decode(HistoryToken.self, forKey: .through)
        changes = try container.decode(ChangeSet.self, forKey: .changes)
        epoch = try container.decodeIfPresent(SyncEpoch.self, forKey: .epoch)
        horizon = try container.decodeIfPresent(SyncCursor.self, forKey: .horizon)
    }
}

/// The server's answer to a push: applied as a whole, or refused as a whole.
public struct PushResponse: Sendable, Hashable, Codable {
    /// The protocol version the message is written in.
    public let protocolVersion: Int
    /// The push's `through` token once applied: the device's next push starts after it.
    /// `nil` when the push was refused.
    public let acknowledged: HistoryToken?
    /// The server's cursor after applying the push.
    public let cursor: SyncCursor
    /// The uniqueness conflicts the push caused and how the server resolved them.
    public let resolutions: [ConstraintResolution]
    /// Why the push was refused; nothing of it was applied.
    public let refusal: SyncError?
    /// The server's current epoch, which `cursor` belongs to (`nil` from a server without epochs).
    public let epoch: SyncEpoch?
    /// The cursors the push's rows took where the server now holds each row exactly as the device
    /// sent it, in increasing ranges: the device holds those rows, so it names the ranges in its
    /// pulls (``PullRequest/ownRows``) and is not sent them back. A row changed again later takes
    /// a new cursor, outside every range. Empty from a server that does not tell.
    public let ownRows: [ClosedRange<SyncCursor>]

    /// A response.
    public init(
        acknowledged: HistoryToken?, cursor: SyncCursor, resolutions: [ConstraintResolution] = [],
        refusal: SyncError? = nil, epoch: SyncEpoch? = nil, ownRows: [ClosedRange<SyncCursor>] = []
    ) {
        protocolVersion = SyncProtocol.version
        self.acknowledged = acknowledged
        self.cursor = cursor
        self.resolutions = resolutions
        self.refusal = refusal
        self.epoch = epoch
        self.ownRows = ownRows
    }

    private enum CodingKeys: String, CodingKey {
        case protocolVersion, acknowledged, cursor, resolutions, refusal, epoch, ownRows
    }

    /// Decodes a response, refusing an unsupported protocol version first.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        protocolVersion = try SyncProtocol.checkVersion(in: container, key: .protocolVersion)
        acknowledged = try container.decodeIfPresent(HistoryToken.self, forKey: .acknowledged)
        cursor = try container.decode(SyncCursor.self, forKey: .cursor)
        resolutions = try container.decode([ConstraintResolution].self, forKey: .resolutions)
        refusal = try container.decodeIfPresent(SyncError.self, forKey: .refusal)
        epoch = try container.decodeIfPresent(SyncEpoch.self, forKey: .epoch)
        ownRows = try container.decodeIfPresent([ClosedRange<SyncCursor>].self, forKey: .ownRows) ?? []
    }
}

/// A device's pull: everyone's changes since the server cursor it last saw.
public struct PullRequest: Sendable, Hashable, Codable {
    /// The protocol version the message is written in.
    public let protocolVersion: Int
    /// The device.
    public let device: SyncNodeID
    /// The model version the device runs: the server sends changes in its terms.
    public let schema: SyncSchemaVersion
    /// The cursor of the last pull (`nil`: from the start).
    public let since: SyncCursor?
    /// At most how many rows to send; the response says when more remain.
    public let limit: Int
    /// The server epoch `since` and `horizon` were given out in (`nil`: a device that kept none);
    /// see ``SyncEpoch``.
    public let epoch: SyncEpoch?
    /// The furthest cursor of `epoch` the device's state depends on (see ``PushRequest/horizon``).
    public let horizon: SyncCursor?
    /// The ranges of ``PushResponse/ownRows`` the device's store holds (those its store recorded
    /// with the push's acknowledgment) that end after `since`: the server leaves the rows whose
    /// cursor is in one of them out of the pull. A store restored from an older copy holds only
    /// the ranges of the pushes the copy had acknowledged, so the rows it lost come back.
    public let ownRows: [ClosedRange<SyncCursor>]
    /// The rows the device holds, sent with a pull from the beginning (`since` is `nil`) by a
    /// device that holds rows (its cursor expired, say), and with every page of a pull whose cursor
    /// the server refused as given out before it forgot the device: under scopes the server tells
    /// it to drop those of them the user may no longer see. The server never names a row to drop
    /// that the device did not name here or was not shown before. The engine names only rows the
    /// server sent it or acknowledged from it, never one made on the device and not yet pushed:
    /// such a row under an ID the server holds as another user's is refused at its push
    /// (``SyncError/outOfScope(row:)``), not dropped in silence.
    public let held: [RowKey]?

    /// A pull of changes after `since` (a cursor of `epoch`), at most `limit` rows, without the
    /// device's own rows in `ownRows`; `held` names the rows a device pulling from the beginning holds.
    public init(
        device: SyncNodeID, schema: SyncSchemaVersion, since: SyncCursor?, limit: Int, epoch: SyncEpoch? = nil,
        horizon: SyncCursor? = nil, ownRows: [ClosedRange<SyncCursor>] = [], held: [RowKey]? = nil
    ) {
        protocolVersion = SyncProtocol.version
        self.device = device
        self.schema = schema
        self.since = since
        self.limit = limit
        self.epoch = epoch
        self.horizon = horizon
        self.ownRows = ownRows
        self.held = held
    }

    private enum CodingKeys: String, CodingKey {
        case protocolVersion, device, schema, since, limit, epoch, horizon, ownRows, held
    }

    /// Decodes a pull, refusing an unsupported protocol version first, and a negative cursor or
    /// limit with ``SyncError/malformedMessage(field:reason:)``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        protocolVersion = try SyncProtocol.checkVersion(in: container, key: .protocolVersion)
        device = try container.decode(SyncNodeID.self, forKey: .device)
        schema = try container.decode(SyncSchemaVersion.self, forKey: .schema)
        since = try container.decodeIfPresent(SyncCursor.self, forKey: .since)
        limit = try container.decode(Int.self, forKey: .limit)
        epoch = try container.decodeIfPresent(SyncEpoch.self, forKey: .epoch)
        horizon = try container.decodeIfPresent(SyncCursor.self, forKey: .horizon)
        ownRows = try container.decodeIfPresent([ClosedRange<SyncCursor>].self, forKey: .ownRows) ?? []
        held = try container.decodeIfPresent([RowKey].self, forKey: .held)
        if let since, since.position < 0 {
            throw SyncError.malformedMessage(
                field: SyncProtocol.fieldPath(container.codingPath + [CodingKeys.since]),
                reason:
                    "the cursor \(since.position) is negative; send the cursor of the last pull, or none to pull from the start"
            )
        }
        guard limit >= 0 else {
            throw SyncError.malformedMessage(
                field: SyncProtocol.fieldPath(container.codingPath + [CodingKeys.limit]),
                reason: "the row limit \(limit) is negative; send how many rows to receive at most (0 or more)")
        }
    }
}

/// The server's answer to a pull.
public struct PullResponse: Sendable, Hashable, Codable {
    /// The protocol version the message is written in.
    public let protocolVersion: Int
    /// The rows changed after the request's cursor, each with everything the server knows of it.
    public let changes: ChangeSet
    /// The cursor to pull from next.
    public let cursor: SyncCursor
    /// Whether more changes remain after `cursor`.
    public let hasMore: Bool
    /// Uniqueness conflicts resolved since the request's cursor.
    public let resolutions: [ConstraintResolution]
    /// Why the pull was refused (an app too old for the server's model, say).
    public let refusal: SyncError?
    /// The server's current epoch, which `cursor` belongs to: the device sends it with its next
    /// pull (`nil` from a server without epochs).
    public let epoch: SyncEpoch?
    /// The rows that left the user's scope since the device was shown them: the device drops them
    /// from its store (a local removal, not a delete it pushes), with its links to them. Sorted.
    public let dropped: [RowKey]
    /// The to-one links of rows the device holds that point at rows outside the user's scope: the
    /// device clears them locally (they stay on the server). Sorted by row.
    public let hiddenLinks: [HiddenLinks]

    /// A response.
    public init(
        changes: ChangeSet, cursor: SyncCursor, hasMore: Bool, resolutions: [ConstraintResolution] = [],
        refusal: SyncError? = nil, epoch: SyncEpoch? = nil, dropped: [RowKey] = [], hiddenLinks: [HiddenLinks] = []
    ) {
        protocolVersion = SyncProtocol.version
        self.changes = changes
        self.cursor = cursor
        self.hasMore = hasMore
        self.resolutions = resolutions
        self.refusal = refusal
        self.epoch = epoch
        self.dropped = dropped.sorted()
        self.hiddenLinks = hiddenLinks.sorted { $0.row < $1.row }
    }

    private enum CodingKeys: String, CodingKey {
        case protocolVersion, changes, cursor, hasMore, resolutions, refusal, epoch, dropped, hiddenLinks
    }

    /// Decodes a response, refusing an unsupported protocol version first.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        protocolVersion = try SyncProtocol.checkVersion(in: container, key: .protocolVersion)
        changes = try container.decode(ChangeSet.self, forKey: .changes)
        cursor = try container.decode(SyncCursor.self, forKey: .cursor)
        hasMore = try container.decode(Bool.self, forKey: .hasMore)
        resolutions = try container.decode([ConstraintResolution].self, forKey: .resolutions)
        refusal = try container.decodeIfPresent(SyncError.self, forKey: .refusal)
        epoch = try container.decodeIfPresent(SyncEpoch.self, forKey: .epoch)
        dropped = try container.decodeIfPresent([RowKey].self, forKey: .dropped) ?? []
        hiddenLinks = try container.decodeIfPresent([HiddenLinks].self, forKey: .hiddenLinks) ?? []
    }
}

/// The to-one links of one row that a pull does not show: their targets are outside the user's
/// scope (see ``SyncServer/Scope``), so the device holds them as `nil`.
public struct HiddenLinks: Sendable, Hashable, Codable {
    /// The row.
    public let row: RowKey
    /// The keys of its hidden to-one relationships, sorted.
    public let attributes: [String]

    /// The hidden links `attributes` of `row`.
    public init(row: RowKey, attributes: [String]) {
        self.row = row
        self.attributes = attributes.sorted()
    }
}
