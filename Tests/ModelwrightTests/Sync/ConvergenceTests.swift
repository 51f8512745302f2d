import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright

/// Devices and a server exchange the protocol's messages (encoded to JSON and back) over a network
/// that drops requests and responses and delivers some twice; the devices' clocks are skewed, one
/// of them beyond the bound. After the network heals and the fast clock is set right, every
/// device holds the server's state, and that state is what the log of every write says it must be.
///
/// This is the conflict model's test, without stores: the device engine over persistent history
/// and the server over PostgreSQL are not built yet, and will run the same simulation.
struct ConvergenceTests {
    static let isLarge = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1"
    /// Runs per test: a few in CI, many with `MODELWRIGHT_LARGE=1`.
    static let caseCount = isLarge ? 400 : 24
    static let stepsPerCase = isLarge ? 1_500 : 200
    static let drift = HybridLogicalClock.defaultMaximumDriftMilliseconds

    /// What a run did, for the counts printed at the end.
    struct Counts {
        var devices = 0
        var writes = 0
        var pushes = 0
        var pulls = 0
        var dropped = 0
        var duplicated = 0
        var refusedAsAhead = 0
        var rows = 0
    }

    @Test func devicesConvergeOnTheLastWriteOfEveryAttribute() throws {
        var counts = Counts()
        for index in 0..<Self.caseCount {
            try run(seed: index, counts: &counts)
        }
        print(
            "ConvergenceTests: \(Self.caseCount) runs, \(counts.devices) devices, \(counts.writes) writes, "
                + "\(counts.rows) rows, \(counts.pushes) pushes, \(counts.pulls) pulls, \(counts.dropped) messages dropped, "
                + "\(counts.duplicated) delivered twice, \(counts.refusedAsAhead) pushes refused as ahead")
        #expect(counts.refusedAsAhead > 0, "no run exercised the clock bound")
        #expect(counts.dropped > 0 && counts.duplicated > 0)
    }

    private func run(seed: Int, counts: inout Counts) throws {
        var random = SplitMix64(seed: 2_800, index: seed)
        var world = World(random: &random, deviceCount: 2 + random.next(below: Self.isLarge ? 7 : 3))
        counts.devices += world.devices.count
        for _ in 0..<Self.stepsPerCase {
            world.time += UInt64(random.next(below: 2_000))
            let device = random.index(below: world.devices.count)
            switch random.next(below: 10) {
            case 0...4: world.write(on: device, random: &random)
            case 5...7: try world.push(from: device, random: &random, lossy: true)
            default: try world.pull(into: device, random: &random, lossy: true)
            }
        }
        // The network heals and the fast clock is set right; time passes beyond every skew.
        for index in world.devices.indices where world.devices[index].skew > Int64(Self.drift) {
            world.devices[index].skew = 0
        }
        world.time += UInt64(World.skews.map(\.magnitude).max() ?? 0) + Self.drift + 1_000
        let refusedBefore = world.counts.refusedAsAhead
        for device in world.devices.indices {
            while world.devices[device].hasUnacknowledged {
                try world.push(from: device, random: &random, lossy: false)
            }
        }
        for device in world.devices.indices {
            try world.pull(into: device, random: &random, lossy: false)
        }
        #expect(world.counts.refusedAsAhead == refusedBefore, "a push was refused after the clock was set right")

        let expected = Oracle(writes: world.writes)
        #expect(Set(world.server.state.rows.keys) == Set(expected.rows.keys), "rows lost or invented, run \(seed)")
        for (key, row) in expected.rows {
            guard let found = world.server.state.rows[key] else { continue }
            #expect(found.isAlive == row.isAlive, "\(key) alive, run \(seed)")
            #expect(found.values == row.values, "\(key) values, run \(seed)")
            #expect(found.linkedTargets == row.links, "\(key) links, run \(seed)")
        }
        for device in world.devices {
            #expect(device.state == world.server.state, "device \(device.node) differs from the server, run \(seed)")
        }
        counts.writes += world.writes.count
        counts.rows += expected.rows.count
        counts.pushes += world.counts.pushes
        counts.pulls += world.counts.pulls
        counts.dropped += world.counts.dropped
        counts.duplicated += world.counts.duplicated
        counts.refusedAsAhead += world.counts.refusedAsAhead
    }
}

/// The expected state, read from the log of writes without merging: for each row, whether its
/// latest insert is after its latest delete, each attribute's value of the write with the largest
/// stamp, and the links whose latest add is after their latest remove.
private struct Oracle {
    struct Row {
        var isAlive = false
        var values: [String: SyncValue] = [:]
        var links: [String: Set<UUID>] = [:]
    }

    var rows: [RowKey: Row] = [:]

    init(writes: [RowChange]) {
        var inserted: [RowKey: HybridTimestamp] = [:]
        var deleted: [RowKey: HybridTimestamp] = [:]
        var attributes: [RowKey: [String: (HybridTimestamp, SyncValue)]] = [:]
        var added: [RowKey: [LinkKey: HybridTimestamp]] = [:]
        var removed: [RowKey: [LinkKey: HybridTimestamp]] = [:]
        for write in writes {
            let key = write.key
            if let stamp = write.inserted, inserted[key].map({ $0 < stamp }) ?? true { inserted[key] = stamp }
            if let stamp = write.deleted, deleted[key].map({ $0 < stamp }) ?? true { deleted[key] = stamp }
            for (name, value) in write.attributes where attributes[key]?[name].map({ $0.0 < value.stamp }) ?? true {
                attributes[key, default: [:]][name] = (value.stamp, value.value)
            }
            for (link, stamps) in write.links {
                if let stamp = stamps.added, added[key]?[link].map({ $0 < stamp }) ?? true {
                    added[key, default: [:]][link] = stamp
                }
                if let stamp = stamps.removed, removed[key]?[link].map({ $0 < stamp }) ?? true {
                    removed[key, default: [:]][link] = stamp
                }
            }
            rows[key] = rows[key] ?? Row()
        }
        for key in rows.keys {
            if let insert = inserted[key] {
                rows[key]?.isAlive = deleted[key].map { $0 < insert } ?? true
            }
            rows[key]?.values = attributes[key]?.mapValues(\.1) ?? [:]
            for (link, stamp) in added[key] ?? [:] where removed[key]?[link].map({ $0 < stamp }) ?? true {
                rows[key]?.links[link.relationship, default: []].insert(link.target)
            }
        }
    }
}

/// A device: its clock (skewed), its replica, its local history with tokens, and where it is in
/// the protocol (the last token the server acknowledged, the cursor of its last pull).
private struct Device {
    var node: SyncNodeID
    var clock: HybridLogicalClock
    var skew: Int64
    var state = ChangeSet()
    var history: [(token: Int64, change: RowChange)] = []
    var acknowledged: Int64 = 0
    var cursor: SyncCursor?

    var hasUnacknowledged: Bool { (history.last?.token ?? 0) > acknowledged }
}

/// The server as the protocol describes it: it applies a push whole or refuses it, appends what it
/// applied to a log whose positions are the cursors, and serves pulls from the log.
private struct Server {
    var clock = HybridLogicalClock(node: SyncNodeID())
    var state = ChangeSet()
    var log: [RowChange] = []
    var refusedAsAhead = 0

    mutating func handle(push data: Data, wall: UInt64) throws -> Data {
        let push = try JSONDecoder().decode(PushRequest.self, from: data)
        let response: PushResponse
        do {
            if let newest = push.changes.latestStamp {
                try HybridLogicalClock.check(
                    newest, wallMilliseconds: wall, maximumDriftMilliseconds: clock.maximumDriftMilliseconds)
                try clock.receive(newest, wallMilliseconds: wall)
                #expect(newest.milliseconds <= wall + clock.maximumDriftMilliseconds)
            }
            for change in push.changes.sortedChanges {
                log.append(change)
                state.merge(change)
            }
            response = PushResponse(acknowledged: push.through, cursor: SyncCursor(Int64(log.count)))
        } catch let error {
            refusedAsAhead += 1
            response = PushResponse(acknowledged: nil, cursor: SyncCursor(Int64(log.count)), refusal: error)
        }
        return try JSONEncoder().encode(response)
    }

    func handle(pull data: Data) throws -> Data {
        let pull = try JSONDecoder().decode(PullRequest.self, from: data)
        let start = min(Int(pull.since?.position ?? 0), log.count)
        let end = min(start + max(pull.limit, 1), log.count)
        let response = PullResponse(
            changes: ChangeSet(log[start..<end]), cursor: SyncCursor(Int64(end)), hasMore: end < log.count)
        return try JSONEncoder().encode(response)
    }
}

/// The devices, the server, the shared time and every write made, with the network between them.
private struct World {
    /// Clock skews drawn for devices: behind by hours, a little off, ahead within the bound, ahead beyond it.
    static let skews: [Int64] = [0, 0, -7_200_000, -60_000, 30_000, 240_000, 1_200_000]
    static let schema = SyncSchemaVersion(model: "Trips", version: 1, checksum: "test")

    var time: UInt64 = 1_764_000_000_000
    var devices: [Device]
    var server = Server()
    var writes: [RowChange] = []
    var counts = ConvergenceTests.Counts()

    init(random: inout SplitMix64, deviceCount: Int) {
        devices = (0..<deviceCount).map { _ in
            let node = SyncNodeID(randomUUID(&random))
            return Device(
                node: node,
                clock: HybridLogicalClock(node: node, maximumDriftMilliseconds: HybridLogicalClock.unbounded),
                skew: random.pick(Self.skews))
        }
    }

    func wall(of device: Int) -> UInt64 { UInt64(Int64(time) + devices[device].skew) }

    mutating func write(on index: Int, random: inout SplitMix64) {
        guard let stamp = try? devices[index].clock.tick(wallMilliseconds: wall(of: index)) else {
            Issue.record("the clock of device \(index) refused to tick")
            return
        }
        let known = devices[index].state.sortedChanges
        func values() -> [String: SyncValue] {
            var values: [String: SyncValue] = [:]
            if random.chance(0.7) { values["title"] = .text(random.pick(["Lisbon", "Porto", "Faro", ""])) }
            if random.chance(0.5) { values["rating"] = .integer(Int64(random.next(below: 6))) }
            if random.chance(0.3) {
                values["owner"] = known.isEmpty || random.chance(0.3) ? .null : .uuid(random.pick(known).key.id)
            }
            return values
        }
        let change: RowChange
        switch known.isEmpty ? 0 : random.next(below: 10) {
        case 0...2:
            let key = RowKey(entity: random.pick(["Trip", "Tag"]), id: randomUUID(&random))
            change = .insert(key, values: values(), at: stamp)
        case 3...5: change = .update(random.pick(known).key, values: values(), at: stamp)
        case 6: change = .delete(random.pick(known).key, at: stamp)
        case 7, 8:
            let key = random.pick(known).key
            let target = random.pick(known).key.id
            change =
                random.chance(0.6)
                ? .link(key, "tags", to: target, at: stamp) : .unlink(key, "tags", from: target, at: stamp)
        default:
            // An undo of a delete: the same ID inserted again, with values.
            let dead = known.filter { !$0.isAlive && $0.inserted != nil }
            guard let row = dead.isEmpty ? nil : random.pick(dead) else {
                change = .update(random.pick(known).key, values: values(), at: stamp)
                break
            }
            change = .insert(row.key, values: values(), at: stamp)
        }
        devices[index].state.merge(change)
        let token = (devices[index].history.last?.token ?? 0) + 1
        devices[index].history.append((token, change))
        writes.append(change)
    }

    /// Pushes a batch of the device's unacknowledged changes; a lossy network drops the request or
    /// the response, or delivers the request twice.
    mutating func push(from index: Int, random: inout SplitMix64, lossy: Bool) throws {
        let device = devices[index]
        let pending = device.history.filter { $0.token > device.acknowledged }
        guard !pending.isEmpty else { return }
        let batch = pending.prefix(lossy ? 1 + random.next(below: pending.count) : pending.count)
        let request = PushRequest(
            device: device.node, schema: Self.schema, after: HistoryToken(device.acknowledged),
            through: HistoryToken(batch.last!.token), changes: ChangeSet(batch.map(\.change)))
        let data = try JSONEncoder().encode(request)
        counts.pushes += 1
        if lossy, random.chance(0.15) {
            counts.dropped += 1
            return
        }
        var responseData = try server.handle(push: data, wall: time)
        if lossy, random.chance(0.1) {
            counts.duplicated += 1
            responseData = try server.handle(push: data, wall: time)
        }
        counts.refusedAsAhead = server.refusedAsAhead
        if lossy, random.chance(0.15) {
            counts.dropped += 1
            return
        }
        let response = try JSONDecoder().decode(PushResponse.self, from: responseData)
        if let token = response.acknowledged { devices[index].acknowledged = max(device.acknowledged, token.value) }
    }

    /// Pulls changes since the device's cursor (all of them when the network is not lossy); a lossy
    /// network drops the request or the response, and the device pulls the same changes again later.
    mutating func pull(into index: Int, random: inout SplitMix64, lossy: Bool) throws {
        repeat {
            let request = PullRequest(
                device: devices[index].node, schema: Self.schema, since: devices[index].cursor,
                limit: lossy ? 1 + random.next(below: 12) : 1_000_000)
            counts.pulls += 1
            if lossy, random.chance(0.15) {
                counts.dropped += 1
                return
            }
            let responseData = try server.handle(pull: try JSONEncoder().encode(request))
            if lossy, random.chance(0.15) {
                counts.dropped += 1
                return
            }
            let response = try JSONDecoder().decode(PullResponse.self, from: responseData)
            if let newest = response.changes.latestStamp {
                try devices[index].clock.receive(newest, wallMilliseconds: wall(of: index))
            }
            devices[index].state.merge(response.changes)
            devices[index].cursor = response.cursor
            if lossy || !response.hasMore { return }
        } while true
    }
}
