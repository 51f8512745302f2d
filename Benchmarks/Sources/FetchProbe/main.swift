import BenchmarkSupport
import CSQLiteBench
import Foundation
import Modelwright

// The read path alone, for instruction counts under callgrind, which cannot run
// ModelwrightBenchmarks here (valgrind 3.19 crashes on the dispatch worker threads of its async
// main). Run from Benchmarks/:
//
//     swift build -c release --product FetchProbe
//     valgrind --tool=callgrind --toggle-collect='*8fetchAllySi11Modelwright5StoreCFSiAC11ReadContextCYbKcfU_' \
//         .build/release/FetchProbe 100000 fetchAll
//     valgrind --tool=callgrind --toggle-collect='*3RawO8fetchAll*' .build/release/FetchProbe 100000 fetchAll raw
//
// Each toggle names one function exactly (BENCHMARKS.md lists them for every workload): the
// `performQuery` closure of the workload, or Raw's function. A looser pattern such as '*lookUp*'
// also matches closures nested in the counted one, and entering one of those toggles collection
// off again; for a raw run it matches the Modelwright function too.
//
// The second argument picks the workload (fetchAll when absent), each in one read: fetchAll,
// lookUp (1,000 lookups by ID), lookUpByName (1,000 lookups by the unique `lastName`),
// fetchNewest (1,000 fetches by age, sorted newest first, limit 5) or petsOfOwner (1,000 fetches
// of the pets whose owner has a given name: a to-one hop in the filter, on 1,000 owners with 10
// pets each). With a third argument, `raw`, the same workload runs in C on the same file, as the
// benchmark's raw C contender does: its count is the one to compare with.
//
// The records are BenchmarkSupport's, which ModelwrightBenchmarks and QueryBenchmarks measure too;
// IDs are drawn at random since only the reads are counted.

// Fills a file store with N people, then fetches them all once; synchronous (semaphores, no async
// main), which valgrind runs.

/// Fetches every person in one read transaction; what `--toggle-collect` counts.
@inline(never) func fetchAll(_ store: Store) -> Int {
    let done = DispatchSemaphore(value: 0)
    let box = Box()
    store.performQuery(
        on: DispatchQueue(label: "probe"),
        { context in try context.fetch(Person.request()).count },
        completion: { result in
            box.count = (try? result.get()) ?? -1
            done.signal()
        })
    done.wait()
    return box.count
}

/// Looks up 1,000 people by ID in one read transaction; what `--toggle-collect='*lookUp*'` counts.
@inline(never) func lookUp(_ store: Store, _ ids: [Person.ID]) -> Int {
    read(store) { context in
        var found = 0
        for id in ids where try context.existing(id) != nil {
            found += 1
        }
        return found
    }
}

/// The 5 newest people of each of 1,000 ages, in one read transaction.
@inline(never) func fetchNewest(_ store: Store) -> Int {
    read(store) { context in
        var found = 0
        for index in 0..<1_000 {
            let age = (index * 7919) % 10_000
            let request = Person.request().filter { $0.age == age }.sorted { [$0.createdAt.descending] }
            found += try context.fetch(request.limit(5)).count
        }
        return found
    }
}

/// The people of 1,000 lookups by the unique `lastName`, in one read transaction.
@inline(never) func lookUpByName(_ store: Store, _ names: [String]) -> Int {
    read(store) { context in
        var found = 0
        for name in names where try context.fetchOne(Person.request().filter { $0.lastName == name }) != nil {
            found += 1
        }
        return found
    }
}

/// The pets of 1,000 owners found by name: a to-one hop in the filter.
@inline(never) func petsOfOwner(_ store: Store) -> Int {
    read(store) { context in
        var found = 0
        for index in 0..<1_000 {
            let name = "Owner \((index * 7919) % Pets.owners)"
            found += try context.fetch(Pet.request().filter { $0.owner.name == name }).count
        }
        return found
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
    static let columns = #""id", "firstName", "lastName", "age", "createdAt", "nickname""#

    @inline(never) static func fetchAll(_ handle: OpaquePointer) -> Int {
        inRead(handle, "SELECT \(columns) FROM \"Person\"") { statement in
            rows(statement, person).count
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
        let sql = "SELECT \(columns) FROM \"Person\" WHERE \"age\" = ? ORDER BY \"createdAt\" DESC LIMIT ?"
        return inRead(handle, sql) { statement in
            var found = 0
            for index in 0..<1_000 {
                sqlite3_bind_int64(statement, 1, Int64((index * 7919) % 10_000))
                sqlite3_bind_int64(statement, 2, 5)
                found += rows(statement, person).count
            }
            return found
        }
    }

    /// The same SQL shape as Modelwright's hop: the owner's IDs in a subquery.
    @inline(never) static func petsOfOwner(_ handle: OpaquePointer) -> Int {
        let sql =
            #"SELECT "id", "name", "owner" FROM "Pet" WHERE "owner" IN "#
            + #"(SELECT "id" FROM "Owner" WHERE "name" = ?)"#
        return inRead(handle, sql) { statement in
            var found = 0
            for index in 0..<1_000 {
                bindText(statement, 1, "Owner \((index * 7919) % Pets.owners)")
                found += rows(statement, pet).count
            }
            return found
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

/// Runs `body` in one `performQuery` and waits for its result.
func read(_ store: Store, _ body: @escaping @Sendable (ReadContext) throws -> Int) -> Int {
    let done = DispatchSemaphore(value: 0)
    let box = Box()
    store.performQuery(
        on: DispatchQueue(label: "probe"), body,
        completion: { result in
            box.count = (try? result.get()) ?? -1
            done.signal()
        })
    done.wait()
    return box.count
}

/// The fetched count, handed from the reader's queue to the waiting main thread.
final class Box: @unchecked Sendable { var count = 0 }

let rows = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 100_000
let workload = CommandLine.arguments.dropFirst(2).first ?? "fetchAll"
let people = (0..<rows).map { index in
    Person(
        id: Person.ID(UUID()), firstName: "First \(index)", lastName: "Lastname-of-person-\(index)",
        age: index % 10_000, createdAt: Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(index) * 1.5),
        nickname: index % 3 == 0 ? nil : "nick\(index)")
}
let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("probe-\(getpid()).sqlite")
let store: Store
if workload == "petsOfOwner" {
    store = try Store(url: url, schema: querySchema)
    Pets.fill(store)
} else {
    store = try Store(url: url, schema: Person.schema(uniqueLastName: workload == "lookUpByName"))
    let filled = DispatchSemaphore(value: 0)
    store.performAndSave(
        on: DispatchQueue(label: "fill"),
        { context in try context.batchInsert(people) },
        completion: { _ in filled.signal() })
    filled.wait()
}
let picked = (0..<1_000).map { people[($0 * 7919) % rows] }
let ids = picked.map(\.id)
let names = picked.map(\.lastName)
if CommandLine.arguments.dropFirst(3).first == "raw" {
    var handle: OpaquePointer?
    sqlite3_open_v2(url.path, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
    switch workload {
    case "lookUp": print("found", Raw.lookUp(handle!, ids))
    case "lookUpByName": print("found", Raw.lookUpByName(handle!, names))
    case "fetchNewest": print("fetched", Raw.fetchNewest(handle!))
    case "petsOfOwner": print("fetched", Raw.petsOfOwner(handle!))
    default: print("fetched", Raw.fetchAll(handle!))
    }
    sqlite3_close_v2(handle)
} else {
    switch workload {
    case "lookUp": print("found", lookUp(store, ids))
    case "lookUpByName": print("found", lookUpByName(store, names))
    case "fetchNewest": print("fetched", fetchNewest(store))
    case "petsOfOwner": print("fetched", petsOfOwner(store))
    default: print("fetched", fetchAll(store))
    }
}
try store.close()
for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
