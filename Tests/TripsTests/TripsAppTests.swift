import Foundation
import Modelwright
import ModelwrightEngineTestSupport
import ModelwrightGenerator
import ModelwrightSchema
import ModelwrightTestSupport
import Testing
import Trips

/// Uses the generated Trips module as an app would: schema, records, typed requests, copies,
/// cascades and observation, on every engine (``TestEngine``).
@Suite(.heavy)
struct TripsAppTests {
    private struct World {
        let store: Store
        let ada: User
        let grace: User
        let acme: Organization
        let lisbon: Trip
    }

    /// Runs `body` with a store holding the world's records, closed (and its database dropped) after.
    private static func withWorld<Result>(
        _ engine: TestEngine, _ body: (World) async throws -> Result
    ) async throws -> Result {
        try await engine.withStore(schema: Trips.schema) { store in
            let acme = Organization(name: "Acme", website: URL(string: "https://acme.example"))
            // Whole seconds: PostgreSQL stores dates to the microsecond (pinned in PostgresStoreTests).
            let joined = Date(timeIntervalSinceReferenceDate: 790_000_000)
            let ada = User(
                username: "ada",
                givenName: "Ada",
                familyName: "Lovelace",
                namePrefix: "Countess",
                rating: 5,
                joinedAt: joined,
                home: Address(street: "1 St James's Square", city: "London", zip: nil),
                preferences: ["theme": "dark"],
                organizationID: acme.id
            )
            let grace = User(
                username: "grace", givenName: "Grace", familyName: "Hopper", rating: 4, role: .admin, joinedAt: joined)
            let lisbon = Trip(
                identifier: UUID(),
                title: "Lisbon",
                startsOn: Date(timeIntervalSince1970: 1_700_000_000),
                budget: Decimal(string: "1200.50"),
                priority: .high,
                ownerID: ada.id
            )
            let porto = Trip(
                identifier: UUID(), title: "Porto", startsOn: Date(timeIntervalSince1970: 1_710_000_000),
                ownerID: grace.id)
            try await store.performAndSave { context in
                try context.insert(acme)
                try context.insert(ada)
                try context.insert(grace)
                try context.insert(lisbon)
                try context.insert(porto)
                for name in ["Belém", "Alfama"] {
                    try context.insert(Stop(name: name, tripID: lisbon.id))
                }
            }
            return try await body(World(store: store, ada: ada, grace: grace, acme: acme, lisbon: lisbon))
        }
    }

    @Test func theGeneratedSchemaHasEveryVersionWithTheRuntimesChecksums() throws {
        #expect(Trips.versions.map(\.version) == [1, 2, 3])
        #expect(Trips.versions.map(\.checksum.hexDigits) == Trips.checksums)
        // The archived versions decode to schemas with the recorded checksums, and to exactly what
        // the model files say.
        let decoded = try Trips.versions.map { try $0.schema() }
        #expect(decoded.map(\.checksum.hexDigits) == Trips.checksums)
        #expect(decoded.last == Trips.schema)
        let model = try #require(
            FrontEnd.run(modelAt: GeneratedCodeTypeChecker.root.appendingPathComponent("Models/Trips").path).model)
        #expect(decoded == model.versions.map(\.schema))
    }

    @Test(arguments: TestEngine.available) func recordsRoundTripWithDefaultsCompositesAndJSON(engine: TestEngine)
        async throws
    {
        try await Self.withWorld(engine) { world in
            let id = world.ada.id
            let stored = try await world.store.performQuery { try $0.existing(id) }
            let ada = try #require(stored)
            #expect(ada == world.ada)
            #expect(ada.home?.city == "London")
            #expect(ada.preferences == ["theme": "dark"])
            #expect(ada.role == .member)
            #expect(ada.isVerified == false)
            #expect(ada.displayName == "Countess Ada Lovelace")
        }
    }

    @Test(arguments: TestEngine.available) func typedRequestsFilterTraverseAndSort(engine: TestEngine) async throws {
        try await Self.withWorld(engine) { world in
            let (acmeMembers, withLisbon, insensitive, sorted, byDefault) = try await world.store.performQuery {
                context in
                (
                    try context.fetch(User.request().filter { $0.organization.name == "Acme" }).map(\.username),
                    try context.fetch(
                        User.request().filter { $0.trips.any { $0.title.hasPrefix("lis", caseInsensitive: true) } }
                    )
                    .map(\.username),
                    try context.fetch(User.request().filter { $0.familyName.contains("LOVE", caseInsensitive: true) })
                        .map(
                            \.username),
                    try context.fetch(User.request().sorted { [$0.rating.ascending] }).map(\.username),
                    try context.fetch(Trip.request()).map(\.title)
                )
            }
            #expect(acmeMembers == ["ada"])
            #expect(withLisbon == ["ada"])
            #expect(insensitive == ["ada"])
            #expect(sorted == ["grace", "ada"])
            #expect(byDefault == ["Porto", "Lisbon"], "Trip's default sort is startsOn descending")
        }
    }

    @Test(arguments: TestEngine.available) func requestsFilterAndSortByTheFieldsOfAComposite(engine: TestEngine)
        async throws
    {
        try await Self.withWorld(engine) { world in
            let linus = User(
                username: "linus", givenName: "Linus", familyName: "Torvalds",
                home: Address(street: "Storgata 1", city: "Oslo", zip: "0155"))
            try await world.store.performAndSave { context in
                try context.insert(linus)
                try context.insert(Note(title: "Fjords", body: "Go north", authorID: linus.id))
                try context.insert(Note(title: "Anonymous", body: "No author"))
            }
            let results = try await world.store.performQuery { context in
                let names = { (request: FetchRequest<User>) in try context.fetch(request).map(\.username) }
                return [
                    try names(User.request().filter { $0.home.city == "Oslo" }),
                    try names(User.request().filter { $0.home.city.hasPrefix("lon", caseInsensitive: true) }),
                    try names(User.request().filter { $0.home.zip.isNil }),
                    try names(User.request().filter { $0.home.zip.isNotNil }),
                    try names(User.request().filter { $0.home.isNil }),
                    try names(User.request().filter { $0.home.isNotNil }.sorted { [$0.home.city.descending] }),
                    try names(User.request().filter { $0.home.city != "Oslo" }),
                    try context.fetch(Trip.request().filter { $0.owner.home.city == "London" }).map(\.title),
                    try context.fetch(Note.request().filter { $0.author.home.zip == "0155" }).map(\.title),
                ]
            }
            #expect(results[0] == ["linus"])
            #expect(results[1] == ["ada"])
            #expect(results[2].sorted() == ["ada", "grace"], "a missing composite has no zip either")
            #expect(results[3] == ["linus"])
            #expect(results[4] == ["grace"])
            #expect(results[5] == ["linus", "ada"])
            #expect(results[6].sorted() == ["ada", "grace"], "!= is true when the value is missing")
            #expect(results[7] == ["Lisbon"], "through Trip.owner")
            #expect(results[8] == ["Fjords"], "through Note.author, which may be missing")
        }
    }

    @Test(arguments: TestEngine.available) func toManyRequestsKeepTheirOrder(engine: TestEngine) async throws {
        try await Self.withWorld(engine) { world in
            let stops = try await world.store.performQuery { [lisbon = world.lisbon] in
                try $0.fetch(lisbon.stopsRequest).map(\.name)
            }
            #expect(stops == ["Belém", "Alfama"])
        }
    }

    @Test(arguments: TestEngine.available) func modifiedCopiesUpdateTheStore(engine: TestEngine) async throws {
        try await Self.withWorld(engine) { world in
            let promoted = world.grace.with(namePrefix: .some("Rear Admiral"), rating: 5)
            #expect(world.grace.rating == 4, "the original value is untouched")
            try await world.store.performAndSave { try $0.update(promoted) }
            let stored = try await world.store.performQuery { [id = world.grace.id] in try $0.existing(id) }
            #expect(stored?.namePrefix == "Rear Admiral")
            #expect(stored?.rating == 5)
            let cleared = promoted.with(namePrefix: .some(nil))
            #expect(cleared.namePrefix == nil)
            // `clearing` names the optional properties to empty and keeps every other one.
            let homeless = promoted.with(home: .some(Address(street: "Rua Augusta 1", city: "Lisboa", zip: "1100-048")))
                .clearing(.namePrefix, .organizationID)
            #expect(homeless.namePrefix == nil && homeless.organizationID == nil)
            #expect(homeless.home?.street == "Rua Augusta 1" && homeless.rating == 5 && homeless.id == promoted.id)
            #expect(homeless.clearing() == homeless)
            #expect(homeless.clearing(.home, .preferences).home == nil)
        }
    }

    @Test(arguments: TestEngine.available) func deletingAUserCascadesToTheirTrips(engine: TestEngine) async throws {
        try await Self.withWorld(engine) { world in
            try await world.store.performAndSave { [id = world.ada.id] in try $0.delete(id) }
            let (trips, stops) = try await world.store.performQuery { context in
                (try context.fetch(Trip.request()).map(\.title), try context.count(Stop.request()))
            }
            #expect(trips == ["Porto"])
            #expect(stops == 0, "User.trips cascades to trips, and Trip.stops cascades to their stops")
        }
    }

    @Test(arguments: TestEngine.available) func observingARequestSeesCommits(engine: TestEngine) async throws {
        try await Self.withWorld(engine) { world in
            var updates = world.store.observe(User.request().filter { $0.rating >= 5 }).makeAsyncIterator()
            #expect(try await updates.next()?.map(\.username) == ["ada"])
            try await world.store.performAndSave { [grace = world.grace] in try $0.update(grace.with(rating: 5)) }
            #expect(try await updates.next()?.map(\.username).sorted() == ["ada", "grace"])
        }
    }

    @Test(arguments: TestEngine.available) func namedRequestsFromTheSchemaTakeTypedParameters(engine: TestEngine)
        async throws
    {
        try await Self.withWorld(engine) { world in
            let day = { (seconds: Double) in Date(timeIntervalSince1970: seconds) }
            let titles = { (request: FetchRequest<Trip>) in
                try await world.store.performQuery { try $0.fetch(request).map(\.title) }
            }
            #expect(try await titles(Trip.upcomingTrips(username: "ADA", from: day(1_600_000_000))) == ["Lisbon"])
            #expect(try await titles(Trip.upcomingTrips(username: "ada", from: day(1_750_000_000))) == [])
            #expect(try await titles(Trip.upcomingTrips(username: "grace", from: day(0))) == ["Porto"])
            #expect(try await titles(Trip.tripsVisiting(place: "BELEM")) == ["Lisbon"], "[cd] folds case and accents")
            #expect(try await titles(Trip.tripsVisiting(place: "Sintra")) == [])
            #expect(
                try await titles(Trip.busyTrips(minStops: 2, minTravellers: 5, lowest: 1000, highest: 2000)) == [
                    "Lisbon"
                ])
            #expect(try await titles(Trip.busyTrips(minStops: 3, minTravellers: 5, lowest: 1000, highest: 2000)) == [])
            #expect(try await titles(Trip.busyTrips(minStops: 0, minTravellers: 1, lowest: 1300, highest: 2000)) == [])

            // The generated request is the one an app would write by hand.
            let written = Trip.request().filter {
                $0.owner.username.equals("ada", caseInsensitive: true) && $0.startsOn >= day(0)
            }
            #expect(Trip.upcomingTrips(username: "ada", from: day(0)) == written)

            let administrators = { [acme = world.acme.id] in
                try await world.store.performQuery {
                    try $0.fetch(User.administrators(organization: acme)).map(\.username)
                }
            }
            #expect(try await administrators() == [], "grace is an administrator, but not in Acme")
            try await world.store.performAndSave { [grace = world.grace, acme = world.acme.id] in
                try $0.update(grace.with(organizationID: .some(acme)))
            }
            #expect(try await administrators() == ["grace"])
        }
    }
}
