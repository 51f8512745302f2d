import Foundation
@_spi(Generated) import Modelwright
import Testing

/// Every operator of the condition tree, rendered to SQL and run against a fixture.
struct QueryTests {
    private struct World {
        let store: Store
        let ada: User
        let grace: User
        let linus: User
        let acme: Organization
    }

    private static func world() async throws -> World {
        let store = try Store.inMemory(schema: Fixture.schema)
        let acme = Organization(name: "Acme")
        var ada = makeUser("ada", "Ada", "Lovelace", rating: 5)
        ada.organizationID = acme.id
        ada.namePrefix = "Countess"
        var grace = makeUser("grace", "Grace", "Hopper", rating: 4)
        grace.organizationID = acme.id
        grace.role = .admin
        let linus = makeUser("linus", "Linus", "Ångström", rating: 1)
        let trips = [
            Trip(title: "Lisbon", budget: Decimal(string: "100.50"), ownerID: ada.id),
            Trip(title: "Porto 100%_off", budget: Decimal(string: "9.99"), ownerID: ada.id),
            Trip(title: "Zürich", budget: nil, ownerID: grace.id),
        ]
        let stops = [Stop(name: "Belém", tripID: trips[0].id), Stop(name: "Alfama", tripID: trips[0].id)]
        try await store.performAndSave { [ada, grace] context in
            try context.insert(acme)
            for user in [ada, grace, linus] { try context.insert(user) }
            for trip in trips { try context.insert(trip) }
            for stop in stops { try context.insert(stop) }
        }
        return World(store: store, ada: ada, grace: grace, linus: linus, acme: acme)
    }

    private static func users(_ world: World, _ build: @escaping @Sendable (User.Fields) -> Condition) async throws
        -> [String]
    {
        try await world.store.performQuery { context in
            let request = User.request().filter(build).sorted { [$0.username.ascending] }
            // The first fetch renders the SQL, the second reuses it for the request's shape and binds
            // the values again: both must agree.
            let first = try context.fetch(request).map(\.username)
            #expect(try context.fetch(request).map(\.username) == first, "the cached SQL binds the same values")
            return first
        }
    }

    private static func trips(_ world: World, _ build: @escaping @Sendable (Trip.Fields) -> Condition) async throws
        -> [String]
    {
        try await world.store.performQuery { context in
            let first = try context.fetch(Trip.request().filter(build)).map(\.title)
            #expect(
                try context.fetch(Trip.request().filter(build)).map(\.title) == first,
                "the cached SQL binds the same values")
            return first
        }
    }

    @Test func comparisons() async throws {
        let world = try await Self.world()
        #expect(try await Self.users(world) { $0.rating == 4 } == ["grace"])
        #expect(try await Self.users(world) { $0.rating != 4 } == ["ada", "linus"])
        #expect(try await Self.users(world) { $0.rating < 4 } == ["linus"])
        #expect(try await Self.users(world) { $0.rating <= 4 } == ["grace", "linus"])
        #expect(try await Self.users(world) { $0.rating > 4 } == ["ada"])
        #expect(try await Self.users(world) { $0.rating >= 4 } == ["ada", "grace"])
        #expect(try await Self.users(world) { $0.role == .admin } == ["grace"])
    }

    @Test func inBetweenAndNil() async throws {
        let world = try await Self.world()
        #expect(try await Self.users(world) { $0.rating.in([1, 5]) } == ["ada", "linus"])
        #expect(try await Self.users(world) { $0.rating.in([]) } == [])
        #expect(try await Self.users(world) { $0.rating.between(2, 4) } == ["grace"])
        #expect(try await Self.users(world) { $0.namePrefix.isNil } == ["grace", "linus"])
        #expect(try await Self.users(world) { $0.namePrefix.isNotNil } == ["ada"])
        #expect(try await Self.users(world) { $0.namePrefix.in([nil, "Countess"]) } == ["ada", "grace", "linus"])
    }

    @Test func missingValuesFollowTheDocumentedRules() async throws {
        let world = try await Self.world()
        // `!=` is true when the value is missing; `NOT` inverts a false comparison with a missing value.
        #expect(try await Self.users(world) { $0.namePrefix != "Countess" } == ["grace", "linus"])
        #expect(try await Self.users(world) { !($0.namePrefix == "Countess") } == ["grace", "linus"])
        #expect(try await Self.users(world) { $0.namePrefix > "A" } == ["ada"])
        #expect(try await Self.users(world) { !($0.namePrefix > "A") } == ["grace", "linus"])
        #expect(try await Self.users(world) { !$0.namePrefix.hasPrefix("C") } == ["grace", "linus"])
    }

    @Test func stringTestsAreUnicodeAwareAndTreatWildcardsLiterally() async throws {
        let world = try await Self.world()
        #expect(try await Self.users(world) { $0.familyName.hasPrefix("an") } == [])
        #expect(try await Self.users(world) { $0.familyName.hasPrefix("ån", caseInsensitive: true) } == ["linus"])
        #expect(
            try await Self.users(world) {
                $0.familyName.hasPrefix("an", caseInsensitive: true, diacriticInsensitive: true)
            } == ["linus"])
        #expect(
            try await Self.users(world) {
                $0.familyName.hasSuffix("STROM", caseInsensitive: true, diacriticInsensitive: true)
            } == ["linus"])
        #expect(try await Self.users(world) { $0.familyName.contains("opp") } == ["grace"])
        #expect(try await Self.users(world) { $0.familyName.like("*lace") } == ["ada"])
        #expect(try await Self.users(world) { $0.familyName.like("H?pper") } == ["grace"])
        #expect(try await Self.users(world) { $0.familyName.equals("LOVELACE", caseInsensitive: true) } == ["ada"])
        #expect(try await Self.trips(world) { $0.title.contains("100%_") } == ["Porto 100%_off"])
        #expect(try await Self.trips(world) { $0.title.contains("%") } == ["Porto 100%_off"])
        #expect(try await Self.trips(world) { $0.title.like("Lisb_n") } == [])
        #expect(
            try await Self.trips(world) { $0.title.hasPrefix("zu", caseInsensitive: true, diacriticInsensitive: true) }
                == ["Zürich"])
    }

    @Test func andOrNot() async throws {
        let world = try await Self.world()
        #expect(try await Self.users(world) { $0.rating >= 4 && $0.role == .member } == ["ada"])
        #expect(try await Self.users(world) { $0.rating == 1 || $0.role == .admin } == ["grace", "linus"])
        #expect(try await Self.users(world) { !($0.rating == 1 || $0.role == .admin) } == ["ada"])
    }

    @Test func decimalsCompareAsNumbers() async throws {
        let world = try await Self.world()
        // As text, "9.99" > "100.50"; as numbers it is smaller.
        #expect(try await Self.trips(world) { $0.budget > Decimal(10) } == ["Lisbon"])
        #expect(try await Self.trips(world) { $0.budget < Decimal(10) } == ["Porto 100%_off"])
    }

    @Test func toOneTraversal() async throws {
        let world = try await Self.world()
        #expect(try await Self.users(world) { $0.organization.name == "Acme" } == ["ada", "grace"])
        #expect(try await Self.users(world) { $0.organization.isNil } == ["linus"])
        #expect(
            try await Self.trips(world) { $0.owner.organization.name == "Acme" }.sorted() == [
                "Lisbon", "Porto 100%_off", "Zürich",
            ])
        #expect(try await Self.trips(world) { $0.owner.rating >= 5 } == ["Lisbon", "Porto 100%_off"])
    }

    @Test func toManyQuantifiersAndCount() async throws {
        let world = try await Self.world()
        #expect(try await Self.users(world) { $0.trips.any { $0.title.hasPrefix("L") } } == ["ada"])
        #expect(try await Self.users(world) { $0.trips.all { $0.title.hasPrefix("L") } } == ["linus"])
        #expect(try await Self.users(world) { $0.trips.none { $0.title.hasPrefix("L") } } == ["grace", "linus"])
        #expect(try await Self.users(world) { $0.trips.count == 2 } == ["ada"])
        #expect(try await Self.users(world) { $0.trips.count >= 1 } == ["ada", "grace"])
        #expect(try await Self.users(world) { $0.trips.any { $0.stops.any { $0.name == "Alfama" } } } == ["ada"])
        let organizations = try await world.store.performQuery { context in
            try context.fetch(Organization.request().filter { $0.members.count == 2 }).map(\.name)
        }
        #expect(organizations == ["Acme"])
    }

    @Test func aCachedShapeBindsNewValues() async throws {
        let world = try await Self.world()
        // One shape, three sets of values: each answer must be its own, not the first one's.
        #expect(try await Self.users(world) { $0.rating.between(4, 5) && $0.familyName.hasPrefix("L") } == ["ada"])
        #expect(try await Self.users(world) { $0.rating.between(1, 4) && $0.familyName.hasPrefix("H") } == ["grace"])
        #expect(try await Self.users(world) { $0.rating.between(1, 1) && $0.familyName.hasPrefix("Å") } == ["linus"])
        #expect(try await Self.users(world) { $0.namePrefix.in([nil, "X"]) } == ["grace", "linus"])
        #expect(try await Self.users(world) { $0.namePrefix.in(["Countess", "X"]) } == ["ada"])
        #expect(try await Self.users(world) { $0.trips.count == 2 } == ["ada"])
        #expect(try await Self.users(world) { $0.trips.count == 1 } == ["grace"])
    }

    @Test func sortLimitAndOffset() async throws {
        let world = try await Self.world()
        let names = try await world.store.performQuery { context in
            try context.fetch(User.request().sorted { [$0.rating.descending] }.limit(2).offset(1)).map(\.username)
        }
        #expect(names == ["grace", "linus"])
        let count = try await world.store.performQuery { try $0.count(User.request().limit(2)) }
        #expect(count == 2)
    }

    @Test func theSameTreeRendersAsAnNSPredicate() {
        let condition =
            User.Fields(path: .root).rating >= 3
            && User.Fields(path: .root).familyName.hasPrefix("I", caseInsensitive: true)
        let format = PredicateFormatRenderer.render(condition)
        #expect(format.format == "(%K >= %@) AND (%K BEGINSWITH[c] %@)")
        #expect(
            format.arguments == [.keyPath("rating"), .value(.integer(3)), .keyPath("familyName"), .value(.text("I"))])
    }
}
