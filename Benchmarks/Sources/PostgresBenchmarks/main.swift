import BenchmarkSupport
import Foundation
import LibPQBench
import ModelwrightPostgres

// PostgreSQL benchmarks (issue 27): what a server runs through Modelwright's Store on PostgreSQL
// (the shared `Person` records), next to the same workloads in C on raw libpq and through
// PostgresNIO, on one throwaway cluster this run starts and removes, the same table and rows for
// all. Contenders take turns in a rotating order in every repetition; the table shows the median
// wall time and the median CPU time of this process (the client's share: the server runs in its
// own processes) and their ratios to raw libpq.
//
//     swift run -c release PostgresBenchmarks [--rows 100000] [--repetitions 5]
//         [--only modelwright|libpq|nio] [--workloads insert,fetch,lookups,filtered] [--log-statements] [--port N]
//
// Under `valgrind --tool=callgrind --collect-atstart=no` only the timed workloads are counted;
// valgrind cannot follow the start of a cluster, so give it one already running with `--port N`
// (its public schema is emptied first).

let arguments = CommandLine.arguments
func option(_ name: String) -> String? { arguments.firstIndex(of: name).flatMap { arguments.dropFirst($0 + 1).first } }
let rows = option("--rows").flatMap(Int.init) ?? 100_000
let repetitions = option("--repetitions").flatMap(Int.init) ?? 5
let lookups = min(1_000, rows)
let minimumAge = 50
let workloads = Set((option("--workloads") ?? "insert,fetch,lookups,filtered").split(separator: ",").map(String.init))
let logStatements = arguments.contains("--log-statements")

/// The SQL Modelwright's store sends for each workload (read from the server's log with
/// `--log-statements`), which the other contenders send as well.
enum SQL {
    static let insert =
        #"INSERT INTO "Person" ("id", "firstName", "lastName", "age", "createdAt", "nickname") VALUES ($1, $2, $3, $4, $5, $6)"#
    static let fetchAll =
        #"SELECT t0."id", t0."firstName", t0."lastName", t0."age", t0."createdAt", t0."nickname" FROM "Person" t0"#
    static let lookUp =
        #"SELECT t0."id", t0."firstName", t0."lastName", t0."age", t0."createdAt", t0."nickname" FROM "Person" t0 WHERE t0."id" = $1"#
    static let fetchFiltered =
        #"SELECT t0."id", t0."firstName", t0."lastName", t0."age", t0."createdAt", t0."nickname" FROM "Person" t0 WHERE t0."age" >= $1 ORDER BY (t0."lastName" COLLATE "C") ASC"#
}

let cluster =
    try option("--port").flatMap(Int.init).map(Cluster.init(runningOn:)) ?? Cluster(logStatements: logStatements)
defer {
    cluster.stop(keepingFolder: logStatements)
    if logStatements { print("server log: \(cluster.folder)/log") }
}

let people = makePeople(count: rows)
let lookupIDs = (0..<lookups).map { people[($0 * 7_919) % rows].id.uuid }
let admin = try await PostgresConnection(PostgresConfiguration(cluster.conninfo))
// A server of an earlier run: an empty database again.
try await admin.execute("DROP SCHEMA public CASCADE")
try await admin.execute("CREATE SCHEMA public")
// The store first: it creates the table, its index and its change-feed triggers.
let modelwright = try ModelwrightStoreContender(conninfo: cluster.conninfo, people: people)
var contenders: [any PostgresContender] = [
    modelwright, try LibPQContender(conninfo: cluster.conninfo, people: people),
]
#if canImport(PostgresNIO)
    contenders.append(try await PostgresNIOContender(port: cluster.port, people: people))
#else
    print("PostgresNIO left out (built with MODELWRIGHT_BENCHMARKS_WITHOUT_NIO=1)")
#endif
if let only = option("--only") {
    contenders = contenders.filter { $0.name.lowercased().contains(only.lowercased()) }
}

/// One timed run: wall time and this process's CPU time (user and system, all threads).
struct Sample {
    let wall: Double
    let cpu: Double
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

@MainActor func measure(_ body: @MainActor () async throws -> (any FetchedPeople)?) async throws -> (Sample, Digest?) {
    libpq_bench_toggle_profiling()
    let cpu = cpuSeconds()
    let start = ContinuousClock.now
    let fetched = try await body()
    let wall = ContinuousClock.now - start
    let sample = Sample(
        wall: Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18, cpu: cpuSeconds() - cpu)
    libpq_bench_toggle_profiling()
    return (sample, fetched?.digest)
}

/// Runs `workload` for every contender `repetitions` times, in a rotating order; every contender
/// must read what the first one read.
@MainActor func run(
    _ workload: String, before: @MainActor () async throws -> Void = {},
    _ body: @MainActor (any PostgresContender) async throws -> (any FetchedPeople)?
) async throws -> [String: [Sample]] {
    var samples: [String: [Sample]] = [:]
    var expected: Digest?
    for repetition in 0..<repetitions {
        for turn in contenders.indices {
            let contender = contenders[(repetition + turn) % contenders.count]
            try await before()
            let (sample, digest) = try await measure { try await body(contender) }
            if let digest {
                if expected == nil { expected = digest }
                guard digest == expected else {
                    throw Failure(description: "\(contender.name) read \(digest) in \(workload), not \(expected!)")
                }
            }
            samples[contender.name, default: []].append(sample)
        }
    }
    return samples
}

var table: [(String, [String: [Sample]])] = []
if workloads.contains("insert") {
    let samples = try await run(
        "insert", before: { try await admin.execute(#"TRUNCATE "Person""#) },
        { contender in
            try await contender.insert()
            return nil
        })
    table.append(("insert \(rows) rows (one transaction)", samples))
    try await admin.execute(#"VACUUM ANALYZE "Person""#)
} else {
    try await modelwright.insert()
    try await admin.execute(#"VACUUM ANALYZE "Person""#)
}
if workloads.contains("fetch") {
    table.append(("fetch \(rows) rows into records", try await run("fetch") { try await $0.fetchAll() }))
}
if workloads.contains("lookups") {
    table.append(("\(lookups) lookups by ID", try await run("lookups") { try await $0.lookUp(lookupIDs) }))
}
if workloads.contains("filtered") {
    let samples = try await run("filtered") { try await $0.fetchFiltered(minimumAge: minimumAge) }
    table.append(("filtered sorted fetch (age ≥ \(minimumAge), by lastName)", samples))
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1
        ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}
func milliseconds(_ seconds: Double) -> String { String(format: "%.1f", seconds * 1_000) }

var load = [Double](repeating: 0, count: 3)
_ = getloadavg(&load, 3)
print(
    "\(rows) rows, \(repetitions) repetitions, medians; load average \(String(format: "%.2f %.2f %.2f", load[0], load[1], load[2]))"
)
let names = contenders.map(\.name)
let baseline = "raw libpq (C)"
print(
    "| Workload | " + names.map { "\($0) wall / client CPU (ms)" }.joined(separator: " | ") + " | "
        + names.filter { $0 != baseline }.map { "\($0) ÷ libpq wall / CPU" }.joined(separator: " | ") + " |")
print("|---|" + String(repeating: "---|", count: names.count * 2 - 1))
for (workload, samples) in table {
    var cells = [workload]
    for name in names {
        let runs = samples[name] ?? []
        cells.append("\(milliseconds(median(runs.map(\.wall)))) / \(milliseconds(median(runs.map(\.cpu))))")
    }
    let base = samples[baseline] ?? []
    for name in names where name != baseline {
        let runs = samples[name] ?? []
        guard !base.isEmpty, !runs.isEmpty else {
            cells.append("–")
            continue
        }
        let wall = median(runs.map(\.wall)) / median(base.map(\.wall))
        let cpu = median(runs.map(\.cpu)) / median(base.map(\.cpu))
        cells.append(String(format: "%.2f× / %.2f×", wall, cpu))
    }
    print("| " + cells.joined(separator: " | ") + " |")
}

// The spread: each contender's fastest and slowest wall time, and the range of its ratio to libpq
// within each repetition (the contenders take turns in one repetition, so the load they meet is
// closer than across repetitions).
print()
print(
    "| Workload | " + names.map { "\($0) wall min–max (ms)" }.joined(separator: " | ") + " | "
        + names.filter { $0 != baseline }.map { "\($0) ÷ libpq wall, per repetition min–max" }.joined(separator: " | ")
        + " |")
print("|---|" + String(repeating: "---|", count: names.count * 2 - 1))
for (workload, samples) in table {
    var cells = [workload]
    for name in names {
        let walls = (samples[name] ?? []).map(\.wall)
        cells.append(walls.isEmpty ? "–" : "\(milliseconds(walls.min()!))–\(milliseconds(walls.max()!))")
    }
    let base = samples[baseline] ?? []
    for name in names where name != baseline {
        let ratios = zip(samples[name] ?? [], base).map { $0.wall / $1.wall }
        cells.append(ratios.isEmpty ? "–" : String(format: "%.2f×–%.2f×", ratios.min()!, ratios.max()!))
    }
    print("| " + cells.joined(separator: " | ") + " |")
}
