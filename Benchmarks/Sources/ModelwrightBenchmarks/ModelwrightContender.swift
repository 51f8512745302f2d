import BenchmarkSupport
import Foundation
import Modelwright

extension Person: PersonFields {
    /// The seed's person, with the seed's ID.
    init(_ seed: PersonSeed) {
        self.init(
            id: ID(seed.id), firstName: seed.firstName, lastName: seed.lastName, age: seed.age,
            createdAt: seed.createdAt, nickname: seed.nickname)
    }
}

/// Modelwright as an app uses it: a file `Store`, `performAndSave` with `batchInsert`, and
/// `performQuery` with typed requests, built anew for every query as app code builds them.
final class ModelwrightContender: Contender {
    nonisolated static let name = "Modelwright"

    private let store: Store
    private let people: [Person]

    init(creatingAt url: URL, seeds: [PersonSeed]) throws {
        store = try Store(url: url, schema: Person.schema)
        people = seeds.map(Person.init)
    }

    func insertAll() async throws {
        let people = people
        _ = try await store.performAndSave { context in
            try context.batchInsert(people)
        }
    }

    func fetchAll() async throws -> (digest: Digest, records: Any) {
        let people = try await store.performQuery { context in
            try context.fetch(Person.request())
        }
        var digest = Digest()
        for person in people {
            digest.add(person)
        }
        return (digest, people)
    }

    func fetch(ages: [Int]) async throws -> Digest {
        try await store.performQuery { context in
            var digest = Digest()
            for age in ages {
                let people = try context.fetch(Person.request().filter { $0.age == age })
                for person in people {
                    digest.add(person)
                }
            }
            return digest
        }
    }

    func fetchNewest(ages: [Int]) async throws -> Digest {
        try await store.performQuery { context in
            var digest = Digest()
            for age in ages {
                let request = Person.request().filter { $0.age == age }.sorted { [$0.createdAt.descending] }
                for person in try context.fetch(request.limit(Workload.sortedLimit)) {
                    digest.add(person)
                }
            }
            return digest
        }
    }

    func lookUp(ids: [UUID]) async throws -> Digest {
        try await store.performQuery { context in
            var digest = Digest()
            for id in ids {
                if let person = try context.existing(Person.ID(id)) {
                    digest.add(person)
                }
            }
            return digest
        }
    }

    func count(minimumAge: Int, times: Int) async throws -> Int {
        try await store.performQuery { context in
            var total = 0
            for _ in 0..<times {
                total += try context.count(Person.request().filter { $0.age >= minimumAge })
            }
            return total
        }
    }

    func close() {
        // A store closes its connections when its last reference goes away.
    }

    /// Inserts `count` generated people into a new store at `url` without holding them all.
    static func fill(_ url: URL, count: Int) async throws -> Store {
        let store = try Store(url: url, schema: Person.schema)
        _ = try await store.performAndSave { context in
            try context.batchInsert((0..<count).lazy.map { Person(PersonSeed.make(index: $0)) })
        }
        return store
    }
}
