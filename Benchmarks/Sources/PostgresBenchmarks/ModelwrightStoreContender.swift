import BenchmarkSupport
import Foundation
import Modelwright
import ModelwrightPostgres

/// Modelwright as a server uses it: a `Store` on PostgreSQL, `performAndSave` with `batchInsert`,
/// `performQuery` with typed requests built as app code builds them.
@MainActor final class ModelwrightStoreContender: PostgresContender {
    let name = "Modelwright Store"
    private let store: Store
    private let people: [Person]

    /// Opens (and, on an empty database, creates) the store; it blocks while it connects.
    init(conninfo: String, people: [Person]) throws {
        store = try Store(postgres: PostgresConfiguration(conninfo), schema: Person.schema)
        self.people = people
    }

    func insert() async throws {
        let people = people
        _ = try await store.performAndSave { context in try context.batchInsert(people) }
    }

    func fetchAll() async throws -> any FetchedPeople {
        let people: [Person] = try await store.performQuery { context in try context.fetch(Person.request()) }
        return people
    }

    func lookUp(_ ids: [UUID]) async throws -> any FetchedPeople {
        let people: [Person] = try await store.performQuery { context in
            var found: [Person] = []
            found.reserveCapacity(ids.count)
            for id in ids {
                if let person = try context.existing(Person.ID(id)) { found.append(person) }
            }
            return found
        }
        return people
    }

    func fetchFiltered(minimumAge: Int) async throws -> any FetchedPeople {
        let people: [Person] = try await store.performQuery { context in
            try context.fetch(Person.request().filter { $0.age >= minimumAge }.sorted { [$0.lastName.ascending] })
        }
        return people
    }
}
