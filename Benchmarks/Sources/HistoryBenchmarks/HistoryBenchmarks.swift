import Foundation
import Modelwright

/// Persistent history, measured side by side in one run (release):
///
///     swift run -c release HistoryBenchmarks [--rows N] [--repetitions R] [--transactions T] [--samples S]
///
/// - inserting `rows` rows in one transaction, history off and on, alternately;
/// - fetching the history of `transactions` transactions;
/// - the latency from a commit in a child process (this executable, `child` mode) to the
///   observation in this one, over `samples` commits.
@main
struct HistoryBenchmarks {
    static func main() async throws {
        let arguments = CommandLine.arguments
        if arguments.count >= 4, arguments[1] == "child" {
            try await child(path: arguments[2], samples: Int(arguments[3]) ?? 100)
            return
        }
        func option(_ name: String, _ fallback: Int) -> Int {
            guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return fallback }
            return Int(arguments[index + 1]) ?? fallback
        }
        let rows = option("--rows", 100_000)
        let repetitions = option("--repetitions", 7)
        let transactions = option("--transactions", 10_000)
        let samples = option("--samples", 100)

        var off: [Double] = []
        var on: [Double] = []
        for _ in 0..<repetitions {
            off.append(try await insert(rows: rows, history: .disabled))
            on.append(try await insert(rows: rows, history: .enabled(author: "app")))
        }
        print("insert \(rows) rows, 1 transaction (ms)      best    median")
        print(String(format: "  history off                           %7.1f  %7.1f", off.min()!, median(off)))
        print(String(format: "  history on                            %7.1f  %7.1f", on.min()!, median(on)))
        let ratio = median(on) / median(off)
        print(
            String(
                format: "  ratio on/off (medians): %.2f×, best: %.2f×  %@ target ≤ 1.30×",
                ratio, on.min()! / off.min()!, ratio <= 1.3 ? "PASS" : "MISS"))

        let fetches = try await fetchHistory(transactions: transactions, repetitions: repetitions)
        print(
            String(
                format: "fetch the history of %d transactions (ms): best %.1f, median %.1f",
                transactions, fetches.min()!, median(fetches)))

        let latencies = try await crossProcessLatency(samples: samples).sorted()
        print(
            String(
                format: "commit in another process → observation (ms), %d commits: median %.1f, p99 %.1f, max %.1f",
                latencies.count, median(latencies), percentile(latencies, 0.99), latencies.last ?? 0))
        print("  (the store checks PRAGMA data_version every \(Store.remoteChangeInterval) while it has observers)")
    }

    static func median(_ values: [Double]) -> Double { percentile(values.sorted(), 0.5) }

    static func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded()))]
    }

    static func temporaryURL() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("history-bench-\(UUID().uuidString).sqlite")
    }

    static func remove(_ url: URL) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
    }

    static func milliseconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
    }

    static func insert(rows: Int, history: HistoryTracking) async throws -> Double {
        let url = temporaryURL()
        defer { remove(url) }
        let store = try Store(url: url, schema: Entry.schema, history: history)
        defer { try? store.close() }
        let entries = Entry.seed(count: rows)
        let start = ContinuousClock.now
        _ = try await store.performAndSave { context in try context.batchInsert(entries) }
        return milliseconds(since: start)
    }

    static func fetchHistory(transactions: Int, repetitions: Int) async throws -> [Double] {
        let url = temporaryURL()
        defer { remove(url) }
        let store = try Store(url: url, schema: Entry.schema, history: .enabled(author: "app"))
        defer { try? store.close() }
        // Each transaction inserts a record and updates another: two changes each.
        let entries = Entry.seed(count: transactions + 1)
        try await store.performAndSave { try $0.insert(entries[0]) }
        for index in 1...transactions {
            try await store.performAndSave { context in
                try context.insert(entries[index])
                try context.update(entries[index - 1].renamed("updated \(index)"))
            }
        }
        var times: [Double] = []
        for _ in 0..<repetitions {
            let start = ContinuousClock.now
            let history = try await store.fetchHistory(after: nil)
            times.append(milliseconds(since: start))
            precondition(history.count == transactions + 1)
        }
        return times
    }

    /// Observes the store while a child process commits `samples` entries, each stamped with
    /// the wall-clock time just before its commit; the latency is the time the observation
    /// delivered it minus that stamp.
    static func crossProcessLatency(samples: Int) async throws -> [Double] {
        let url = temporaryURL()
        defer { remove(url) }
        let store = try Store(url: url, schema: Entry.schema, history: .enabled(author: "app"))
        defer { try? store.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["child", url.path, "\(samples)"]
        var latencies: [Double] = []
        var seen: Set<Int> = []
        var started = false
        for try await entries in store.observe(Entry.request()) {
            if !started {
                try process.run()
                started = true
            }
            let now = Date().timeIntervalSince1970
            for entry in entries where seen.insert(entry.rank).inserted {
                latencies.append((now - entry.stamp) * 1000)
            }
            if seen.count == samples { break }
        }
        process.waitUntilExit()
        return latencies
    }

    static func child(path: String, samples: Int) async throws {
        let store = try Store(url: URL(fileURLWithPath: path), schema: Entry.schema, history: .enabled(author: "child"))
        for index in 0..<samples {
            // Spaced irregularly, so commits land at every phase of the parent's check interval.
            try await Task.sleep(for: .milliseconds(40 + (index * 37) % 160))
            try await store.performAndSave { context in
                try context.insert(Entry(title: "entry \(index)", rank: index, stamp: Date().timeIntervalSince1970))
            }
        }
        try store.close()
    }
}
