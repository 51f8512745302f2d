import Foundation
import Modelwright
import ModelwrightTestSupport
import Testing
import Trips

/// Keyset pages and record sequences agree with sorting the same random records in Swift: every
/// record once, in the request's order with the ID breaking ties, whatever the ties, missing values
/// and to-one hops of the sort, and whatever is deleted between pages. `MODELWRIGHT_LARGE=1`
/// draws ten times as many cases.
@Suite(.heavy)
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

    /// A drawn case over users: the random source after drawing, the world, its store and a sort.
    struct UserCase {
        var random: SplitMix64
        let world: World
        let store: Store
        let sort: UserSort

        /// Case `index` of the test seeded `seed`: the world first, then its sort, from one source.
        init(seed: UInt64, index: Int) async throws {
            random = SplitMix64(seed: seed, index: index)
            world = World(&random)
            store = try await world.store()
            sort = random.pick(PagingPropertyTests.userSorts)
        }
    }

    /// Every page of `request` in turn, `size` records each, each page after the last one's final
    /// record, until a page comes back short; `between` runs after each full page with the records
    /// fetched so far (the page's last record, the next page's anchor, last).
    static func keysetPages<Target: Record>(
        of request: FetchRequest<Target>, size: Int, in store: Store,
        between: ([Target]) async throws -> Void = { _ in }
    ) async throws -> [Target] {
        var pages: [Target] = []
        var last: Target?
        while true {
            let page = try await store.performQuery { [last] in
                try $0.fetch(request.after(last).limit(size))
            }
            pages += page
            guard page.count == size, let end = page.last else { break }
            last = end
            try await between(pages)
        }
        return pages
    }

    /// What `store.records(request, pageSize:)` delivers, in the order it delivers it.
    static func streamed<Target: Record>(
        _ request: FetchRequest<Target>, pageSize: Int, in store: Store
    ) async throws -> [Target] {
        var streamed: [Target] = []
        for try await record in store.records(request, pageSize: pageSize) { streamed.append(record) }
        return streamed
    }

    @Test func keysetPagesVisitEveryRecordOnceInOrder() async throws {
        for index in 0..<Self.cases {
            var drawn = try await UserCase(seed: 41, index: index)
            let (world, sort) = (drawn.world, drawn.sort)
            let size = 1 + drawn.random.next(below: 7)
            let pages = try await Self.keysetPages(of: User.request().sorted(sort.keys), size: size, in: drawn.store)
            let expected = world.sorted(by: sort, among: world.users)
            #expect(pages.map(\.username) == expected.map(\.username), "case \(index), \(sort.name), pages of \(size)")
        }
    }

    @Test func deletingRecordsBetweenPagesNeitherSkipsNorRepeats() async throws {
        for index in 0..<Self.cases {
            var drawn = try await UserCase(seed: 42, index: index)
            let (world, sort) = (drawn.world, drawn.sort)
            let size = 1 + drawn.random.next(below: 5)
            var deleted: Set<User.ID> = []
            let request = User.request().sorted(sort.keys)
            let seen = try await Self.keysetPages(of: request, size: size, in: drawn.store) { seen in
                // Delete the page's last record (the anchor) or a random one already seen.
                let victim = drawn.random.chance(0.5) ? seen[seen.count - 1] : drawn.random.pick(seen)
                if !deleted.contains(victim.id) {
                    deleted.insert(victim.id)
                    try await drawn.store.performAndSave { try $0.delete(victim) }
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
            let pages = try await Self.keysetPages(of: request, size: size, in: store)
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
            var drawn = try await UserCase(seed: 44, index: index)
            let (world, sort) = (drawn.world, drawn.sort)
            var request = User.request().sorted(sort.keys)
            var expected = world.sorted(by: sort, among: world.users)
            if drawn.random.chance(0.3) {
                let offset = drawn.random.next(below: 5)
                request = request.offset(offset)
                expected = Array(expected.dropFirst(offset))
            }
            if drawn.random.chance(0.3) {
                let limit = drawn.random.next(below: 20)
                request = request.limit(limit)
                expected = Array(expected.prefix(limit))
            }
            let streamed = try await Self.streamed(request, pageSize: 1 + drawn.random.next(below: 8), in: drawn.store)
            #expect(streamed.map(\.username) == expected.map(\.username), "case \(index), \(sort.name)")
        }
    }

    @Test func aRecordSequenceStartsAfterTheRequestsOwnAnchor() async throws {
        for index in 0..<Self.cases {
            var drawn = try await UserCase(seed: 45, index: index)
            let (world, sort) = (drawn.world, drawn.sort)
            let sorted = world.sorted(by: sort, among: world.users)
            guard !sorted.isEmpty else { continue }
            let anchorIndex = drawn.random.next(below: sorted.count)
            let request = User.request().sorted(sort.keys).after(sorted[anchorIndex])
            let expected = Array(sorted.dropFirst(anchorIndex + 1))
            let streamed = try await Self.streamed(request, pageSize: 1 + drawn.random.next(below: 8), in: drawn.store)
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
