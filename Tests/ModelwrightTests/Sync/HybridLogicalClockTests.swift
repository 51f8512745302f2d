import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright

/// The clock's promises: strictly increasing stamps whatever the wall clock does, every stamp made
/// after a receive later than what was received, and the bound on clocks that run ahead.
struct HybridLogicalClockTests {
    /// Cases drawn per run: a few in CI, many with `MODELWRIGHT_LARGE=1`.
    static let caseCount = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 2_000 : 100

    /// A wall clock that jumps forward and back, stalls and repeats, and remote stamps from nodes
    /// ahead and behind: each stamp the clock makes is later than all it made or accepted before.
    @Test func stampsIncreaseWhateverTheWallClockDoes() throws {
        var events = 0
        for index in 0..<Self.caseCount {
            var random = SplitMix64(seed: 28, index: index)
            let drift = UInt64(random.next(below: 600_000))
            var clock = HybridLogicalClock(node: SyncNodeID(), maximumDriftMilliseconds: drift)
            var wall: UInt64 = 1_700_000_000_000
            var newest: HybridTimestamp?
            for _ in 0..<random.size(in: 1...300) {
                events += 1
                switch random.next(below: 5) {
                case 0: wall += UInt64(random.next(below: 5))  // the same millisecond, often
                case 1: wall -= UInt64(random.next(below: 120_000))  // the wall clock steps back
                case 2: wall += UInt64(random.next(below: 120_000))
                default: break
                }
                if random.chance(0.4) {
                    let offset = Int64(random.next(below: 2_000_000)) - 1_000_000
                    let remote = HybridTimestamp(
                        milliseconds: UInt64(Int64(wall) + offset), counter: UInt32(random.next(below: 3)),
                        node: SyncNodeID())
                    let before = clock.latest
                    do {
                        try clock.receive(remote, wallMilliseconds: wall)
                        #expect(UInt64(Int64(wall) + offset) <= wall + drift)
                        #expect(clock.latest.milliseconds >= remote.milliseconds)
                        newest = max(newest ?? remote, remote)
                    } catch {
                        #expect(remote.milliseconds > wall + drift, "refused \(remote) at \(wall), drift \(drift)")
                        #expect(clock.latest == before, "a refused stamp moved the clock")
                    }
                } else {
                    let stamp = try clock.tick(wallMilliseconds: wall)
                    if let newest { #expect(newest < stamp, "\(stamp) is not after \(newest)") }
                    #expect(stamp.milliseconds >= wall)
                    newest = stamp
                }
            }
        }
        print("HybridLogicalClockTests: \(Self.caseCount) clocks, \(events) events")
    }

    /// The bound, stated in the article: a stamp more than the drift ahead of the receiver's wall
    /// clock is refused with a typed error; exactly the drift ahead is accepted.
    @Test func aStampTooFarAheadIsRefused() throws {
        let server = SyncNodeID()
        var clock = HybridLogicalClock(node: server)
        let wall: UInt64 = 1_700_000_000_000
        let drift = HybridLogicalClock.defaultMaximumDriftMilliseconds
        let device = SyncNodeID()
        let atBound = HybridTimestamp(milliseconds: wall + drift, counter: 0, node: device)
        try clock.receive(atBound, wallMilliseconds: wall)
        let beyond = HybridTimestamp(milliseconds: wall + drift + 1, counter: 0, node: device)
        #expect(throws: SyncError.clockAhead(stamp: beyond, wallMilliseconds: wall, maximumDriftMilliseconds: drift)) {
            try clock.receive(beyond, wallMilliseconds: wall)
        }
        // A day ahead: refused until the server's clock is within the drift of it, then accepted.
        let dayAhead = HybridTimestamp(milliseconds: wall + 86_400_000, counter: 0, node: device)
        #expect(throws: SyncError.self) { try clock.receive(dayAhead, wallMilliseconds: wall + 3_600_000) }
        try clock.receive(dayAhead, wallMilliseconds: wall + 86_400_000 - drift)
    }

    /// A device whose clock ran a day ahead wins over later writes for at most the drift after its
    /// change reaches the server: a correct device writing then is stamped later, because the
    /// server refused the change until its own clock was within the drift of it.
    @Test func aFastClockCannotWinForever() throws {
        let drift = HybridLogicalClock.defaultMaximumDriftMilliseconds
        var random = SplitMix64(seed: 2_801)
        for _ in 0..<Self.caseCount {
            let start: UInt64 = 1_700_000_000_000
            let ahead = UInt64(random.next(below: 86_400_000 * 30))
            var fast = HybridLogicalClock(node: SyncNodeID(), maximumDriftMilliseconds: HybridLogicalClock.unbounded)
            let stamp = try fast.tick(wallMilliseconds: start + ahead)
            // The server is asked again every hour until it accepts the push.
            var server = HybridLogicalClock(node: SyncNodeID())
            var serverWall = start
            while (try? server.receive(stamp, wallMilliseconds: serverWall)) == nil { serverWall += 3_600_000 }
            #expect(stamp.milliseconds <= serverWall + drift)
            // A correct device that writes the drift after acceptance (plus a millisecond) wins.
            var correct = HybridLogicalClock(node: SyncNodeID(), maximumDriftMilliseconds: HybridLogicalClock.unbounded)
            #expect(try stamp < correct.tick(wallMilliseconds: serverWall + drift + 1))
        }
    }

    /// Four billion events in one millisecond move the clock to the next millisecond, never back.
    @Test func aFullCounterMovesToTheNextMillisecond() throws {
        let node = SyncNodeID()
        var clock = HybridLogicalClock(
            node: node, after: HybridTimestamp(milliseconds: 10, counter: .max - 1, node: node))
        #expect(try clock.tick(wallMilliseconds: 5) == HybridTimestamp(milliseconds: 10, counter: .max, node: node))
        #expect(try clock.tick(wallMilliseconds: 5) == HybridTimestamp(milliseconds: 11, counter: 0, node: node))
        let remote = HybridTimestamp(milliseconds: 11, counter: .max, node: SyncNodeID())
        try clock.receive(remote, wallMilliseconds: 5)
        #expect(clock.latest == HybridTimestamp(milliseconds: 12, counter: 0, node: node))
    }

    /// At the top of time the clock never goes back or repeats: clocks started near the last
    /// timestamp tick and receive stamps near it; every stamp made is later than everything
    /// before, and when no later stamp exists the clock throws `clockExhausted` and stays put.
    @Test func theClockNeverGoesBackAtTheTop() throws {
        var random = SplitMix64(seed: 2_802)
        var refusals = 0
        for _ in 0..<Self.caseCount {
            let node = SyncNodeID()
            func nearTop() -> HybridTimestamp {
                HybridTimestamp(
                    milliseconds: .max - UInt64(random.next(below: 3)), counter: .max - UInt32(random.next(below: 3)),
                    node: SyncNodeID())
            }
            var clock = HybridLogicalClock(
                node: node, maximumDriftMilliseconds: HybridLogicalClock.unbounded,
                after: random.chance(0.5) ? nearTop() : nil)
            var newest = clock.latest
            for _ in 0..<12 {
                let before = clock.latest
                let wall = random.chance(0.5) ? UInt64.max - UInt64(random.next(below: 3)) : 5
                do {
                    if random.chance(0.5) {
                        let stamp = try clock.tick(wallMilliseconds: wall)
                        #expect(
                            stamp.milliseconds > newest.milliseconds
                                || (stamp.milliseconds == newest.milliseconds && stamp.counter > newest.counter),
                            "\(stamp) is not after \(newest)")
                    } else {
                        let remote = nearTop()
                        try clock.receive(remote, wallMilliseconds: wall)
                        #expect(
                            clock.latest.milliseconds > remote.milliseconds
                                || (clock.latest.milliseconds == remote.milliseconds
                                    && clock.latest.counter > remote.counter)
                        )
                    }
                    newest = clock.latest
                } catch {
                    refusals += 1
                    #expect(error == .clockExhausted(latest: before))
                    #expect(clock.latest == before, "a refused event moved the clock")
                }
            }
        }
        #expect(refusals > 0)
    }

    /// Any reading of the wall clock, NaN and infinities included, gives a number and never traps.
    @Test func everyDateGivesWallMilliseconds() {
        var random = SplitMix64(seed: 2_803)
        var seconds: [Double] = [.nan, -.nan, .infinity, -.infinity, .signalingNaN, 0, -0.0, .greatestFiniteMagnitude]
        for _ in 0..<Self.caseCount { seconds.append(Double(bitPattern: random.next())) }
        for value in seconds {
            let wall = HybridLogicalClock.wallMilliseconds(Date(timeIntervalSince1970: value))
            #expect(value > 0 || wall == 0)
        }
    }
}
