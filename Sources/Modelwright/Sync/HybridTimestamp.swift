import Foundation

/// The identity of one participant in sync (a device's store, or the server), written into every
/// ``HybridTimestamp`` it makes: two writes made at the same millisecond on two devices still
/// order the same way everywhere.
public struct SyncNodeID: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The UUID behind the identity.
    public let uuid: UUID

    /// A new, random identity; a device makes one once and keeps it with its store.
    public init() {
        uuid = UUID()
    }

    /// The identity with the given UUID.
    public init(_ uuid: UUID) {
        self.uuid = uuid
    }

    /// Decodes the identity from its UUID string.
    public init(from decoder: any Decoder) throws {
        uuid = try decoder.singleValueContainer().decode(UUID.self)
    }

    /// Encodes the identity as its UUID string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(uuid)
    }

    /// Orders identities by their 16 bytes, as unsigned numbers: the same order on every platform.
    public static func < (lhs: SyncNodeID, rhs: SyncNodeID) -> Bool {
        lhs.uuid.orderedBytes.lexicographicallyPrecedes(rhs.uuid.orderedBytes)
    }

    /// The UUID string.
    public var description: String { uuid.uuidString }
}

extension UUID {
    /// The 16 bytes, first to last, for an order that is the same on every platform.
    var orderedBytes: [UInt8] {
        withUnsafeBytes(of: uuid) { Array($0) }
    }

    /// Whether `self` comes before `other` by bytes.
    func precedes(_ other: UUID) -> Bool {
        orderedBytes.lexicographicallyPrecedes(other.orderedBytes)
    }
}

/// A point on the hybrid logical clock (HLC) every change is stamped with: physical time in
/// milliseconds, a logical counter that orders events within one millisecond (and keeps a clock
/// monotonic when the wall clock steps back), and the node that made it.
///
/// Timestamps are totally ordered: by milliseconds, then counter, then node. Each node's clock
/// makes strictly increasing timestamps, so no two writes share one, and a write made after a
/// node has seen another (``HybridLogicalClock/receive(_:wallMilliseconds:)``) is stamped later.
///
/// ```swift
/// var clock = HybridLogicalClock(node: SyncNodeID())
/// let stamp = try clock.tick(wallMilliseconds: HybridLogicalClock.wallMilliseconds())
/// ```
public struct HybridTimestamp: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// Physical time: milliseconds since 1970-01-01 UTC, as the node's clock read them (or later).
    public let milliseconds: UInt64
    /// The logical counter within one millisecond.
    public let counter: UInt32
    /// The node that made the timestamp.
    public let node: SyncNodeID

    /// The timestamp with the given parts.
    public init(milliseconds: UInt64, counter: UInt32, node: SyncNodeID) {
        self.milliseconds = milliseconds
        self.counter = counter
        self.node = node
    }

    /// Decodes `[milliseconds, counter, node]`.
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        milliseconds = try container.decode(UInt64.self)
        counter = try container.decode(UInt32.self)
        node = try container.decode(SyncNodeID.self)
        guard container.isAtEnd else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "a timestamp is [milliseconds, counter, node]: three values")
        }
    }

    /// Encodes the timestamp as `[milliseconds, counter, node]`: compact, since every value carries one.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(milliseconds)
        try container.encode(counter)
        try container.encode(node)
    }

    /// Orders by milliseconds, then counter, then node.
    public static func < (lhs: HybridTimestamp, rhs: HybridTimestamp) -> Bool {
        if lhs.milliseconds != rhs.milliseconds { return lhs.milliseconds < rhs.milliseconds }
        if lhs.counter != rhs.counter { return lhs.counter < rhs.counter }
        return lhs.node < rhs.node
    }

    /// `milliseconds.counter@node`, for logs.
    public var description: String { "\(milliseconds).\(counter)@\(node)" }
}
