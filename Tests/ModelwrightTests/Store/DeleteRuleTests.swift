import Foundation
import Modelwright
import ModelwrightEngineTestSupport
import ModelwrightTestSupport
import Testing

/// Deleting a record applies the delete rule of each of its relationships, on every engine
/// (``TestEngine``).
@Suite(.heavy)
struct DeleteRuleTests {
    private static func seed(_ store: Store) async throws -> (User, Organization, Trip) {
        let acme = Organization(name: "Acme")
        var ada = makeUser("ada")
        ada.organizationID = acme.id
        let trip = Trip(title: "Lisbon", ownerID: ada.id)
        try await store.performAndSave { [ada] context in
            try context.insert(acme)
            try context.insert(ada)
            try context.insert(trip)
            try context.insert(Stop(name: "Belém", tripID: trip.id))
        }
        return (ada, acme, trip)
    }

    @Test(arguments: TestEngine.available) func cascadeDeletesWhatTheRelationshipReaches(engine: TestEngine)
        async throws
    {
        try await engine.withStore(schema: Fixture.schema) { store in
            let (ada, _, _) = try await Self.seed(store)
            try await store.performAndSave { try $0.delete(ada.id) }
            let (users, trips, stops) = try await store.performQuery { context in
                (
                    try context.count(User.request()), try context.count(Trip.request()),
                    try context.fetch(Stop.request())
                )
            }
            #expect(users == 0)
            #expect(trips == 0, "User.trips cascades")
            #expect(stops.map(\.tripID) == [nil], "Trip.stops nullifies Stop.trip")
        }
    }

    @Test(arguments: TestEngine.available) func denyRefusesWhileTheRelationshipReachesRecords(engine: TestEngine)
        async throws
    {
        try await engine.withStore(schema: Fixture.schema) { store in
            let (ada, acme, _) = try await Self.seed(store)
            await #expect(throws: StoreError.deleteDenied(entity: "Organization", relationship: "members")) {
                try await store.performAndSave { try $0.delete(acme.id) }
            }
            #expect(try await store.performQuery { try $0.count(Organization.request()) } == 1)
            try await store.performAndSave { context in
                var leaving = ada
                leaving.organizationID = nil
                try context.update(leaving)
                try context.delete(acme.id)
            }
            #expect(try await store.performQuery { try $0.count(Organization.request()) } == 0)
        }
    }

    @Test(arguments: TestEngine.available) func nullifyOfARequiredInverseIsRefused(engine: TestEngine) async throws {
        // Trip.owner is required: a rule that would clear it must fail, naming it.
        let schema = {
            var schema = Fixture.schema
            schema.entities[0].relationships[1].deleteRule = .nullify
            return schema
        }()
        try await engine.withStore(schema: schema) { store in
            let ada = makeUser("ada")
            try await store.performAndSave { context in
                try context.insert(ada)
                try context.insert(Trip(title: "Lisbon", ownerID: ada.id))
            }
            await #expect(throws: StoreError.requiredRelationshipEmpty(entity: "Trip", relationship: "owner")) {
                try await store.performAndSave { try $0.delete(ada.id) }
            }
        }
    }

    @Test(arguments: TestEngine.available) func noActionLeavesTheOtherSideAsItIs(engine: TestEngine) async throws {
        let schema = {
            var schema = Fixture.schema
            schema.entities[2].relationships[1].deleteRule = .noAction  // Trip.stops
            return schema
        }()
        try await engine.withStore(schema: schema) { store in
            let ada = makeUser("ada")
            let trip = Trip(title: "Lisbon", ownerID: ada.id)
            try await store.performAndSave { context in
                try context.insert(ada)
                try context.insert(trip)
                try context.insert(Stop(name: "Belém", tripID: trip.id))
                try context.delete(trip.id)
            }
            let stops = try await store.performQuery { try $0.fetch(Stop.request()) }
            #expect(
                stops.map(\.tripID) == [trip.id],
                "the stop still points at the deleted trip, as Core Data's No Action leaves it")
        }
    }

    @Test(arguments: TestEngine.available) func aReferenceToAMissingRecordFailsTheCommitAndNamesTheRelationship(
        engine: TestEngine
    ) async throws {
        try await engine.withStore(schema: Fixture.schema) { store in
            await #expect(throws: StoreError.danglingReference(entity: "Trip", relationship: "owner")) {
                try await store.performAndSave { try $0.insert(Trip(title: "Nowhere", ownerID: User.ID())) }
            }
            let trips = try await store.performQuery { try $0.count(Trip.request()) }
            #expect(trips == 0)
        }
    }

    @Test(arguments: TestEngine.available) func aCaughtDenyUndoesTheCascadeThatReachedIt(engine: TestEngine)
        async throws
    {
        // Trip.stops denies: deleting a user cascades to its trips and stops at the one with a stop.
        let schema = {
            var schema = Fixture.schema
            schema.entities[2].relationships[1].deleteRule = .deny
            return schema
        }()
        try await engine.withStore(schema: schema) { store in
            let ada = makeUser("ada")
            let trips = (0..<6).map { Trip(title: "Trip \($0)", ownerID: ada.id) }
            try await store.performAndSave { context in
                try context.insert(ada)
                for trip in trips { try context.insert(trip) }
                try context.insert(Stop(name: "Belém", tripID: trips[3].id))
            }
            _ = try await store.performAndSave { context in
                #expect(throws: StoreError.deleteDenied(entity: "Trip", relationship: "stops")) {
                    try context.delete(ada.id)
                }
            }
            let (users, kept) = try await store.performQuery { context in
                (try context.count(User.request()), try context.count(Trip.request()))
            }
            #expect(users == 1)
            #expect(kept == trips.count, "the trips deleted before the refusal are back")
        }
    }

    @Test(arguments: TestEngine.available) func aCaughtFailureInABatchUndoesTheWholeBatch(engine: TestEngine)
        async throws
    {
        try await engine.withStore(schema: Fixture.schema) { store in
            let users = ["a", "b", "c", "b", "d"].map { makeUser($0) }
            try await store.performAndSave { context in
                #expect(throws: StoreError.self) { try context.batchInsert(users) }
                try context.insert(makeUser("e"))
            }
            #expect(try await store.performQuery { try $0.fetch(User.request()).map(\.username) } == ["e"])
        }
    }
}
