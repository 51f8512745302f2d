import Foundation
import Notes

/// The offline burst: each device makes `changes` changes offline, each its own transaction (four
/// in five insert a note, one in five edits one of the device's earlier notes), then all sync at
/// once, again and again until every device holds every note. Prints the time to converge, the
/// bytes of sync bodies each way, and peak memory of the devices' process and of the server.
struct Burst {
    let url: URL
    let token: String
    let changes: Int
    let deviceCount: Int
    /// Rows per pull (`--pull-limit`, the engine's default when not given).
    let pullLimit: Int

    init(options: Options) throws {
        url = try options.url()
        token = try options.string("token")
        changes = try options.int("changes", default: 10_000)
        deviceCount = max(1, try options.int("devices", default: 3))
        pullLimit = max(1, try options.int("pull-limit", default: SyncEngine.defaultPullLimit))
    }

    func run() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var devices: [Device] = []
        let timing = TransportTiming()
        for index in 0..<deviceCount {
            devices.append(
                try await .open(
                    name: "device\(index)", user: "ines", token: token, url: url, in: directory, pullLimit: pullLimit,
                    timing: timing))
        }
        let offline = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for device in devices { group.addTask { try await makeChanges(on: device) } }
            try await group.waitForAll()
        }
        let expected = try await devices.asyncMap { try await $0.noteCount() }.reduce(0, +)
        print("burst: \(deviceCount) devices made \(changes) changes each offline in \(ContinuousClock.now - offline)")

        let before = try await ServerStats.read(from: url)
        let cpuBefore = processCPUSeconds()
        let start = ContinuousClock.now
        var rounds = 0
        while true {
            rounds += 1
            try await withThrowingTaskGroup(of: Void.self) { group in
                for device in devices {
                    group.addTask {
                        let begun = ContinuousClock.now
                        try await device.engine.sync()
                        await timing.record(sync: ContinuousClock.now - begun)
                    }
                }
                try await group.waitForAll()
            }
            let counts = try await devices.asyncMap { try await $0.noteCount() }
            if counts.allSatisfy({ $0 == expected }) { break }
            guard rounds < 10 else { throw Failure("no convergence after \(rounds) rounds: \(counts) of \(expected)") }
        }
        let converged = ContinuousClock.now - start
        let cpu = processCPUSeconds() - cpuBefore
        let after = try await ServerStats.read(from: url)

        let first = try await devices[0].snapshot(withLinks: false)
        for device in devices.dropFirst() where try await device.snapshot(withLinks: false) != first {
            throw Failure("\(device.name) holds other notes than \(devices[0].name)")
        }
        let megabytes = { (bytes: Int) in String(format: "%.1f MB", Double(bytes) / 1_000_000) }
        print("burst: converged on \(expected) notes in \(converged) (\(rounds) rounds of concurrent syncs)")
        print(
            "burst: sent to the server \(megabytes(after.receivedBytes - before.receivedBytes)), "
                + "received from it \(megabytes(after.sentBytes - before.sentBytes)), "
                + "in \(after.requests - before.requests) requests")
        print(
            "burst: peak memory: devices' process \(megabytes(peakResidentBytes())), "
                + "server \(megabytes(after.peakResidentBytes))")
        // Where the time went, summed over the devices (they sync at once, so the sums exceed the
        // time to converge): waiting on pushes and pulls (the server's work and HTTP), and the rest
        // of each sync (stamping, reading pending rows, applying pages) on the device.
        let (push, pull, pushes, pulls) = (
            await timing.push, await timing.pull, await timing.pushes, await timing.pulls
        )
        let seconds = { (duration: Duration) in
            let (whole, fraction) = duration.components
            return String(format: "%.2f s", Double(whole) + Double(fraction) / 1e18)
        }
        let total = await timing.syncing
        print(
            "burst: device time, summed: syncing \(seconds(total)) = waiting on \(pushes) pushes \(seconds(push)) "
                + "+ on \(pulls) pulls \(seconds(pull)) + on the device \(seconds(total - push - pull))")
        let figure = { (value: Double?) in value.map { String(format: "%.2f s", $0) } ?? "?" }
        print(
            "burst: CPU: devices' process \(String(format: "%.2f s", cpu)), server "
                + "\(figure(after.cpuSeconds.flatMap { now in before.cpuSeconds.map { now - $0 } })); server answering "
                + "pushes \(figure(after.pushSeconds.flatMap { now in before.pushSeconds.map { now - $0 } })), "
                + "pulls \(figure(after.pullSeconds.flatMap { now in before.pullSeconds.map { now - $0 } }))")
    }

    private func makeChanges(on device: Device) async throws {
        var mine: [Note] = []
        for change in 0..<changes {
            if change % 5 == 4, !mine.isEmpty {
                let index = (change * 7) % mine.count
                let edited = mine[index].with(body: "edit \(change)", revision: mine[index].revision + 1)
                try await device.store.performAndSave { try $0.update(edited) }
                mine[index] = edited
            } else {
                let note = Note(owner: device.user, title: "\(device.name) note \(change)", body: "written offline")
                try await device.store.performAndSave { try $0.insert(note) }
                mine.append(note)
            }
        }
    }
}

extension Device {
    func noteCount() async throws -> Int {
        try await store.performQuery { try $0.count(Note.request()) }
    }
}

extension Array where Element: Sendable {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async throws -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
