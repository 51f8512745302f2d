import Foundation
import LibPQBench
import ModelwrightPostgres

// PostgreSQL benchmarks (issue 27): the same four workloads through Modelwright's
// PostgresConnection (its public API) and through raw libpq in C, on one throwaway cluster this
// run starts (initdb into a temporary folder, a free port, fsync off) and removes. One run each;
// the ratio is Modelwright's time over libpq's.
//
//     swift run -c release PostgresBenchmarks [--rows 100000]

let arguments = CommandLine.arguments
let rows = arguments.firstIndex(of: "--rows").flatMap { Int(arguments[$0 + 1]) } ?? 100_000
let lookups = 1_000

struct Failure: Error, CustomStringConvertible {
    let description: String
}

/// Runs a command, as `postgres` when this runs as root (the server refuses root), with its
/// output to /dev/null. Not through `Process`, whose wait never ends when the server `pg_ctl`
/// starts inherits the descriptors it watches.
@discardableResult
func run(_ command: [String], asPostgres: Bool) throws -> Int32 {
    let arguments = asPostgres ? ["/sbin/runuser", "-u", "postgres", "--"] + command : command
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for descriptor: Int32 in [0, 1, 2] {
        posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
    }
    let argv = arguments.map { strdup($0) } + [nil]
    defer { for argument in argv { free(argument) } }
    var pid = pid_t()
    guard posix_spawn(&pid, arguments[0], &actions, nil, argv, environ) == 0 else {
        throw Failure(description: "could not run \(arguments[0])")
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    return status
}

let binaries =
    ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
    .compactMap(Int.init).sorted(by: >).map { "/usr/lib/postgresql/\($0)/bin" }.first ?? "/usr/bin"
let asRoot = getuid() == 0
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mw-pg-bench-\(getpid())").path
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
if asRoot { try run(["/bin/chown", "postgres", folder], asPostgres: false) }
let port = 20_000 + Int(getpid() % 20_000)
guard
    try run(
        [binaries + "/initdb", "-D", folder + "/data", "-U", "postgres", "--auth=trust", "--no-sync"],
        asPostgres: asRoot) == 0,
    try run(
        [
            binaries + "/pg_ctl", "-D", folder + "/data", "-l", folder + "/log", "-w", "-o",
            "-p \(port) -k \(folder) -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off", "start",
        ],
        asPostgres: asRoot) == 0
else { throw Failure(description: "the cluster did not start (see \(folder)/log)") }
defer {
    _ = try? run([binaries + "/pg_ctl", "-D", folder + "/data", "-m", "immediate", "stop"], asPostgres: asRoot)
    try? FileManager.default.removeItem(atPath: folder)
}

let conninfo = "host=127.0.0.1 port=\(port) user=postgres dbname=postgres"
let admin = try await PostgresConnection(PostgresConfiguration(conninfo))
let ids = (0..<rows).map { _ in UUID() }
let idBytes = ids.flatMap { uuid in withUnsafeBytes(of: uuid.uuid) { Array($0) } }
let lookupIDs = (0..<lookups).map { ids[($0 * 7_919) % rows] }
let lookupBytes = lookupIDs.flatMap { uuid in withUnsafeBytes(of: uuid.uuid) { Array($0) } }

func resetTable() async throws {
    try await admin.execute("DROP TABLE IF EXISTS \"Item\"")
    try await admin.execute(
        "CREATE TABLE \"Item\" (id uuid PRIMARY KEY, title text NOT NULL, rating bigint NOT NULL, score double precision NOT NULL)"
    )
    try await admin.execute("CREATE INDEX ON \"Item\" (rating)")
}

func time(_ body: () async throws -> Void) async rethrows -> Duration {
    let start = ContinuousClock.now
    try await body()
    return ContinuousClock.now - start
}

/// Reads a row as a record decoder would.
func read(_ result: PostgresRows, _ row: Int) throws -> Int {
    guard case .uuid = try result.value(row: row, column: 0),
        case .text(let title) = try result.value(row: row, column: 1),
        case .int64(let rating) = try result.value(row: row, column: 2),
        case .double = try result.value(row: row, column: 3)
    else { throw Failure(description: "unexpected row") }
    return title.utf8.count + Int(rating)
}

var results: [(String, Duration, Duration)] = []

// Insert
try await resetTable()
let libpqInsert = try await time {
    guard libpq_bench_insert(conninfo, Int32(rows), idBytes) == 0 else { throw Failure(description: "libpq insert") }
}
try await resetTable()
let connection = try await PostgresConnection(PostgresConfiguration(conninfo))
/// Inserts a row per ID in one transaction, a prepared INSERT per row.
func insert(_ ids: [UUID], on connection: PostgresConnection) async throws {
    try await connection.transaction { connection in
        for (row, id) in ids.enumerated() {
            try await connection.execute(
                "INSERT INTO \"Item\" (id, title, rating, score) VALUES ($1, $2, $3, $4)",
                [.uuid(id), .text("item \(row)"), .int64(Int64(row % 100)), .double(Double(row) * 0.5)])
        }
    }
}
let modelwrightInsert = try await time { try await insert(ids, on: connection) }
results.append(("insert \(rows) rows", modelwrightInsert, libpqInsert))

// Fetch
let libpqFetch = try await time {
    guard libpq_bench_fetch(conninfo) == rows else { throw Failure(description: "libpq fetch") }
}
let modelwrightFetch = try await time {
    let fetched = try await connection.query("SELECT id, title, rating, score FROM \"Item\"")
    var sink = 0
    for row in 0..<fetched.count { sink &+= try read(fetched, row) }
    guard fetched.count == rows, sink != 0 else { throw Failure(description: "fetch") }
}
let modelwrightFetchText = try await time {
    let fetched = try await connection.query("SELECT id, title, rating, score FROM \"Item\"", format: .text)
    var sink = 0
    for row in 0..<fetched.count { sink &+= try read(fetched, row) }
    guard fetched.count == rows, sink != 0 else { throw Failure(description: "fetch") }
}
results.append(("fetch \(rows) rows", modelwrightFetch, libpqFetch))
results.append(("fetch \(rows) rows, text format", modelwrightFetchText, libpqFetch))

// Key lookups
let libpqLookups = try await time {
    guard libpq_bench_lookups(conninfo, Int32(lookups), lookupBytes) == lookups else {
        throw Failure(description: "libpq lookups")
    }
}
let modelwrightLookups = try await time {
    for id in lookupIDs {
        let found = try await connection.query(
            "SELECT id, title, rating, score FROM \"Item\" WHERE id = $1", [.uuid(id)])
        guard found.count == 1 else { throw Failure(description: "lookup") }
        _ = try read(found, 0)
    }
}
results.append(("\(lookups) key lookups", modelwrightLookups, libpqLookups))

// Filtered, sorted
let expectedFiltered = libpq_bench_filtered(conninfo, 49)
let libpqFiltered = await time { _ = libpq_bench_filtered(conninfo, 49) }
let modelwrightFiltered = try await time {
    let fetched = try await connection.query(
        "SELECT id, title, rating, score FROM \"Item\" WHERE rating > $1 ORDER BY title", [.int64(49)])
    var sink = 0
    for row in 0..<fetched.count { sink &+= try read(fetched, row) }
    guard fetched.count == expectedFiltered else { throw Failure(description: "filtered") }
}
results.append(("filtered sorted fetch (\(expectedFiltered) rows)", modelwrightFiltered, libpqFiltered))

func milliseconds(_ duration: Duration) -> String {
    String(
        format: "%.1f ms", Double(duration.components.seconds) * 1_000 + Double(duration.components.attoseconds) / 1e15)
}
print("| Workload | PostgresConnection | raw libpq (C) | ratio |")
print("|---|---|---|---|")
for (name, modelwright, libpq) in results {
    let ratio = (modelwright / libpq)
    print("| \(name) | \(milliseconds(modelwright)) | \(milliseconds(libpq)) | \(String(format: "%.2f", ratio))× |")
}
