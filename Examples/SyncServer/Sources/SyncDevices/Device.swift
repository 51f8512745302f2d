import Foundation
import Notes

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One device: its own SQLite store, which records history, and a sync engine that reaches the
/// server over HTTP with the user's bearer token.
struct Device: Sendable {
    let name: String
    let user: String
    let store: Store
    let engine: SyncEngine

    static func open(
        name: String, user: String, token: String?, url: URL, in directory: URL,
        pullLimit: Int = SyncEngine.defaultPullLimit, timing: TransportTiming? = nil
    ) async throws -> Device {
        let store = try Store(
            url: directory.appendingPathComponent("\(name).sqlite"), migrationPlan: Notes.migrationPlan(NotesStages()),
            history: .enabled(author: "app"))
        let http = URLSessionSyncTransport(url: url, credentials: token)
        let transport: any SyncTransport = timing.map { TimedTransport(http, timing: $0) } ?? http
        let engine = try await SyncEngine(store: store, transport: transport, pullLimit: pullLimit)
        return Device(name: name, user: user, store: store, engine: engine)
    }

    /// Everything sync moves, in an order that does not depend on the store: every note and tag,
    /// and each note's tags.
    func snapshot(withLinks: Bool = true) async throws -> Snapshot {
        try await store.performQuery { context in
            let notes = try context.fetch(Note.request()).sorted { $0.id.uuid.uuidString < $1.id.uuid.uuidString }
            let tags = try context.fetch(Tag.request()).sorted { $0.id.uuid.uuidString < $1.id.uuid.uuidString }
            var links: [String: [String]] = [:]
            if withLinks {
                for note in notes {
                    let tagged = try context.fetch(note.tagsRequest).map(\.id.uuid.uuidString).sorted()
                    if !tagged.isEmpty { links[note.id.uuid.uuidString] = tagged }
                }
            }
            return Snapshot(notes: notes, tags: tags, links: links)
        }
    }
}

/// What a device holds of the synced model; converged devices have equal snapshots.
struct Snapshot: Equatable {
    var notes: [Note]
    var tags: [Tag]
    var links: [String: [String]]

    var summary: String {
        "\(notes.count) notes, \(tags.count) tags, \(links.values.map(\.count).reduce(0, +)) links"
    }

    /// The first difference from `other`, in words.
    func difference(from other: Snapshot) -> String {
        if notes.count != other.notes.count || tags.count != other.tags.count {
            return "\(summary) vs \(other.summary)"
        }
        if let index = notes.indices.first(where: { notes[$0] != other.notes[$0] }) {
            return "note \(notes[index]) vs \(other.notes[index])"
        }
        if let index = tags.indices.first(where: { tags[$0] != other.tags[$0] }) {
            return "tag \(tags[index]) vs \(other.tags[index])"
        }
        return "links \(links) vs \(other.links)"
    }
}

/// A fresh folder for the devices' stores, removed when the run ends.
func temporaryDirectory() throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync-devices-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}

/// The current process's peak resident memory (`VmHWM`), where `/proc` tells it; 0 elsewhere.
func peakResidentBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return (line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0) * 1024
    }
    return 0
}

/// This process's CPU time (user and system) so far, in seconds.
func processCPUSeconds() -> Double {
    var usage = rusage()
    #if os(Linux)
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    #else
        getrusage(RUSAGE_SELF, &usage)
    #endif
    let seconds = { (time: timeval) in Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// The time the devices' engines spent in syncs, and waited on pushes and on pulls within them:
/// each request from its encoding to its decoded answer (the server's work and HTTP with it),
/// summed over every device.
actor TransportTiming {
    private(set) var syncing: Duration = .zero
    private(set) var push: Duration = .zero
    private(set) var pull: Duration = .zero
    private(set) var pushes = 0
    private(set) var pulls = 0

    func record(sync duration: Duration) {
        syncing += duration
    }

    func record(push duration: Duration) {
        push += duration
        pushes += 1
    }

    func record(pull duration: Duration) {
        pull += duration
        pulls += 1
    }
}

/// A transport that times every request of the one it wraps.
struct TimedTransport: SyncTransport {
    let wrapped: any SyncTransport
    let timing: TransportTiming

    init(_ wrapped: any SyncTransport, timing: TransportTiming) {
        self.wrapped = wrapped
        self.timing = timing
    }

    func push(_ request: PushRequest) async throws -> PushResponse {
        let start = ContinuousClock.now
        let response = try await wrapped.push(request)
        await timing.record(push: ContinuousClock.now - start)
        return response
    }

    func pull(_ request: PullRequest) async throws -> PullResponse {
        let start = ContinuousClock.now
        let response = try await wrapped.pull(request)
        await timing.record(pull: ContinuousClock.now - start)
        return response
    }
}

/// What the server's `GET /stats` reports.
struct ServerStats: Decodable {
    var requests: Int
    var receivedBytes: Int
    var sentBytes: Int
    var peakResidentBytes: Int
    /// The server process's CPU time so far, and the time it spent answering pushes and pulls.
    var cpuSeconds: Double?
    var pushSeconds: Double?
    var pullSeconds: Double?

    static func read(from syncURL: URL) async throws -> ServerStats {
        let url = syncURL.deletingLastPathComponent().appendingPathComponent("stats")
        let (data, _) = try await URLSession.shared.data(from: url)
        return try JSONDecoder().decode(ServerStats.self, from: data)
    }
}
