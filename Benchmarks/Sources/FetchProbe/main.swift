import BenchmarkSupport
import CSQLiteBench
import Foundation
import GRDBPeople
import Modelwright

// Every read workload and the insert, for each contender (Modelwright, raw C, GRDB optimised, GRDB
// `Codable`) on the same file, one workload and contender per process, so that callgrind counts the
// instructions of one (valgrind 3.19 crashes on the dispatch worker threads of an async main, so
// this probe is synchronous). From Benchmarks/, the whole table in instructions, then in time:
//
//     swift build -c release --product FetchProbe
//     ./probe.sh instructions        # callgrind, every workload and contender, ratios to raw C
//     ./probe.sh time                # wall-time medians, with the load average
//
// One run by hand: callgrind collects only inside `counted`, which each contender's run wraps around
// its workload (a client request, so inlining and function merging cannot move the boundary):
//
//     .build/release/FetchProbe fill 100000 /tmp/people.sqlite
//     valgrind --tool=callgrind --collect-atstart=no .build/release/FetchProbe 100000 fetchAll modelwright /tmp/people.sqlite
//
// Modelwright and GRDB count inside their read (or write) closure, so the hop onto the database
// queue is not counted; raw C's count includes its `BEGIN` and the statement's preparation, and the
// insert's `COMMIT` is outside every count.
//
// Workloads, each in one read transaction: fetchAll (every person), indexedFetch (1,000 fetches by the
// indexed age, 10 rows each), lookUp (1,000 lookups by ID), lookUpByName (1,000 lookups by the unique
// `lastName`), fetchNewest (1,000 fetches by age, newest first, limit 5), petsOfOwner (1,000 fetches of
// the pets whose owner has a given name: a to-one hop in the filter, 1,000 owners with 10 pets each),
// and insert (every person into a new file, one transaction). Contenders: raw (C), modelwright
// (a request built for each fetch), prepared (Modelwright's prepared requests, built once per
// workload inside the count; the same as modelwright for fetchAll, lookUp and insert), grdb
// (optimised: cached statements, hand-written decoding) and grdb-codable.

/// What every contender reads: the rows, the 1,000 IDs and names looked up, the ages fetched.
enum Probe {
    /// The number of people.
    nonisolated(unsafe) static var rows = 100_000

    /// The person at `index`; its ID is derived from the index (time-ordered, as a version 7
    /// UUID is), so that a process that did not fill the file knows the IDs it looks up.
    static func person(_ index: Int) -> Person {
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0x70, 0, 0x80, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { buffer in
            let high = UInt64(index).bigEndian
            withUnsafeBytes(of: high) {
                buffer.baseAddress!.copyMemory(from: $0.baseAddress!.advanced(by: 2), byteCount: 6)
            }
            buffer[15] = UInt8(truncatingIfNeeded: index)
            buffer[14] = UInt8(truncatingIfNeeded: index >> 8)
        }
        return Person(
            id: Person.ID(UUID(uuid: bytes)), firstName: "First \(index)", lastName: "Lastname-of-person-\(index)",
            age: index % 10_000, createdAt: Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(index) * 1.5),
            nickname: index % 3 == 0 ? nil : "nick\(index)")
    }

    /// Every person, for the fill and the insert.
    static var people: [Person] { (0..<rows).map(person) }
    /// The 1,000 people looked up.
    static var picked: [Person] { (0..<1_000).map { person(($0 * 7919) % rows) } }
    /// The age of the `index`th of the 1,000 fetches by age.
    static func age(_ index: Int) -> Int { (index * 7919) % 10_000 }
    /// The owner's name of the `index`th of the 1,000 hops.
    static func ownerName(_ index: Int) -> String { "Owner \((index * 7919) % Pets.owners)" }
    /// The schema of the people's file: `lastName` unique, for the lookups by a unique key.
    static let schema = Person.schema(uniqueLastName: true)
}

/// Modelwright's workloads, each inside one `performQuery` (the insert inside one `performAndSave`).
enum Modelwright {
    @inline(never) static func fetchAll(_ context: ReadContext) throws -> Int {
        try context.fetch(Person.request()).count
    }

    @inline(never) static func indexedFetch(_ context: ReadContext) throws -> Int {
        var found = 0
        for index in 0..<1_000 {
            let age = Probe.age(index)
            found += try context.fetch(Person.request().filter { $0.age == age }).count
        }
        return found
    }

    @inline(never) static func lookUp(_ context: ReadContext, _ ids: [Person.ID]) throws -> Int {
        var found = 0
        for id in ids where try context.existing(id) != nil {
            found += 1
        }
        return found
    }

    @inline(never) static func lookUpByName(_ context: ReadContext, _ names: [String]) throws -> Int {
        var found = 0
        for name in names where try context.fetchOne(Person.request().filter { $0.lastName == name }) != nil {
            found += 1
        }
        return found
    }

    @inline(never) static func fetchNewest(_ context: ReadContext) throws -> Int {
        var found = 0
        for index in 0..<1_000 {
            let age = Probe.age(index)
            let request = Person.request().filter { $0.age == age }.sorted { [$0.createdAt.descending] }
            found += try context.fetch(request.limit(5)).count
        }
        return found
    }

    @inline(never) static func petsOfOwner(_ context: ReadContext) throws -> Int {
        var found = 0
        for index in 0..<1_000 {
            let name = Probe.ownerName(index)
            found += try context.fetch(Pet.request().filter { $0.owner.name == name }).count
        }
        return found
    }

    // The same reads through prepared requests (`PreparedRequest`), built inside the count: the
    // "prepared" contender. Its other workloads are the plain contender's.

    @inline(never) static func indexedFetchPrepared(_ context: ReadContext) throws -> Int {
        let byAge = PreparedRequest { (age: RequestParameter<Int>) in Person.request().filter { $0.age == age } }
        var found = 0
        for index in 0..<1_000 {
            found += try context.fetch(byAge, Probe.age(index)).count
        }
        return found
    }

    @inline(never) static func lookUpByNamePrepared(_ context: ReadContext, _ names: [String]) throws -> Int {
        let byName = PreparedRequest { (name: RequestParameter<String>) in
            Person.request().filter { $0.lastName == name }
        }
        var found = 0
        for name in names where try context.fetchOne(byName, name) != nil {
            found += 1
        }
        return found
    }

    @inline(never) static func fetchNewestPrepared(_ context: ReadContext) throws -> Int {
        let newest = PreparedRequest { (age: RequestParameter<Int>) in
            Person.request().filter { $0.age == age }.sorted { [$0.createdAt.descending] }.limit(5)
        }
        var found = 0
        for index in 0..<1_000 {
            found += try context.fetch(newest, Probe.age(index)).count
        }
        return found
    }

    @inline(never) static func petsOfOwnerPrepared(_ context: ReadContext) throws -> Int {
        let petsOf = PreparedRequest { (name: RequestParameter<String>) -> FetchRequest<Pet> in
            Pet.request().filter { $0.owner.name == name }
        }
        var found = 0
        for index in 0..<1_000 {
            found += try context.fetch(petsOf, Probe.ownerName(index)).count
        }
        return found
    }

    @inline(never) static func insert(_ context: WriteContext, _ people: [Person]) throws -> Int {
        try context.batchInsert(people)
        return people.count
    }

    /// Runs `workload` on `store` and waits for its result.
    static func run(_ workload: String, _ store: Store, ids: [Person.ID], names: [String], prepared: Bool = false)
        -> Int
    {
        if workload == "insert" {
            let people = Probe.people
            return wait { done in
                store.performAndSave(
                    on: DispatchQueue(label: "probe"), { context in try counted { try insert(context, people) } },
                    completion: done)
            }
        }
        return wait { done in
            store.performQuery(
                on: DispatchQueue(label: "probe"),
                { context in
                    try counted {
                        switch (workload, prepared) {
                        case ("indexedFetch", true): try indexedFetchPrepared(context)
                        case ("lookUpByName", true): try lookUpByNamePrepared(context, names)
                        case ("fetchNewest", true): try fetchNewestPrepared(context)
                        case ("petsOfOwner", true): try petsOfOwnerPrepared(context)
                        default: try plain(workload, context, ids: ids, names: names)
                        }
                    }
                }, completion: done)
        }
    }

    /// A read workload with requests built for each fetch.
    static func plain(_ workload: String, _ context: ReadContext, ids: [Person.ID], names: [String]) throws -> Int {
        switch workload {
        case "indexedFetch": try indexedFetch(context)
        case "lookUp": try lookUp(context, ids)
        case "lookUpByName": try lookUpByName(context, names)
        case "fetchNewest": try fetchNewest(context)
        case "petsOfOwner": try petsOfOwner(context)
        default: try fetchAll(context)
        }
    }

    /// Starts `body` with its completion handler and waits for the result (-1 for an error).
    static func wait(_ body: (@escaping @Sendable (Result<Int, any Error>) -> Void) -> Void) -> Int {
        let done = DispatchSemaphore(value: 0)
        let box = Box()
        body { result in
            box.count = (try? result.get()) ?? -1
            done.signal()
        }
        done.wait()
        return box.count
    }
}

/// The hop workload's store: `owners` owners with `petsPerOwner` pets each.
enum Pets {
    static let owners = 1_000
    static let petsPerOwner = 10

    /// Fills `store` (of `querySchema`).
    static func fill(_ store: Store) {
        let owners = (0..<owners).map { Owner(index: $0) }
        let pets = (0..<owners.count * petsPerOwner).map { Pet(index: $0, owner: owners[$0 % owners.count].id) }
        let filled = DispatchSemaphore(value: 0)
        store.performAndSave(
            on: DispatchQueue(label: "fill"),
            { context in
                try context.batchInsert(owners)
                try context.batchInsert(pets)
            },
            completion: { _ in filled.signal() })
        filled.wait()
    }
}

/// The raw C contender's reads, on the same file; `--toggle-collect` counts them by the same names.
enum Raw {
    static let columns = personColumns
    static let newestSQL = "SELECT \(columns) FROM \"Person\" WHERE \"age\" = ? ORDER BY \"createdAt\" DESC LIMIT ?"
    /// The same SQL shape as Modelwright's hop: the owner's IDs in a subquery.
    static let petsSQL =
        #"SELECT "id", "name", "owner" FROM "Pet" WHERE "owner" IN "#
        + #"(SELECT "id" FROM "Owner" WHERE "name" = ?)"#

    @inline(never) static func fetchAll(_ handle: OpaquePointer) -> Int {
        inRead(handle, "SELECT \(columns) FROM \"Person\"") { statement in
            rows(statement, person).count
        }
    }

    @inline(never) static func indexedFetch(_ handle: OpaquePointer) -> Int {
        inRead(handle, "SELECT \(columns) FROM \"Person\" WHERE \"age\" = ?") { statement in
            var found = 0
            for index in 0..<1_000 {
                sqlite3_bind_int64(statement, 1, Int64(Probe.age(index)))
                found += rows(statement, person).count
            }
            return found
        }
    }

    @inline(never) static func lookUp(_ handle: OpaquePointer, _ ids: [Person.ID]) -> Int {
        inRead(handle, "SELECT \(columns) FROM \"Person\" WHERE \"id\" = ?") { statement in
            var found = 0
            for id in ids {
                var uuid = id.uuid.uuid
                withUnsafeBytes(of: &uuid) { bytes in
                    _ = sqlite3_bind_blob(statement, 1, bytes.baseAddress, 16, transient)
                }
                if firstRow(statement, person) != nil { found += 1 }
            }
            return found
        }
    }

    @inline(never) static func lookUpByName(_ handle: OpaquePointer, _ names: [String]) -> Int {
        inRead(handle, "SELECT \(columns) FROM \"Person\" WHERE \"lastName\" = ?") { statement in
            var found = 0
            for name in names {
                bindText(statement, 1, name)
                if firstRow(statement, person) != nil { found += 1 }
            }
            return found
        }
    }

    @inline(never) static func fetchNewest(_ handle: OpaquePointer) -> Int {
        inRead(handle, newestSQL) { statement in
            var found = 0
            for index in 0..<1_000 {
                sqlite3_bind_int64(statement, 1, Int64(Probe.age(index)))
                sqlite3_bind_int64(statement, 2, 5)
                found += rows(statement, person).count
            }
            return found
        }
    }

    @inline(never) static func petsOfOwner(_ handle: OpaquePointer) -> Int {
        inRead(handle, petsSQL) { statement in
            var found = 0
            for index in 0..<1_000 {
                bindText(statement, 1, Probe.ownerName(index))
                found += rows(statement, pet).count
            }
            return found
        }
    }

    /// Every person in one transaction, bound with `SQLITE_TRANSIENT` (the `COMMIT` is the caller's).
    @inline(never) static func insert(_ handle: OpaquePointer, _ people: [Person]) -> Int {
        sqlite3_exec(handle, "BEGIN IMMEDIATE", nil, nil, nil)
        var statement: OpaquePointer?
        let sql = "INSERT INTO \"Person\" (\(columns)) VALUES (?, ?, ?, ?, ?, ?)"
        sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        var inserted = 0
        for person in people {
            var uuid = person.id.uuid.uuid
            withUnsafeBytes(of: &uuid) { bytes in
                _ = sqlite3_bind_blob(statement, 1, bytes.baseAddress, 16, transient)
            }
            bindText(statement!, 2, person.firstName)
            bindText(statement!, 3, person.lastName)
            sqlite3_bind_int64(statement, 4, Int64(person.age))
            sqlite3_bind_double(statement, 5, person.createdAt.timeIntervalSinceReferenceDate)
            if let nickname = person.nickname {
                bindText(statement!, 6, nickname)
            } else {
                sqlite3_bind_null(statement, 6)
            }
            if sqlite3_step(statement) == SQLITE_DONE { inserted += 1 }
            sqlite3_reset(statement)
        }
        sqlite3_finalize(statement)
        return inserted
    }

    /// Runs `workload` on the file at `path`.
    static func run(_ workload: String, path: String, ids: [Person.ID], names: [String]) -> Int {
        var handle: OpaquePointer?
        sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
        defer { sqlite3_close_v2(handle) }
        sqlite3_exec(handle, "PRAGMA synchronous=NORMAL", nil, nil, nil)
        switch workload {
        case "insert":
            let people = Probe.people
            let inserted = counted { insert(handle!, people) }
            sqlite3_exec(handle, "COMMIT", nil, nil, nil)
            return inserted
        case "indexedFetch": return counted { indexedFetch(handle!) }
        case "lookUp": return counted { lookUp(handle!, ids) }
        case "lookUpByName": return counted { lookUpByName(handle!, names) }
        case "fetchNewest": return counted { fetchNewest(handle!) }
        case "petsOfOwner": return counted { petsOfOwner(handle!) }
        default: return counted { fetchAll(handle!) }
        }
    }

    /// Runs `body` with `sql` prepared, inside one read transaction.
    static func inRead(_ handle: OpaquePointer, _ sql: String, _ body: (OpaquePointer) -> Int) -> Int {
        sqlite3_exec(handle, "BEGIN DEFERRED", nil, nil, nil)
        var statement: OpaquePointer?
        sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        let result = body(statement!)
        sqlite3_finalize(statement)
        sqlite3_exec(handle, "COMMIT", nil, nil, nil)
        return result
    }

    /// Every row of the bound statement, decoded by `decode`; the statement is reset after.
    static func rows<Row>(_ statement: OpaquePointer, _ decode: (OpaquePointer) -> Row) -> [Row] {
        var decoded: [Row] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            decoded.append(decode(statement))
        }
        sqlite3_reset(statement)
        return decoded
    }

    /// The first row of the bound statement, as a lookup by a unique key reads it, without an array.
    static func firstRow<Row>(_ statement: OpaquePointer, _ decode: (OpaquePointer) -> Row) -> Row? {
        defer { sqlite3_reset(statement) }
        return sqlite3_step(statement) == SQLITE_ROW ? decode(statement) : nil
    }

    static func pet(_ statement: OpaquePointer) -> (UUID, String, UUID) {
        (uuid(statement, 0), text(statement, 1), uuid(statement, 2))
    }

    static func uuid(_ statement: OpaquePointer, _ column: Int32) -> UUID {
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        if sqlite3_column_bytes(statement, column) == 16, let bytes = sqlite3_column_blob(statement, column) {
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: UnsafeRawBufferPointer(start: bytes, count: 16)) }
        }
        return UUID(uuid: uuid)
    }

    static func bindText(_ statement: OpaquePointer, _ index: Int32, _ value: String) {
        var value = value
        value.withUTF8 { bytes in
            // Names are never empty here, so the base address is never nil (nil would bind NULL).
            bytes.withMemoryRebound(to: CChar.self) { chars in
                _ = sqlite3_bind_text(statement, index, chars.baseAddress, Int32(bytes.count), transient)
            }
        }
    }

    static func person(_ statement: OpaquePointer) -> Person {
        Person(
            id: Person.ID(uuid(statement, 0)),
            firstName: text(statement, 1),
            lastName: text(statement, 2),
            age: Int(sqlite3_column_int64(statement, 3)),
            createdAt: Date(timeIntervalSinceReferenceDate: sqlite3_column_double(statement, 4)),
            nickname: sqlite3_column_type(statement, 5) == SQLITE_NULL ? nil : text(statement, 5)
        )
    }

    static func text(_ statement: OpaquePointer, _ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(statement, column) else { return "" }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}

/// `body`'s result, with callgrind collecting only while it runs (run with `--collect-atstart=no`).
func counted<Result>(_ body: () throws -> Result) rethrows -> Result {
    probe_toggle_collect()
    defer { probe_toggle_collect() }
    return try body()
}

/// The fetched count, handed from the reader's queue to the waiting main thread.
final class Box: @unchecked Sendable { var count = 0 }

/// Creates the people's file at `path` (and the pets' file at `path-pets`), filled by Modelwright.
func fill(_ path: String) throws {
    let store = try Store(url: URL(fileURLWithPath: path), schema: Probe.schema)
    _ = Modelwright.run("insert", store, ids: [], names: [])
    try store.close()
    let pets = try Store(url: URL(fileURLWithPath: path + "-pets"), schema: querySchema)
    Pets.fill(pets)
    try pets.close()
}

/// Removes the file at `path` and its journal files.
func remove(_ path: String) {
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
}

/// Runs one workload of one contender on `path` (an empty file of the schema for the insert).
func run(_ workload: String, _ contender: String, path: String, ids: [Person.ID], names: [String]) throws -> Int {
    let file = workload == "petsOfOwner" ? path + "-pets" : path
    switch contender {
    case "raw": return Raw.run(workload, path: file, ids: ids, names: names)
    case "grdb": return try runGRDB(workload, codable: false, path: file, ids: ids, names: names)
    case "grdb-codable": return try runGRDB(workload, codable: true, path: file, ids: ids, names: names)
    default:
        let schema =
            switch workload {
            case "petsOfOwner": querySchema
            case "insert": Person.schema
            default: Probe.schema
            }
        let store = try Store(url: URL(fileURLWithPath: file), schema: schema)
        defer { try? store.close() }
        return Modelwright.run(workload, store, ids: ids, names: names, prepared: contender == "prepared")
    }
}

// FetchProbe fill ROWS PATH
// FetchProbe ROWS WORKLOAD [CONTENDER [PATH]] [--repeat N]: without a path, a temporary file is filled
// first. With --repeat, the workload runs N times (the insert into a new file each time) and the
// median and best wall times are printed, each measured around the whole call as an app makes it
// (opening the store or pool included, as is the hop onto its queue).
var arguments = Array(CommandLine.arguments.dropFirst())
var repeats = 0
if let flag = arguments.firstIndex(of: "--repeat"), flag + 1 < arguments.count {
    repeats = Int(arguments[flag + 1]) ?? 1
    arguments.removeSubrange(flag...(flag + 1))
}
if arguments.first == "fill" {
    Probe.rows = Int(arguments[1]) ?? 100_000
    try fill(arguments[2])
    exit(0)
}
Probe.rows = arguments.first.flatMap { Int($0) } ?? 100_000
let workload = arguments.count > 1 ? arguments[1] : "fetchAll"
let contender = arguments.count > 2 ? arguments[2] : "modelwright"
let temporary = NSTemporaryDirectory() + "probe-\(getpid()).sqlite"
let given = arguments.count > 3 ? arguments[3] : nil
let path = given ?? temporary
if given == nil, workload != "insert" { try fill(path) }
let picked = Probe.picked
let ids = picked.map(\.id)
let names = picked.map(\.lastName)

/// An empty file of the people's schema, for one insert.
func emptyFile(_ index: Int) throws -> String {
    let file = temporary + "-insert-\(index)"
    remove(file)
    try Store(url: URL(fileURLWithPath: file), schema: Person.schema).close()
    return file
}

if repeats == 0 {
    let file = workload == "insert" ? try emptyFile(0) : path
    print(workload, contender, try run(workload, contender, path: file, ids: ids, names: names))
    if workload == "insert" { remove(file) }
} else {
    var times: [Double] = []
    var result = 0
    for index in 0..<(repeats + 1) {
        let file = workload == "insert" ? try emptyFile(index) : path
        let start = ContinuousClock.now
        result = try run(workload, contender, path: file, ids: ids, names: names)
        let elapsed = ContinuousClock.now - start
        // The first run warms the caches and is not counted.
        if index > 0 {
            times.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1e3)
        }
        if workload == "insert" { remove(file) }
    }
    times.sort()
    print(workload, contender, result, String(format: "median %.3f ms best %.3f ms", times[times.count / 2], times[0]))
}
if given == nil {
    remove(temporary)
    remove(temporary + "-pets")
}
