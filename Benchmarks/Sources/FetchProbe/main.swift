import Foundation
@_spi(Generated) import Modelwright

// The read path alone, for instruction counts under callgrind, which cannot run
// ModelwrightBenchmarks here (valgrind 3.19 crashes on the dispatch worker threads of its async
// main). Run from Benchmarks/:
//
//     swift build -c release --product FetchProbe
//     valgrind --tool=callgrind --toggle-collect='*fetchAll*' .build/release/FetchProbe 100000
//     valgrind --tool=callgrind --toggle-collect='*lookUp*' .build/release/FetchProbe 100000 lookUp
//     valgrind --tool=callgrind --toggle-collect='*fetchNewest*' .build/release/FetchProbe 100000 fetchNewest
//
// The second argument picks the workload (fetchAll when absent): fetchAll, lookUp (1,000 lookups
// by ID) or fetchNewest (1,000 fetches by age, sorted newest first, limit 5), each in one read.
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

    func encode(to row: inout RowEncoder) throws {
        try row.encode(firstName)
        try row.encode(lastName)
        try row.encode(age)
        try row.encode(createdAt)
        try row.encode(nickname)
    }

    init(id: ID, row: inout RowDecoder) throws {
        self.id = id
        firstName = try row.decode()
        lastName = try row.decode()
        age = try row.decode()
        createdAt = try row.decode()
        nickname = try row.decode()
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
switch workload {
case "lookUp": print("found", lookUp(store, (0..<1_000).map { people[($0 * 7919) % rows].id }))
case "fetchNewest": print("fetched", fetchNewest(store))
default: print("fetched", fetchAll(store))
}
try store.close()
for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
