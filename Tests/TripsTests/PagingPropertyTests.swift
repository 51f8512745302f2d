import Foundation
import Modelwright
import ModelwrightTestSupport
import Testing
import Trips

/// Keyset pages and record sequences agree with sorting the same random records in Swift: every
/// record once, in the request's order with the ID breaking ties, whatever the ties, missing values
/// and to-one hops of the sort, and whatever is deleted between pages. `MODELWRIGHT_LARGE=1`
/// draws ten times as many cases.
struct PagingPropertyTests {
    static let cases = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 300 : 30

    /// A sort value as the store orders it: missing first, numbers by value, text by UTF-8 bytes.
    enum Key: Comparable {
        case missing
        case number(Decimal)
        case text([UInt8])

        init(_ number: (some BinaryInteger)?) { self = number.map { .number(Decimal(Int64($0))) } ?? .missing }
        init(_ decimal: Decimal?) { self = decimal.map { .number($0) } ?? .missing }
        init(_ text: String?) { self = text.map { .text(Array($0.utf8)) } ?? .missing }
        init(id: UUID) {
            self = .text(withUnsafeBytes(of: id.uuid) { Array($0) })
        }

        static func < (lhs: Key, rhs: Key) -> Bool {
            switch (lhs, rhs) {
            case (.missing, .missing): false
            case (.missing, _): true
            case (_, .missing): false
            case (.number(let l), .number(let r)): l < r
            case (.text(let l), .text(let r)): l.lexicographicallyPrecedes(r)
            default: false
            }
        }
    }

    /// One way to sort users: the request's keys, and the same keys read in Swift, ascending or not.
    struct UserSort: Sendable {
        let name: String
        let keys: @Sendable (User.Fields) -> [SortKey]
        let values: @Sendable (User, [Organization.ID: String]) -> [(Key, Bool)]
    }

    static let userSorts: [UserSort] = [
        UserSort(name: "rating desc", keys: { [$0.rating.descending] }, values: { u, _ in [(Key(u.rating), false)] }),
        UserSort(
            name: "prefix, rating", keys: { [$0.namePrefix.ascending, $0.rating.ascending] },
            values: { u, _ in [(Key(u.namePrefix), true), (Key(u.rating), true)] }),
        UserSort(
            name: "organization desc, prefix desc",
            keys: { [$0.organization.name.descending, $0.namePrefix.descending] },
            values: { u, names in
                [(Key(u.organizationID.flatMap { names[$0] }), false), (Key(u.namePrefix), false)]
            }),
        UserSort(
            name: "organization, rating desc", keys: { [$0.organization.name.ascending, $0.rating.descending] },
            values: { u, names in [(Key(u.organizationID.flatMap { names[$0] }), true), (Key(u.rating), false)] }),
        UserSort(
            name: "default", keys: { _ in [] },
            values: { u, _ in [(Key(u.familyName), true), (Key(u.givenName), true)] }),
    ]

    struct World {
        var organizations: [Organization] = []
        var users: [User] = []

        init(_ random: inout SplitMix64) {
            for index in 0..<random.next(below: 4) {
                organizations.append(Organization(name: ["Acme", "acme", "Zeta", "Ärzte"][index]))
            }
            for index in 0..<random.next(below: 60) {
                var user = User(
                    username: "u\(index)", givenName: random.pick(["Ada", "Bo", "Cy"]),
                    familyName: random.pick(["Li", "Lu", "Ng", "Ørsted"]) + "\(index)",
                    namePrefix: random.chance(0.5) ? nil : random.pick(["Dr", "Mx", "dr", ""]),
                    rating: Int16(random.next(below: 4)))
                if !organizations.isEmpty, random.chance(0.6) {
                    user = user.with(organizationID: random.pick(organizations).id)
                }
                users.append(user)
            }
        }

        var names: [Organization.ID: String] {
            Dictionary(uniqueKeysWithValues: organizations.map { ($0.id, $0.name) })
        }

        /// The users in `sort`'s order, the ID breaking ties.
        func sorted(by sort: UserSort, among users: [User]) -> [User] {
            let names = self.names
            return users.sorted { lhs, rhs in
                for ((l, ascending), (r, _)) in zip(sort.values(lhs, names), sort.values(rhs, names)) where l != r {
                    return ascending ? l < r : r < l
                }
                return Key(id: lhs.id.uuid) < Key(id: rhs.id.uuid)
            }
        }

        func store() async throws -> Store {
            let store = try Store.inMemory(schema: Trips.schema)
            try await store.performAndSave { [self] context in
                for organization in organizations { try context.insert(organization) }
                for user in users { try context.insert(user) }
            }
            return store
        }
    }

    @Test func keysetPagesVisitEveryRecordOnceInOrder() async throws {
        for index in 0..<Self.cases {
            var random = SplitMix64(seed: 41, index: index)
            let world = World(&random)
            let store = try await world.store()
            let sort = random.pick(Self.userSorts)
            let size = 1 + random.next(below: 7)
            let request = User.request().sorted(sort.keys)
            var pages: [User] = []
            var last: User?
            while true {
                let page = try await store.performQuery { [request, last] in
                    try $0.fetch(request.after(last).limit(size))
                }
                pages += page
                guard page.count == size else { break }
                last = page.last
            }
            let expected = world.sorted(by: sort, among: world.users)
            #expect(pages.map(\.username) == expected.map(\.username), "case \(index), \(sort.name), pages of \(size)")
        }
    }

    @Test func deletingRecordsBetweenPagesNeitherSkipsNorRepeats() async throws {
        for index in 0..<Self.cases {
            var random = SplitMix64(seed: 42, index: index)
            let world = World(&random)
            let store = try await world.store()
            let sort = random.pick(Self.userSorts)
            let size = 1 + random.next(below: 5)
            let request = User.request().sorted(sort.keys)
            var seen: [User] = []
            var deleted: Set<User.ID> = []
            var last: User?
            while true {
                let page = try await store.performQuery { [request, last] in
                    try $0.fetch(request.after(last).limit(size))
                }
                seen += page
                guard page.count == size, let end = page.last else { break }
                last = end
                // Delete the page's last record (the anchor) or a random one already seen.
                let victim = random.chance(0.5) ? end : random.pick(seen)
                if !deleted.contains(victim.id) {
                    deleted.insert(victim.id)
                    try await store.performAndSave { try $0.delete(victim) }
                }
            }
            let expected = world.sorted(by: sort, among: world.users)
            #expect(seen.map(\.username) == expected.map(\.username), "case \(index), \(sort.name), pages of \(size)")
        }
    }

    @Test func decimalKeysPageByValue() async throws {
        for index in 0..<Self.cases {
            var random = SplitMix64(seed: 43, index: index)
            let store = try Store.inMemory(schema: Trips.schema)
            let owner = makeTripsUser("ada", familyName: "Lovelace")
            let trips = (0..<random.next(below: 40)).map { day in
                makeTrip(random.pick(["A", "B"]), owner: owner.id, day: day % 5)
                    .with(budget: random.chance(0.3) ? nil : Decimal(random.next(below: 9) - 4) / 4)
            }
            try await store.performAndSave { context in
                try context.insert(owner)
                for trip in trips { try context.insert(trip) }
            }
            let ascending = random.chance(0.5)
            let request = Trip.request().sorted {
                [ascending ? $0.budget.ascending : $0.budget.descending, $0.title.ascending]
            }
            let size = 1 + random.next(below: 6)
            var pages: [Trip] = []
            var last: Trip?
            while true {
                let page = try await store.performQuery { [request, last] in
                    try $0.fetch(request.after(last).limit(size))
                }
                pages += page
                guard page.count == size else { break }
                last = page.last
            }
            let expected = trips.sorted { lhs, rhs in
                let (l, r) = (Key(lhs.budget), Key(rhs.budget))
                if l != r { return ascending ? l < r : r < l }
                if lhs.title != rhs.title { return lhs.title < rhs.title }
                return Key(id: lhs.id.uuid) < Key(id: rhs.id.uuid)
            }
            #expect(pages.map(\.id) == expected.map(\.id), "case \(index), ascending \(ascending), pages of \(size)")
        }
    }

    @Test func aRecordSequenceDeliversTheRequestsRecordsInOrder() async throws {
        for index in 0..<Self.cases {
            var random = SplitMix64(seed: 44, index: index)
            let world = World(&random)
            let store = try await world.store()
            let sort = random.pick(Self.userSorts)
            var request = User.request().sorted(sort.keys)
            var expected = world.sorted(by: sort, among: world.users)
            if random.chance(0.3) {
                let offset = random.next(below: 5)
                request = request.offset(offset)
                expected = Array(expected.dropFirst(offset))
            }
            if random.chance(0.3) {
                let limit = random.next(below: 20)
                request = request.limit(limit)
                expected = Array(expected.prefix(limit))
            }
            var streamed: [User] = []
            for try await user in store.records(request, pageSize: 1 + random.next(below: 8)) { streamed.append(user) }
            #expect(streamed.map(\.username) == expected.map(\.username), "case \(index), \(sort.name)")
        }
    }

    @Test func aRecordSequenceStartsAfterTheRequestsOwnAnchor() async throws {
        for index in 0..<Self.cases {
            var random = SplitMix64(seed: 45, index: index)
            let world = World(&random)
            let store = try await world.store()
            let sort = random.pick(Self.userSorts)
            let sorted = world.sorted(by: sort, among: world.users)
            guard !sorted.isEmpty else { continue }
            let anchorIndex = random.next(below: sorted.count)
            let request = User.request().sorted(sort.keys).after(sorted[anchorIndex])
            let expected = Array(sorted.dropFirst(anchorIndex + 1))
            var streamed: [User] = []
            for try await user in store.records(request, pageSize: 1 + random.next(below: 8)) { streamed.append(user) }
            #expect(
                streamed.map(\.username) == expected.map(\.username),
                "case \(index), \(sort.name), after record \(anchorIndex)")
        }
    }

    @Test func anOrderedRelationshipIsPagedOnlyWhenSorted() async throws {
        let store = try Store.inMemory(schema: Trips.schema)
        let owner = makeTripsUser("ada", familyName: "Lovelace")
        let trip = makeTrip("Lisbon", owner: owner.id, day: 1)
        try await store.performAndSave { context in
            try context.insert(owner)
            try context.insert(trip)
        }
        await #expect(throws: StoreError.self) {
            try await store.performQuery { try $0.fetch(trip.request { $0.stops }.after(nil)) }
        }
    }
}
