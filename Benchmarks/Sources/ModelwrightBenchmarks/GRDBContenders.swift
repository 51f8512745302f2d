import Foundation
import GRDB
import GRDBPeople

// The two GRDB contenders of the wall-clock run. Their records and workloads are `GRDBPeople`'s,
// which FetchProbe counts in instructions too, so that both measure the same code.

extension OptimisedPerson: PersonFields {
    /// The GRDB record of a seed.
    init(_ seed: PersonSeed) {
        self.init(
            id: seed.id, firstName: seed.firstName, lastName: seed.lastName, age: seed.age,
            createdAt: seed.createdAt, nickname: seed.nickname)
    }
}

extension CodablePerson: PersonFields {
    /// The GRDB record of a seed.
    init(_ seed: PersonSeed) {
        self.init(
            id: seed.id, firstName: seed.firstName, lastName: seed.lastName, age: seed.age,
            createdAt: seed.createdAt, nickname: seed.nickname)
    }
}

/// Opens a GRDB `DatabasePool` on a new file and creates the shared table.
private func openPool(at url: URL) async throws -> DatabasePool {
    let pool = try openGRDBPool(path: url.path)
    try await pool.write { db in
        try db.execute(sql: RawSQLite.createTable)
        try db.execute(sql: RawSQLite.createIndex)
    }
    return pool
}

/// GRDB with `Codable` records and its query interface: `person.insert(db)`,
/// `CodablePerson.fetchAll(db)`, `filter(Column("age") == age)`, `fetchCount`.
final class GRDBCodable: Contender {
    nonisolated static let name = "GRDB Codable"

    private let pool: DatabasePool
    private let people: [CodablePerson]

    init(creatingAt url: URL, seeds: [PersonSeed]) async throws {
        pool = try await openPool(at: url)
        people = seeds.map(CodablePerson.init)
    }

    func insertAll() async throws {
        let people = people
        try await pool.write { db in try GRDBCodablePeople.insert(db, people) }
    }

    func fetchAll() async throws -> (digest: Digest, records: Any) {
        let people = try await pool.read { db in try GRDBCodablePeople.fetchAll(db) }
        var digest = Digest()
        for person in people {
            digest.add(person)
        }
        return (digest, people)
    }

    func fetch(ages: [Int]) async throws -> Digest {
        try await pool.read { db in
            var digest = Digest()
            try GRDBCodablePeople.fetch(db, ages: ages) { digest.add($0) }
            return digest
        }
    }

    func fetchNewest(ages: [Int]) async throws -> Digest {
        try await pool.read { db in
            var digest = Digest()
            try GRDBCodablePeople.fetchNewest(db, ages: ages, limit: Workload.sortedLimit) { digest.add($0) }
            return digest
        }
    }

    func lookUp(ids: [UUID]) async throws -> Digest {
        try await pool.read { db in
            var digest = Digest()
            try GRDBCodablePeople.lookUp(db, ids: ids) { digest.add($0) }
            return digest
        }
    }

    func count(minimumAge: Int, times: Int) async throws -> Int {
        try await pool.read { db in try GRDBCodablePeople.count(db, minimumAge: minimumAge, times: times) }
    }

    func close() throws {
        try pool.close()
    }
}

/// GRDB at its fastest: hand-written `init(row:)` and `encode(to:)`, and for the repeated reads
/// SQL in a cached prepared statement instead of the query interface.
final class GRDBOptimized: Contender {
    nonisolated static let name = "GRDB optimized"

    private let pool: DatabasePool
    private let people: [OptimisedPerson]

    init(creatingAt url: URL, seeds: [PersonSeed]) async throws {
        pool = try await openPool(at: url)
        people = seeds.map(OptimisedPerson.init)
    }

    func insertAll() async throws {
        let people = people
        try await pool.write { db in try GRDBOptimisedPeople.insert(db, people) }
    }

    func fetchAll() async throws -> (digest: Digest, records: Any) {
        let people = try await pool.read { db in try GRDBOptimisedPeople.fetchAll(db) }
        var digest = Digest()
        for person in people {
            digest.add(person)
        }
        return (digest, people)
    }

    func fetch(ages: [Int]) async throws -> Digest {
        try await pool.read { db in
            var digest = Digest()
            try GRDBOptimisedPeople.fetch(db, ages: ages) { digest.add($0) }
            return digest
        }
    }

    func fetchNewest(ages: [Int]) async throws -> Digest {
        try await pool.read { db in
            var digest = Digest()
            try GRDBOptimisedPeople.fetchNewest(db, ages: ages, limit: Workload.sortedLimit) { digest.add($0) }
            return digest
        }
    }

    func lookUp(ids: [UUID]) async throws -> Digest {
        try await pool.read { db in
            var digest = Digest()
            try GRDBOptimisedPeople.lookUp(db, ids: ids) { digest.add($0) }
            return digest
        }
    }

    func count(minimumAge: Int, times: Int) async throws -> Int {
        try await pool.read { db in try GRDBOptimisedPeople.count(db, minimumAge: minimumAge, times: times) }
    }

    func close() throws {
        try pool.close()
    }
}
