import BenchmarkSupport
import CSQLiteBench
import Foundation
import GRDB

// The two GRDB contenders, reading the file Modelwright filled (the same table, the same rows):
// GRDB optimised, as its performance guide writes a record (no `Codable`, columns read by position,
// SQL in `cachedStatement`), and GRDB `Codable`, a record with GRDB's defaults and its query
// interface. Both store dates as seconds since 2001, as the file holds them.

/// A person as GRDB's performance guide writes a record: columns by position, no `Codable`.
struct OptimisedPerson: FetchableRecord, PersistableRecord {
    static let databaseTableName = "Person"
    let id: UUID
    let firstName: String
    let lastName: String
    let age: Int
    let createdAt: Date
    let nickname: String?

    init(_ person: Person) {
        id = person.id.uuid
        firstName = person.firstName
        lastName = person.lastName
        age = person.age
        createdAt = person.createdAt
        nickname = person.nickname
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

/// A person with every GRDB default but the date's form (seconds since 2001, as the file holds it).
struct CodablePerson: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "Person"
    let id: UUID
    let firstName: String
    let lastName: String
    let age: Int
    let createdAt: Date
    let nickname: String?

    init(_ person: Person) {
        id = person.id.uuid
        firstName = person.firstName
        lastName = person.lastName
        age = person.age
        createdAt = person.createdAt
        nickname = person.nickname
    }

    static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy {
        .timeIntervalSinceReferenceDate
    }

    static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy {
        .timeIntervalSinceReferenceDate
    }
}

/// An owner for the `Codable` pet's association.
struct CodableOwner: Codable, FetchableRecord, TableRecord {
    static let databaseTableName = "Owner"
    let id: UUID
    let name: String
}

/// A pet with GRDB's defaults; its owner reached through a `belongsTo` association.
struct CodablePet: Codable, FetchableRecord, TableRecord {
    static let databaseTableName = "Pet"
    static let owner = belongsTo(CodableOwner.self, using: ForeignKey(["owner"]))
    let id: UUID
    let name: String
    let owner: UUID?
}

/// A pet read by position.
struct OptimisedPet: FetchableRecord {
    let id: UUID
    let name: String
    let owner: UUID?

    init(row: Row) {
        id = row[0]
        name = row[1]
        owner = row[2]
    }
}

/// GRDB optimised: SQL in cached statements, records read by column position.
enum GRDBOptimised {
    static let columns = Raw.columns

    @inline(never) static func fetchAll(_ db: Database) throws -> Int {
        try OptimisedPerson.fetchAll(db.cachedStatement(sql: "SELECT \(columns) FROM \"Person\"")).count
    }

    @inline(never) static func indexedFetch(_ db: Database) throws -> Int {
        let statement = try db.cachedStatement(sql: "SELECT \(columns) FROM \"Person\" WHERE \"age\" = ?")
        var found = 0
        for index in 0..<1_000 {
            found += try OptimisedPerson.fetchAll(statement, arguments: [Probe.age(index)]).count
        }
        return found
    }

    @inline(never) static func lookUp(_ db: Database, _ ids: [Person.ID]) throws -> Int {
        let statement = try db.cachedStatement(sql: "SELECT \(columns) FROM \"Person\" WHERE \"id\" = ?")
        var found = 0
        for id in ids where try OptimisedPerson.fetchOne(statement, arguments: [id.uuid]) != nil {
            found += 1
        }
        return found
    }

    @inline(never) static func lookUpByName(_ db: Database, _ names: [String]) throws -> Int {
        let statement = try db.cachedStatement(sql: "SELECT \(columns) FROM \"Person\" WHERE \"lastName\" = ?")
        var found = 0
        for name in names where try OptimisedPerson.fetchOne(statement, arguments: [name]) != nil {
            found += 1
        }
        return found
    }

    @inline(never) static func fetchNewest(_ db: Database) throws -> Int {
        let statement = try db.cachedStatement(sql: Raw.newestSQL)
        var found = 0
        for index in 0..<1_000 {
            found += try OptimisedPerson.fetchAll(statement, arguments: [Probe.age(index), 5]).count
        }
        return found
    }

    @inline(never) static func petsOfOwner(_ db: Database) throws -> Int {
        let statement = try db.cachedStatement(sql: Raw.petsSQL)
        var found = 0
        for index in 0..<1_000 {
            found += try OptimisedPet.fetchAll(statement, arguments: [Probe.ownerName(index)]).count
        }
        return found
    }

    @inline(never) static func insert(_ db: Database, _ people: [OptimisedPerson]) throws -> Int {
        for person in people {
            try person.insert(db)
        }
        return people.count
    }
}

/// GRDB `Codable`: the query interface, records decoded by `Decodable`.
enum GRDBCodable {
    @inline(never) static func fetchAll(_ db: Database) throws -> Int {
        try CodablePerson.fetchAll(db).count
    }

    @inline(never) static func indexedFetch(_ db: Database) throws -> Int {
        var found = 0
        for index in 0..<1_000 {
            found += try CodablePerson.filter(Column("age") == Probe.age(index)).fetchAll(db).count
        }
        return found
    }

    @inline(never) static func lookUp(_ db: Database, _ ids: [Person.ID]) throws -> Int {
        var found = 0
        for id in ids where try CodablePerson.fetchOne(db, key: id.uuid) != nil {
            found += 1
        }
        return found
    }

    @inline(never) static func lookUpByName(_ db: Database, _ names: [String]) throws -> Int {
        var found = 0
        for name in names where try CodablePerson.filter(Column("lastName") == name).fetchOne(db) != nil {
            found += 1
        }
        return found
    }

    @inline(never) static func fetchNewest(_ db: Database) throws -> Int {
        var found = 0
        for index in 0..<1_000 {
            let request = CodablePerson.filter(Column("age") == Probe.age(index)).order(Column("createdAt").desc)
            found += try request.limit(5).fetchAll(db).count
        }
        return found
    }

    @inline(never) static func petsOfOwner(_ db: Database) throws -> Int {
        var found = 0
        for index in 0..<1_000 {
            let owner = CodablePet.owner.filter(Column("name") == Probe.ownerName(index))
            found += try CodablePet.joining(required: owner).fetchAll(db).count
        }
        return found
    }

    @inline(never) static func insert(_ db: Database, _ people: [CodablePerson]) throws -> Int {
        for person in people {
            try person.insert(db)
        }
        return people.count
    }
}

/// Runs one GRDB workload on the file at `path`; `codable` picks the contender.
func runGRDB(_ workload: String, codable: Bool, path: String, ids: [Person.ID], names: [String]) throws -> Int {
    var configuration = Configuration()
    configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous=NORMAL") }
    let pool = try DatabasePool(path: path, configuration: configuration)
    if workload == "insert" {
        if codable {
            let people = Probe.people.map(CodablePerson.init)
            return try pool.write { db in try counted { try GRDBCodable.insert(db, people) } }
        }
        let people = Probe.people.map(OptimisedPerson.init)
        return try pool.write { db in try counted { try GRDBOptimised.insert(db, people) } }
    }
    return try pool.read { db in
        try counted { try readGRDB(workload, codable: codable, db, ids: ids, names: names) }
    }
}

/// One GRDB read workload.
private func readGRDB(_ workload: String, codable: Bool, _ db: Database, ids: [Person.ID], names: [String]) throws
    -> Int
{
    switch (workload, codable) {
    case ("indexedFetch", false): try GRDBOptimised.indexedFetch(db)
    case ("indexedFetch", true): try GRDBCodable.indexedFetch(db)
    case ("lookUp", false): try GRDBOptimised.lookUp(db, ids)
    case ("lookUp", true): try GRDBCodable.lookUp(db, ids)
    case ("lookUpByName", false): try GRDBOptimised.lookUpByName(db, names)
    case ("lookUpByName", true): try GRDBCodable.lookUpByName(db, names)
    case ("fetchNewest", false): try GRDBOptimised.fetchNewest(db)
    case ("fetchNewest", true): try GRDBCodable.fetchNewest(db)
    case ("petsOfOwner", false): try GRDBOptimised.petsOfOwner(db)
    case ("petsOfOwner", true): try GRDBCodable.petsOfOwner(db)
    case (_, false): try GRDBOptimised.fetchAll(db)
    case (_, true): try GRDBCodable.fetchAll(db)
    }
}
