import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright

/// A device whose store is restored from an older copy of itself (its cursor and horizon with it)
/// gets back the rows it pushed after the copy and equals the server. It guards any scheme that
/// leaves a device's own pushed rows out of its pulls (a burst's pull was a third own rows): the
/// one tried on branch `syncperf`, up to the device's horizon, fails it, since the copy's pending
/// rows are pushed again first and the push's answer moves the horizon to the newest cursor.
@Suite(.serialized) struct SyncOwnRowsTests {
    static let isLarge = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1"
    static let caseCount = isLarge ? 100 : 10
    static let stepsPerCase = isLarge ? 200 : 40

    /// The server, recording the rows each pull carried to the device that asked.
    final class Recorder: SyncTransport, Sendable {
        let server: SyncServer
        private let pulled = Locked<[RowKey]>([])

        init(server: SyncServer) {
            self.server = server
        }

        var pulledRows: [RowKey] { pulled.withLock { $0 } }

        func push(_ request: PushRequest) async throws -> PushResponse {
            try await server.push(request)
        }

        func pull(_ request: PullRequest) async throws -> PullResponse {
            let response = try await server.pull(request)
            pulled.withLock { $0 += response.changes.rows.map(\.key) }
            return response
        }
    }

    /// A device's store file and, unless closed, its store and engine.
    final class Device {
        let url: URL
        let transport: Recorder
        var store: Store?
        var engine: SyncEngine?
        /// The rows this device inserted, and so is the only one to write.
        var mine: [Card] = []

        init(url: URL, transport: Recorder) {
            self.url = url
            self.transport = transport
        }

        func open() async throws -> (Store, SyncEngine) {
            if let store, let engine { return (store, engine) }
            let store = try Store(url: url, schema: SyncPlanner.schema, history: .enabled(author: "app"))
            let engine = try await SyncEngine(store: store, transport: transport, pullLimit: 3)
            self.store = store
            self.engine = engine
            return (store, engine)
        }

        func close() throws {
            engine = nil
            try store?.close()
            store = nil
        }

        /// Inserts a card or edits one of the device's own.
        func write(_ random: inout SplitMix64, owner: String) async throws {
            let (store, _) = try await open()
            if mine.isEmpty || random.chance(0.5) {
                let card = Card(title: "card \(random.next(below: 1_000))", owner: owner)
                try await store.performAndSave { try $0.insert(card) }
                mine.append(card)
            } else {
                let index = random.index(below: mine.count)
                mine[index].title = "edit \(random.next(below: 1_000))"
                try await store.performAndSave { [card = mine[index]] in try $0.update(card) }
            }
        }
    }

    @Test func aDeviceRestoredFromAnOlderCopyGetsItsOwnRowsBack() async throws {
        var restoredRows = 0
        for seed in 0..<Self.caseCount {
            var random = SplitMix64(seed: 2_830, index: seed)
            let serverURL = temporaryStoreURL()
            let backupURL = temporaryStoreURL()
            let serverStore = try Store(url: serverURL, schema: SyncPlanner.schema, history: .enabled(author: "server"))
            let server = try await SyncServer(store: serverStore)
            let devices = (0..<2).map { _ in Device(url: temporaryStoreURL(), transport: Recorder(server: server)) }
            defer {
                for device in devices {
                    try? device.close()
                    removeStore(at: device.url)
                }
                try? serverStore.close()
                removeStore(at: serverURL)
                removeStore(at: backupURL)
            }
            let copyStep = random.next(below: Self.stepsPerCase / 2)
            var mineAtCopy = 0
            for step in 0..<Self.stepsPerCase {
                if step == copyStep {
                    // Copied closed, as a backup of the app's container: the file is the whole store.
                    _ = try await devices[0].open()
                    try devices[0].close()
                    try FileManager.default.copyItem(at: devices[0].url, to: backupURL)
                    mineAtCopy = devices[0].mine.count
                }
                let index = random.index(below: devices.count)
                if random.chance(0.6) {
                    try await devices[index].write(&random, owner: "device \(index)")
                } else {
                    try await devices[index].open().1.sync()
                }
            }
            try await devices[0].open().1.sync()
            // The device's store goes back to the copy: its cursor and horizon with it.
            try devices[0].close()
            removeStore(at: devices[0].url)
            try FileManager.default.copyItem(at: backupURL, to: devices[0].url)
            restoredRows += devices[0].mine.count - mineAtCopy
            for _ in 0..<2 {
                for device in devices { try await device.open().1.sync() }
            }
            let expected = try await SyncSnapshot.read(serverStore)
            for (index, device) in devices.enumerated() {
                let found = try await SyncSnapshot.read(try await device.open().0)
                #expect(found == expected, "seed \(seed): device \(index) has \(found), the server \(expected)")
            }
        }
        print(
            "SyncOwnRowsTests (restored device): \(Self.caseCount) runs, \(restoredRows) rows written after the copies")
        #expect(restoredRows > 0)
    }
}
