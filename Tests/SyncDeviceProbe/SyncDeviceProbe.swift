import Foundation
import Modelwright
import ModelwrightTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One sync device as its own process, for `ProcessConvergenceTests`: it opens its store file,
/// makes seeded random writes (inserts, updates, deletes, links and unlinks), syncs over HTTP with
/// the server the test hosts, and goes offline for drawn stretches (its transport fails). The test
/// kills it with SIGKILL at any moment and starts it again on the same store and log.
///
///     SyncDeviceProbe run <store> <url> <device> <seed> <operations> <log>
///     SyncDeviceProbe settle <store> <url> <device> <log>
///
/// `run` performs operations from the first one its log does not hold up to `operations`, then
/// exits 0. `settle` syncs, online, until a sync moves nothing, and exits 0 (3 if it never does).
///
/// The log is the test's record of what this device committed: one JSON object a line, each
/// written and synced to disk before the next step. An operation's `intent` line precedes its
/// commit and its `commit` line follows it; a kill between the two leaves an intent alone, which
/// the next start settles from the store itself (which the kill left as it was) with a `commit` or
/// `abandon` line before anything else happens. Every operation changes what it touches (no
/// write of a value already there), so the store tells whether it committed.
@main
struct SyncDeviceProbe {
    static func main() async {
        do {
            try await run(CommandLine.arguments)
        } catch {
            FileHandle.standardError.write(Data("SyncDeviceProbe: \(error)\n".utf8))
            exit(1)
        }
    }

    static func run(_ arguments: [String]) async throws {
        guard arguments.count >= 6, let url = URL(string: arguments[3]), let device = Int(arguments[4]) else {
            FileHandle.standardError.write(Data("usage: SyncDeviceProbe run|settle <store> <url> <device> …\n".utf8))
            exit(2)
        }
        let store = try Store(
            url: URL(fileURLWithPath: arguments[2]), schema: Planner.schema, history: .enabled(author: "app"))
        let partition = PartitionSwitch()
        let transport = PartitionedTransport(
            inner: URLSessionSyncTransport(url: url, credentials: "device-\(device)"), partition: partition)
        let engine = try await SyncEngine(store: store, transport: transport, pullLimit: 7)
        switch arguments[1] {
        case "run":
            guard arguments.count >= 8, let seed = UInt64(arguments[5]), let operations = Int(arguments[6]) else {
                exit(2)
            }
            let log = OperationLog(path: arguments[7])
            let device = Device(number: device, seed: seed, store: store, log: log)
            var (next, offlineUntil) = try await device.resume()
            while next < operations {
                var random = SplitMix64(seed: seed, index: device.number * 1_000_000 + next)
                if next >= offlineUntil, random.chance(0.06) {
                    offlineUntil = next + 3 + random.next(below: 10)
                    try log.append(["phase": "partition", "op": "\(next)", "until": "\(offlineUntil)"])
                }
                partition.set(offline: next < offlineUntil)
                try await device.perform(operation: next, random: &random)
                if random.chance(0.35) { _ = try? await engine.sync() }
                next += 1
            }
            partition.set(offline: false)
            _ = try? await engine.sync()
        case "settle":
            for _ in 0..<20 {
                do {
                    let report = try await engine.sync()
                    if report.pushed == 0, report.pulled == 0 {
                        try store.close()
                        return
                    }
                } catch {
                    FileHandle.standardError.write(Data("SyncDeviceProbe: a settling sync failed: \(error)\n".utf8))
                }
            }
            exit(3)
        default:
            exit(2)
        }
        try store.close()
    }
}

/// The test's record of this device's operations: appended a line at a time, each synced to disk.
struct OperationLog {
    let path: String

    func append(_ entry: [String: String]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        try write(try encoder.encode(entry) + Data("\n".utf8))
    }

    /// Ends a line a kill cut short, so the next entry starts a line of its own (the cut line
    /// stays unreadable, and is skipped).
    func repair() throws {
        guard let data = FileManager.default.contents(atPath: path), let last = data.last,
            last != UInt8(ascii: "\n")
        else { return }
        try write(Data("\n".utf8))
    }

    private func write(_ bytes: Data) throws {
        if !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
        }
        guard let handle = FileHandle(forWritingAtPath: path) else { throw CocoaError(.fileWriteUnknown) }
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: bytes)
        try handle.synchronize()
    }

    /// The entries written whole (a kill may cut the last line short; that intent was never
    /// followed by a commit, so it is dropped with it).
    func entries() throws -> [[String: String]] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        return data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).compactMap {
            try? JSONDecoder().decode([String: String].self, from: Data($0))
        }
    }
}

/// The device's writes: each operation drawn from its own seeded stream, logged around its commit.
struct Device {
    let number: Int
    let seed: UInt64
    let store: Store
    let log: OperationLog

    /// The first operation still to do and the end of the partition in force, after settling an
    /// intent a kill left without its outcome.
    func resume() async throws -> (next: Int, offlineUntil: Int) {
        try log.repair()
        var next = 0
        var offlineUntil = 0
        var open: [String: String]?
        for entry in try log.entries() {
            let operation = Int(entry["op"] ?? "") ?? 0
            switch entry["phase"] {
            case "intent":
                open = entry
                next = max(next, operation + 1)
            case "commit", "abandon":
                open = nil
            case "partition":
                offlineUntil = max(offlineUntil, Int(entry["until"] ?? "") ?? 0)
            default:
                break
            }
        }
        if let open, let operation = open["op"] {
            let committed = try await holds(open)
            try log.append(["phase": committed ? "commit" : "abandon", "op": operation])
        }
        return (next, offlineUntil)
    }

    /// Whether the store holds what `intent` wrote.
    private func holds(_ intent: [String: String]) async throws -> Bool {
        let card = intent["card"].flatMap(UUID.init(uuidString:)).map { Card.ID($0) }
        let label = intent["label"].flatMap(UUID.init(uuidString:)).map { Label.ID($0) }
        let value = intent["value"] ?? ""
        return try await store.performQuery { context in
            let found = try card.flatMap { id in try context.fetch(Card.request().filter { $0.id == id }).first }
            switch intent["kind"] {
            case "insertCard": return found != nil
            case "insertLabel", "deleteLabel":
                let exists = try label.map { id in try context.fetch(Label.request().filter { $0.id == id }) } ?? []
                return exists.isEmpty == (intent["kind"] == "deleteLabel")
            case "deleteCard": return found == nil
            case "title": return found?.title == value
            case "rating": return found.map { "\($0.rating)" } == value
            case "parent": return found.map { $0.parentID?.uuid.uuidString ?? "" } == value
            case "link", "unlink":
                guard let card, let label else { return false }
                let linked = try context.fetch(
                    Card.request().filter { $0.id == card && $0.labels.any { $0.id == label } })
                return linked.isEmpty == (intent["kind"] == "unlink")
            default: return false
            }
        }
    }

    /// Draws one operation, logs its intent, commits it, logs the commit. An operation that would
    /// change nothing (a value already there, a link already in place) is skipped, unlogged.
    func perform(operation: Int, random: inout SplitMix64) async throws {
        let (cards, labels) = try await store.performQuery { context in
            (
                try context.fetch(Card.request()).sorted { $0.id.uuid.uuidString < $1.id.uuid.uuidString },
                try context.fetch(Label.request()).sorted { $0.id.uuid.uuidString < $1.id.uuid.uuidString }
            )
        }
        let tag = "d\(number)-\(operation)"
        var entry: [String: String] = ["phase": "intent", "op": "\(operation)"]
        let choice = random.next(below: 20)
        let write: @Sendable (WriteContext) throws -> Void
        if choice < 4 || cards.isEmpty {
            let parent = cards.isEmpty || random.chance(0.5) ? nil : random.pick(cards).id
            let card = Card(title: tag, rating: Int64(operation), done: random.chance(0.5), parentID: parent)
            entry["kind"] = "insertCard"
            entry["card"] = card.id.uuid.uuidString
            entry["title"] = card.title
            entry["rating"] = "\(card.rating)"
            entry["done"] = "\(card.done)"
            entry["parent"] = parent?.uuid.uuidString ?? ""
            write = { try $0.insert(card) }
        } else if choice < 6 || labels.isEmpty {
            let label = Label(name: tag)
            entry["kind"] = "insertLabel"
            entry["label"] = label.id.uuid.uuidString
            entry["name"] = label.name
            write = { try $0.insert(label) }
        } else if choice < 12 {
            var card = random.pick(cards)
            entry["card"] = card.id.uuid.uuidString
            switch random.next(below: 3) {
            case 0:
                card.title = tag
                entry["kind"] = "title"
                entry["value"] = tag
            case 1:
                card.rating = Int64(number * 1_000_000 + operation)
                entry["kind"] = "rating"
                entry["value"] = "\(card.rating)"
            default:
                let parent = random.chance(0.3) ? nil : random.pick(cards).id
                guard parent != card.parentID else { return }
                card.parentID = parent
                entry["kind"] = "parent"
                entry["value"] = parent?.uuid.uuidString ?? ""
            }
            write = { [card] in try $0.update(card) }
        } else if choice < 16 {
            let card = random.pick(cards).id
            let label = random.pick(labels).id
            let linked = try await store.performQuery { context in
                try !context.fetch(Card.request().filter { $0.id == card && $0.labels.any { $0.id == label } }).isEmpty
            }
            entry["kind"] = linked ? "unlink" : "link"
            entry["card"] = card.uuid.uuidString
            entry["label"] = label.uuid.uuidString
            write = { context in
                if linked {
                    try context.unlink(card, from: label) { $0.labels }
                } else {
                    try context.link(card, to: label) { $0.labels }
                }
            }
        } else if choice < 19 {
            let card = random.pick(cards).id
            entry["kind"] = "deleteCard"
            entry["card"] = card.uuid.uuidString
            write = { try $0.delete(card) }
        } else {
            let label = random.pick(labels).id
            entry["kind"] = "deleteLabel"
            entry["label"] = label.uuid.uuidString
            write = { try $0.delete(label) }
        }
        try log.append(entry)
        try await store.performAndSave { try write($0) }
        try log.append(["phase": "commit", "op": "\(operation)"])
    }
}

/// Whether the device is cut off: while it is, every request fails before it leaves the process.
final class PartitionSwitch: @unchecked Sendable {
    private let lock = NSLock()
    private var offline = false

    func set(offline: Bool) {
        lock.withLock { self.offline = offline }
    }

    var isOffline: Bool { lock.withLock { offline } }
}

/// The HTTP transport behind the partition switch.
struct PartitionedTransport: SyncTransport {
    struct Partitioned: Error {}

    let inner: URLSessionSyncTransport
    let partition: PartitionSwitch

    func push(_ request: PushRequest) async throws -> PushResponse {
        if partition.isOffline { throw Partitioned() }
        return try await inner.push(request)
    }

    func pull(_ request: PullRequest) async throws -> PullResponse {
        if partition.isOffline { throw Partitioned() }
        return try await inner.pull(request)
    }
}
