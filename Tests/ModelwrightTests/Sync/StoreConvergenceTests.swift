import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright

/// Devices on real SQLite store files and a server store sync through ``SyncEngine`` and
/// ``SyncServer`` over a network that loses requests and answers, delivers some twice, and cuts
/// devices off; devices are killed between any two steps (the engine dropped, the store closed
/// and opened again). After the network heals and every device syncs until quiet, every device
/// holds the server's rows and links exactly, and nothing a single device wrote is lost.
@Suite(.serialized) struct StoreConvergenceTests {
    static let isLarge = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1"
    static let caseCount = isLarge ? 60 : 4
    static let stepsPerCase = isLarge ? 400 : 60

    struct Counts {
        var devices = 0
        var writes = 0
        var kills = 0
        var syncs = 0
        var failedSyncs = 0
        var rows = 0
        var links = 0
        var dropped = 0
        var duplicated = 0
        var interleaved = 0
        var restores = 0
    }

    @Test func devicesOnStoresConvergeThroughKillsAndLoss() async throws {
        var counts = Counts()
        for index in 0..<Self.caseCount {
            try await run(seed: index, counts: &counts)
        }
        print(
            "StoreConvergenceTests: \(Self.caseCount) runs, \(counts.devices) devices, \(counts.writes) writes, "
                + "\(counts.syncs) syncs (\(counts.failedSyncs) failed), \(counts.kills) kills, "
                + "\(counts.dropped) messages lost, \(counts.duplicated) delivered twice, "
                + "\(counts.interleaved) local writes during syncs; "
                + "final: \(counts.rows) rows, \(counts.links) links")
        #expect(counts.kills > 0 && counts.dropped > 0 && counts.duplicated > 0 && counts.interleaved > 0)
    }

    /// The same run, with the server's store file copied at a drawn step while it runs and, at a
    /// later drawn step, the server replaced by one over that copy (as an operator restores a
    /// backup): devices hold cursors the restored server gives out again to other rows, and still
    /// every device converges on the server and nothing any device wrote is lost.
    @Test func devicesConvergeThroughAServerRestoredFromACopy() async throws {
        var counts = Counts()
        for index in 0..<Self.caseCount {
            try await run(seed: 1_000 + index, restoring: true, counts: &counts)
        }
        print(
            "StoreConvergenceTests (restored server): \(Self.caseCount) runs, \(counts.restores) restores, "
                + "\(counts.devices) devices, \(counts.writes) writes, \(counts.syncs) syncs "
                + "(\(counts.failedSyncs) failed), \(counts.kills) kills; final: \(counts.rows) rows, \(counts.links) links"
        )
        #expect(counts.restores == Self.caseCount)
    }

    /// One device: its store file, and its open store and engine unless it was killed.
    final class Device {
        let url: URL
        let network: FlakyNetwork
        var store: Store?
        var engine: SyncEngine?

        init(url: URL, network: FlakyNetwork) {
            self.url = url
            self.network = network
        }

        func open() async throws -> (Store, SyncEngine) {
            if let store, let engine { return (store, engine) }
            let store = try Store(url: url, schema: SyncPlanner.schema, history: .enabled(author: "app"))
            let engine = try await SyncEngine(store: store, transport: network, pullLimit: 7)
            self.store = store
            self.engine = engine
            return (store, engine)
        }

        /// Drops the engine and closes the store, as a killed process would leave them.
        func kill() throws {
            engine = nil
            try store?.close()
            store = nil
        }
    }

    /// What the test wrote, to check that nothing a single device wrote was lost.
    struct Oracle {
        /// Each attribute's writes: the device and the value.
        var writes: [RowKey: [String: [(device: Int, value: SyncValue)]]] = [:]
        var deleted: Set<RowKey> = []
        var linkWrites: [[UUID]: [(device: Int, present: Bool)]] = [:]
    }

    private func run(seed: Int, restoring: Bool = false, counts: inout Counts) async throws {
        var random = SplitMix64(seed: 2_828, index: seed)
        let serverURL = temporaryStoreURL()
        let backupURL = temporaryStoreURL()
        defer {
            removeStore(at: serverURL)
            removeStore(at: backupURL)
        }
        var serverStore = try Store(url: serverURL, schema: SyncPlanner.schema, history: .enabled(author: "server"))
        let server = try await SyncServer(store: serverStore)
        // The steps at which the server's file is copied, and the server replaced by the copy.
        let copyStep = restoring ? 1 + random.next(below: Self.stepsPerCase / 2) : -1
        let restoreStep = restoring ? copyStep + 1 + random.next(below: Self.stepsPerCase / 3) : -1
        let deviceCount = 2 + random.next(below: Self.isLarge ? 4 : 2)
        var devices: [Device] = []
        for index in 0..<deviceCount {
            devices.append(
                Device(
                    url: temporaryStoreURL(), network: FlakyNetwork(server: server, seed: UInt64(seed * 100 + index))))
        }
        defer {
            for device in devices {
                try? device.kill()
                removeStore(at: device.url)
            }
        }
        counts.devices += deviceCount
        var oracle = Oracle()
        for step in 0..<Self.stepsPerCase {
            if step == copyStep {
                try copyStoreFile(from: serverURL, to: backupURL)
            }
            if step == restoreStep {
                try serverStore.close()
                serverStore = try Store(url: backupURL, schema: SyncPlanner.schema, history: .enabled(author: "server"))
                let restored = try await SyncServer(store: serverStore)
                for device in devices { device.network.retarget(to: restored) }
                counts.restores += 1
            }
            let index = random.index(below: deviceCount)
            let device = devices[index]
            switch random.next(below: 12) {
            case 0...6:
                try await write(on: device, index: index, random: &random, oracle: &oracle)
                counts.writes += 1
            case 7...9:
                device.network.set(offline: random.chance(0.15), lossRate: 0.12)
                let (store, engine) = try await device.open()
                counts.syncs += 1
                // Local commits while the sync runs, on another task, between its steps.
                let during = Locked<[(RowKey, SyncValue)]>([])
                if random.chance(0.5) {
                    let seed = UInt64(random.next(below: 1 << 30))
                    device.network.interleave {
                        var draw = SplitMix64(seed: seed &+ UInt64(during.withLock { $0.count }))
                        let cards = try await store.performQuery { try $0.fetch(Card.request()) }.sorted {
                            $0.id.uuid.uuidString < $1.id.uuid.uuidString
                        }
                        guard !cards.isEmpty else { return }
                        var card = cards[draw.next(below: cards.count)]
                        card.title = "during sync \(draw.next(below: 1_000_000))"
                        try await store.performAndSave { [card] in try $0.update(card) }
                        during.withLock { $0.append((RowKey(entity: "Card", id: card.id.uuid), .text(card.title))) }
                    }
                }
                do { try await engine.sync() } catch { counts.failedSyncs += 1 }
                device.network.interleave(nil)
                // A local write made during the sync is stamped after every change the sync
                // pulled before it, so no pulled value may have replaced it.
                let written = during.withLock { $0 }
                var lastWritten: [RowKey: SyncValue] = [:]
                for (key, value) in written { lastWritten[key] = value }
                let now = try await SyncSnapshot.read(store)
                for (key, value) in lastWritten.sorted(by: { $0.key < $1.key }) {
                    guard let row = now.rows[key] else { continue }
                    #expect(
                        row["title"] == value, "seed \(seed): a local write during a sync was overwritten by a pull")
                }
                for (key, value) in written {
                    oracle.writes[key, default: [:]]["title", default: []].append((index, value))
                    counts.interleaved += 1
                }
            case 10:
                // Killed: possibly in the middle of a sync whose answer never came.
                if let engine = device.engine, random.chance(0.5) {
                    device.network.set(offline: false, lossRate: 0.6)
                    _ = try? await engine.sync()
                }
                try device.kill()
                counts.kills += 1
            default:
                try device.kill()
                counts.kills += 1
            }
        }
        // Heal: every device online and lossless, synced until a round changes nothing.
        for device in devices { device.network.set(offline: false, lossRate: 0) }
        for _ in 0..<3 {
            for device in devices {
                let (_, engine) = try await device.open()
                try await engine.sync()
            }
        }
        let expected = try await SyncSnapshot.read(serverStore)
        for (index, device) in devices.enumerated() {
            let (store, _) = try await device.open()
            let found = try await SyncSnapshot.read(store)
            #expect(found == expected, "seed \(seed): device \(index) has \(found), the server \(expected)")
            let network = device.network.counts
            counts.dropped += network.dropped
            counts.duplicated += network.duplicated
        }
        check(expected, against: oracle, seed: seed)
        counts.rows += expected.rows.count
        counts.links += expected.links.count
        try serverStore.close()
    }

    /// Copies a store's files as a backup tool does, while the store is open between
    /// transactions: the database file and its write-ahead log (SQLite rebuilds the shared-memory
    /// index of a log it opens first).
    private func copyStoreFile(from source: URL, to destination: URL) throws {
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: source.path + suffix) {
            try FileManager.default.copyItem(atPath: source.path + suffix, toPath: destination.path + suffix)
        }
    }

    /// What one device wrote alone is what the server holds; a deleted row is gone.
    private func check(_ snapshot: SyncSnapshot, against oracle: Oracle, seed: Int) {
        for key in oracle.deleted {
            #expect(snapshot.rows[key] == nil, "seed \(seed): \(key) was deleted and is still there")
        }
        for (key, attributes) in oracle.writes where !oracle.deleted.contains(key) {
            guard let values = snapshot.rows[key] else {
                Issue.record("seed \(seed): \(key) was inserted, never deleted, and is missing")
                continue
            }
            for (name, writes) in attributes {
                let writers = Set(writes.map(\.device))
                if writers.count == 1, let last = writes.last {
                    #expect(
                        values[name] == last.value, "seed \(seed): \(key).\(name) lost its only writer's last write")
                } else {
                    #expect(
                        writes.contains { $0.value == values[name] },
                        "seed \(seed): \(key).\(name) holds no written value")
                }
            }
        }
        for (pair, writes) in oracle.linkWrites {
            let cardAlive = snapshot.rows[RowKey(entity: "Card", id: pair[0])] != nil
            let labelAlive = snapshot.rows[RowKey(entity: "Label", id: pair[1])] != nil
            guard cardAlive, labelAlive, Set(writes.map(\.device)).count == 1, let last = writes.last else { continue }
            #expect(snapshot.links.contains(pair) == last.present, "seed \(seed): link \(pair) lost its last write")
        }
    }

    /// One random local write on a device, recorded in the oracle.
    private func write(on device: Device, index: Int, random: inout SplitMix64, oracle: inout Oracle) async throws {
        let (store, _) = try await device.open()
        let cards = try await store.performQuery { try $0.fetch(Card.request()) }.sorted {
            $0.id.uuid.uuidString < $1.id.uuid.uuidString
        }
        let labels = try await store.performQuery { try $0.fetch(Label.request()) }.sorted {
            $0.id.uuid.uuidString < $1.id.uuid.uuidString
        }
        let choice = random.next(below: 10)
        if choice < 2 || cards.isEmpty {
            let card = Card(
                title: "card \(random.next(below: 1000))", rating: Int64(random.next(below: 5)),
                done: random.chance(0.5),
                due: random.chance(0.5)
                    ? Date(timeIntervalSinceReferenceDate: Double(random.next(below: 10_000))) : nil,
                parentID: cards.isEmpty || random.chance(0.5) ? nil : random.pick(cards).id)
            try await store.performAndSave { try $0.insert(card) }
            let key = RowKey(entity: "Card", id: card.id.uuid)
            let values: [String: SyncValue] = [
                "title": .text(card.title), "rating": .integer(card.rating), "done": .bool(card.done),
                "due": card.due.map(SyncValue.date) ?? .null, "owner": .text(""),
                "parent": card.parentID.map { .uuid($0.uuid) } ?? .null,
            ]
            for (name, value) in values { oracle.writes[key, default: [:]][name, default: []].append((index, value)) }
        } else if choice < 3 || labels.isEmpty {
            let label = Label(name: "label \(random.next(below: 1000))")
            try await store.performAndSave { try $0.insert(label) }
            let key = RowKey(entity: "Label", id: label.id.uuid)
            oracle.writes[key, default: [:]]["name", default: []].append((index, .text(label.name)))
            oracle.writes[key, default: [:]]["owner", default: []].append((index, .text("")))
        } else if choice < 6 {
            var card = random.pick(cards)
            let key = RowKey(entity: "Card", id: card.id.uuid)
            let value: (String, SyncValue)
            switch random.next(below: 4) {
            case 0:
                card.title = "title \(random.next(below: 1000))"
                value = ("title", .text(card.title))
            case 1:
                card.rating = Int64(random.next(below: 100))
                value = ("rating", .integer(card.rating))
            case 2:
                card.done.toggle()
                value = ("done", .bool(card.done))
            default:
                card.parentID = random.chance(0.3) ? nil : random.pick(cards).id
                value = ("parent", card.parentID.map { .uuid($0.uuid) } ?? .null)
            }
            try await store.performAndSave { [card] in try $0.update(card) }
            oracle.writes[key, default: [:]][value.0, default: []].append((index, value.1))
        } else if choice < 8, !labels.isEmpty {
            let card = random.pick(cards)
            let label = random.pick(labels)
            let present = random.chance(0.6)
            try await store.performAndSave { context in
                if present {
                    try context.link(card.id, to: label.id) { $0.labels }
                } else {
                    try context.unlink(card.id, from: label.id) { $0.labels }
                }
            }
            oracle.linkWrites[[card.id.uuid, label.id.uuid], default: []].append((index, present))
        } else if choice == 8 {
            let card = random.pick(cards)
            try await store.performAndSave { try $0.delete(card.id) }
            oracle.deleted.insert(RowKey(entity: "Card", id: card.id.uuid))
        } else {
            let label = random.pick(labels)
            try await store.performAndSave { try $0.delete(label.id) }
            oracle.deleted.insert(RowKey(entity: "Label", id: label.id.uuid))
        }
    }
}
