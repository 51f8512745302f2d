import CSQLiteBench
import Foundation
@_spi(Generated) import Modelwright

// The read path alone, for instruction counts under callgrind, which cannot run
// ModelwrightBenchmarks here (valgrind 3.19 crashes on the dispatch worker threads of its async
// main). Run from Benchmarks/:
//
//     swift build -c release --product FetchProbe
//     valgrind --tool=callgrind --toggle-collect='*fetchAll*' .build/release/FetchProbe 100000
//     valgrind --tool=callgrind --toggle-collect='*lookUp*' .build/release/FetchProbe 100000 lookUp
//     valgrind --tool=callgrind --toggle-collect='*fetchNewest*KcfU_' .build/release/FetchProbe 100000 fetchNewest
//
// (fetchNewest counts its closure alone: the filter and sort closures nested in it would toggle
// collection off again.)
//
// The second argument picks the workload (fetchAll when absent): fetchAll, lookUp (1,000 lookups
// by ID) or fetchNewest (1,000 fetches by age, sorted newest first, limit 5), each in one read.
// With a third argument, `raw`, the same workload runs in C on the same file, as the benchmark's
// raw C contender does: its count is the one to compare with.
//
// The person type mirrors ModelwrightBenchmarks' `Person` (an executable target cannot import
// another), with IDs drawn at random since only the fetch is counted.

/// A person as Modelwright's generator would emit it: columns written and read by position.
struct Person: Record {
    typealias ID = RecordID<Person>
    static let entityName = "Person"
    let id: ID
    let firstName: String
    let lastName: String
    let age: Int
    let createdAt: Date
    let nickname: String?

    init(index: Int) {
        id = ID(UUID())
        firstName = "First \(index)"
        lastName = "Lastname-of-person-\(index)"
        age = index % 10_000
        createdAt = Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(index) * 1.5)
        nickname = index % 3 == 0 ? nil : "nick\(index)"
    }

    init(id: ID, firstName: String, lastName: String, age: Int, createdAt: Date, nickname: String?) {
        self.id = id
        self.firstName = firstName
        self.lastName = lastName
        self.age = age
        self.createdAt = createdAt
        self.nickname = nickname
    }

    func encode(to row: inout RowEncoder) throws {
        try row.encode(firstName)
        try row.encode(lastName)
        try row.encode(age)
        try row.encode(createdAt)
        try row.encode(nickname)
    }

    init(id: ID, row: inout RowDecoder) throws {
        let firstName: String = try row.decode()
        let lastName: String = try row.decode()
        let age: Int = try row.decode()
        let createdAt: Date = try row.decode()
        let nickname: String? = try row.decode()
        self.init(
            id: id, firstName: firstName, lastName: lastName, age: age, createdAt: createdAt, nickname: nickname)
    }

    struct Fields: RecordFields {
        typealias Target = Person
        let path: FieldPath
        var firstName: Field<String> { path.field("firstName") }
        var lastName: Field<String> { path.field("lastName") }
        var age: Field<Int> { path.field("age") }
        var createdAt: Field<Date> { path.field("createdAt") }
        var nickname: Field<String?> { path.field("nickname") }
    }

    /// The one-entity schema: what `modelwright` would lower from `entity Person { … @index(age) }`.
    static let schema = SchemaDescription(
        modelName: "People",
        version: 1,
        entities: [
            EntityDescription(
                name: "Person",
                attributes: [
                    AttributeDescription(name: "firstName", type: .string),
                    AttributeDescription(name: "lastName", type: .string),
                    AttributeDescription(name: "age", type: .int),
                    AttributeDescription(name: "createdAt", type: .date),
                    AttributeDescription(name: "nickname", type: .string, isOptional: true),
                ],
                indexes: [["age"]]
            )
        ]
    )
}

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

/// The raw C contender's reads, on the same file; `--toggle-collect` counts them by the same names.
enum Raw {
    static let columns = #""id", "firstName", "lastName", "age", "createdAt", "nickname""#

    @inline(never) static func fetchAll(_ handle: OpaquePointer) -> Int {
        sqlite3_exec(handle, "BEGIN DEFERRED", nil, nil, nil)
        var statement: OpaquePointer?
        sqlite3_prepare_v2(handle, "SELECT \(columns) FROM \"Person\"", -1, &statement, nil)
        var people: [Person] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            people.append(person(statement!))
        }
        sqlite3_finalize(statement)
        sqlite3_exec(handle, "COMMIT", nil, nil, nil)
        return people.count
    }

    @inline(never) static func lookUp(_ handle: OpaquePointer, _ ids: [Person.ID]) -> Int {
        sqlite3_exec(handle, "BEGIN DEFERRED", nil, nil, nil)
        var statement: OpaquePointer?
        sqlite3_prepare_v2(handle, "SELECT \(columns) FROM \"Person\" WHERE \"id\" = ?", -1, &statement, nil)
        var found = 0
        for id in ids {
            var uuid = id.uuid.uuid
            withUnsafeBytes(of: &uuid) { bytes in
                _ = sqlite3_bind_blob(statement, 1, bytes.baseAddress, 16, transient)
            }
            if sqlite3_step(statement) == SQLITE_ROW {
                _ = person(statement!)
                found += 1
            }
            sqlite3_reset(statement)
        }
        sqlite3_finalize(statement)
        sqlite3_exec(handle, "COMMIT", nil, nil, nil)
        return found
    }

    @inline(never) static func fetchNewest(_ handle: OpaquePointer) -> Int {
        sqlite3_exec(handle, "BEGIN DEFERRED", nil, nil, nil)
        var statement: OpaquePointer?
        let sql = "SELECT \(columns) FROM \"Person\" WHERE \"age\" = ? ORDER BY \"createdAt\" DESC LIMIT ?"
        sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        var found = 0
        for index in 0..<1_000 {
            sqlite3_bind_int64(statement, 1, Int64((index * 7919) % 10_000))
            sqlite3_bind_int64(statement, 2, 5)
            var people: [Person] = []
            while sqlite3_step(statement) == SQLITE_ROW {
                people.append(person(statement!))
            }
            found += people.count
            sqlite3_reset(statement)
        }
        sqlite3_finalize(statement)
        sqlite3_exec(handle, "COMMIT", nil, nil, nil)
        return found
    }

    static func person(_ statement: OpaquePointer) -> Person {
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        if sqlite3_column_bytes(statement, 0) == 16, let bytes = sqlite3_column_blob(statement, 0) {
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: UnsafeRawBufferPointer(start: bytes, count: 16)) }
        }
        return Person(
            id: Person.ID(UUID(uuid: uuid)),
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
let people = (0..<rows).map { Person(index: $0) }
let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("probe-\(getpid()).sqlite")
let store = try Store(url: url, schema: Person.schema)
let filled = DispatchSemaphore(value: 0)
store.performAndSave(
    on: DispatchQueue(label: "fill"),
    { context in try context.batchInsert(people) },
    completion: { _ in filled.signal() })
filled.wait()
let ids = (0..<1_000).map { people[($0 * 7919) % rows].id }
if CommandLine.arguments.dropFirst(3).first == "raw" {
    var handle: OpaquePointer?
    sqlite3_open_v2(url.path, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
    switch workload {
    case "lookUp": print("found", Raw.lookUp(handle!, ids))
    case "fetchNewest": print("fetched", Raw.fetchNewest(handle!))
    default: print("fetched", Raw.fetchAll(handle!))
    }
    sqlite3_close_v2(handle)
} else {
    switch workload {
    case "lookUp": print("found", lookUp(store, ids))
    case "fetchNewest": print("fetched", fetchNewest(store))
    default: print("fetched", fetchAll(store))
    }
}
try store.close()
for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
