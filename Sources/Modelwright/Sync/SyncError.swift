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
        }
    }
}
