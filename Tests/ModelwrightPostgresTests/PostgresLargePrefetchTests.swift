import Foundation
import Modelwright
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing
import Trips

/// A prefetch binds its parents' IDs; with more parents than libpq can have described in one
/// statement (7,499 parameters, issue 27) it must bind them as one array and keep the connection.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresLargePrefetchTests {
    @Test func aPrefetchOfManyParentsKeepsItsConnection() async throws {
        let store = try Store(postgres: try await makeDatabase(), schema: Trips.schema)
        let users = (0..<8_000).map { index in
            User(
                username: "user\(index)", givenName: "Given", familyName: "Family", rating: 1,
                joinedAt: Date(timeIntervalSinceReferenceDate: 800_000_000))
        }
        _ = try await store.performAndSave { try $0.batchInsert(users) }
        let owners = stride(from: 0, to: users.count, by: 97).map { users[$0].id }
        try await store.performAndSave { context in
            for owner in owners {
                try context.insert(
                    Trip(identifier: UUID(), title: "T", startsOn: Date(timeIntervalSince1970: 0), ownerID: owner))
            }
        }
        let fetched = try await store.performQuery { context in
            try context.fetch(User.request().including { $0.trips })
        }
        #expect(fetched.count == users.count)
        let trips = try fetched.reduce(0) { $0 + (try $1.destinations { $0.trips }).count }
        #expect(trips == owners.count)
        #expect(try await store.performQuery { try $0.count(Trip.request()) } == owners.count)
        try store.close()
    }
}
