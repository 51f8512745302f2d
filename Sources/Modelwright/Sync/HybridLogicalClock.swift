import Foundation

/// A node's hybrid logical clock: it stamps the node's own writes and moves forward past every
/// timestamp the node receives, so a write made after seeing another is always stamped later,
/// whatever the wall clocks say.
///
/// The rules (Kulkarni et al., "Logical Physical Clocks", 2014), with `l` the clock's
/// milliseconds, `c` its counter and `pt` the wall clock:
///
/// - **Local write or send** (``tick(wallMilliseconds:)``): `l′ = max(l, pt)`; `c′ = c + 1` when
///   `l′ = l`, else `0`.
/// - **Receive** a remote `(lᵣ, cᵣ)` (``receive(_:wallMilliseconds:)``): `l′ = max(l, lᵣ, pt)`;
///   `c′` is one more than the largest counter among those whose milliseconds equal `l′`, or `0`
///   when only `pt` does.
///
/// **The bound on clocks that run ahead.** A received timestamp more than
/// ``maximumDriftMilliseconds`` ahead of this node's wall clock is refused with
/// ``SyncError/clockAhead(stamp:wallMilliseconds:maximumDriftMilliseconds:)``, and the clock does
/// not move. The server checks every push this way, so every timestamp it accepts is at most
/// the drift (five minutes by default) ahead of its clock when it accepts it: a device whose
/// clock runs ahead wins over later writes for at most that long after its change reaches the
/// server, never forever. A refused device keeps its changes and retries; they are accepted once
/// the server's clock is within the drift of them. A device's own clock is made with
/// ``unbounded``: what it pulls the server has already bounded, and a device whose clock runs
/// behind must still take everyone's changes.
///
/// When the counter would overflow (four billion events in one millisecond), the clock moves to
/// the next millisecond instead, so it never repeats a timestamp. At the very last timestamp
/// (`UInt64.max` milliseconds, counter `UInt32.max`) there is no later one: ``tick(wallMilliseconds:)``
/// and ``receive(_:wallMilliseconds:)`` throw ``SyncError/clockExhausted(latest:)`` and leave the
/// clock where it is, so the clock never goes backwards or repeats.
public struct HybridLogicalClock: Sendable, Hashable {
    /// The default bound on how far ahead of the receiver's wall clock a timestamp may be: 5 minutes.
    public static let defaultMaximumDriftMilliseconds: UInt64 = 5 * 60 * 1000

    /// The drift that disables the check, for a device's clock.
    public static let unbounded: UInt64 = .max

    /// The node whose writes this clock stamps.
    public let node: SyncNodeID
    /// How far ahead of this node's wall clock a received timestamp may be.
    public let maximumDriftMilliseconds: UInt64
    /// The physical part of the latest timestamp made or received.
    public private(set) var milliseconds: UInt64
    /// The logical part of the latest timestamp made or received.
    public private(set) var counter: UInt32

    /// A clock for `node`, starting after `latest` (the latest timestamp it made or received before,
    /// kept with the node's store so that a restart never goes back).
    public init(
        node: SyncNodeID,
        maximumDriftMilliseconds: UInt64 = defaultMaximumDriftMilliseconds,
        after latest: HybridTimestamp? = nil
    ) {
        self.node = node
        self.maximumDriftMilliseconds = maximumDriftMilliseconds
        milliseconds = latest?.milliseconds ?? 0
        counter = latest?.counter ?? 0
    }

    /// The latest timestamp this clock made or received, as this node's.
    public var latest: HybridTimestamp {
        HybridTimestamp(milliseconds: milliseconds, counter: counter, node: node)
    }

    /// The wall clock in milliseconds since 1970.
    public static func wallMilliseconds(_ date: Date = Date()) -> UInt64 {
        let value = date.timeIntervalSince1970 * 1000
        // NaN and anything at or below zero read as zero: a broken reading must not trap.
        guard value > 0 else { return 0 }
        return value >= 1.8e19 ? UInt64.max / 2 : UInt64(value)
    }

    /// A new timestamp for a local write (or a message this node sends), later than every
    /// timestamp this clock made or received, or ``SyncError/clockExhausted(latest:)`` (and the
    /// clock does not move) when no later timestamp exists.
    public mutating func tick(wallMilliseconds wall: UInt64) throws(SyncError) -> HybridTimestamp {
        if wall > milliseconds {
            milliseconds = wall
            counter = 0
        } else {
            (milliseconds, counter) = try successor(milliseconds: milliseconds, counter: counter)
        }
        return latest
    }

    /// Moves the clock past a timestamp another node made, or throws
    /// ``SyncError/clockAhead(stamp:wallMilliseconds:maximumDriftMilliseconds:)`` without moving it
    /// when `remote` is more than ``maximumDriftMilliseconds`` ahead of `wall`, or
    /// ``SyncError/clockExhausted(latest:)`` when no timestamp after `remote` and this clock exists.
    public mutating func receive(_ remote: HybridTimestamp, wallMilliseconds wall: UInt64) throws(SyncError) {
        try Self.check(remote, wallMilliseconds: wall, maximumDriftMilliseconds: maximumDriftMilliseconds)
        let newest = max(milliseconds, remote.milliseconds, wall)
        switch (newest == milliseconds, newest == remote.milliseconds) {
        case (true, true):
            (milliseconds, counter) = try successor(milliseconds: newest, counter: max(counter, remote.counter))
        case (true, false): (milliseconds, counter) = try successor(milliseconds: newest, counter: counter)
        case (false, true): (milliseconds, counter) = try successor(milliseconds: newest, counter: remote.counter)
        case (false, false):
            milliseconds = newest
            counter = 0
        }
    }

    /// Throws when `stamp` is more than `maximumDriftMilliseconds` ahead of `wall`: the check a
    /// server makes of every timestamp in a push before it applies any of it.
    public static func check(
        _ stamp: HybridTimestamp, wallMilliseconds wall: UInt64, maximumDriftMilliseconds: UInt64
    ) throws(SyncError) {
        let (limit, overflow) = wall.addingReportingOverflow(maximumDriftMilliseconds)
        if !overflow, stamp.milliseconds > limit {
            throw .clockAhead(stamp: stamp, wallMilliseconds: wall, maximumDriftMilliseconds: maximumDriftMilliseconds)
        }
    }

    /// The timestamp right after `(milliseconds, counter)`: the next counter, or the next
    /// millisecond when the counter would overflow; throws at the very last timestamp.
    private func successor(milliseconds: UInt64, counter: UInt32) throws(SyncError) -> (UInt64, UInt32) {
        if counter < .max { return (milliseconds, counter + 1) }
        if milliseconds < .max { return (milliseconds + 1, 0) }
        throw .clockExhausted(latest: latest)
    }
}
