import Foundation
import Modelwright
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing
import Trips

/// A reference left dangling when a write commits (a stop of a trip that is not there, a trip of
/// a user who is not there) fails the commit with the same
/// ``StoreError/danglingReference(entity:relationship:)`` on PostgreSQL as on SQLite, naming the
/// table and column of the reference, and commits nothing of the write.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresDanglingReferenceTests {
    /// One drawn write: some valid stops and trips, then one dangling reference; and the error it must give.
    private static func write(seed: UInt64, owner: User, trip: Trip) -> (
        write: @Sendable (WriteContext) throws -> Void, expected: StoreError
    ) {
        var random = SplitMix64(seed: seed)
        let stops = random.next(below: 4)
        let trips = random.next(below: 3)
        let missingOwner = random.chance(0.5)
        let write: @Sendable (WriteContext) throws -> Void = { context in
            for index in 0..<stops { try context.insert(Stop(name: "S\(index)", tripID: trip.id)) }
            for index in 0..<trips {
                try context.insert(
                    Trip(
                        identifier: UUID(), title: "T\(index)", startsOn: Date(timeIntervalSince1970: 0),
                        ownerID: owner.id))
            }
            if missingOwner {
                try context.insert(
                    Trip(
                        identifier: UUID(), title: "Nobody's", startsOn: Date(timeIntervalSince1970: 0),
                        ownerID: User.ID()))
            } else {
                try context.insert(Stop(name: "Nowhere", tripID: Trip.ID()))
            }
        }
        return (
            write,
            missingOwner
                ? StoreError.danglingReference(entity: "Trip", relationship: "owner")
                : StoreError.danglingReference(entity: "Stop", relationship: "trip")
        )
    }

    @Test(arguments: 0..<8)
    func aDanglingReferenceIsNamedAsOnSQLite(seed: UInt64) async throws {
        let owner = User(
            username: "ada", givenName: "Ada", familyName: "Test", joinedAt: Date(timeIntervalSinceReferenceDate: 0))
        let trip = Trip(
            identifier: UUID(), title: "Lisbon", startsOn: Date(timeIntervalSince1970: 0), ownerID: owner.id)
        let postgres = try Store(postgres: try await makeDatabase(), schema: Trips.schema)
        let sqlite = try Store.inMemory(schema: Trips.schema)
        let (write, expected) = Self.write(seed: seed, owner: owner, trip: trip)
        for store in [sqlite, postgres] {
            try await store.performAndSave { context in
                try context.insert(owner)
                try context.insert(trip)
            }
            await #expect(throws: expected) { try await store.performAndSave(write) }
            #expect(try await store.performQuery { try $0.count(Stop.request()) } == 0)
            #expect(try await store.performQuery { try $0.count(Trip.request()) } == 1)
        }
        try postgres.close()
        try sqlite.close()
    }
}
