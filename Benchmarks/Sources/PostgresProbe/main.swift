import BenchmarkSupport
import Foundation
import LibPQBench
import Modelwright
import ModelwrightPostgres

// PostgresBenchmarks' reads in callgrind instructions: one workload of one contender per process,
// synchronous (valgrind 3.19 crashes on the dispatch worker threads of an async main, as FetchProbe
// found), against a server already running (valgrind cannot follow the start of one). Callgrind
// collects only while the workload runs: inside the store's read closure for Modelwright (the hop to
// the reader's queue and the read's COMMIT are outside), around the C call for raw libpq.
//
//     swift build -c release --product PostgresProbe
//     .build/release/PostgresProbe fill PORT ROWS          # a "Person" table of ROWS people, by the store
//     valgrind --tool=callgrind --collect-atstart=no .build/release/PostgresProbe PORT fetch modelwright
//     ./pg-probe.sh PORT                                    # every workload and contender, ratios to C
//
// Workloads: fetch (every person into records), lookups (1,000 by ID in one read), filtered
// (age ≥ 50, sorted by lastName), each on the table `fill` made. `--repeat N` runs the workload
// N times and prints the median wall time instead.

/// The people `fill` inserts: what PostgresBenchmarks inserts, derived from the index so that a
/// later process knows the IDs it looks up.
func person(_ index: Int) -> Person {
    var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0x70, 0, 0x80, 0, 0, 0, 0, 0, 0, 0)
    withUnsafeMutableBytes(of: &bytes) { buffer in
        withUnsafeBytes(of: UInt64(index).bigEndian) { buffer.copyMemory(from: $0) }
    }
    return Person(
        id: Person.ID(UUID(uuid: bytes)), firstName: ["Ada", "Grace", "Edsger", "Barbara"][index % 4],
        lastName: "Lastname-\(String(format: "%07d", index))-\(index * 7 % 1_000)", age: index % 100,
        createdAt: Date(timeIntervalSinceReferenceDate: 800_000_000 + Double(index)),
        nickname: index % 3 == 0 ? nil : "nick \(index)")
}

let fetchAll =
    #"SELECT t0."id", t0."firstName", t0."lastName", t0."age", t0."createdAt", t0."nickname" FROM "Person" t0"#
let lookUp =
    #"SELECT t0."id", t0."firstName", t0."lastName", t0."age", t0."createdAt", t0."nickname" FROM "Person" t0 WHERE t0."id" = $1"#
let fetchFiltered =
    #"SELECT t0."id", t0."firstName", t0."lastName", t0."age", t0."createdAt", t0."nickname" FROM "Person" t0 WHERE t0."age" >= $1 ORDER BY (t0."lastName" COLLATE "C") ASC"#

/// Whether `counted` switches callgrind's collection: not during the uncounted first run.
nonisolated(unsafe) var counting = false

/// `body`'s result, with callgrind collecting only while it runs.
func counted<Result>(_ body: () throws -> Result) rethrows -> Result {
    guard counting else { return try body() }
    libpq_bench_toggle_profiling()
    defer { libpq_bench_toggle_profiling() }
    return try body()
}

/// A result handed from the store's queue to the waiting main thread.
final class Box: @unchecked Sendable { var count = -1 }

/// Runs a read of `store` on its reader's queue and waits for the number of records it read (-1 on
/// failure). The records are released after callgrind stops collecting, as the C contender frees
/// its rows outside the count (`libpq_bench_free`): both count the read, neither the teardown.
func read(_ store: Store, _ body: @escaping @Sendable (ReadContext) throws -> [Person]) -> Int {
    let done = DispatchSemaphore(value: 0)
    let box = Box()
    store.performQuery(
        on: DispatchQueue(label: "probe"), { context in try counted { try body(context) }.count },
        completion: { result in
            if case .failure(let error) = result { print("failed: \(error)") }
            box.count = (try? result.get()) ?? -1
            done.signal()
        })
    done.wait()
    return box.count
}

enum ModelwrightReads {
    @inline(never) static func fetch(_ context: ReadContext) throws -> [Person] {
        try context.fetch(Person.request())
    }

    /// The people found, kept as the C contender keeps them.
    @inline(never) static func lookUps(_ context: ReadContext, _ ids: [Person.ID]) throws -> [Person] {
        var found: [Person] = []
        found.reserveCapacity(ids.count)
        for id in ids { if let person = try context.existing(id) { found.append(person) } }
        return found
    }

    @inline(never) static func filtered(_ context: ReadContext) throws -> [Person] {
        try context.fetch(Person.request().filter { $0.age >= 50 }.sorted { [$0.lastName.ascending] })
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
var repeats = 0
var positional = arguments
if let flag = positional.firstIndex(of: "--repeat"), flag + 1 < positional.count {
    repeats = Int(positional[flag + 1]) ?? 1
    positional.removeSubrange(flag...(flag + 1))
}
guard positional.count >= 2 else {
    print("PostgresProbe fill PORT ROWS | PostgresProbe PORT fetch|lookups|filtered modelwright|libpq [--repeat N]")
    exit(2)
}
let conninfo = { (port: String) in "host=127.0.0.1 port=\(port) user=postgres dbname=postgres" }

if positional[0] == "fill" {
    let rows = positional.count > 2 ? Int(positional[2]) ?? 100_000 : 100_000
    let admin = libpq_bench_connect(conninfo(positional[1]))
    guard let admin else { exit(1) }
    // An empty database, then the store creates its table.
    for sql in ["DROP SCHEMA public CASCADE", "CREATE SCHEMA public"] {
        var none: UnsafeMutablePointer<libpq_bench_person>?
        _ = libpq_bench_fetch(admin, sql, 0, 0, &none)
        libpq_bench_free(none, 0)
    }
    let store = try Store(postgres: PostgresConfiguration(conninfo(positional[1])), schema: Person.schema)
    let people = (0..<rows).map(person)
    let done = DispatchSemaphore(value: 0)
    store.performAndSave(
        on: DispatchQueue(label: "fill"), { context in try context.batchInsert(people) },
        completion: { result in
            if case .failure(let error) = result { print("fill failed: \(error)") }
            done.signal()
        })
    done.wait()
    var none: UnsafeMutablePointer<libpq_bench_person>?
    _ = libpq_bench_fetch(admin, #"VACUUM ANALYZE "Person""#, 0, 0, &none)
    libpq_bench_free(none, 0)
    libpq_bench_finish(admin)
    try store.close()
    print("filled \(rows)")
    exit(0)
}

let port = positional[0]
let workload = positional[1]
let contender = positional.count > 2 ? positional[2] : "modelwright"
let ids = (0..<1_000).map { person(($0 * 7_919) % 100_000).id }

/// One run of the workload; the rows it read.
let runOnce: () throws -> Int
switch contender {
case "libpq":
    guard let connection = libpq_bench_connect(conninfo(port)) else { exit(1) }
    let idBytes = ids.flatMap { id in withUnsafeBytes(of: id.uuid.uuid) { Array($0) } }
    runOnce = {
        var people: UnsafeMutablePointer<libpq_bench_person>?
        let count = counted {
            switch workload {
            case "lookups": libpq_bench_lookups(connection, lookUp, Int32(ids.count), idBytes, &people)
            case "filtered": libpq_bench_fetch(connection, fetchFiltered, 1, 50, &people)
            default: libpq_bench_fetch(connection, fetchAll, 0, 0, &people)
            }
        }
        libpq_bench_free(people, count)
        return count
    }
default:
    let store = try Store(postgres: PostgresConfiguration(conninfo(port)), schema: Person.schema, readers: 1)
    runOnce = {
        read(store) { context in
            switch workload {
            case "lookups": try ModelwrightReads.lookUps(context, ids)
            case "filtered": try ModelwrightReads.filtered(context)
            default: try ModelwrightReads.fetch(context)
            }
        }
    }
}

// One run first, not counted: the connections prepare their statements once, as a server's have
// long before.
_ = try runOnce()
counting = true
if repeats == 0 {
    print(workload, contender, try runOnce())
} else {
    var times: [Double] = []
    for _ in 0..<repeats {
        let start = ContinuousClock.now
        _ = try runOnce()
        let elapsed = ContinuousClock.now - start
        times.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1e3)
    }
    times.sort()
    print(String(format: "%@ %@ median %.2f ms, best %.2f ms", workload, contender, times[times.count / 2], times[0]))
}
exit(0)
