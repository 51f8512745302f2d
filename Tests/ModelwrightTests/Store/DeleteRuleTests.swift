import Foundation
import Modelwright
import Testing

/// Deleting a record applies the delete rule of each of its relationships.
struct DeleteRuleTests {
    private static func store() async throws -> (Store, User, Organization, Trip) {
        let store = try Store.inMemory(schema: Fixture.schema)
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
        return (store, ada, acme, trip)
    }

    @Test func cascadeDeletesWhatTheRelationshipReaches() async throws {
        let (store, ada, _, _) = try await Self.store()
        try await store.performAndSave { try $0.delete(ada.id) }
        let (users, trips, stops) = try await store.performQuery { context in
            (try context.count(User.request()), try context.count(Trip.request()), try context.fetch(Stop.request()))
        }
        #expect(users == 0)
        #expect(trips == 0, "User.trips cascades")
        #expect(stops.map(\.tripID) == [nil], "Trip.stops nullifies Stop.trip")
    }

    @Test func denyRefusesWhileTheRelationshipReachesRecords() async throws {
        let (store, ada, acme, _) = try await Self.store()
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

    @Test func nullifyOfARequiredInverseIsRefused() async throws {
        // Trip.owner is required: a rule that would clear it must fail, naming it.
        let schema = {
            var schema = Fixture.schema
            schema.entities[0].relationships[1].deleteRule = .nullify
            return schema
        }()
        let store = try Store.inMemory(schema: schema)
        let ada = makeUser("ada")
        try await store.performAndSave { context in
            try context.insert(ada)
            try context.insert(Trip(title: "Lisbon", ownerID: ada.id))
        }
        await #expect(throws: StoreError.requiredRelationshipEmpty(entity: "Trip", relationship: "owner")) {
            try await store.performAndSave { try $0.delete(ada.id) }
        }
    }

    @Test func noActionLeavesTheOtherSideAsItIs() async throws {
        let schema = {
            var schema = Fixture.schema
            schema.entities[2].relationships[1].deleteRule = .noAction  // Trip.stops
            return schema
        }()
        let store = try Store.inMemory(schema: schema)
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

    @Test func aReferenceToAMissingRecordFailsTheCommitAndNamesTheRelationship() async throws {
        let store = try Store.inMemory(schema: Fixture.schema)
        await #expect(throws: StoreError.danglingReference(entity: "Trip", relationship: "owner")) {
            try await store.performAndSave { try $0.insert(Trip(title: "Nowhere", ownerID: User.ID())) }
        }
        #expect(try await store.performQuery { try $0.count(Trip.request()) } == 0)
    }

    @Test func aCaughtDenyUndoesTheCascadeThatReachedIt() async throws {
        // Trip.stops denies: deleting a user cascades to its trips and stops at the one with a stop.
        let schema = {
            var schema = Fixture.schema
            schema.entities[2].relationships[1].deleteRule = .deny
            return schema
        }()
        let store = try Store.inMemory(schema: schema)
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

    @Test func aCaughtFailureInABatchUndoesTheWholeBatch() async throws {
        let store = try Store.inMemory(schema: Fixture.schema)
        let users = ["a", "b", "c", "b", "d"].map { makeUser($0) }
        try await store.performAndSave { context in
            #expect(throws: StoreError.self) { try context.batchInsert(users) }
            try context.insert(makeUser("e"))
        }
        #expect(try await store.performQuery { try $0.fetch(User.request()).map(\.username) } == ["e"])
    }
}
