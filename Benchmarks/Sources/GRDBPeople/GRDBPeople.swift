import Foundation
import GRDB

// The two GRDB contenders, one source for FetchProbe (callgrind instructions) and
// ModelwrightBenchmarks (wall time), so that both measure the same code: GRDB optimised, as its
// performance guide writes a record (no `Codable`, columns read by position, SQL in
// `cachedStatement`), and GRDB `Codable`, a record with GRDB's defaults and its query interface.
// Both store dates as seconds since 2001, as Modelwright and the raw C contender store them, so
// that either reads the file another contender filled. Each workload's loop lives here and hands
// every record to `each`; the functions are `@inlinable`, so each caller gets them specialised
// for its closure, as an app's own code would be.

/// The columns every contender selects, in the table's order.
public let personColumns = #""id", "firstName", "lastName", "age", "createdAt", "nickname""#

/// A GRDB pool on the file at `path` (WAL, as Modelwright's file store), with `synchronous=NORMAL`
/// as every contender uses.
public func openGRDBPool(path: String) throws -> DatabasePool {
    var configuration = Configuration()
    configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous=NORMAL") }
    return try DatabasePool(path: path, configuration: configuration)
}

/// A person as GRDB's performance guide writes a record: columns by position, no `Codable`.
public struct OptimisedPerson: FetchableRecord, PersistableRecord, Sendable {
    /// The table.
    public static let databaseTableName = "Person"
    /// The identity.
    public let id: UUID
    /// The first name.
    public let firstName: String
    /// The last name.
    public let lastName: String
    /// The indexed age.
    public let age: Int
    /// When the person was created.
    public let createdAt: Date
    /// An optional nickname.
    public let nickname: String?

    /// A person with every field given.
    public init(id: UUID, firstName: String, lastName: String, age: Int, createdAt: Date, nickname: String?) {
        self.id = id
        self.firstName = firstName
        self.lastName = lastName
        self.age = age
        self.createdAt = createdAt
        self.nickname = nickname
    }

    /// Reads the columns by position.
    public init(row: Row) {
        id = row[0]
        firstName = row[1]
        lastName = row[2]
        age = row[3]
        createdAt = Date(timeIntervalSinceReferenceDate: row[4])
        nickname = row[5]
    }

    /// Writes the columns by name.
    public func encode(to container: inout PersistenceContainer) {
        container["id"] = id
        container["firstName"] = firstName
        container["lastName"] = lastName
        container["age"] = age
        container["createdAt"] = createdAt.timeIntervalSinceReferenceDate
        container["nickname"] = nickname
    }
}

/// A person with every GRDB default but the date's form (seconds since 2001, as the file holds it).
public struct CodablePerson: Codable, FetchableRecord, PersistableRecord, Sendable {
    /// The table.
    public static let databaseTableName = "Person"
    /// The identity.
    public let id: UUID
    /// The first name.
    public let firstName: String
    /// The last name.
    public let lastName: String
    /// The indexed age.
    public let age: Int
    /// When the person was created.
    public let createdAt: Date
    /// An optional nickname.
    public let nickname: String?

    /// A person with every field given.
    public init(id: UUID, firstName: String, lastName: String, age: Int, createdAt: Date, nickname: String?) {
        self.id = id
        self.firstName = firstName
        self.lastName = lastName
        self.age = age
        self.createdAt = createdAt
        self.nickname = nickname
    }

    /// Dates as seconds since 2001.
    public static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy {
        .timeIntervalSinceReferenceDate
    }

    /// Dates as seconds since 2001.
    public static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy {
        .timeIntervalSinceReferenceDate
    }
}

/// An owner for the `Codable` pet's association.
public struct CodableOwner: Codable, FetchableRecord, TableRecord {
    /// The table.
    public static let databaseTableName = "Owner"
    /// The identity.
    public let id: UUID
    /// The name.
    public let name: String
}

/// A pet with GRDB's defaults; its owner reached through a `belongsTo` association.
public struct CodablePet: Codable, FetchableRecord, TableRecord {
    /// The table.
    public static let databaseTableName = "Pet"
    /// The pet's owner.
    public static let owner = belongsTo(CodableOwner.self, using: ForeignKey(["owner"]))
    /// The identity.
    public let id: UUID
    /// The name.
    public let name: String
    /// The owner's ID.
    public let owner: UUID?
}

/// A pet read by position.
public struct OptimisedPet: FetchableRecord {
    /// The identity.
    public let id: UUID
    /// The name.
    public let name: String
    /// The owner's ID.
    public let owner: UUID?

    /// Reads the columns by position.
    public init(row: Row) {
        id = row[0]
        name = row[1]
        owner = row[2]
    }
}

/// GRDB optimised: SQL in cached statements, records read by column position.
public enum GRDBOptimisedPeople {
    /// Every person.
    @inlinable public static func fetchAll(_ db: Database) throws -> [OptimisedPerson] {
        try OptimisedPerson.fetchAll(db.cachedStatement(sql: "SELECT \(personColumns) FROM \"Person\""))
    }

    /// The people of each age in turn.
    @inlinable public static func fetch(
        _ db: Database, ages: some Sequence<Int>, _ each: (OptimisedPerson) -> Void
    ) throws {
        let statement = try db.cachedStatement(sql: "SELECT \(personColumns) FROM \"Person\" WHERE \"age\" = ?")
        for age in ages {
            for person in try OptimisedPerson.fetchAll(statement, arguments: [age]) { each(person) }
        }
    }

    /// For each age, the `limit` people of that age created last, newest first.
    @inlinable public static func fetchNewest(
        _ db: Database, ages: some Sequence<Int>, limit: Int, _ each: (OptimisedPerson) -> Void
    ) throws {
        let statement = try db.cachedStatement(
            sql: "SELECT \(personColumns) FROM \"Person\" WHERE \"age\" = ? ORDER BY \"createdAt\" DESC LIMIT ?")
        for age in ages {
            for person in try OptimisedPerson.fetchAll(statement, arguments: [age, limit]) { each(person) }
        }
    }

    /// Each person by ID.
    @inlinable public static func lookUp(_ db: Database, ids: some Sequence<UUID>, _ each: (OptimisedPerson) -> Void)
        throws
    {
        let statement = try db.cachedStatement(sql: "SELECT \(personColumns) FROM \"Person\" WHERE \"id\" = ?")
        for id in ids {
            if let person = try OptimisedPerson.fetchOne(statement, arguments: [id]) { each(person) }
        }
    }

    /// Each person by the unique last name.
    @inlinable public static func lookUp(
        _ db: Database, lastNames: some Sequence<String>, _ each: (OptimisedPerson) -> Void
    ) throws {
        let statement = try db.cachedStatement(sql: "SELECT \(personColumns) FROM \"Person\" WHERE \"lastName\" = ?")
        for name in lastNames {
            if let person = try OptimisedPerson.fetchOne(statement, arguments: [name]) { each(person) }
        }
    }

    /// The pets of the owners of each name in turn (the owner's IDs in a subquery).
    @inlinable public static func pets(
        _ db: Database, ownerNames: some Sequence<String>, _ each: (OptimisedPet) -> Void
    ) throws {
        let statement = try db.cachedStatement(
            sql: #"SELECT "id", "name", "owner" FROM "Pet" WHERE "owner" IN "#
                + #"(SELECT "id" FROM "Owner" WHERE "name" = ?)"#)
        for name in ownerNames {
            for pet in try OptimisedPet.fetchAll(statement, arguments: [name]) { each(pet) }
        }
    }

    /// The people at least `minimumAge` old, counted `times` times.
    @inlinable public static func count(_ db: Database, minimumAge: Int, times: Int) throws -> Int {
        let statement = try db.cachedStatement(sql: "SELECT COUNT(*) FROM \"Person\" WHERE \"age\" >= ?")
        var total = 0
        for _ in 0..<times {
            total += try Int.fetchOne(statement, arguments: [minimumAge]) ?? 0
        }
        return total
    }

    /// Inserts every person.
    @inlinable public static func insert(_ db: Database, _ people: [OptimisedPerson]) throws {
        for person in people {
            try person.insert(db)
        }
    }
}

/// GRDB `Codable`: the query interface, records decoded by `Decodable`.
public enum GRDBCodablePeople {
    /// Every person.
    @inlinable public static func fetchAll(_ db: Database) throws -> [CodablePerson] {
        try CodablePerson.fetchAll(db)
    }

    /// The people of each age in turn.
    @inlinable public static func fetch(_ db: Database, ages: some Sequence<Int>, _ each: (CodablePerson) -> Void)
        throws
    {
        for age in ages {
            for person in try CodablePerson.filter(Column("age") == age).fetchAll(db) { each(person) }
        }
    }

    /// For each age, the `limit` people of that age created last, newest first.
    @inlinable public static func fetchNewest(
        _ db: Database, ages: some Sequence<Int>, limit: Int, _ each: (CodablePerson) -> Void
    ) throws {
        for age in ages {
            let request = CodablePerson.filter(Column("age") == age).order(Column("createdAt").desc)
            for person in try request.limit(limit).fetchAll(db) { each(person) }
        }
    }

    /// Each person by ID.
    @inlinable public static func lookUp(_ db: Database, ids: some Sequence<UUID>, _ each: (CodablePerson) -> Void)
        throws
    {
        for id in ids {
            if let person = try CodablePerson.fetchOne(db, key: id) { each(person) }
        }
    }

    /// Each person by the unique last name.
    @inlinable public static func lookUp(
        _ db: Database, lastNames: some Sequence<String>, _ each: (CodablePerson) -> Void
    ) throws {
        for name in lastNames {
            if let person = try CodablePerson.filter(Column("lastName") == name).fetchOne(db) { each(person) }
        }
    }

    /// The pets of the owners of each name in turn, through the `belongsTo` association.
    @inlinable public static func pets(_ db: Database, ownerNames: some Sequence<String>, _ each: (CodablePet) -> Void)
        throws
    {
        for name in ownerNames {
            let owner = CodablePet.owner.filter(Column("name") == name)
            for pet in try CodablePet.joining(required: owner).fetchAll(db) { each(pet) }
        }
    }

    /// The people at least `minimumAge` old, counted `times` times.
    @inlinable public static func count(_ db: Database, minimumAge: Int, times: Int) throws -> Int {
        var total = 0
        for _ in 0..<times {
            total += try CodablePerson.filter(Column("age") >= minimumAge).fetchCount(db)
        }
        return total
    }

    /// Inserts every person.
    @inlinable public static func insert(_ db: Database, _ people: [CodablePerson]) throws {
        for person in people {
            try person.insert(db)
        }
    }
}
