import Foundation

/// Why a sync message was refused. Every case is `Codable`, so a server sends it back in its
/// response and the device surfaces the same typed error.
public enum SyncError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// A timestamp is further ahead of the receiver's clock than the bound allows: the sender's
    /// clock runs ahead. Nothing of the message was applied.
    case clockAhead(stamp: HybridTimestamp, wallMilliseconds: UInt64, maximumDriftMilliseconds: UInt64)
    /// The clock is at the last timestamp there is (`UInt64.max` milliseconds, counter
    /// `UInt32.max`), so it cannot stamp anything later; it refuses rather than go back.
    case clockExhausted(latest: HybridTimestamp)
    /// The message was written by a sync protocol version this side does not speak.
    case unsupportedProtocolVersion(found: Int, supported: ClosedRange<Int>)
    /// A field of the message breaks the protocol (no protocol version, a negative limit, a name
    /// that is not a schema name): `field` is its path in the message, `reason` says what to send.
    case malformedMessage(field: String, reason: String)
    /// The device runs a model version the server cannot serve (an older one, whose changes the
    /// server does not translate, or a newer one): nothing was applied or sent.
    case schemaVersionUnsupported(device: SyncSchemaVersion, server: SyncSchemaVersion)
    /// A change names a row, an attribute or a link the server's model does not have, or breaks a
    /// rule of the store (a required value missing, a uniqueness constraint): nothing of the push
    /// was applied.
    case changeRefused(row: RowKey, reason: String)
    /// The request's credentials were refused by the server's authentication.
    case notAuthenticated
    /// The push touches a row outside the user's scope: nothing of it was applied.
    case outOfScope(row: RowKey)
    /// The pull's cursor is before what the server has purged: tombstones, or, for a device the
    /// server forgot (``SyncServer/forgetDevices(unseenFor:)``), everything it knew of the device,
    /// `purgedThrough` then being the server's newest cursor. The device must start again from the
    /// beginning (a pull without a cursor).
    case cursorExpired(since: SyncCursor, purgedThrough: SyncCursor)
    /// The pull's cursor is beyond the newest the server has given out: the server was restored
    /// from an earlier copy, or the cursor was forged. The device must start again from the
    /// beginning (a pull without a cursor) and send everything it has again.
    case cursorAhead(since: SyncCursor, newest: SyncCursor)
    /// The pull's cursor belongs to a server epoch that is not in this server's lineage, or to one
    /// that ended in it before that cursor: the server was restored from an earlier copy (or its
    /// sync tables were reset) and gives out those cursors again to other rows. The device must
    /// send everything it has again and pull from the beginning. See ``SyncEpoch``.
    case epochChanged(since: SyncCursor, device: SyncEpoch, server: SyncEpoch)
    /// The request names a device that pulls for another user: a device ID is bound to the user
    /// of its first authenticated request.
    case deviceOfAnotherUser(device: SyncNodeID)
    /// The server could not answer (its store failed, say); nothing of the request was applied.
    case serverFailure(reason: String)
    /// The device store does not record persistent history, which the engine reads its changes from.
    case historyDisabled
    /// The store's history author is one the sync engine or server writes under (``SyncEngine/author``
    /// or ``SyncServer/author``): the stamp step skips that author's transactions, so the store's
    /// own writes would never sync. Nothing was opened.
    case reservedAuthor(String)

    /// What went wrong and what to do, in the user's terms.
    public var description: String {
        switch self {
        case .clockAhead(let stamp, let wall, let drift):
            "a change is stamped \(stamp.milliseconds > wall ? stamp.milliseconds - wall : 0) ms ahead of the server's clock (at most \(drift) ms are accepted): set the device's clock right; its changes are kept and sent again"
        case .clockExhausted(let latest):
            "the clock has reached the last timestamp there is (\(latest.milliseconds) ms, counter \(latest.counter)), so it cannot stamp a later change: a stamp from a wrong clock was accepted; reset the sync state of this device"
        case .unsupportedProtocolVersion(let found, let supported):
            "the message uses sync protocol version \(found), and this side speaks versions \(supported.lowerBound) to \(supported.upperBound): update the app or the server"
        case .malformedMessage(let field, let reason):
            "the message's field \(field) is malformed: \(reason)"
        case .schemaVersionUnsupported(let device, let server):
            device.version < server.version || device.model != server.model
                ? "the app's data model (\(device.model) version \(device.version)) is older than the server's (\(server.model) version \(server.version)) and cannot sync with it: update the app"
                : "the app's data model (\(device.model) version \(device.version), checksum \(device.checksum)) is not one the server serves (\(server.model) version \(server.version), checksum \(server.checksum)): update the server, or the app if its version was edited after release"
        case .changeRefused(let row, let reason):
            "the change to \(row) was refused: \(reason); nothing of the push was applied"
        case .notAuthenticated:
            "the server did not accept the request's credentials: sign in again"
        case .outOfScope(let row):
            "the change to \(row) touches a row this user may not see or change; nothing of the push was applied"
        case .cursorExpired(let since, let purged):
            "the pull's cursor \(since.position) is before what the server purged (tombstones or this device's records, through \(purged.position)): pull again from the beginning"
        case .cursorAhead(let since, let newest):
            "the pull's cursor \(since.position) is beyond the server's newest (\(newest.position)): the server was restored from an earlier copy; pull again from the beginning and send every change again"
        case .epochChanged(let since, let device, let server):
            "the pull's cursor \(since.position) was given out in server epoch \(device.id.uuidString), which the server (now in epoch \(server.id.uuidString)) does not continue: it was restored from an earlier copy or reset; send every change again and pull from the beginning"
        case .deviceOfAnotherUser(let device):
            "the device \(device) syncs for another user: sign in as that user, or reset this device's sync state"
        case .serverFailure(let reason):
            "the server could not answer (\(reason)); nothing was applied: try again later"
        case .historyDisabled:
            "the device store does not record persistent history: open it with `history: .enabled(author:)` to sync it"
        case .reservedAuthor(let author):
            "the store's history author \"\(author)\" is reserved for sync's own writes, which are never sent: open the store with another author (such as \"app\")"
        }
    }
}
