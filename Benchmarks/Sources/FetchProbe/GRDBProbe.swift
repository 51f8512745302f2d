import BenchmarkSupport
import Foundation
import GRDB
import GRDBPeople

// The two GRDB contenders (`GRDBPeople`, which ModelwrightBenchmarks runs too), reading the file
// Modelwright filled (the same table, the same rows); each workload counts the records it is handed.

extension OptimisedPerson {
    /// The GRDB record of a probe's person.
    init(_ person: Person) {
        self.init(
            id: person.id.uuid, firstName: person.firstName, lastName: person.lastName, age: person.age,
            createdAt: person.createdAt, nickname: person.nickname)
    }
}

extension CodablePerson {
    /// The GRDB record of a probe's person.
    init(_ person: Person) {
        self.init(
            id: person.id.uuid, firstName: person.firstName, lastName: person.lastName, age: person.age,
            createdAt: person.createdAt, nickname: person.nickname)
    }
}

/// Runs one GRDB workload on the file at `path`; `codable` picks the contender.
func runGRDB(_ workload: String, codable: Bool, path: String, ids: [Person.ID], names: [String]) throws -> Int {
    let pool = try openGRDBPool(path: path)
    if workload == "insert" {
        if codable {
            let people = Probe.people.map(CodablePerson.init)
            try pool.write { db in try counted { try GRDBCodablePeople.insert(db, people) } }
            return people.count
        }
        let people = Probe.people.map(OptimisedPerson.init)
        try pool.write { db in try counted { try GRDBOptimisedPeople.insert(db, people) } }
        return people.count
    }
    return try pool.read { db in
        try counted { try readGRDB(workload, codable: codable, db, ids: ids.map(\.uuid), names: names) }
    }
}

/// One GRDB read workload: how many records it read.
private func readGRDB(_ workload: String, codable: Bool, _ db: Database, ids: [UUID], names: [String]) throws
    -> Int
{
    var found = 0
    let ages = (0..<1_000).lazy.map(Probe.age)
    let owners = (0..<1_000).lazy.map(Probe.ownerName)
    switch (workload, codable) {
    case ("indexedFetch", false): try GRDBOptimisedPeople.fetch(db, ages: ages) { _ in found += 1 }
    case ("indexedFetch", true): try GRDBCodablePeople.fetch(db, ages: ages) { _ in found += 1 }
    case ("lookUp", false): try GRDBOptimisedPeople.lookUp(db, ids: ids) { _ in found += 1 }
    case ("lookUp", true): try GRDBCodablePeople.lookUp(db, ids: ids) { _ in found += 1 }
    case ("lookUpByName", false): try GRDBOptimisedPeople.lookUp(db, lastNames: names) { _ in found += 1 }
    case ("lookUpByName", true): try GRDBCodablePeople.lookUp(db, lastNames: names) { _ in found += 1 }
    case ("fetchNewest", false): try GRDBOptimisedPeople.fetchNewest(db, ages: ages, limit: 5) { _ in found += 1 }
    case ("fetchNewest", true): try GRDBCodablePeople.fetchNewest(db, ages: ages, limit: 5) { _ in found += 1 }
    case ("petsOfOwner", false): try GRDBOptimisedPeople.pets(db, ownerNames: owners) { _ in found += 1 }
    case ("petsOfOwner", true): try GRDBCodablePeople.pets(db, ownerNames: owners) { _ in found += 1 }
    case (_, false): found = try GRDBOptimisedPeople.fetchAll(db).count
    case (_, true): found = try GRDBCodablePeople.fetchAll(db).count
    }
    return found
}
