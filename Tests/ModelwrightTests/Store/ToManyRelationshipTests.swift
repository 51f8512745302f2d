import Foundation
import Modelwright
import ModelwrightEngineTestSupport
import ModelwrightTestSupport
import Testing

/// To-many relationships: ordered ones keep their order, many-to-many and one-way ones live in
/// join tables, and all of them can be fetched, queried and linked, on every engine (``TestEngine``).
@Suite(.heavy)
struct ToManyRelationshipTests {
    private static func world(_ store: Store) async throws -> (User, Trip, Trip) {
        let ada = makeUser("ada")
        let lisbon = Trip(title: "Lisbon", ownerID: ada.id)
        let porto = Trip(title: "Porto", ownerID: ada.id)
        try await store.performAndSave { context in
            try context.insert(ada)
            try context.insert(lisbon)
            try context.insert(porto)
        }
        return (ada, lisbon, porto)
    }

    @Test(arguments: TestEngine.available) func anOrderedOneToManyKeepsInsertionOrderUntilReordered(engine: TestEngine)
        async throws
    {
        try await engine.withStore(schema: Fixture.schema) { store in
            let (_, lisbon, porto) = try await Self.world(store)
            let stops = ["Sé", "Alfama", "Belém"].map { Stop(name: $0, tripID: lisbon.id) }
            try await store.performAndSave { context in
                for stop in stops { try context.insert(stop) }
            }
            let names = { @Sendable (trip: Trip) in
                try await store.performQuery { try $0.fetch(trip.request { $0.stops }).map(\.name) }
            }
            #expect(try await names(lisbon) == ["Sé", "Alfama", "Belém"])
            try await store.performAndSave { context in
                try context.setOrder(of: lisbon.id, [stops[2].id, stops[0].id], through: { $0.stops })
            }
            #expect(try await names(lisbon) == ["Belém", "Sé", "Alfama"])
            // Moving a stop to another trip puts it at the end there.
            try await store.performAndSave { context in
                try context.insert(Stop(name: "Ribeira", tripID: porto.id))
                var moved = stops[1]
                moved.tripID = porto.id
                try context.update(moved)
            }
            #expect(try await names(porto) == ["Ribeira", "Alfama"])
            #expect(try await names(lisbon) == ["Belém", "Sé"])
            // A request over a relationship can still be filtered and sorted.
            let filtered = try await store.performQuery { context in
                try context.fetch(lisbon.request { $0.stops }.filter { $0.name.hasPrefix("S") }).map(\.name)
            }
            #expect(filtered == ["Sé"])
        }
    }

    @Test(arguments: TestEngine.available) func manyToManyLinksAreVisibleFromBothSides(engine: TestEngine) async throws
    {
        try await engine.withStore(schema: Fixture.schema) { store in
            let (_, lisbon, porto) = try await Self.world(store)
            let city = Tag(name: "city")
            let coast = Tag(name: "coast")
            try await store.performAndSave { context in
                try context.insert(city)
                try context.insert(coast)
                try context.link(lisbon.id, to: city.id, through: { $0.tags })
                try context.link(lisbon.id, to: coast.id, through: { $0.tags })
                try context.link(porto.id, to: city.id, through: { $0.tags })
                try context.link(city.id, to: porto.id, through: { $0.trips })  // already linked: no duplicate
            }
            let (cityTrips, lisbonTags, coastal, twoTags) = try await store.performQuery { context in
                (
                    try context.fetch(city.request { $0.trips }.sorted { [$0.title.ascending] }).map(\.title),
                    try context.fetch(lisbon.request { $0.tags }.sorted { [$0.name.ascending] }).map(\.name),
                    try context.fetch(Trip.request().filter { $0.tags.any { $0.name == "coast" } }).map(\.title),
                    try context.fetch(Trip.request().filter { $0.tags.count == 2 }).map(\.title)
                )
            }
            #expect(cityTrips == ["Lisbon", "Porto"])
            #expect(lisbonTags == ["city", "coast"])
            #expect(coastal == ["Lisbon"])
            #expect(twoTags == ["Lisbon"])

            try await store.performAndSave { try $0.unlink(lisbon.id, from: city.id, through: { $0.tags }) }
            #expect(try await store.performQuery { try $0.fetch(city.request { $0.trips }).map(\.title) } == ["Porto"])

            // Tag.trips denies deleting a tag that still has trips; a trip's deletion removes its links.
            await #expect(throws: StoreError.deleteDenied(entity: "Tag", relationship: "trips")) {
                try await store.performAndSave { try $0.delete(city.id) }
            }
            try await store.performAndSave { try $0.delete(porto.id) }
            try await store.performAndSave { try $0.delete(city.id) }
            #expect(try await store.performQuery { try $0.count(Tag.request()) } == 1)
        }
    }

    @Test(arguments: TestEngine.available) func aOneWayOrderedToManyLivesInAJoinTable(engine: TestEngine) async throws {
        try await engine.withStore(schema: Fixture.schema) { store in
            let (ada, lisbon, porto) = try await Self.world(store)
            try await store.performAndSave { context in
                try context.link(ada.id, to: porto.id, through: { $0.favourites })
                try context.link(ada.id, to: lisbon.id, through: { $0.favourites })
            }
            let favourites = { @Sendable in
                try await store.performQuery { try $0.fetch(ada.request { $0.favourites }).map(\.title) }
            }
            #expect(try await favourites() == ["Porto", "Lisbon"])
            try await store.performAndSave { context in
                try context.setOrder(of: ada.id, [lisbon.id], through: { $0.favourites })
            }
            #expect(try await favourites() == ["Lisbon", "Porto"])
            let observed = store.observe(ada.request { $0.favourites })
            var iterator = observed.makeAsyncIterator()
            #expect(try await iterator.next()?.map(\.title) == ["Lisbon", "Porto"])
            try await store.performAndSave { try $0.unlink(ada.id, from: lisbon.id, through: { $0.favourites }) }
            #expect(try await iterator.next()?.map(\.title) == ["Porto"])
        }
    }

    @Test(arguments: TestEngine.available) func unlinkingARequiredInverseIsRefused(engine: TestEngine) async throws {
        try await engine.withStore(schema: Fixture.schema) { store in
            let (ada, lisbon, _) = try await Self.world(store)
            await #expect(throws: StoreError.requiredRelationshipEmpty(entity: "Trip", relationship: "owner")) {
                try await store.performAndSave { try $0.unlink(ada.id, from: lisbon.id, through: { $0.trips }) }
            }
        }
    }
}
