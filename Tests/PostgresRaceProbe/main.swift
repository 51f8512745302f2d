import Foundation
import Modelwright
import ModelwrightPostgres
import Trips

// One of several processes that start on one PostgreSQL database at the same moment, for the
// tests that creation runs once under an advisory lock and that no increment is lost:
// `PostgresRaceProbe <connection string> <increments>` prints `created` or `found`, then adds
// one to the counter `increments` times, each under the lock. Exits 1 with the error otherwise.
//
// `PostgresRaceProbe store <connection string> <count>` opens a `Store` of the Trips model instead
// and inserts `count` users, one transaction each, for the tests that another process's commits
// wake a store's observers.
//
// `PostgresRaceProbe open <connection string> <start>` waits until `start` (seconds since 1970),
// so that several processes open at the same moment, then opens a `Store` of the Trips model
// (creating its schema on an empty database), inserts one user and prints `opened`.

// `PostgresRaceProbe migrate <connection string> <start>` waits until `start`, then opens a `Store`
// with the Trips migration plan on a database at an older version, and prints `committed <version>`
// for each stage this process committed (none when another process migrated first), then `opened`.

// `PostgresRaceProbe peer <connection string> <me> <other> <count> <start>` is one of two server
// processes on one database at an older version: it waits until `start`, opens a `Store` with the
// Trips migration plan and history recorded as `me` (printing `committed <version>` per stage it
// committed), observes the users named `<other>-…` with `observe` and a results controller, commits
// the user `<me>-ready` and waits to see `<other>-ready` (both observe from then on), then commits
// `count` users `<me>-<n>`, one transaction each, and waits until both its observation and its
// controller show the other's `count` users. It prints what each showed (`observed …`,
// `controller …`), the other's transactions in the persistent history (`history <author> <users>`)
// and `done`; it exits 2 after 60 seconds without seeing them.

/// The app's side of the v2 → v3 stage, as a server process would implement it.
struct ProbeMigrations: TripsMigrations {
    func splitNameUserGivenName(_ row: MigrationRow) throws -> String {
        guard case .text(let name) = row["name"] else { return "" }
        return name.split(separator: " ").dropLast().joined(separator: " ")
    }

    func splitNameUserFamilyName(_ row: MigrationRow) throws -> String {
        guard case .text(let name) = row["name"] else { return "" }
        return name.split(separator: " ").last.map(String.init) ?? ""
    }
}

/// The versions of the stages a process committed.
final class Committed: @unchecked Sendable {
    // @unchecked: the one field is behind `lock`.
    private let lock = NSLock()
    private var versions: [Int] = []

    func append(_ version: Int) { lock.withLock { versions.append(version) } }

    var all: [Int] { lock.withLock { versions } }
}

let schema = SchemaDescription(
    modelName: "Race", version: 1,
    entities: [EntityDescription(name: "Counter", attributes: [.init(name: "value", type: .int64)])])

/// `value`, or an error when an observation ended without it.
func ended<Value>(_ value: Value?) throws -> Value {
    guard let value else { throw PostgresError.invalidValue("an observation ended") }
    return value
}

/// The `peer` mode: see the top of the file.
func peer(_ connection: String, me: String, other: String, count: Int, start: Double) async throws {
    let wait = start - Date().timeIntervalSince1970
    if wait > 0 { try await Task.sleep(for: .seconds(wait)) }
    let committed = Committed()
    let store = try Store(
        postgres: PostgresConfiguration(connection), migrationPlan: Trips.migrationPlan(ProbeMigrations()),
        history: .enabled(author: me), readers: 1
    ) { progress in
        if progress.event == .stageCommitted { committed.append(progress.toVersion) }
    }
    for version in committed.all { print("committed \(version)") }
    let theirs = User.request().filter { $0.username.hasPrefix("\(other)-") }.sorted { [$0.username.ascending] }
    var observed = store.observe(theirs).makeAsyncIterator()
    let controller = FetchedResultsController(store: store, request: theirs, batchSize: 4)
    var results = controller.makeAsyncIterator()
    _ = try await observed.next()
    _ = try await results.next()
    let ready = User(username: "\(me)-ready", givenName: me, familyName: "ready", rating: 3)
    try await store.performAndSave { try $0.insert(ready) }
    // From here on the other process observes too: every commit below reaches it through NOTIFY.
    while try !ended(await observed.next()).contains(where: { $0.username == "\(other)-ready" }) {}
    for number in 0..<count {
        let user = User(username: "\(me)-\(number)", givenName: me, familyName: String(number), rating: 3)
        try await store.performAndSave { try $0.insert(user) }
    }
    let expected = ["\(other)-ready"] + (0..<count).map { "\(other)-\($0)" }
    var seen: [String] = []
    while seen.sorted() != expected.sorted() {
        seen = try ended(await observed.next()).map(\.username)
    }
    print("observed \(seen.sorted().joined(separator: " "))")
    var snapshot: ResultsSnapshot<User>?
    while snapshot?.count != expected.count {
        snapshot = try ended(await results.next()).snapshot
    }
    let ids = snapshot?.ids ?? []
    let shown = try await store.performQuery { context in try ids.compactMap { try context.existing($0)?.username } }
    print("controller \(shown.sorted().joined(separator: " "))")
    let history = try await store.fetchHistory(after: nil, author: other)
    let inserted = history.flatMap(\.changes).filter { $0.entity == "User" && $0.kind == .insert }
    print("history \(Set(history.map(\.author)).sorted().joined(separator: ",")) \(inserted.count)")
    try store.close()
    print("done")
}

func run() async throws {
    let arguments = CommandLine.arguments
    if arguments.count == 7, arguments[1] == "peer", let count = Int(arguments[5]), let start = Double(arguments[6]) {
        Task {
            try await Task.sleep(for: .seconds(60))
            FileHandle.standardError.write(Data("timed out\n".utf8))
            exit(2)
        }
        try await peer(arguments[2], me: arguments[3], other: arguments[4], count: count, start: start)
        return
    }
    if arguments.count == 4, arguments[1] == "store", let count = Int(arguments[3]) {
        let store = try Store(postgres: PostgresConfiguration(arguments[2]), schema: Trips.schema)
        for value in 0..<count {
            try await store.performAndSave { context in
                try context.insert(
                    User(username: "probe\(getpid())-\(value)", givenName: "Pro", familyName: "Be", rating: 9))
            }
        }
        try store.close()
        print("inserted \(count)")
        return
    }
    if arguments.count == 4, arguments[1] == "open", let start = Double(arguments[3]) {
        let wait = start - Date().timeIntervalSince1970
        if wait > 0 { try await Task.sleep(for: .seconds(wait)) }
        let store = try Store(postgres: PostgresConfiguration(arguments[2]), schema: Trips.schema)
        try await store.performAndSave { context in
            try context.insert(User(username: "opener\(getpid())", givenName: "Op", familyName: "En", rating: 1))
        }
        try store.close()
        print("opened")
        return
    }
    if arguments.count == 4, arguments[1] == "migrate", let start = Double(arguments[3]) {
        let wait = start - Date().timeIntervalSince1970
        if wait > 0 { try await Task.sleep(for: .seconds(wait)) }
        let committed = Committed()
        let store = try Store(
            postgres: PostgresConfiguration(arguments[2]), migrationPlan: Trips.migrationPlan(ProbeMigrations()),
            readers: 1
        ) { progress in
            if progress.event == .stageCommitted { committed.append(progress.toVersion) }
        }
        try store.close()
        for version in committed.all { print("committed \(version)") }
        print("opened")
        return
    }
    guard arguments.count == 3, let increments = Int(arguments[2]) else {
        throw PostgresError.invalidValue("usage: PostgresRaceProbe <connection string> <increments>")
    }
    let connection = try await PostgresConnection(PostgresConfiguration(arguments[1]))
    let created = try await connection.withAdvisoryLock(27_001) { connection in
        let exists = try await connection.query("SELECT to_regclass('public._modelwright_metadata') IS NOT NULL")
        guard exists[0, 0] == .bool(false) else { return false }
        for statement in try SchemaSQL.createStatements(for: schema, in: PostgresDialect()) {
            try await connection.execute(statement)
        }
        try await connection.execute("INSERT INTO \"Counter\" VALUES ($1, 0)", [.uuid(UUID())])
        try await connection.execute(
            "INSERT INTO _modelwright_metadata VALUES ('creator', $1)", [.text(String(getpid()))])
        return true
    }
    print(created ? "created" : "found")
    for _ in 0..<increments {
        try await connection.withAdvisoryLock(27_002) { connection in
            guard case .int64(let value) = try await connection.query("SELECT value FROM \"Counter\"")[0, 0] else {
                throw PostgresError.invalidValue("no counter")
            }
            try await connection.execute("UPDATE \"Counter\" SET value = $1", [.int64(value + 1)])
        }
    }
}

do {
    try await run()
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
