import Foundation
import Notes

/// The steady trickle: every device's engine syncs on its own with the default settings
/// (``SyncEngine/start(every:syncsOnLocalCommits:)``; `--on-commit false` polls only), and every device raises the
/// revision of its own note once a second, the devices a fraction of a second apart. Each other
/// device observes its notes (``Store/observe(_:)``); the latency of a change is the time from its
/// commit returning on one device to the observation that shows it on another. Prints the
/// percentiles over every (change, observing device) pair after a short warm-up.
struct Trickle {
    let url: URL
    let token: String
    let seconds: Int
    let deviceCount: Int
    /// Whether engines push at once after a local commit (the default) or only at each poll.
    let syncsOnLocalCommits: Bool

    init(options: Options) throws {
        url = try options.url()
        token = try options.string("token")
        seconds = max(2, try options.int("seconds", default: 60))
        deviceCount = max(2, try options.int("devices", default: 3))
        syncsOnLocalCommits = options.string("on-commit", default: "true") != "false"
    }

    func run() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var devices: [Device] = []
        var tickers: [Note] = []
        for index in 0..<deviceCount {
            let device = try await Device.open(
                name: "device\(index)", user: "ines", token: token, url: url, in: directory)
            let ticker = Note(owner: "ines", title: "ticker of \(device.name)")
            try await device.store.performAndSave { try $0.insert(ticker) }
            devices.append(device)
            tickers.append(ticker)
        }
        for device in devices { try await device.engine.sync() }
        for device in devices { try await device.engine.sync() }

        let log = LatencyLog()
        let clock = ContinuousClock()
        let origin = clock.now
        let observers = devices.map { device in
            Task {
                for try await notes in device.store.observe(Note.request()) {
                    let now = clock.now
                    for note in notes { await log.observed(note.id, revision: note.revision, by: device.name, at: now) }
                }
            }
        }
        try await Task.sleep(for: .milliseconds(200))
        for device in devices { device.engine.start(syncsOnLocalCommits: syncsOnLocalCommits) }

        let total = seconds
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, device) in devices.enumerated() {
                let ticker = tickers[index]
                let offset = Duration.milliseconds(1000 * index / devices.count)
                group.addTask {
                    var current = ticker
                    for second in 0..<total {
                        try await clock.sleep(until: origin + .seconds(second) + offset)
                        let next = current.with(revision: current.revision + 1)
                        try await device.store.performAndSave { try $0.update(next) }
                        await log.committed(next.id, revision: next.revision, by: device.name, at: clock.now)
                        current = next
                    }
                }
            }
            try await group.waitForAll()
        }
        try await Task.sleep(for: .seconds(2))
        for device in devices { device.engine.stop() }
        for observer in observers { observer.cancel() }

        let latencies = await log.latencies(observers: devices.count - 1, warmUp: origin + .seconds(3))
        guard !latencies.isEmpty else { throw Failure("no change was observed on another device") }
        let milliseconds = latencies.map {
            Double($0.components.attoseconds) / 1e15 + Double($0.components.seconds) * 1000
        }
        .sorted()
        func percentile(_ p: Double) -> String {
            String(format: "%.0f ms", milliseconds[min(milliseconds.count - 1, Int(Double(milliseconds.count) * p))])
        }
        let missing = await log.unobserved(observers: devices.count - 1, warmUp: origin + .seconds(3))
        print(
            "trickle: \(deviceCount) devices, 1 change a second each for \(seconds) s, engines at the default "
                + "interval (\(SyncEngine.defaultInterval)), syncs on local commits: \(syncsOnLocalCommits): "
                + "\(milliseconds.count) observations, "
                + "p50 \(percentile(0.5)), p90 \(percentile(0.9)), p99 \(percentile(0.99)), "
                + "max \(String(format: "%.0f ms", milliseconds.last ?? 0)), never observed \(missing)")
    }
}

/// When each change was committed and when each other device first showed it (or a later revision
/// of the same note, which shows it too).
private actor LatencyLog {
    private struct Change: Hashable {
        let note: Note.ID
        let revision: Int64
    }
    private var commits: [Change: (device: String, at: ContinuousClock.Instant)] = [:]
    private var seen: [Change: [String: ContinuousClock.Instant]] = [:]
    private var newest: [String: [Note.ID: Int64]] = [:]

    func committed(_ note: Note.ID, revision: Int64, by device: String, at instant: ContinuousClock.Instant) {
        commits[Change(note: note, revision: revision)] = (device, instant)
    }

    func observed(_ note: Note.ID, revision: Int64, by device: String, at instant: ContinuousClock.Instant) {
        let previous = newest[device, default: [:]][note] ?? revision
        newest[device, default: [:]][note] = max(previous, revision)
        guard revision > previous else { return }
        for shown in (previous + 1)...revision {
            seen[Change(note: note, revision: shown), default: [:]][device] = instant
        }
    }

    func latencies(observers: Int, warmUp: ContinuousClock.Instant) -> [Duration] {
        var result: [Duration] = []
        for (change, commit) in commits where commit.at >= warmUp {
            for (device, instant) in seen[change, default: [:]] where device != commit.device {
                result.append(instant - commit.at)
            }
        }
        return result
    }

    func unobserved(observers: Int, warmUp: ContinuousClock.Instant) -> Int {
        commits.filter { change, commit in
            commit.at >= warmUp && seen[change, default: [:]].keys.filter { $0 != commit.device }.count < observers
        }.count
    }
}
