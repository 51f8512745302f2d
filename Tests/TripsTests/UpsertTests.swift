import Foundation
import Modelwright
import ModelwrightEngineTestSupport
import ModelwrightTestSupport
import Testing
import Trips

/// Upsert matches a record by its ID or by any uniqueness constraint of its entity, and the stored
/// record keeps its ID, on every engine (``TestEngine``).
@Suite(.heavy)
struct UpsertTests {
    /// A join date of whole seconds, which both engines store exactly (PostgreSQL keeps microseconds).
    static let joined = Date(timeIntervalSinceReferenceDate: 790_000_000)

    /// Random feed refreshes: each brings trips keyed by their server `identifier`, with IDs made
    /// fresh by the parser, as a feed does. The store must hold one trip per identifier, under the
    /// ID of its first refresh, with the values of its last.
    @Test(arguments: TestEngine.available, 0..<4)
    func feedRefreshesKeyedByAUniqueAttributeKeepStoredIDs(engine: TestEngine, seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        try await engine.withStore(schema: Trips.schema) { store in
            let owner = makeTripsUser("ada", familyName: "Lovelace")
            try await store.performAndSave { try $0.insert(owner) }
            let identifiers = (0..<15).map { _ in UUID() }
            var storedIDs: [UUID: Trip.ID] = [:]
            var latest: [UUID: Trip] = [:]
            for refresh in 0..<12 {
                var feed: [Trip] = []
                for identifier in identifiers where Int.random(in: 0..<3, using: &random) == 0 {
                    let trip = Trip(
                        identifier: identifier, title: "Trip \(refresh)", startsOn: Date(timeIntervalSince1970: 0),
                        travellers: Int32.random(in: 1...4, using: &random), ownerID: owner.id)
                    feed.append(trip)
                }
                let returned = try await store.performAndSave { [feed] in try $0.batchUpsert(feed) }
                for (trip, id) in zip(feed, returned) {
                    let expected = storedIDs[trip.identifier, default: trip.id]
                    #expect(id == expected)
                    storedIDs[trip.identifier] = expected
                    latest[trip.identifier] = trip
                }
                let stored = try await store.performQuery { try $0.fetch(Trip.request()) }
                #expect(stored.count == latest.count)
                for trip in stored {
                    #expect(trip.id == storedIDs[trip.identifier])
                    #expect(trip.title == latest[trip.identifier]?.title)
                    #expect(trip.travellers == latest[trip.identifier]?.travellers)
                }
            }
        }
    }

    @Test(arguments: TestEngine.available) func aSingleUpsertMatchesByACompoundConstraintOrByID(engine: TestEngine)
        async throws
    {
        try await engine.withStore(schema: Trips.schema) { store in
            let ada = User(
                username: "ada", givenName: "Ada", familyName: "Lovelace", namePrefix: "Countess", joinedAt: Self.joined
            )
            try await store.performAndSave { try $0.insert(ada) }
            // Another username, the same (givenName, familyName, namePrefix): the stored Ada is updated.
            let renamed = User(
                username: "ada.l", givenName: "Ada", familyName: "Lovelace", namePrefix: "Countess",
                joinedAt: Self.joined)
            let id = try await store.performAndSave { try $0.upsert(renamed) }
            #expect(id == ada.id)
            // By ID (and the same row by the compound constraint): still one record.
            let rated = try await store.performAndSave { try $0.upsert(ada.with(rating: 5)) }
            #expect(rated == ada.id)
            let users = try await store.performQuery { try $0.fetch(User.request()) }
            #expect(users == [ada.with(rating: 5)])
        }
    }

    @Test(arguments: TestEngine.available) func aMissingValueInAConstraintMatchesNothing(engine: TestEngine)
        async throws
    {
        try await engine.withStore(schema: Trips.schema) { store in
            let first = User(username: "grace", givenName: "Grace", familyName: "Hopper", joinedAt: Self.joined)
            let second = User(username: "grace.h", givenName: "Grace", familyName: "Hopper", joinedAt: Self.joined)
            _ = try await store.performAndSave { try $0.batchUpsert([first, second]) }
            #expect(try await store.performQuery { try $0.count(User.request()) } == 2)
        }
    }

    @Test(arguments: TestEngine.available) func aRecordMatchingDifferentStoredRecordsIsRefused(engine: TestEngine)
        async throws
    {
        try await engine.withStore(schema: Trips.schema) { store in
            let ada = User(username: "ada", givenName: "Ada", familyName: "Lovelace", joinedAt: Self.joined)
            let grace = User(
                username: "grace", givenName: "Grace", familyName: "Hopper", namePrefix: "Rear Admiral",
                joinedAt: Self.joined)
            _ = try await store.performAndSave { try $0.batchInsert([ada, grace]) }
            let both = User(
                username: "ada", givenName: "Grace", familyName: "Hopper", namePrefix: "Rear Admiral",
                joinedAt: Self.joined
            )
            await #expect(
                throws: StoreError.ambiguousUpsert(
                    entity: "User", matches: [["username"], ["givenName", "familyName", "namePrefix"]])
            ) {
                try await store.performAndSave { try $0.upsert(both) }
            }
            let byID = ada.with(username: "grace")
            await #expect(throws: StoreError.ambiguousUpsert(entity: "User", matches: [["id"], ["username"]])) {
                try await store.performAndSave { try $0.upsert(byID) }
            }
            let stored = try await store.performQuery { try $0.fetch(User.request()) }
            #expect(Set(stored) == [ada, grace])
        }
    }
}
