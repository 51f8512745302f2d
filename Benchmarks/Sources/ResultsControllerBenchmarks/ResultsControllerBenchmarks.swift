import BenchmarkSupport
import Foundation
import Modelwright

/// A results controller over a long sectioned list, next to a plain re-fetch of the same request:
/// the time from a commit that changes one row to the change set (or the fetched array), and the
/// peak memory of each.
///
///     swift run -c release ResultsControllerBenchmarks [--rows N] [--sections S] [--repetitions R]
@main
enum ResultsControllerBenchmarks {
    static func main() async throws {
        let arguments = CommandLine.arguments
        if let index = arguments.firstIndex(of: "--memory"), index + 2 < arguments.count {
            try await memoryChild(mode: arguments[index + 1], path: arguments[index + 2])
            return
        }
        let rows = option("--rows", default: 100_000)
        let sectionCount = option("--sections", default: 1_000)
        let repetitions = option("--repetitions", default: 21)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("results-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("list.sqlite")
        let store = try Store(url: url, schema: ListItem.schema)
        var items = ListItem.seed(count: rows, sections: sectionCount)
        _ = try await store.performAndSave { [items] in try $0.batchInsert(items) }
        print(
            "\(rows.formatted()) rows in \(sectionCount.formatted()) sections; \(repetitions) commits each, one row changed per commit"
        )

        var random = SystemRandomNumberGenerator()
        func changeOneRow() -> ListItem {
            let index = Int.random(in: 0..<items.count, using: &random)
            let old = items[index]
            let section = ListItem.sectionName(Int.random(in: 0..<sectionCount, using: &random))
            let new = ListItem(
                id: old.id, section: section, title: old.title, summary: old.summary, rank: old.rank + 1,
                createdAt: old.createdAt)
            items[index] = new
            return new
        }

        var refetch: [Duration] = []
        for _ in 0..<repetitions {
            let changed = changeOneRow()
            let (duration, count) = try await measure {
                try await store.performAndSave { try $0.update(changed) }
                return try await store.performQuery { try $0.fetch(ListItem.request).count }
            }
            precondition(count == rows)
            refetch.append(duration)
        }

        var delivered: [Duration] = []
        let controller = FetchedResultsController(store: store, request: ListItem.request, sectionedBy: { $0.section })
        var updates = controller.makeAsyncIterator()
        _ = try await updates.next()
        for _ in 0..<repetitions {
            let changed = changeOneRow()
            let clock = ContinuousClock()
            let start = clock.now
            try await store.performAndSave { try $0.update(changed) }
            let update = try await updates.next()
            let duration = start.duration(to: clock.now)
            guard let changes = update?.changes, changes.movedRecords.count + changes.updatedRecords.count == 1 else {
                throw BenchmarkFailure(
                    "expected one moved or updated record, got \(String(describing: update?.changes))")
            }
            delivered.append(duration)
        }

        let memory = try measureMemory(store: store, url: url)
        report(refetch: refetch, delivered: delivered, memory: memory)
    }

    /// Peak RSS growth of a controller that delivers its first snapshot and one change set, and of
    /// fetching the same request into an array, each measured in fresh processes of its own (the
    /// median of three) so that neither reuses memory the other, or the timings, freed.
    private static func measureMemory(store: Store, url: URL) throws -> (controller: Int, array: Int)? {
        func median(_ mode: String) throws -> Int? {
            let runs = try (0..<3).compactMap { _ in try child(mode, url) }.sorted()
            return runs.count == 3 ? runs[1] : nil
        }
        guard let controller = try median("controller"), let array = try median("array") else { return nil }
        return (controller, array)
    }

    /// Runs this program with `--memory <mode> <store path>` and reads the growth it prints.
    ///
    /// glibc's malloc moves its mmap threshold after large frees, and gives each thread its own
    /// arena, so memory that SQLite frees on one thread (a reader's page cache, dropped after a
    /// commit) is not reused by the next thread: figures then differ by megabytes from run to run.
    /// A fixed threshold and one arena make them repeat.
    private static func child(_ mode: String, _ url: URL) throws -> Int? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["--memory", mode, url.path]
        process.environment = ProcessInfo.processInfo.environment.merging([
            "MALLOC_MMAP_THRESHOLD_": "131072", "MALLOC_ARENA_MAX": "1",
        ]) {
            $1
        }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Int(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The child's side: opens the store, then measures one mode and prints the peak RSS growth.
    private static func memoryChild(mode: String, path: String) async throws {
        let store = try Store(url: URL(fileURLWithPath: path), schema: ListItem.schema)
        let rows = try await store.performQuery { try $0.count(ListItem.request) }
        // Every reader scans the table once first, so SQLite's page caches are full in both modes
        // and the growth measured is the controller's or the array's own.
        for _ in 0..<8 {
            _ = try await store.performQuery { context in
                var count = 0
                try context.forEach(ListItem.request) { _ in count += 1 }
                return count
            }
        }
        guard let baseline = ResidentMemory.resetPeak() else { return }
        if mode == "controller" {
            var updates = FetchedResultsController(store: store, request: ListItem.request, sectionedBy: { $0.section })
                .makeAsyncIterator()
            let first = try await updates.next()
            let changed = try await store.performQuery { try $0.fetchOne(ListItem.request.offset(rows / 2)) }!
            let moved = ListItem(
                id: changed.id, section: ListItem.sectionName(0), title: changed.title, summary: changed.summary,
                rank: changed.rank + 1, createdAt: changed.createdAt)
            try await store.performAndSave { try $0.update(moved) }
            let second = try await updates.next()
            precondition(first?.snapshot.count == rows && second?.changes != nil)
            print((ResidentMemory.peak() ?? baseline) - baseline)
        } else {
            let array = try await store.performQuery { try $0.fetch(ListItem.request) }
            precondition(array.count == rows)
            print((ResidentMemory.peak() ?? baseline) - baseline)
        }
        try store.close()
    }

    private static func report(refetch: [Duration], delivered: [Duration], memory: (controller: Int, array: Int)?) {
        let (refetchBest, refetchMedian) = (
            refetch.min()!.milliseconds, refetch.sorted()[refetch.count / 2].milliseconds
        )
        let (best, median) = (delivered.min()!.milliseconds, delivered.sorted()[delivered.count / 2].milliseconds)
        print("milliseconds from the commit to the result    best     median")
        print("plain re-fetch of the request (array)   \(pad(refetchBest)) \(pad(refetchMedian))")
        print("controller's snapshot and change set    \(pad(best)) \(pad(median))")
        print(
            "ratio controller / re-fetch             \(pad(best / refetchBest, "×")) \(pad(median / refetchMedian, "×"))"
        )
        verdict("delivery ≤ 1.5× a plain re-fetch (median)", median / refetchMedian, 1.5)
        guard let memory else {
            print("peak memory: not measurable here (/proc/self/clear_refs unavailable)")
            return
        }
        let megabytes = { (bytes: Int) in String(format: "%.1f MB", Double(bytes) / 1_048_576) }
        print("peak RSS growth: controller \(megabytes(memory.controller)), fetched array \(megabytes(memory.array))")
        verdict("controller peak memory ≤ 0.25× the array's", Double(memory.controller) / Double(memory.array), 0.25)
    }

    private static func verdict(_ target: String, _ ratio: Double, _ limit: Double) {
        print("\(ratio <= limit ? "PASS" : "MISS")  \(target): \(String(format: "%.2f", ratio))×")
    }

    private static func pad(_ value: Double, _ unit: String = "") -> String {
        let text = String(format: "%.2f", value) + unit
        return String(repeating: " ", count: max(0, 8 - text.count)) + text
    }

    private static func option(_ name: String, default value: Int) -> Int {
        let arguments = CommandLine.arguments
        guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return value }
        return Int(arguments[index + 1]) ?? value
    }
}

struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func measure<Result>(
    isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Result
) async rethrows -> (Duration, Result) {
    let clock = ContinuousClock()
    let start = clock.now
    let result = try await body()
    return (start.duration(to: clock.now), result)
}

extension Duration {
    var milliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1_000 + Double(attoseconds) / 1e15
    }
}
