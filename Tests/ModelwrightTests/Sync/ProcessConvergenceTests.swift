import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Devices as separate processes (`SyncDeviceProbe`), each on its own store file, sync with a
/// server this test hosts over HTTP on loopback. Each device makes seeded random inserts, updates,
/// deletes, links and unlinks, goes offline for drawn stretches, and is killed with SIGKILL: when
/// the server receives its push or its pull (before applying it, or after, the answer then lost),
/// and at drawn moments after it starts (mid-commit, mid-sync, anywhere), then started again on
/// the same store. Once every device has done its operations, each syncs until quiet, and:
/// every device's store equals the server's row for row and link for link, with the same stamps;
/// each attribute holds the last write of one of its writers (of its only writer, when there is
/// one); no row any device committed is lost and none appears that no device committed; no
/// foreign key dangles and no link joins a missing row. What each device committed is read from the log it keeps (synced to disk
/// around each commit), not from its store.
///
/// The CI run is small (3 devices, 30 operations each, one kill mid-push and one mid-pull);
/// `MODELWRIGHT_LARGE=1` runs 5 devices, 1,500 operations each and 60 kills.
@Suite(.ownThread, .serialized) struct ProcessConvergenceTests {
    static let isLarge = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1"
    private static let probe = builtExecutable(named: "SyncDeviceProbe")

    /// The size of one run.
    struct Plan {
        var devices: Int
        var operations: Int
        /// Kills when a device's push or pull reaches the server, per device drawn in order.
        var requestKills: Int
        /// Kills at a drawn moment after a device (re)starts.
        var timedKills: Int
    }

    static let plan =
        isLarge
        ? Plan(devices: 5, operations: 1_500, requestKills: 40, timedKills: 20)
        : Plan(devices: 3, operations: 30, requestKills: 2, timedKills: 0)

    @Test func deviceProcessesConvergeThroughKillsAndPartitions() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.probe), "build the SyncDeviceProbe target")
        let seed = UInt64(ProcessInfo.processInfo.environment["MODELWRIGHT_SYNC_SEED"] ?? "") ?? 2_828
        let started = Date()
        let outcome = try await run(seed: seed, plan: Self.plan)
        let seconds = Date().timeIntervalSince(started)
        print(
            "ProcessConvergenceTests: seed \(seed), \(Self.plan.devices) device processes, "
                + "\(outcome.operations) operations committed (\(outcome.abandoned) cut off by a kill before commit), "
                + "\(outcome.kills.count) kills (\(outcome.count("push")) mid-push, \(outcome.count("pull")) mid-pull, "
                + "\(outcome.count("timed")) timed), \(outcome.partitions) partitions, \(outcome.requests) requests; "
                + "final: \(outcome.rows) rows and \(outcome.links) links on the server, "
                + "\(outcome.rowsCompared) rows compared; \(String(format: "%.1f", seconds)) s")
        #expect(outcome.count("push") > 0 && outcome.count("pull") > 0, "no kill landed mid-push or mid-pull")
        #expect(outcome.kills.count >= Self.plan.requestKills)
    }

    // MARK: - Kills

    /// One kill the test makes: which device, and when.
    struct Kill: Sendable, CustomStringConvertible {
        enum Moment: Sendable {
            /// When the server receives the device's `ordinal`th push or pull (counted across
            /// restarts); with `afterApplying`, after the server applied it (the answer is lost).
            case request(kind: String, ordinal: Int, afterApplying: Bool)
            /// `milliseconds` after the device's process starts.
            case timed(milliseconds: Int)
        }

        let device: Int
        let moment: Moment

        var description: String {
            switch moment {
            case .request(let kind, let ordinal, let after):
                "device \(device) at its \(kind) #\(ordinal) \(after ? "after" : "before") the server applied it"
            case .timed(let milliseconds):
                "device \(device) \(milliseconds) ms after a start"
            }
        }
    }

    /// The kills of a run, drawn from the seed: request kills spread over each device's requests,
    /// alternately pushes and pulls; timed kills after drawn starts.
    static func schedule(seed: UInt64, plan: Plan) -> [[Kill]] {
        var random = SplitMix64(seed: seed, index: 1)
        var kills = Array(repeating: [Kill](), count: plan.devices)
        // A device syncs after about a third of its operations; a sync is a push and one or more pulls.
        let requestSpan = max(2, plan.operations / 3)
        var ordinals: [String: Int] = [:]
        for index in 0..<plan.requestKills {
            let device = plan.requestKills <= plan.devices ? index : random.next(below: plan.devices)
            let kind = index % 2 == 0 ? "push" : "pull"
            let key = "\(device).\(kind)"
            let spacing = max(1, requestSpan / max(1, plan.requestKills / plan.devices))
            let ordinal = (ordinals[key] ?? 0) + 1 + random.next(below: min(spacing, 3 + plan.operations / 30))
            ordinals[key] = ordinal
            kills[device].append(
                Kill(
                    device: device,
                    moment: .request(kind: kind, ordinal: ordinal, afterApplying: random.chance(0.5))))
        }
        for _ in 0..<plan.timedKills {
            let device = random.next(below: plan.devices)
            kills[device].append(Kill(device: device, moment: .timed(milliseconds: 50 + random.next(below: 2_000))))
        }
        return kills
    }

    // MARK: - The run

    /// What one run did.
    struct Outcome {
        var kills: [Kill] = []
        var operations = 0
        var abandoned = 0
        var partitions = 0
        var requests = 0
        var rows = 0
        var links = 0
        var rowsCompared = 0

        func count(_ kind: String) -> Int {
            kills.filter {
                switch $0.moment {
                case .request(let requestKind, _, _): requestKind == kind
                case .timed: kind == "timed"
                }
            }.count
        }
    }

    /// The device processes, shared with the server's answer closure, which kills them.
    final class Fleet: Sendable {
        struct Member {
            var process: Process?
            var requests: [String: Int] = [:]
            var pending: [Kill]
            var fired: [Kill] = []
            var started = Date()
            var finished = false
        }

        let members: Locked<[Member]>

        init(schedule: [[Kill]]) {
            members = Locked(schedule.map { Member(pending: $0) })
        }

        /// Counts a request and says whether it is the one to kill its sender at, and when.
        func request(from device: Int, kind: String) -> (kill: Bool, afterApplying: Bool) {
            members.withLock { members in
                members[device].requests[kind, default: 0] += 1
                let ordinal = members[device].requests[kind] ?? 0
                guard
                    let index = members[device].pending.firstIndex(where: {
                        if case .request(kind, ordinal, _) = $0.moment { return true }
                        return false
                    })
                else { return (false, false) }
                let kill = members[device].pending.remove(at: index)
                members[device].fired.append(kill)
                guard case .request(_, _, let after) = kill.moment else { return (false, false) }
                return (true, after)
            }
        }

        /// Kills the device's running process, with SIGKILL.
        func kill(_ device: Int) {
            members.withLock { members in
                if let process = members[device].process, process.isRunning {
                    sendSignal(SIGKILL, to: process.processIdentifier)
                }
            }
        }
    }

    private func run(seed: UInt64, plan: Plan) async throws -> Outcome {
        // A killed device's socket closes under the server's answer: a write to it must fail, not
        // raise SIGPIPE in the test process.
        signal(SIGPIPE, SIG_IGN)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("syncproc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let serverURL = folder.appendingPathComponent("server.sqlite")
        let serverStore = try Store(url: serverURL, schema: SyncPlanner.schema, history: .enabled(author: "server"))
        defer { try? serverStore.close() }
        let server = try await SyncServer(store: serverStore)
        let schedule = Self.schedule(seed: seed, plan: plan)
        let fleet = Fleet(schedule: schedule)
        let http = try LoopbackHTTPServer { body, token in
            guard let token, token.hasPrefix("device-"), let device = Int(token.dropFirst("device-".count)),
                device < plan.devices,
                let request = try? JSONDecoder().decode(SyncHTTPRequest.self, from: body)
            else { return await server.handle(body, credentials: token) }
            let kind: String
            switch request {
            case .push: kind = "push"
            case .pull: kind = "pull"
            }
            let (kill, afterApplying) = fleet.request(from: device, kind: kind)
            guard kill else { return await server.handle(body, credentials: token) }
            if !afterApplying {
                fleet.kill(device)
                return Data()
            }
            let answer = await server.handle(body, credentials: token)
            fleet.kill(device)
            return answer
        }
        defer { http.stop() }
        let url = "http://127.0.0.1:\(http.port)/sync"
        let stores = (0..<plan.devices).map { folder.appendingPathComponent("device-\($0).sqlite") }
        let logs = (0..<plan.devices).map { folder.appendingPathComponent("device-\($0).log").path }
        let errors = (0..<plan.devices).map { folder.appendingPathComponent("device-\($0).stderr").path }
        for path in errors { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        let context =
            "seed \(seed); kill schedule: \(schedule.flatMap { $0 }.map(\.description).joined(separator: "; "))"

        func launch(_ device: Int, _ arguments: [String]) throws -> Process {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.probe)
            process.arguments = [arguments[0], stores[device].path, url, "\(device)"] + arguments.dropFirst()
            process.standardOutput = FileHandle.nullDevice
            let errorHandle = FileHandle(forWritingAtPath: errors[device])
            try errorHandle?.seekToEnd()
            process.standardError = errorHandle
            try process.run()
            return process
        }
        func failure(_ device: Int, _ what: String) -> String {
            let stderr = (try? String(contentsOfFile: errors[device], encoding: .utf8)) ?? ""
            return "\(context): device \(device) \(what); its stderr: \(stderr)"
        }

        // Every device does its operations, killed and started again as the schedule says.
        let runArguments = { (device: Int) in ["run", "\(seed)", "\(plan.operations)", logs[device]] }
        for device in 0..<plan.devices {
            let process = try launch(device, runArguments(device))
            fleet.members.withLock {
                $0[device].process = process
                $0[device].started = Date()
            }
        }
        let deadline = Date().addingTimeInterval(Self.isLarge ? 3_600 : 120)
        var failed = false
        while !failed {
            let snapshot = fleet.members.withLock { $0 }
            if snapshot.allSatisfy(\.finished) { break }
            guard Date() < deadline else {
                Issue.record("\(context): the devices did not finish in time")
                for device in 0..<plan.devices { fleet.kill(device) }
                return Outcome()
            }
            for (device, member) in snapshot.enumerated() where !member.finished {
                guard let process = member.process else { continue }
                if process.isRunning {
                    // A timed kill due now.
                    let elapsed = Int(Date().timeIntervalSince(member.started) * 1000)
                    let due = fleet.members.withLock { members -> Bool in
                        guard
                            let index = members[device].pending.firstIndex(where: {
                                if case .timed(let milliseconds) = $0.moment { return milliseconds <= elapsed }
                                return false
                            })
                        else { return false }
                        members[device].fired.append(members[device].pending.remove(at: index))
                        return true
                    }
                    if due { fleet.kill(device) }
                    continue
                }
                if process.terminationReason == .uncaughtSignal, process.terminationStatus == SIGKILL {
                    let next = try launch(device, runArguments(device))
                    fleet.members.withLock {
                        $0[device].process = next
                        $0[device].started = Date()
                    }
                } else if process.terminationStatus == 0 {
                    fleet.members.withLock { $0[device].finished = true }
                } else {
                    Issue.record(
                        Comment(rawValue: failure(device, "exited with \(process.terminationStatus) while running")))
                    failed = true
                }
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        guard !failed else { return Outcome() }
        // Healed and quiet: each device syncs until a sync moves nothing, twice round.
        for _ in 0..<2 {
            for device in 0..<plan.devices {
                let process = try launch(device, ["settle", logs[device]])
                // Polled, not waited for: a blocked thread of the cooperative pool would be one the
                // server's answers cannot run on.
                while process.isRunning { try await Task.sleep(for: .milliseconds(5)) }
                guard process.terminationStatus == 0 else {
                    Issue.record(Comment(rawValue: failure(device, "did not settle (\(process.terminationStatus))")))
                    return Outcome()
                }
            }
        }
        var outcome = Outcome()
        let members = fleet.members.withLock { $0 }
        outcome.kills = members.flatMap(\.fired)
        outcome.requests = members.map { $0.requests.values.reduce(0, +) }.reduce(0, +)
        var oracle = Oracle()
        for (device, path) in logs.enumerated() {
            let entries = try Self.entries(path)
            oracle.read(entries, device: device)
            outcome.partitions += entries.filter { $0["phase"] == "partition" }.count
        }
        outcome.operations = oracle.committed
        outcome.abandoned = oracle.abandoned
        #expect(oracle.unsettled.isEmpty, "\(context): intents without an outcome: \(oracle.unsettled)")
        let expected = try await SyncSnapshot.read(serverStore)
        outcome.rows = expected.rows.count
        outcome.links = expected.links.count
        let records = try await Self.records(of: oracle.touched, in: serverStore)
        for (device, url) in stores.enumerated() {
            let store = try Store(url: url, schema: SyncPlanner.schema, history: .enabled(author: "app"))
            defer { try? store.close() }
            let found = try await SyncSnapshot.read(store)
            #expect(found == expected, "\(context): device \(device) has \(found), the server \(expected)")
            for (key, values) in expected.rows where found.rows[key] != values {
                Issue.record(
                    "\(context): device \(device) holds \(key) as \(found.rows[key] as Any), the server \(values)")
            }
            let deviceRecords = try await Self.records(of: oracle.touched, in: store)
            for (key, record) in records where deviceRecords[key] != record {
                Issue.record("\(context): device \(device)'s stamps of \(key) differ from the server's")
            }
            let violations = try await store.performQuery { context in
                let statement = try context.connection.statement("PRAGMA foreign_key_check")
                defer { statement.reset() }
                var count = 0
                while try statement.step() { count += 1 }
                return count
            }
            #expect(violations == 0, "\(context): device \(device) has \(violations) dangling foreign keys")
            outcome.rowsCompared += found.rows.count
        }
        oracle.check(expected, context: context)
        return outcome
    }

    private static func entries(_ path: String) throws -> [[String: String]] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        return data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).compactMap {
            try? JSONDecoder().decode([String: String].self, from: Data($0))
        }
    }

    /// What a store's sync bookkeeping knows of each row: its values with their stamps, its
    /// tombstone and its link stamps.
    private static func records(of keys: Set<RowKey>, in store: Store) async throws -> [RowKey: RowChange] {
        try await store.performQuery { context in
            var records: [RowKey: RowChange] = [:]
            for key in keys {
                records[key] = try SyncBookkeeping.change(of: key, on: context.connection)
            }
            return records
        }
    }

    // MARK: - The oracle

    /// What the devices committed, from their logs.
    struct Oracle {
        /// Each attribute's committed writes, in each device's order.
        var writes: [RowKey: [String: [(device: Int, value: SyncValue)]]] = [:]
        var inserted: Set<RowKey> = []
        var deleted: Set<RowKey> = []
        var linkWrites: [[UUID]: [(device: Int, present: Bool)]] = [:]
        var committed = 0
        var abandoned = 0
        var unsettled: [String] = []

        var touched: Set<RowKey> { inserted.union(deleted) }

        mutating func read(_ entries: [[String: String]], device: Int) {
            var outcomes: [String: String] = [:]
            for entry in entries where entry["phase"] == "commit" || entry["phase"] == "abandon" {
                outcomes[entry["op"] ?? ""] = entry["phase"]
            }
            for entry in entries where entry["phase"] == "intent" {
                let operation = entry["op"] ?? ""
                switch outcomes[operation] {
                case "commit"?: committed += 1
                case "abandon"?:
                    abandoned += 1
                    continue
                default:
                    unsettled.append("device \(device) op \(operation)")
                    continue
                }
                let card = entry["card"].flatMap(UUID.init(uuidString:)).map { RowKey(entity: "Card", id: $0) }
                let label = entry["label"].flatMap(UUID.init(uuidString:)).map { RowKey(entity: "Label", id: $0) }
                func write(_ key: RowKey?, _ name: String, _ value: SyncValue) {
                    guard let key else { return }
                    writes[key, default: [:]][name, default: []].append((device, value))
                }
                func reference(_ text: String?) -> SyncValue {
                    text.flatMap(UUID.init(uuidString:)).map(SyncValue.uuid) ?? .null
                }
                switch entry["kind"] {
                case "insertCard":
                    if let card { inserted.insert(card) }
                    write(card, "title", .text(entry["title"] ?? ""))
                    write(card, "rating", .integer(Int64(entry["rating"] ?? "") ?? -1))
                    write(card, "done", .bool(entry["done"] == "true"))
                    write(card, "due", .null)
                    write(card, "owner", .text(""))
                    write(card, "parent", reference(entry["parent"]))
                case "insertLabel":
                    if let label { inserted.insert(label) }
                    write(label, "name", .text(entry["name"] ?? ""))
                    write(label, "owner", .text(""))
                case "title": write(card, "title", .text(entry["value"] ?? ""))
                case "rating": write(card, "rating", .integer(Int64(entry["value"] ?? "") ?? -1))
                case "parent": write(card, "parent", reference(entry["value"]))
                case "link", "unlink":
                    if let card, let label {
                        linkWrites[[card.id, label.id], default: []].append((device, entry["kind"] == "link"))
                    }
                case "deleteCard": if let card { deleted.insert(card) }
                case "deleteLabel": if let label { deleted.insert(label) }
                default: unsettled.append("device \(device) op \(operation): unknown kind")
                }
            }
        }

        /// The server holds exactly the rows committed and not deleted, each attribute at the last
        /// write of one of its writers (of its only writer, when it had one), and each link between
        /// live rows as its last write says when one device alone wrote it.
        func check(_ snapshot: SyncSnapshot, context: String) {
            for key in snapshot.rows.keys where !inserted.contains(key) {
                Issue.record("\(context): \(key) is on the server, and no device committed it")
            }
            for key in deleted {
                #expect(snapshot.rows[key] == nil, "\(context): \(key) was deleted and is still there")
            }
            for key in inserted where !deleted.contains(key) {
                guard let values = snapshot.rows[key] else {
                    Issue.record("\(context): \(key) was committed, never deleted, and is missing")
                    continue
                }
                for (name, all) in writes[key] ?? [:] {
                    var last: [Int: SyncValue] = [:]
                    for write in all { last[write.device] = write.value }
                    let found = values[name] ?? .null
                    #expect(
                        last.values.contains(found),
                        "\(context): \(key).\(name) is \(found), not the last write of any of its writers \(last)")
                }
            }
            for (pair, all) in linkWrites {
                let alive =
                    snapshot.rows[RowKey(entity: "Card", id: pair[0])] != nil
                    && snapshot.rows[RowKey(entity: "Label", id: pair[1])] != nil
                guard alive, Set(all.map(\.device)).count == 1, let last = all.last else { continue }
                #expect(snapshot.links.contains(pair) == last.present, "\(context): link \(pair) lost its last write")
            }
            // `parent` has no inverse, so no foreign key: it may name a deleted card (as in Core
            // Data), and the stores' foreign-key check covers the references that have one.
            for pair in snapshot.links {
                #expect(
                    snapshot.rows[RowKey(entity: "Card", id: pair[0])] != nil
                        && snapshot.rows[RowKey(entity: "Label", id: pair[1])] != nil,
                    "\(context): link \(pair) joins a row that is not on the server")
            }
        }
    }
}

/// Sends `signal` to process `pid` (`kill(2)`, under a name ``ProcessConvergenceTests/Fleet`` does not shadow).
private func sendSignal(_ signal: Int32, to pid: pid_t) {
    _ = kill(pid, signal)
}
