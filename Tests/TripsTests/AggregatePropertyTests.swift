import Foundation
import Modelwright
import ModelwrightTestSupport
import Testing
import Trips

/// Aggregates agree with a plain evaluation in Swift over the same random records: counts, sums
/// (exact for decimals, widened for integers), extremes, averages, limits, and groups keyed through
/// to-one relationships. `MODELWRIGHT_LARGE=1` draws ten times as many cases.
@Suite(.heavy)
struct AggregatePropertyTests {
    static let cases = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 400 : 40

    /// Random organizations, users and trips; each trip starts on its own day, so every sort is total.
    struct World {
        var organizations: [Organization] = []
        var users: [User] = []
        var trips: [Trip] = []

        init(_ random: inout SplitMix64) {
            for index in 0..<random.next(below: 3) {
                organizations.append(Organization(name: "Org \(index % 2)"))
            }
            for index in 0..<(1 + random.next(below: 5)) {
                var user = makeTripsUser(
                    "u\(index)", familyName: "F\(index)", rating: Int16(random.next(below: 11) - 5))
                if !organizations.isEmpty, random.chance(0.7) {
                    user = user.with(organizationID: random.pick(organizations).id)
                }
                users.append(user)
            }
            var days = Array(0..<200)
            days.shuffle(using: &random)
            for index in 0..<random.next(below: 30) {
                let budget = random.chance(0.3) ? nil : Decimal(random.next(below: 2_000_001) - 1_000_000) / 100
                var trip = makeTrip(
                    ["Lisbon", "Porto", "Évora", "faro", "Braga"][random.next(below: 5)] + "\(index % 3)",
                    owner: random.pick(users).id, day: days[index])
                trip = trip.with(
                    budget: budget, distanceKm: Double(random.next(below: 100_000)) / 8,
                    averageSpeed: random.chance(0.4) ? nil : Float(random.next(below: 1000)) / 4,
                    travellers: Int32(random.next(below: 2_000_000_001)) - 1_000_000_000,
                    totalSeconds: Int64(bitPattern: random.next()) >> 4, checkIns: random.next(below: 100),
                    priority: random.pick([.low, .normal, .high]))
                trips.append(trip)
            }
        }

        func store() async throws -> Store {
            let store = try Store.inMemory(schema: Trips.schema)
            try await store.performAndSave { [self] context in
                for organization in organizations { try context.insert(organization) }
                for user in users { try context.insert(user) }
                for trip in trips { try context.insert(trip) }
            }
            return store
        }

        func owner(of trip: Trip) -> User { users.first { $0.id == trip.ownerID }! }
    }

    /// Text in the store's order: by UTF-8 bytes.
    static func bytewise(_ lhs: String, _ rhs: String) -> Bool {
        Array(lhs.utf8).lexicographicallyPrecedes(Array(rhs.utf8))
    }

    @Test func aggregatesMatchAnEvaluationInSwift() async throws {
        for index in 0..<Self.cases {
            var random = SplitMix64(seed: 31, index: index)
            let world = World(&random)
            let store = try await world.store()
            let threshold = Int32(random.next(below: 2_000_000_001)) - 1_000_000_000
            let limit = random.chance(0.3) ? random.next(below: 10) : nil
            var request = Trip.request().filter { $0.travellers >= threshold }
            if let limit { request = request.limit(limit) }
            // The request's own order: the default sort, startsOn descending.
            var expected = world.trips.filter { $0.travellers >= threshold }.sorted { $0.startsOn > $1.startsOn }
            if let limit { expected = Array(expected.prefix(limit)) }
            let budgets = expected.compactMap(\.budget)
            let speeds = expected.compactMap(\.averageSpeed)

            let results = try await store.performQuery { [request] context in
                (
                    count: try context.fetch(request.countAll()),
                    budgetCount: try context.fetch(request.count { $0.budget }),
                    travellers: try context.fetch(request.sum { $0.travellers }),
                    budget: try context.fetch(request.sum { $0.budget }),
                    averageBudget: try context.fetch(request.average { $0.budget }),
                    minBudget: try context.fetch(request.min { $0.budget }),
                    maxBudget: try context.fetch(request.max { $0.budget }),
                    distance: try context.fetch(request.sum { $0.distanceKm }),
                    averageTravellers: try context.fetch(request.average { $0.travellers }),
                    maxSpeed: try context.fetch(request.max { $0.averageSpeed }),
                    firstStart: try context.fetch(request.min { $0.startsOn }),
                    minTitle: try context.fetch(request.min { $0.title }),
                    maxCheckIns: try context.fetch(request.max { $0.checkIns })
                )
            }
            let label = "case \(index)"
            #expect(results.count == expected.count, "\(label)")
            #expect(results.budgetCount == budgets.count, "\(label)")
            #expect(results.travellers == expected.reduce(0) { $0 + Int64($1.travellers) }, "\(label)")
            #expect(results.budget == budgets.reduce(0, +), "\(label): decimal sums are exact")
            #expect(
                results.averageBudget == (budgets.isEmpty ? nil : budgets.reduce(0, +) / Decimal(budgets.count)),
                "\(label)")
            #expect(results.minBudget == budgets.min(), "\(label)")
            #expect(results.maxBudget == budgets.max(), "\(label)")
            #expect(abs(results.distance - expected.map(\.distanceKm).reduce(0, +)) < 1e-6, "\(label)")
            let meanTravellers =
                expected.isEmpty
                ? nil : Double(expected.reduce(0) { $0 + Int64($1.travellers) }) / Double(expected.count)
            #expect(
                (results.averageTravellers ?? .nan).isApproximately(meanTravellers ?? .nan)
                    || results.averageTravellers == meanTravellers, "\(label)")
            #expect(results.maxSpeed == speeds.max(), "\(label)")
            #expect(results.firstStart == expected.map(\.startsOn).min(), "\(label)")
            #expect(results.minTitle == expected.map(\.title).min(by: Self.bytewise), "\(label)")
            #expect(results.maxCheckIns == expected.map(\.checkIns).max(), "\(label)")
        }
    }

    @Test func groupedAggregatesMatchAnEvaluationInSwift() async throws {
        for index in 0..<Self.cases {
            var random = SplitMix64(seed: 32, index: index)
            let world = World(&random)
            let store = try await world.store()
            let request = Trip.request()
            let (perOwner, perOrganization, budgetPerPriority) = try await store.performQuery { context in
                (
                    try context.fetch(request.sum { $0.travellers }.grouped { ($0.owner.username, $0.priority) }),
                    try context.fetch(request.countAll().grouped { $0.owner.organization.name.orNil }),
                    try context.fetch(request.sum { $0.budget }.grouped { $0.priority })
                )
            }
            let label = "case \(index)"

            var sums: [String: Int64] = [:]
            for trip in world.trips {
                sums["\(world.owner(of: trip).username)|\(trip.priority.rawValue)", default: 0] += Int64(
                    trip.travellers)
            }
            let keys = sums.keys.sorted { lhs, rhs in
                let (l, r) = (lhs.split(separator: "|"), rhs.split(separator: "|"))
                return l[0] != r[0] ? Self.bytewise(String(l[0]), String(r[0])) : Int(l[1])! < Int(r[1])!
            }
            #expect(perOwner.map { "\($0.keys.0)|\($0.keys.1.rawValue)" } == keys, "\(label): grouped in key order")
            #expect(perOwner.map(\.value) == keys.map { sums[$0]! }, "\(label)")

            var counts: [String?: Int] = [:]
            for trip in world.trips {
                let organization = world.owner(of: trip).organizationID.flatMap { id in
                    world.organizations.first { $0.id == id }?.name
                }
                counts[organization, default: 0] += 1
            }
            let names = counts.keys.sorted { ($0 ?? "") < ($1 ?? "") || ($0 == nil && $1 != nil) }
            #expect(perOrganization.map(\.keys) == names, "\(label): a missing hop is a group of its own, first")
            #expect(perOrganization.map(\.value) == names.map { counts[$0]! }, "\(label)")

            var budgets: [Int: Decimal] = [:]
            for trip in world.trips { budgets[trip.priority.rawValue, default: 0] += trip.budget ?? 0 }
            #expect(budgetPerPriority.map(\.keys.rawValue) == budgets.keys.sorted(), "\(label)")
            #expect(budgetPerPriority.map(\.value) == budgets.keys.sorted().map { budgets[$0]! }, "\(label)")
        }
    }

    @Test func aMissingGroupKeyOfANonOptionalTypeNamesTheFix() async throws {
        let store = try Store.inMemory(schema: Trips.schema)
        let owner = makeTripsUser("ada", familyName: "Lovelace")
        try await store.performAndSave { context in
            try context.insert(owner)
            try context.insert(makeTrip("Lisbon", owner: owner.id, day: 1))
        }
        let error = await #expect(throws: StoreError.self) {
            try await store.performQuery {
                try $0.fetch(Trip.request().countAll().grouped { $0.owner.organization.name })
            }
        }
        #expect("\(error.map { String(describing: $0) } ?? "")".contains("owner.organization.name.orNil"))
    }

    @Test func anIntegerSumBeyondInt64ThrowsATypedError() async throws {
        let store = try Store.inMemory(schema: Trips.schema)
        let owner = makeTripsUser("ada", familyName: "Lovelace")
        try await store.performAndSave { context in
            try context.insert(owner)
            for day in 0..<2 {
                try context.insert(makeTrip("T\(day)", owner: owner.id, day: day).with(totalSeconds: .max))
            }
        }
        await #expect(throws: AggregateError.overflow(entity: "Trip", field: "totalSeconds")) {
            try await store.performQuery { try $0.fetch(Trip.request().sum { $0.totalSeconds }) }
        }
        // Int16 sums widen to Int64 and never wrap.
        try await store.performAndSave { context in
            for index in 0..<4 {
                try context.insert(makeTripsUser("big\(index)", familyName: "B\(index)", rating: .max))
            }
        }
        let ratings = try await store.performQuery { try $0.fetch(User.request().sum { $0.rating }) }
        #expect(ratings == 4 * Int64(Int16.max))
        let none = try await store.performQuery {
            try (
                $0.fetch(Trip.request().filter { $0.travellers > 5 }.min { $0.budget }),
                $0.fetch(Trip.request().filter { $0.travellers > 5 }.sum { $0.travellers })
            )
        }
        #expect(none.0 == nil && none.1 == 0, "min of no rows is nil, a sum of none is 0")
    }

    /// Integer sums whose running total leaves `Int64` though the total fits ([Int64.max, 1, -1])
    /// are exact; only a total beyond `Int64` throws, whatever the order of the rows.
    @Test func anIntegerSumOverflowsOnlyWhenItsTotalDoes() async throws {
        for index in 0..<Self.cases {
            var random = SplitMix64(seed: 71, index: index)
            let store = try Store.inMemory(schema: Trips.schema)
            let owner = makeTripsUser("ada", familyName: "Lovelace")
            let values: [Int64] = (0..<(1 + random.next(below: 8))).map { _ in
                random.pick([.max, .min, .max - 1, .min + 1, 1, -1, 0, Int64(bitPattern: random.next()) >> 1])
            }
            try await store.performAndSave { context in
                try context.insert(owner)
                for (day, value) in values.enumerated() {
                    try context.insert(makeTrip("T\(day)", owner: owner.id, day: day).with(totalSeconds: value))
                }
            }
            // The exact total, in 128 bits, as the low and high halves of a two's complement number.
            var wide = (high: Int64(0), low: UInt64(0))
            for value in values {
                let (low, carry) = wide.low.addingReportingOverflow(UInt64(bitPattern: value))
                wide = (wide.high &+ (value < 0 ? -1 : 0) &+ (carry ? 1 : 0), low)
            }
            let total = Int64(bitPattern: wide.low)
            let fits = wide.high == (total < 0 ? -1 : 0)
            do {
                let sum = try await store.performQuery { try $0.fetch(Trip.request().sum { $0.totalSeconds }) }
                #expect(fits && sum == total, "case \(index): \(values)")
            } catch let error as AggregateError {
                #expect(!fits && error == .overflow(entity: "Trip", field: "totalSeconds"), "case \(index): \(values)")
            }
        }
    }

    /// Infinite values sum and average as in Swift: +inf and -inf together give NaN, not 0 or nil.
    @Test func infiniteValuesSumAndAverageAsInSwift() async throws {
        for index in 0..<Self.cases {
            var random = SplitMix64(seed: 72, index: index)
            let store = try Store.inMemory(schema: Trips.schema)
            let owner = makeTripsUser("ada", familyName: "Lovelace")
            let values: [Double] = (0..<random.next(below: 6)).map { _ in
                random.pick([.infinity, -.infinity, 0.5, -2, 8])
            }
            try await store.performAndSave { context in
                try context.insert(owner)
                for (day, value) in values.enumerated() {
                    try context.insert(makeTrip("T\(day)", owner: owner.id, day: day).with(distanceKm: value))
                }
            }
            let (sum, average) = try await store.performQuery {
                (
                    try $0.fetch(Trip.request().sum { $0.distanceKm }),
                    try $0.fetch(Trip.request().average { $0.distanceKm })
                )
            }
            let total = values.reduce(0, +)
            let mean = values.isEmpty ? nil : total / Double(values.count)
            #expect(sum == total || (sum.isNaN && total.isNaN), "case \(index): \(values) sum \(sum)")
            #expect(
                average == mean || (average?.isNaN == true && mean?.isNaN == true),
                "case \(index): \(values) average \(String(describing: average))")
        }
    }

    /// Groups keyed by a decimal come in the order of its value (missing first), as a request
    /// sorted by it orders its records, not in the order of the stored text (-1, 10, 100, 9).
    @Test func decimalGroupKeysComeInNumericOrder() async throws {
        for index in 0..<Self.cases {
            var random = SplitMix64(seed: 73, index: index)
            let store = try Store.inMemory(schema: Trips.schema)
            let owner = makeTripsUser("ada", familyName: "Lovelace")
            let budgets: [Decimal?] = (0..<random.next(below: 12)).map { _ in
                random.chance(0.2)
                    ? nil : Decimal(random.next(below: 2_001) - 1_000) / Decimal(random.pick([1, 10, 100]))
            }
            try await store.performAndSave { context in
                try context.insert(owner)
                for (day, budget) in budgets.enumerated() {
                    try context.insert(makeTrip("T\(day)", owner: owner.id, day: day).with(budget: budget))
                }
            }
            let (counts, sums) = try await store.performQuery {
                (
                    try $0.fetch(Trip.request().countAll().grouped { $0.budget }),
                    try $0.fetch(Trip.request().sum { $0.budget }.grouped { $0.budget })
                )
            }
            var expected: [Decimal?] = []
            for budget in budgets where !expected.contains(budget) { expected.append(budget) }
            expected.sort { lhs, rhs in
                guard let rhs else { return false }
                guard let lhs else { return true }
                return lhs < rhs
            }
            #expect(counts.map(\.keys) == expected, "case \(index): counts of \(budgets)")
            #expect(sums.map(\.keys) == expected, "case \(index): sums of \(budgets)")
        }
    }

    @Test func anObservedAggregateFollowsCommitsThatChangeIt() async throws {
        let store = try Store.inMemory(schema: Trips.schema)
        let owner = makeTripsUser("ada", familyName: "Lovelace")
        try await store.performAndSave { try $0.insert(owner) }
        var updates = store.observe(Trip.request().sum { $0.travellers }).makeAsyncIterator()
        #expect(try await updates.next() == 0)
        let trip = makeTrip("Lisbon", owner: owner.id, day: 1).with(travellers: 3)
        try await store.performAndSave { try $0.insert(trip) }
        #expect(try await updates.next() == 3)
        // A write the sum does not read (the title) delivers nothing; the next change does.
        try await store.performAndSave { try $0.update(trip.with(title: "Porto")) }
        try await store.performAndSave { try $0.update(trip.with(title: "Porto", travellers: 5)) }
        #expect(try await updates.next() == 5)

        var groups = store.observe(Trip.request().countAll().grouped { $0.owner.username }).makeAsyncIterator()
        #expect(try await groups.next()?.map(\.value) == [1])
    }
}

extension Double {
    fileprivate func isApproximately(_ other: Double) -> Bool {
        abs(self - other) <= 1e-9 * Swift.max(1, abs(other))
    }
}
