import Foundation
import GRDB

/// A person as GRDB's documentation first shows a record: `Codable`, with every conversion left
/// to GRDB's defaults (the UUID is stored as 16 bytes; the date as GRDB's default text,
/// "yyyy-MM-dd HH:mm:ss.SSS", in the same `REAL`-declared column, where SQLite keeps it as text).
struct CodablePerson: Codable, FetchableRecord, PersistableRecord, PersonFields {
    static let databaseTableName = "Person"
    let id: UUID
    let firstName: String
    let lastName: String
    let age: Int
    let createdAt: Date
    let nickname: String?

    init(_ seed: PersonSeed) {
        id = seed.id
        firstName = seed.firstName
        lastName = seed.lastName
        age = seed.age
        createdAt = seed.createdAt
        nickname = seed.nickname
    }
}

/// A person written for speed as GRDB's performance guide suggests: no `Codable`, columns read by
/// position, and the date stored as seconds since 2001 (a `REAL`, exactly as the raw C and
/// Modelwright contenders store it) instead of GRDB's default text.
struct OptimizedPerson: FetchableRecord, PersistableRecord, PersonFields {
    static let databaseTableName = "Person"
    let id: UUID
    let firstName: String
    let lastName: String
    let age: Int
    let createdAt: Date
    let nickname: String?

    init(_ seed: PersonSeed) {
        id = seed.id
        firstName = seed.firstName
        lastName = seed.lastName
        age = seed.age
        createdAt = seed.createdAt
        nickname = seed.nickname
    }

    init(row: Row) {
        id = row[0]
        firstName = row[1]
        lastName = row[2]
        age = row[3]
        createdAt = Date(timeIntervalSinceReferenceDate: row[4])
        nickname = row[5]
    }

    func encode(to container: inout PersistenceContainer) {
        container["id"] = id
        container["firstName"] = firstName
        container["lastName"] = lastName
        container["age"] = age
        container["createdAt"] = createdAt.timeIntervalSinceReferenceDate
        container["nickname"] = nickname
    }
}

/// Opens a GRDB `DatabasePool` (WAL, as Modelwright's file store) with `synchronous=NORMAL`, as
/// the other contenders use, and creates the shared table.
private func openPool(at url: URL) async throws -> DatabasePool {
    var configuration = Configuration()
    configuration.prepareDatabase { db in
        try db.execute(sql: "PRAGMA synchronous=NORMAL")
    }
    let pool = try DatabasePool(path: url.path, configuration: configuration)
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
        try await pool.write { db in
            for person in people {
                try person.insert(db)
            }
        }
    }

    func fetchAll() async throws -> (digest: Digest, records: Any) {
        let people = try await pool.read { db in
            try CodablePerson.fetchAll(db)
        }
        var digest = Digest()
        for person in people {
            digest.add(person)
        }
        return (digest, people)
    }

    func fetch(ages: [Int]) async throws -> Digest {
        try await pool.read { db in
            var digest = Digest()
            for age in ages {
                let people = try CodablePerson.filter(Column("age") == age).fetchAll(db)
                for person in people {
                    digest.add(person)
                }
            }
            return digest
        }
    }

    func fetchNewest(ages: [Int]) async throws -> Digest {
        try await pool.read { db in
            var digest = Digest()
            for age in ages {
                let request = CodablePerson.filter(Column("age") == age).order(Column("createdAt").desc)
                for person in try request.limit(Workload.sortedLimit).fetchAll(db) {
                    digest.add(person)
                }
            }
            return digest
        }
    }

    func lookUp(ids: [UUID]) async throws -> Digest {
        try await pool.read { db in
            var digest = Digest()
            for id in ids {
                if let person = try CodablePerson.fetchOne(db, key: id) {
                    digest.add(person)
                }
            }
            return digest
        }
    }

    func count(minimumAge: Int, times: Int) async throws -> Int {
        try await pool.read { db in
            var total = 0
            for _ in 0..<times {
                total += try CodablePerson.filter(Column("age") >= minimumAge).fetchCount(db)
            }
            return total
        }
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
    private let people: [OptimizedPerson]

    init(creatingAt url: URL, seeds: [PersonSeed]) async throws {
        pool = try await openPool(at: url)
        people = seeds.map(OptimizedPerson.init)
    }

    func insertAll() async throws {
        let people = people
        try await pool.write { db in
            for person in people {
                try person.insert(db)
            }
        }
    }

    func fetchAll() async throws -> (digest: Digest, records: Any) {
        let people = try await pool.read { db in
            try OptimizedPerson.fetchAll(db)
        }
        var digest = Digest()
        for person in people {
            digest.add(person)
        }
        return (digest, people)
    }

    func fetch(ages: [Int]) async throws -> Digest {
        try await pool.read { db in
            let statement = try db.cachedStatement(sql: "SELECT * FROM \"Person\" WHERE \"age\" = ?")
            var digest = Digest()
            for age in ages {
                let people = try OptimizedPerson.fetchAll(statement, arguments: [age])
                for person in people {
                    digest.add(person)
                }
            }
            return digest
        }
    }

    func fetchNewest(ages: [Int]) async throws -> Digest {
        try await pool.read { db in
            let statement = try db.cachedStatement(
                sql: "SELECT * FROM \"Person\" WHERE \"age\" = ? ORDER BY \"createdAt\" DESC LIMIT ?")
            var digest = Digest()
            for age in ages {
                for person in try OptimizedPerson.fetchAll(statement, arguments: [age, Workload.sortedLimit]) {
                    digest.add(person)
                }
            }
            return digest
        }
    }

    func lookUp(ids: [UUID]) async throws -> Digest {
        try await pool.read { db in
            let statement = try db.cachedStatement(sql: "SELECT * FROM \"Person\" WHERE \"id\" = ?")
            var digest = Digest()
            for id in ids {
                if let person = try OptimizedPerson.fetchOne(statement, arguments: [id]) {
                    digest.add(person)
                }
            }
            return digest
        }
    }

    func count(minimumAge: Int, times: Int) async throws -> Int {
        try await pool.read { db in
            let statement = try db.cachedStatement(sql: "SELECT COUNT(*) FROM \"Person\" WHERE \"age\" >= ?")
            var total = 0
            for _ in 0..<times {
                total += try Int.fetchOne(statement, arguments: [minimumAge]) ?? 0
            }
            return total
        }
    }

    func close() throws {
        try pool.close()
    }
}
