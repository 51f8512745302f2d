import Foundation
import Modelwright
import ModelwrightTestSupport
import Testing
import Trips

/// `id` is a typed field like any other: equality, membership and sorting, on the request's
/// entity and through to-one relationships.
@Suite(.heavy)
struct RecordIDFieldTests {
    /// Random users and trips, then random ID queries checked against the same data in memory.
    @Test(arguments: 0..<4) func idQueriesMatchAnInMemoryModel(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        let store = try Store.inMemory(schema: Trips.schema)
        let users = (0..<12).map { makeTripsUser("user\($0)", familyName: ["Hopper", "Lovelace", "Noether"][$0 % 3]) }
        let trips = (0..<40).map { makeTrip("trip\($0)", owner: users.randomElement(using: &random)!.id, day: $0 % 7) }
        try await store.performAndSave { context in
            try context.batchInsert(users)
            try context.batchInsert(trips)
        }
        for _ in 0..<20 {
            let chosen = trips.filter { _ in Bool.random(using: &random) }
            let owners = users.filter { _ in Int.random(in: 0..<4, using: &random) == 0 }
            let one = trips.randomElement(using: &random)!
            let ownerIDs = Set(owners.map(\.id))
            let (byID, byIDs, byOwnerIDs, sorted, throughHops) = try await store.performQuery { context in
                (
                    try context.fetch(Trip.request().filter { $0.id == one.id }),
                    try context.fetch(
                        Trip.request().filter { $0.id.in(chosen.map(\.id)) }.sorted { [$0.id.ascending] }),
                    try context.fetch(Trip.request().filter { $0.owner.id.in(ownerIDs) }),
                    try context.fetch(Trip.request().sorted { [$0.id.descending] }),
                    try context.fetch(
                        Trip.request().sorted {
                            [$0.owner.familyName.ascending, $0.owner.id.ascending, $0.id.ascending]
                        })
                )
            }
            #expect(byID == [one])
            #expect(byIDs.map(\.id) == chosen.map(\.id).sorted(by: Self.storedOrder))
            #expect(Set(byOwnerIDs.map(\.id)) == Set(trips.filter { ownerIDs.contains($0.ownerID) }.map(\.id)))
            #expect(sorted.map(\.id) == trips.map(\.id).sorted(by: Self.storedOrder).reversed())
            let owner = Dictionary(uniqueKeysWithValues: users.map { ($0.id, $0) })
            let expected = trips.sorted { left, right in
                let (a, b) = (owner[left.ownerID]!, owner[right.ownerID]!)
                if a.familyName != b.familyName { return a.familyName < b.familyName }
                if a.id != b.id { return Self.storedOrder(a.id, b.id) }
                return Self.storedOrder(left.id, right.id)
            }
            #expect(throughHops.map(\.id) == expected.map(\.id))
        }
    }

    @Test func aMissingToOneSortsFirstAscending() async throws {
        let store = try Store.inMemory(schema: Trips.schema)
        let trip = makeTrip("Lisbon", owner: User.ID(), day: 0)
        let owner = makeTripsUser("ada", familyName: "Lovelace")
        let lisbon = Trip(identifier: UUID(), title: "Lisbon", startsOn: trip.startsOn, ownerID: owner.id)
        let stops = [
            Stop(name: "Alfama", tripID: lisbon.id), Stop(name: "Nowhere"), Stop(name: "Belém", tripID: lisbon.id),
        ]
        try await store.performAndSave { context in
            try context.insert(owner)
            try context.insert(lisbon)
            try context.batchInsert(stops)
        }
        let names = try await store.performQuery { context in
            try context.fetch(Stop.request().sorted { [$0.trip.owner.username.ascending, $0.name.descending] })
                .map(\.name)
        }
        #expect(names == ["Nowhere", "Belém", "Alfama"])
    }

    /// IDs are stored as 16 bytes and compare bytewise, which is the order of their uppercase text.
    private static func storedOrder<Target>(_ left: RecordID<Target>, _ right: RecordID<Target>) -> Bool {
        left.uuid.uuidString < right.uuid.uuidString
    }
}
