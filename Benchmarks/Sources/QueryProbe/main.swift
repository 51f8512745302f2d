import BenchmarkSupport
import CSQLiteBench
import Foundation
import Modelwright

// Issue 31's queries in instructions: QueryBenchmarks' aggregates next to the same SQL by hand, and
// prefetching next to N+1, one workload per process, synchronous (valgrind 3.19 crashes on an async
// main). From Benchmarks/:
//
//     swift build -c release --product QueryProbe
//     ./query-probe.sh                     # every workload, counted by callgrind, with the ratios
//     valgrind --tool=callgrind --collect-atstart=no .build/release/QueryProbe sumScore [hand]
//
// Aggregates run over 100,000 owners (QueryBenchmarks' run 5); prefetching over 1,000 of 5,000 owners
// with 5 pets each (`including { $0.pets }`, against `owner.request { $0.pets }` for each owner). Each
// workload is a static function of `Modelwright` (inside its `performQuery`) or `Hand` (the C API, as
// QueryBenchmarks' hand SQL: prepare, step to the end, finalize); callgrind collects only while it runs
// (the probe switches collection on and off around it with a client request).

/// Modelwright's side of each workload.
enum Modelwright {
    static let someOwners = Owner.request().sorted { [$0.name.ascending] }.limit(1000)

    @inline(never) static func sumScore(_ context: ReadContext) throws -> Int {
        Int(try context.fetch(Owner.request().sum { $0.score }))
    }

    @inline(never) static func averageAge(_ context: ReadContext) throws -> Int {
        Int(try context.fetch(Owner.request().filter { $0.age >= 10 }.average { $0.age }) ?? 0)
    }

    @inline(never) static func grouped(_ context: ReadContext) throws -> Int {
        try context.fetch(Owner.request().countAll().grouped { $0.age }).count
    }

    @inline(never) static func maxName(_ context: ReadContext) throws -> Int {
        try context.fetch(Owner.request().max { $0.name })?.count ?? 0
    }

    @inline(never) static func prefetch(_ context: ReadContext) throws -> Int {
        try context.fetch(someOwners.including { $0.pets }).reduce(0) { $0 + (try $1.destinations { $0.pets }.count) }
    }

    @inline(never) static func nPlusOne(_ context: ReadContext) throws -> Int {
        try context.fetch(someOwners).reduce(0) { $0 + (try context.fetch($1.request { $0.pets }).count) }
    }
}

/// The hand-written SQL of each aggregate.
enum Hand {
    @inline(never) static func sumScore(_ handle: OpaquePointer) -> Int {
        run(handle, #"SELECT COALESCE(SUM("score"), 0) FROM "Owner""#)
    }

    @inline(never) static func averageAge(_ handle: OpaquePointer) -> Int {
        run(handle, #"SELECT AVG("age") FROM "Owner" WHERE "age" >= 10"#)
    }

    @inline(never) static func grouped(_ handle: OpaquePointer) -> Int {
        run(handle, #"SELECT "age", COUNT(*) FROM "Owner" GROUP BY "age" ORDER BY "age""#)
    }

    @inline(never) static func maxName(_ handle: OpaquePointer) -> Int {
        run(handle, #"SELECT MAX("name") FROM "Owner""#)
    }

    /// Prepares `sql`, steps to the end summing the first two columns as integers, and finalizes it.
    static func run(_ handle: OpaquePointer, _ sql: String) -> Int {
        var statement: OpaquePointer?
        sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        var total: Int64 = 0
        while sqlite3_step(statement) == SQLITE_ROW {
            total &+= sqlite3_column_int64(statement, 0) &+ sqlite3_column_int64(statement, 1)
        }
        sqlite3_finalize(statement)
        return Int(total)
    }
}

/// The result, handed from the reader's queue to the waiting main thread.
final class Box: @unchecked Sendable { var value = 0 }

let workload = CommandLine.arguments.dropFirst().first ?? "sumScore"
let byHand = CommandLine.arguments.dropFirst(2).first == "hand"
let path = NSTemporaryDirectory() + "query-probe-\(getpid()).sqlite"
let prefetching = workload == "prefetch" || workload == "nPlusOne"
let store = try Store(url: URL(fileURLWithPath: path), schema: querySchema)
let filled = DispatchSemaphore(value: 0)
store.performAndSave(
    on: DispatchQueue(label: "fill"),
    { context in
        if prefetching {
            let owners = (0..<5_000).map { Owner(index: $0) }
            try context.batchInsert(owners)
            try context.batchInsert((0..<25_000).map { Pet(index: $0, owner: owners[$0 % owners.count].id) })
        } else {
            try context.batchInsert((0..<100_000).map { Owner(index: $0) })
        }
    }, completion: { _ in filled.signal() })
filled.wait()
let box = Box()
if byHand {
    var handle: OpaquePointer?
    sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, nil)
    probe_toggle_collect()
    switch workload {
    case "averageAge": box.value = Hand.averageAge(handle!)
    case "grouped": box.value = Hand.grouped(handle!)
    case "maxName": box.value = Hand.maxName(handle!)
    default: box.value = Hand.sumScore(handle!)
    }
    probe_toggle_collect()
    sqlite3_close_v2(handle)
} else {
    let done = DispatchSemaphore(value: 0)
    store.performQuery(
        on: DispatchQueue(label: "probe"),
        { context in
            probe_toggle_collect()
            defer { probe_toggle_collect() }
            return switch workload {
            case "averageAge": try Modelwright.averageAge(context)
            case "grouped": try Modelwright.grouped(context)
            case "maxName": try Modelwright.maxName(context)
            case "prefetch": try Modelwright.prefetch(context)
            case "nPlusOne": try Modelwright.nPlusOne(context)
            default: try Modelwright.sumScore(context)
            }
        },
        completion: { result in
            box.value = (try? result.get()) ?? -1
            done.signal()
        })
    done.wait()
}
print(workload, byHand ? "hand" : "modelwright", box.value)
try store.close()
for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
