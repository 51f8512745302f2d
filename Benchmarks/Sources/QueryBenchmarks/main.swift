import BenchmarkSupport
import CSQLiteBench
import Foundation
import Modelwright

// Issue 31's query benchmarks. Run from Benchmarks/:
//
//     swift run -c release QueryBenchmarks [owners] [streamed rows]
//
// 1. Aggregates: Modelwright's aggregate requests, next to fetching every record and reducing in
//    Swift, and next to the same SQL written by hand on SQLite's C API (the target: within 1.2×).
// 2. Streaming: the peak resident memory of iterating `Store.records` over a large store, next to
//    fetching every record into one array.

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let owners = arguments.first ?? 200_000
let streamed = arguments.dropFirst().first ?? 1_000_000
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("query-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }

/// The median of `runs` timings of `body`, in milliseconds.
func median(runs: Int = 7, _ body: () async throws -> Void) async rethrows -> Double {
    var times: [Double] = []
    for _ in 0..<runs {
        let start = ContinuousClock.now
        try await body()
        let elapsed = ContinuousClock.now - start
        times.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)
    }
    return times.sorted()[runs / 2]
}

/// A query written by hand: one prepared statement, stepped to the end, reading each row's columns.
final class HandSQL {
    private let handle: OpaquePointer

    init(_ url: URL) throws {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(url.path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let handle else {
            throw BenchmarkFailure("cannot open \(url.path)")
        }
        self.handle = handle
    }

    deinit { sqlite3_close(handle) }

    /// Runs `sql` and sums the first column of each row read as an integer (so nothing is optimised away).
    func run(_ sql: String) throws -> Int64 {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw BenchmarkFailure(String(cString: sqlite3_errmsg(handle)))
        }
        defer { sqlite3_finalize(statement) }
        var total: Int64 = 0
        while sqlite3_step(statement) == SQLITE_ROW {
            total &+= sqlite3_column_int64(statement, 0) &+ sqlite3_column_int64(statement, 1)
        }
        return total
    }
}

struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func report(_ name: String, modelwright: Double, reduce: Double?, hand: Double?) {
    let ratio = hand.map { String(format: "%.2f×", modelwright / $0) } ?? "-"
    print(
        name.padding(toLength: 34, withPad: " ", startingAt: 0),
        String(format: "aggregate %8.2f ms", modelwright),
        reduce.map { String(format: "fetch+reduce %9.2f ms", $0) } ?? "fetch+reduce        -   ",
        hand.map { String(format: "hand SQL %8.2f ms", $0) } ?? "hand SQL        -   ",
        "ratio to hand SQL \(ratio)")
}

// MARK: - Aggregates

let url = directory.appendingPathComponent("aggregates.sqlite")
let store = try Store(url: url, schema: querySchema)
_ = try await store.performAndSave { context in
    try context.batchInsert((0..<owners).lazy.map { Owner(index: $0) })
}
let hand = try HandSQL(url)
print("Aggregates over \(owners) owners (median of 7 runs)")

let sumScore = try await median { _ = try await store.performQuery { try $0.fetch(Owner.request().sum { $0.score }) } }
let reduceScore = try await median {
    _ = try await store.performQuery { try $0.fetch(Owner.request()).reduce(Int64(0)) { $0 + Int64($1.score) } }
}
let handScore = try await median { _ = try hand.run(#"SELECT COALESCE(SUM("score"), 0) FROM "Owner""#) }
report("sum(score)", modelwright: sumScore, reduce: reduceScore, hand: handScore)

let averageAge = try await median {
    _ = try await store.performQuery { try $0.fetch(Owner.request().filter { $0.age >= 10 }.average { $0.age }) }
}
let handAverage = try await median { _ = try hand.run(#"SELECT AVG("age") FROM "Owner" WHERE "age" >= 10"#) }
report("average(age) where age >= 10", modelwright: averageAge, reduce: nil, hand: handAverage)

let grouped = try await median {
    _ = try await store.performQuery { try $0.fetch(Owner.request().countAll().grouped { $0.age }) }
}
let reduceGrouped = try await median {
    _ = try await store.performQuery { context in
        Dictionary(grouping: try context.fetch(Owner.request()), by: \.age).mapValues(\.count)
    }
}
let handGrouped = try await median {
    _ = try hand.run(#"SELECT "age", COUNT(*) FROM "Owner" GROUP BY "age" ORDER BY "age""#)
}
report("countAll grouped by age", modelwright: grouped, reduce: reduceGrouped, hand: handGrouped)

let maxName = try await median { _ = try await store.performQuery { try $0.fetch(Owner.request().max { $0.name }) } }
let handMax = try await median { _ = try hand.run(#"SELECT MAX("name") FROM "Owner""#) }
report("max(name)", modelwright: maxName, reduce: nil, hand: handMax)

let sumBalance = try await median {
    _ = try await store.performQuery { try $0.fetch(Owner.request().sum { $0.balance }) }
}
let reduceBalance = try await median {
    _ = try await store.performQuery { try $0.fetch(Owner.request()).reduce(Decimal(0)) { $0 + ($1.balance ?? 0) } }
}
report("sum(balance), exact Decimal", modelwright: sumBalance, reduce: reduceBalance, hand: nil)

// MARK: - Prefetching

let prefetchURL = directory.appendingPathComponent("prefetch.sqlite")
let pets = try Store(url: prefetchURL, schema: querySchema)
let petOwners = (0..<5_000).map { Owner(index: $0) }
_ = try await pets.performAndSave { context in
    try context.batchInsert(petOwners)
    try context.batchInsert((0..<25_000).lazy.map { Pet(index: $0, owner: petOwners[$0 % petOwners.count].id) })
}
print("\nPrefetching: 1,000 of 5,000 owners with their 5 pets each (median of 7 runs)")
let someOwners = Owner.request().sorted { [$0.name.ascending] }.limit(1000)
let prefetched = try await median {
    _ = try await pets.performQuery { try $0.fetch(someOwners.including { $0.pets }) }
}
let oneByOne = try await median {
    _ = try await pets.performQuery { context in
        try context.fetch(someOwners).map { owner in (owner, try context.fetch(owner.request { $0.pets })) }
    }
}
print(
    String(
        format: "including { $0.pets }: %8.2f ms (2 queries)   N+1: %8.2f ms (1,001 queries)   %.1f× faster",
        prefetched, oneByOne, oneByOne / prefetched))

// MARK: - Streaming

guard streamed > 0 else { exit(0) }
print("\nStreaming \(streamed) owners")
let bigURL = directory.appendingPathComponent("stream.sqlite")
let big = try Store(url: bigURL, schema: querySchema)
_ = try await big.performAndSave { context in
    try context.batchInsert((0..<streamed).lazy.map { Owner(index: $0) })
}
let streamBaseline = ResidentMemory.resetPeak()
let streamStart = ContinuousClock.now
var count = 0
for try await _ in big.records(Owner.request().sorted { [$0.id.ascending] }, pageSize: 1000) { count += 1 }
let streamTime = ContinuousClock.now - streamStart
let streamPeak = ResidentMemory.peak()
let fetchBaseline = ResidentMemory.resetPeak()
let fetchStart = ContinuousClock.now
let fetched = try await big.performQuery { try $0.fetch(Owner.request().sorted { [$0.id.ascending] }).count }
let fetchTime = ContinuousClock.now - fetchStart
let fetchPeak = ResidentMemory.peak()
func megabytes(_ baseline: Int?, _ peak: Int?) -> String {
    guard let baseline, let peak else { return "n/a" }
    return String(format: "%.1f MB", Double(max(0, peak - baseline)) / 1_048_576)
}
print(
    "records(pageSize: 1000): \(count) rows in \(streamTime), peak RSS growth \(megabytes(streamBaseline, streamPeak))")
print(
    "fetch (one array):       \(fetched) rows in \(fetchTime), peak RSS growth \(megabytes(fetchBaseline, fetchPeak))")
