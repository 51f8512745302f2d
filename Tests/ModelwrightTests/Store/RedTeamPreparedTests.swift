import Foundation
import ModelwrightEngineTestSupport
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright

/// Red-team attacks on prepared requests (`PreparedRequest`) and the limit clause. A failing test
/// is a break: each asserts what a user would expect (the rows of the request built with the
/// run's values, or a clear error).
struct RedTeamPreparedTests {
    // MARK: - Support

    /// The IDs a request gives, or the kind of error it throws.
    enum Outcome: Equatable, CustomStringConvertible {
        case rows([UUID])
        case failed

        var description: String {
            switch self {
            case .rows(let ids): "rows(\(ids.count))"
            case .failed: "failed"
            }
        }
    }

    static let failures = Locked(0)
    static let nonEmpty = Locked(0)

    static func outcome<T: Record>(_ body: () throws -> [T]) -> Outcome {
        do {
            let rows = try body().map(\.id.uuid)
            if !rows.isEmpty { nonEmpty.withLock { $0 += 1 } }
            return .rows(rows)
        } catch {
            failures.withLock { $0 += 1 }
            return .failed
        }
    }

    private final class Counter: @unchecked Sendable {
        var value = 0
    }

    static func samples() -> [Sample] {
        var samples: [Sample] = []
        let int16s: [Int16] = [.min, -1, 0, 1, .max]
        let int32s: [Int32] = [.min, -7, 0, 7, .max]
        let int64s: [Int64] = [.min, -(1 << 53) - 1, 0, (1 << 53) + 1, .max]
        let doubles: [Double] = [
            -.infinity, -.greatestFiniteMagnitude, -0.0, .leastNonzeroMagnitude, .greatestFiniteMagnitude,
        ]
        let floats: [Float] = [-.greatestFiniteMagnitude, -1.5, 0, .leastNonzeroMagnitude, .greatestFiniteMagnitude]
        let decimals: [Decimal] = [
            Decimal(string: "-12345678901234567890.5")!, Decimal(string: "-0.001")!, 0, Decimal(string: "0.1")!,
            Decimal(string: "99999999999999999999999")!,
        ]
        let strings = ["", "a", "😀", "O'Brien'; DROP TABLE \"User\"; --", "zz"]
        let dates: [Date] = [
            .distantPast, Date(timeIntervalSinceReferenceDate: -0.5), Date(timeIntervalSinceReferenceDate: 0),
            Date(timeIntervalSinceReferenceDate: 1e9), .distantFuture,
        ]
        let datas: [Data] = [Data(), Data([0]), Data([0, 0]), Data([1]), Data([255, 0])]
        let uuids: [UUID] = [
            UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), UUID(), UUID(), UUID(),
            UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)),
        ]
        for index in 0..<25 {
            var sample = Sample()
            sample.bool = index % 2 == 0
            sample.int16 = int16s[index % 5]
            sample.int32 = int32s[(index / 5) % 5]
            sample.int64 = int64s[(index + 2) % 5]
            sample.int = Int(int64s[(index + 3) % 5])
            sample.double = doubles[index % 5]
            sample.float = floats[(index / 5) % 5]
            sample.decimal = decimals[(index + 1) % 5]
            sample.string = strings[(index + 4) % 5]
            sample.date = dates[index % 5]
            sample.data = datas[(index / 5) % 5]
            sample.uuid = uuids[(index + 1) % 5]
            sample.role = index % 3 == 0 ? .admin : .member
            sample.note = index % 4 == 0 ? nil : strings[index % 5]
            samples.append(sample)
        }
        return samples
    }

    // MARK: - 1. Wrong rows

    /// Every attribute type as a parameter, at its extremes, with each comparison: the prepared
    /// run returns what the request built with the value returns (or both refuse it).
    @Test(arguments: TestEngine.available) func everyAttributeTypeAtItsExtremes(engine: TestEngine) async throws {
        let samples = Self.samples()
        try await engine.withStore(schema: Fixture.schema) { store in
            _ = try await store.performAndSave { try $0.batchInsert(samples) }
            let mismatches = try await store.performQuery { context -> [String] in
                var mismatches: [String] = []
                func ordered<V: ColumnValue & Comparable>(
                    _ name: String, _ field: @escaping @Sendable (Sample.Fields) -> Field<V>, _ values: [V]
                ) {
                    let prepared = PreparedRequest { (low: RequestParameter<V>, high: RequestParameter<V>) in
                        Sample.request()
                            .filter { field($0) >= low && field($0) < high || field($0) == high || field($0) != low }
                            .sorted { [$0.id.ascending] }
                    }
                    let single = PreparedRequest { (value: RequestParameter<V>) in
                        Sample.request().filter { field($0) <= value && !(field($0) > value) }
                            .sorted { [$0.id.ascending] }
                    }
                    for low in values {
                        for high in values {
                            let expected = Self.outcome {
                                try context.fetch(
                                    Sample.request()
                                        .filter {
                                            field($0) >= low && field($0) < high || field($0) == high
                                                || field($0) != low
                                        }
                                        .sorted { [$0.id.ascending] })
                            }
                            let got = Self.outcome { try context.fetch(prepared, low, high) }
                            if got != expected { mismatches.append("\(name) \(low) \(high): \(got) vs \(expected)") }
                        }
                        let expected = Self.outcome {
                            try context.fetch(
                                Sample.request().filter { field($0) <= low && !(field($0) > low) }
                                    .sorted { [$0.id.ascending] })
                        }
                        let got = Self.outcome { try context.fetch(single, low) }
                        if got != expected { mismatches.append("\(name) <= \(low): \(got) vs \(expected)") }
                    }
                }
                func equatable<V: ColumnValue>(
                    _ name: String, _ field: @escaping @Sendable (Sample.Fields) -> Field<V>, _ values: [V]
                ) {
                    let prepared = PreparedRequest { (value: RequestParameter<V>) in
                        Sample.request().filter { field($0) == value || !(field($0) != value) }
                            .sorted { [$0.id.ascending] }
                    }
                    let different = PreparedRequest { (value: RequestParameter<V>) in
                        Sample.request().filter { field($0) != value }.sorted { [$0.id.ascending] }
                    }
                    for value in values {
                        let expected = Self.outcome {
                            try context.fetch(
                                Sample.request().filter { field($0) == value || !(field($0) != value) }
                                    .sorted { [$0.id.ascending] })
                        }
                        let got = Self.outcome { try context.fetch(prepared, value) }
                        if got != expected { mismatches.append("\(name) == \(value): \(got) vs \(expected)") }
                        let expectedDifferent = Self.outcome {
                            try context.fetch(
                                Sample.request().filter { field($0) != value }.sorted { [$0.id.ascending] })
                        }
                        let gotDifferent = Self.outcome { try context.fetch(different, value) }
                        if gotDifferent != expectedDifferent {
                            mismatches.append("\(name) != \(value): \(gotDifferent) vs \(expectedDifferent)")
                        }
                    }
                }
                ordered("int16", { $0.int16 }, [.min, -1, 0, 1, .max])
                ordered("int32", { $0.int32 }, [.min, -7, 0, 8, .max])
                ordered("int64", { $0.int64 }, [.min, -(1 << 53) - 1, (1 << 53), (1 << 53) + 1, .max])
                ordered("int", { $0.int }, [.min, 0, .max])
                ordered(
                    "double", { $0.double },
                    [-.infinity, -.greatestFiniteMagnitude, 0.0, -0.0, .leastNonzeroMagnitude, .infinity])
                ordered(
                    "float", { $0.float },
                    [-.infinity, -.greatestFiniteMagnitude, 0, .leastNonzeroMagnitude, .infinity])
                ordered(
                    "decimal", { $0.decimal },
                    [
                        Decimal(string: "-12345678901234567890.5")!, Decimal(string: "-0.0010")!, 0,
                        Decimal(string: "0.1")!, Decimal(string: "1e30")!,
                    ])
                ordered("string", { $0.string }, ["", "a", "😀", "O'Brien'; DROP TABLE \"User\"; --", "é", "e\u{301}"])
                ordered(
                    "date", { $0.date },
                    [.distantPast, Date(timeIntervalSinceReferenceDate: -0.5), Date(timeIntervalSinceReferenceDate: 0)])
                equatable("role", { $0.role }, [Role.member, Role.admin])
                let byNote = PreparedRequest { (low: RequestParameter<String>, high: RequestParameter<String>) in
                    Sample.request().filter { $0.note >= low && $0.note < high || $0.note != low }
                        .sorted { [$0.id.ascending] }
                }
                for low in ["", "a", "😀", "zzz"] {
                    for high in ["", "a", "😀", "zzz"] {
                        let expected = Self.outcome {
                            try context.fetch(
                                Sample.request().filter { $0.note >= low && $0.note < high || $0.note != low }
                                    .sorted { [$0.id.ascending] })
                        }
                        let got = Self.outcome { try context.fetch(byNote, low, high) }
                        if got != expected { mismatches.append("note \(low) \(high): \(got) vs \(expected)") }
                    }
                }
                equatable("bool", { $0.bool }, [false, true])
                equatable("data", { $0.data }, [Data(), Data([0]), Data([0, 0]), Data([255, 0])])
                equatable("uuid", { $0.uuid }, samples.map(\.uuid) + [UUID()])
                equatable("url", { $0.url }, [URL(string: "https://example.com")!, URL(string: "a:b")!])
                equatable("id", { $0.id }, samples.prefix(3).map(\.id))
                return mismatches
            }
            #expect(mismatches.isEmpty, "\(engine): \(mismatches.count) mismatches: \(mismatches.prefix(12))")
            print(
                "RTPREP \(engine) outcomes: \(Self.failures.withLock { $0 }) failed, \(Self.nonEmpty.withLock { $0 }) non-empty"
            )
            // A String holding NUL: the prepared run and the request built with it agree (rows, or
            // both refuse), and the store still answers afterwards.
            let nul = PreparedRequest { (value: RequestParameter<String>) in
                Sample.request().filter { $0.string < value }.sorted { [$0.id.ascending] }
            }
            let preparedNUL = try? await store.performQuery { try $0.fetch(nul, "a\u{0}b").map(\.id) }
            let adHocNUL = try? await store.performQuery { context in
                try context.fetch(Sample.request().filter { $0.string < "a\u{0}b" }.sorted { [$0.id.ascending] })
                    .map(\.id)
            }
            #expect(preparedNUL == adHocNUL, "\(engine): NUL")
            let (after, afterExpected) = try await store.performQuery { context in
                (
                    try context.fetch(nul, "zz").map(\.id),
                    try context.fetch(Sample.request().filter { $0.string < "zz" }.sorted { [$0.id.ascending] })
                        .map(\.id)
                )
            }
            #expect(after == afterExpected && !after.isEmpty)
        }
    }

    /// Parameters in NOT/OR, to-many quantifiers, through to-one hops, beside fixed `in`,
    /// `between` and string tests, with a sort through a hop, twelve parameters, limits and
    /// offsets (0, huge): each run returns the rows of the request built with its values.
    @Test(arguments: TestEngine.available) func parametersEverywhereInOneRequest(engine: TestEngine) async throws {
        try await engine.withStore(schema: Fixture.schema) { store in
            _ = try await RedTeamCountTests.seed(store)
            typealias P16 = RequestParameter<Int16>
            typealias PS = RequestParameter<String>
            typealias PD = RequestParameter<Decimal>
            typealias PR = RequestParameter<Role>
            @Sendable func build(
                _ r1: Int16, _ r2: Int16, _ r3: Int16, _ org: String, _ title: String, _ budget: Decimal,
                _ prefix: String, _ role: Role, _ name: String, _ r4: Int16, _ budget2: Decimal, _ org2: String,
                limit: Int?, offset: Int
            ) -> FetchRequest<User> {
                var request = User.request()
                    .filter { user in
                        (user.rating >= r1 && user.rating.in([Int16(1), 2, 3, 4]) && !(user.rating == r2))
                            || user.organization.name == org
                            || user.trips.any { $0.title == title && $0.budget > budget && $0.title.hasPrefix("t1") }
                            || (user.trips.all { $0.budget != budget2 } && user.namePrefix == prefix
                                && user.role != role)
                            || user.trips.none { $0.budget < budget } && user.username > name
                                && user.rating.between(Int16(0), Int16(3)) && user.rating != r3
                            || user.organization.name != org2 && user.rating <= r4 && user.rating == r3
                    }
                    .sorted { [$0.organization.name.descending, $0.rating.ascending, $0.username.descending] }
                if let limit { request = request.limit(limit) }
                return request.offset(offset)
            }
            let pages: [(Int?, Int)] = [(nil, 0), (5, 0), (5, 3), (0, 0), (nil, 4), (Int(Int32.max), 2), (3, 1_000)]
            for (limit, offset) in pages {
                let prepared = PreparedRequest {
                    (
                        r1: P16, r2: P16, r3: P16, org: PS, title: PS, budget: PD, prefix: PS, role: PR, name: PS,
                        r4: P16, budget2: PD, org2: PS
                    ) in
                    var request = User.request()
                        .filter { user in
                            (user.rating >= r1 && user.rating.in([Int16(1), 2, 3, 4]) && !(user.rating == r2))
                                || user.organization.name == org
                                || user.trips.any {
                                    $0.title == title && $0.budget > budget && $0.title.hasPrefix("t1")
                                }
                                || (user.trips.all { $0.budget != budget2 } && user.namePrefix == prefix
                                    && user.role != role)
                                || user.trips.none { $0.budget < budget } && user.username > name
                                    && user.rating.between(Int16(0), Int16(3)) && user.rating != r3
                                || user.organization.name != org2 && user.rating <= r4 && user.rating == r3
                        }
                        .sorted { [$0.organization.name.descending, $0.rating.ascending, $0.username.descending] }
                    if let limit { request = request.limit(limit) }
                    return request.offset(offset)
                }
                let mismatches = try await store.performQuery { context -> [String] in
                    var mismatches: [String] = []
                    var draw = SplitMix64(seed: 77, index: offset)
                    var nonEmptyRuns = 0
                    defer {
                        print("RTPREP \(engine) \(String(describing: limit)) \(offset): \(nonEmptyRuns)/40 non-empty")
                    }
                    for run in 0..<40 {
                        func int16() -> Int16 { Int16(draw.next() % 8) - 1 }
                        func text(_ prefix: String, _ count: UInt64) -> String { "\(prefix)\(draw.next() % count)" }
                        let r1 = int16()
                        let r2 = int16()
                        let r3 = int16()
                        let org = text("org", 4)
                        let title = "t\(draw.next() % 24)-\(draw.next() % 3)"
                        let budget = Decimal(Int(draw.next() % 40))
                        let prefix = text("p", 4)
                        let role: Role = draw.next() % 2 == 0 ? .admin : .member
                        let name = String(format: "u%02d", Int(draw.next() % 24))
                        let r4 = int16()
                        let budget2 = Decimal(Int(draw.next() % 40))
                        let org2 = text("org", 4)
                        let expected = try context.fetch(
                            build(
                                r1, r2, r3, org, title, budget, prefix, role, name, r4, budget2, org2, limit: limit,
                                offset: offset)
                        ).map(\.username)
                        let got = try context.fetch(
                            prepared, r1, r2, r3, org, title, budget, prefix, role, name, r4, budget2, org2
                        ).map(\.username)
                        if got != expected { mismatches.append("run \(run): \(got) vs \(expected)") }
                        if !expected.isEmpty { nonEmptyRuns += 1 }
                        let one = try context.fetchOne(
                            prepared, r1, r2, r3, org, title, budget, prefix, role, name, r4, budget2, org2)
                        if one?.username != expected.first {
                            mismatches.append("fetchOne run \(run): \(String(describing: one?.username))")
                        }
                    }
                    return mismatches
                }
                #expect(
                    mismatches.isEmpty,
                    "\(engine) limit \(String(describing: limit)) offset \(offset): \(mismatches.prefix(4))")
            }
        }
    }

    /// A relationship-scoped request (ordered join table, and an inverse column) and an entity
    /// sharing its table with its parent, with parameters.
    @Test(arguments: TestEngine.available) func scopedAndInheritedRequests(engine: TestEngine) async throws {
        try await engine.withStore(schema: Fixture.schema) { store in
            let owners = (0..<3).map { makeUser("owner\($0)", rating: Int16($0)) }
            let trips = (0..<12).map { Trip(title: "trip\($0 % 5)-\($0)", ownerID: owners[$0 % 3].id) }
            let notes = (0..<10).map { Note(title: "n\($0 % 3)", body: "b\($0)") }
            _ = try await store.performAndSave { context in
                _ = try context.batchInsert(owners)
                _ = try context.batchInsert(trips)
                _ = try context.batchInsert(notes)
                for (index, trip) in trips.enumerated().reversed() where index % 2 == 0 {
                    try context.link(owners[index % 3].id, to: trip.id, through: { $0.favourites })
                    try context.link(owners[(index + 1) % 3].id, to: trip.id, through: { $0.favourites })
                }
            }
            let mismatches = try await store.performQuery { context -> [String] in
                var mismatches: [String] = []
                for owner in owners {
                    let favourites = PreparedRequest { (title: RequestParameter<String>) in
                        owner.request { $0.favourites }.filter { $0.title != title }
                    }
                    let owned = PreparedRequest { (title: RequestParameter<String>, limit: RequestParameter<String>) in
                        owner.request { $0.trips }.filter { $0.title >= title && $0.title < limit }.limit(2).offset(1)
                    }
                    for index in 0..<5 {
                        let title = "trip\(index)-\(index)"
                        let expected = try context.fetch(owner.request { $0.favourites }.filter { $0.title != title })
                        let got = try context.fetch(favourites, title)
                        if got.map(\.id) != expected.map(\.id) {
                            mismatches.append("favourites \(owner.username) \(title)")
                        }
                        let expectedOwned = try context.fetch(
                            owner.request { $0.trips }.filter { $0.title >= "trip\(index)" && $0.title < "trip9" }
                                .limit(2).offset(1))
                        let gotOwned = try context.fetch(owned, "trip\(index)", "trip9")
                        if gotOwned.map(\.id) != expectedOwned.map(\.id) {
                            mismatches.append("owned \(owner.username) \(index)")
                        }
                    }
                }
                let byTitle = PreparedRequest { (title: RequestParameter<String>, body: RequestParameter<String>) in
                    Note.request().filter { $0.title == title || $0.body == body }.sorted { [$0.body.ascending] }
                }
                for title in ["n0", "n1", "n2", "n3"] {
                    let expected = try context.fetch(
                        Note.request().filter { $0.title == title || $0.body == "b9" }.sorted { [$0.body.ascending] })
                    let got = try context.fetch(byTitle, title, "b9")
                    if got.map(\.id) != expected.map(\.id) { mismatches.append("notes \(title)") }
                }
                return mismatches
            }
            #expect(mismatches.isEmpty, "\(engine): \(mismatches)")
        }
    }

    /// Record IDs as parameters: a to-one foreign key (optional and not), compared with `==`
    /// and `!=` (true when missing), through a hop, and an abstract parent sharing its table.
    @Test(arguments: TestEngine.available) func recordIDsAndAbstractParents(engine: TestEngine) async throws {
        try await engine.withStore(schema: Fixture.schema) { store in
            let organizations = (0..<3).map { Organization(name: "org\($0)") }
            let users = (0..<12).map { index -> User in
                var user = makeUser("id\(index)", rating: Int16(index % 3))
                user.organizationID = index % 4 == 3 ? nil : organizations[index % 3].id
                return user
            }
            let trips = (0..<20).map { Trip(title: "t\($0)", ownerID: users[$0 % 12].id) }
            let notes = (0..<6).map { Note(title: "item\($0 % 2)", body: "b\($0)") }
            _ = try await store.performAndSave { context in
                _ = try context.batchInsert(organizations)
                _ = try context.batchInsert(users)
                _ = try context.batchInsert(trips)
                _ = try context.batchInsert(notes)
            }
            let mismatches = try await store.performQuery { context -> [String] in
                var mismatches: [String] = []
                let byOrganization = PreparedRequest {
                    (organization: RequestParameter<Organization.ID>, other: RequestParameter<Organization.ID>) in
                    User.request().filter { $0.organizationID == organization || $0.organizationID != other }
                        .sorted { [$0.username.ascending] }
                }
                let byOwner = PreparedRequest {
                    (owner: RequestParameter<User.ID>, organization: RequestParameter<Organization.ID>) in
                    Trip.request().filter { $0.owner.id != owner && $0.owner.organizationID == organization }
                        .sorted { [$0.title.ascending] }
                }
                for organization in organizations {
                    for other in organizations {
                        let expected = try context.fetch(
                            User.request().filter {
                                $0.organizationID == organization.id || $0.organizationID != other.id
                            }
                            .sorted { [$0.username.ascending] })
                        if try context.fetch(byOrganization, organization.id, other.id).map(\.id) != expected.map(\.id)
                        {
                            mismatches.append("organization \(organization.name) \(other.name)")
                        }
                    }
                    for owner in users.prefix(4) {
                        let expected = try context.fetch(
                            Trip.request().filter {
                                $0.owner.id != owner.id && $0.owner.organizationID == organization.id
                            }
                            .sorted { [$0.title.ascending] })
                        if try context.fetch(byOwner, owner.id, organization.id).map(\.id) != expected.map(\.id) {
                            mismatches.append("owner \(owner.username) \(organization.name)")
                        }
                    }
                }
                let items = PreparedRequest { (title: RequestParameter<String>) in
                    Item.request().filter { $0.title == title }.sorted { [$0.id.ascending] }
                }
                for title in ["item0", "item1", "none"] {
                    let expected = Self.outcome {
                        try context.fetch(Item.request().filter { $0.title == title }.sorted { [$0.id.ascending] })
                    }
                    let got = Self.outcome { try context.fetch(items, title) }
                    if got != expected { mismatches.append("items \(title): \(got) vs \(expected)") }
                }
                return mismatches
            }
            #expect(mismatches.isEmpty, "\(engine): \(mismatches)")
        }
    }

    // MARK: - 2. Cache confusion

    /// Users with ratings -2…4, names u00…u29.
    static let users: [User] = (0..<30).map { index in
        var user = makeUser(String(format: "u%02d", index), rating: Int16(index % 7) - 2)
        user.namePrefix = index % 2 == 0 ? "p\(index % 3)" : nil
        user.role = index % 5 == 0 ? .admin : .member
        return user
    }

    /// More prepared requests than a connection keeps (64 statements, 512 argument lists), of the
    /// same shape as each other and as ad-hoc requests run between them, with different fixed
    /// values and limits; then hundreds made and dropped in a loop beside a long-lived one.
    @Test(arguments: TestEngine.available) func manyRequestsOnOneConnection(engine: TestEngine) async throws {
        try await engine.withStore(schema: Fixture.schema) { store in
            _ = try await store.performAndSave { try $0.batchInsert(Self.users) }
            let requests = (0..<90).map { index in
                PreparedRequest { (rating: RequestParameter<Int16>, name: RequestParameter<String>) in
                    User.request().filter {
                        $0.rating >= rating && $0.username != "u\(index % 30)" && $0.username < name
                    }
                    .sorted { [$0.username.ascending] }.limit(index % 3 == 0 ? 3 + index % 4 : 100).offset(index % 2)
                }
            }
            @Sendable func adHoc(_ index: Int, _ rating: Int16, _ name: String) -> FetchRequest<User> {
                User.request().filter { $0.rating >= rating && $0.username != "u\(index % 30)" && $0.username < name }
                    .sorted { [$0.username.ascending] }.limit(index % 3 == 0 ? 3 + index % 4 : 100).offset(index % 2)
            }
            let longLived = PreparedRequest { (name: RequestParameter<String>, rating: RequestParameter<Int16>) in
                User.request().filter { $0.username < name && $0.rating >= rating }.sorted { [$0.username.ascending] }
            }
            let mismatches = try await store.performQuery { context -> [String] in
                var mismatches: [String] = []
                for round in 0..<3 {
                    for (index, request) in requests.enumerated() {
                        let rating = Int16((index + round) % 7) - 2
                        let name = String(format: "u%02d", (index * 7 + round) % 31)
                        let expected = try context.fetch(adHoc(index, rating, name)).map(\.username)
                        let got = try context.fetch(request, rating, name).map(\.username)
                        if got != expected { mismatches.append("round \(round) #\(index): \(got) vs \(expected)") }
                    }
                }
                for index in 0..<700 {
                    let dropped = PreparedRequest { (rating: RequestParameter<Int16>) in
                        User.request().filter { $0.rating == rating && $0.username != "u\(index % 30)" }
                            .sorted { [$0.username.descending] }
                    }
                    let rating = Int16(index % 7) - 2
                    let got = try context.fetch(dropped, rating).map(\.username)
                    let expected = try context.fetch(
                        User.request().filter { $0.rating == rating && $0.username != "u\(index % 30)" }
                            .sorted { [$0.username.descending] }
                    ).map(\.username)
                    if got != expected { mismatches.append("dropped #\(index)") }
                    let name = String(format: "u%02d", index % 31)
                    let long = try context.fetch(longLived, name, rating).map(\.username)
                    let longExpected = try context.fetch(
                        User.request().filter { $0.username < name && $0.rating >= rating }
                            .sorted { [$0.username.ascending] }
                    ).map(\.username)
                    if long != longExpected { mismatches.append("long-lived at #\(index)") }
                }
                return mismatches
            }
            #expect(mismatches.isEmpty, "\(engine): \(mismatches.count): \(mismatches.prefix(5))")
        }
    }

    /// Prepared requests run inside `forEach` of an ad-hoc request of the same shape, and of a
    /// prepared request's ad-hoc twin, in a write after changes.
    @Test(arguments: TestEngine.available) func nestedInsideForEach(engine: TestEngine) async throws {
        try await engine.withStore(schema: Fixture.schema) { store in
            _ = try await store.performAndSave { try $0.batchInsert(Self.users) }
            let byRating = PreparedRequest { (rating: RequestParameter<Int16>) in
                User.request().filter { $0.rating == rating }.sorted { [$0.username.ascending] }
            }
            let mismatches = try await store.performAndSave { context -> [String] in
                try context.insert(makeUser("zz", rating: 4))
                var mismatches: [String] = []
                var outer = 0
                try context.forEach(User.request().filter { $0.rating == 1 }.sorted { [$0.username.ascending] }) {
                    user in
                    outer += 1
                    for rating in Int16(-2)...4 {
                        let got = try context.fetch(byRating, rating).map(\.username)
                        var inner: [String] = []
                        try context.forEach(
                            User.request().filter { $0.rating == rating }.sorted { [$0.username.ascending] }
                        ) { inner.append($0.username) }
                        if got != inner { mismatches.append("\(user.username) \(rating): \(got) vs \(inner)") }
                        if try context.fetchOne(byRating, rating)?.username != inner.first {
                            mismatches.append("fetchOne \(rating)")
                        }
                    }
                }
                if outer != Self.users.filter({ $0.rating == 1 }).count { mismatches.append("outer loop ran \(outer)") }
                return mismatches
            }
            #expect(mismatches.isEmpty, "\(engine): \(mismatches.prefix(5))")
        }
    }

    /// Many tasks run prepared requests at once on a store's readers (a file store on SQLite),
    /// each run checked against the request built with its values; the same requests then run on
    /// a store of the other engine and on a reopened store.
    @Test func concurrentReadersAndStoresOfBothEngines() async throws {
        let prepared = (0..<6).map { index in
            PreparedRequest { (rating: RequestParameter<Int16>, name: RequestParameter<String>) in
                User.request().filter { $0.rating <= rating && ($0.username > name || $0.namePrefix == name) }
                    .sorted {
                        index % 2 == 0 ? [$0.username.ascending] : [$0.rating.descending, $0.username.ascending]
                    }
                    .limit(4 + index).offset(index % 3)
            }
        }
        @Sendable func check(_ store: Store, _ label: String) async throws {
            let failures = try await withThrowingTaskGroup(of: Int.self) { group in
                for task in 0..<16 {
                    group.addTask {
                        try await store.performQuery { context in
                            var failures = 0
                            for run in 0..<60 {
                                let index = (task + run) % prepared.count
                                let rating = Int16((task * 3 + run) % 7) - 2
                                let name = run % 4 == 0 ? "p\(run % 3)" : String(format: "u%02d", (task + run * 5) % 30)
                                let request = User.request()
                                    .filter { $0.rating <= rating && ($0.username > name || $0.namePrefix == name) }
                                    .sorted {
                                        index % 2 == 0
                                            ? [$0.username.ascending] : [$0.rating.descending, $0.username.ascending]
                                    }
                                    .limit(4 + index).offset(index % 3)
                                if try context.fetch(prepared[index], rating, name).map(\.id)
                                    != context.fetch(request).map(\.id)
                                {
                                    failures += 1
                                }
                            }
                            return failures
                        }
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(failures == 0, "\(label)")
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rtprep-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Trips.store")
        do {
            let store = try Store(url: url, schema: Fixture.schema)
            _ = try await store.performAndSave { try $0.batchInsert(Self.users) }
            try await check(store, "file store")
            try store.close()
        }
        for engine in TestEngine.available {
            try await engine.withStore(schema: Fixture.schema) { store in
                _ = try await store.performAndSave { try $0.batchInsert(Self.users) }
                try await check(store, "\(engine)")
            }
        }
        let reopened = try Store(url: url, schema: Fixture.schema)
        defer { try? reopened.close() }
        try await check(reopened, "reopened")
    }

    /// More distinct statements than a PostgreSQL connection keeps (256, then DEALLOCATE ALL) and
    /// than SQLite keeps by shape (64), between runs of a long-lived prepared request; a refused
    /// builder in the same transaction leaves it usable.
    @Test(arguments: TestEngine.available) func manyDistinctStatementsBetweenRuns(engine: TestEngine) async throws {
        try await engine.withStore(schema: Fixture.schema) { store in
            _ = try await store.performAndSave { try $0.batchInsert(Self.users) }
            let longLived = PreparedRequest { (rating: RequestParameter<Int16>, name: RequestParameter<String>) in
                User.request().filter { $0.rating == rating || $0.username == name }.sorted { [$0.username.ascending] }
            }
            let calls = Counter()
            let changing = PreparedRequest { (rating: RequestParameter<Int16>) in
                calls.value += 1
                return calls.value == 1
                    ? User.request().filter { $0.rating == rating }
                    : User.request().filter { $0.rating == rating && $0.username == "x" }
            }
            let mismatches = try await store.performQuery { context -> [String] in
                var mismatches: [String] = []
                do {
                    _ = try context.fetch(changing, 1)
                    mismatches.append("changing builder not refused")
                } catch {}
                for index in 0..<300 {
                    // A distinct SQL text each time: a disjunction of `index % 150 + 1` comparisons,
                    // and a sort that varies.
                    var condition: Condition = .constant(false)
                    for term in 0...(index % 150) {
                        condition = condition || (User.Fields(path: .root).rating == Int16(term % 7) - 2)
                    }
                    var adHoc = User.request()
                    adHoc.condition = condition
                    adHoc = index % 2 == 0 ? adHoc.sorted { [$0.username.ascending] } : adHoc.limit(index % 7 + 1)
                    _ = try context.fetch(adHoc)
                    let rating = Int16(index % 7) - 2
                    let name = String(format: "u%02d", index % 30)
                    let got = try context.fetch(longLived, rating, name).map(\.username)
                    let expected = try context.fetch(
                        User.request().filter { $0.rating == rating || $0.username == name }
                            .sorted { [$0.username.ascending] }
                    ).map(\.username)
                    if got != expected { mismatches.append("#\(index)") }
                }
                return mismatches
            }
            #expect(mismatches.isEmpty, "\(engine): \(mismatches.prefix(5))")
        }
    }

    // MARK: - 3. Refusals and robustness

    /// A builder whose fixed values change from one build to the next must be refused ("it must
    /// build the same one every time"), whatever those values are. Here a builder that reads a
    /// counter (a limit of 0 then 1; a Bool that flips false then true) is taken for a
    /// deterministic one: its fixed value is read as a parameter, and the run binds the user's
    /// rating into the LIMIT, or into the Bool test, silently.
    @Test func aBuilderWhoseFixedValuesChangeLikeStandInsIsRefused() async throws {
        let store = try Store.inMemory(schema: Fixture.schema)
        defer { try? store.close() }
        _ = try await store.performAndSave { try $0.batchInsert(Self.users) }
        let calls = Counter()
        let limited = PreparedRequest { (rating: RequestParameter<Int16>) in
            defer { calls.value += 1 }
            return User.request().filter { $0.rating == rating }.sorted { [$0.username.ascending] }.limit(calls.value)
        }
        let limitedOutcome = await Self.errorOrCount { try await store.performQuery { try $0.fetch(limited, 3).count } }
        #expect(
            limitedOutcome == nil,
            "expected a refusal; got \(limitedOutcome ?? -1) rows (limit bound from the parameter 3)")
        let flips = Counter()
        let flipping = PreparedRequest { (role: RequestParameter<Role>) in
            defer { flips.value += 1 }
            // `$0.username.isNotNil`-like constant test that flips between builds.
            return User.request().filter { $0.role == role && $0.rating.in([Int16(flips.value)]) }
        }
        let flippingOutcome = await Self.errorOrCount {
            try await store.performQuery { try $0.fetch(flipping, .member).count }
        }
        #expect(flippingOutcome == nil, "expected a refusal; got \(flippingOutcome ?? -1) rows")
    }

    /// A parameter that escapes its builder (kept in a variable, or captured by a request built
    /// inside another's builder) compiles wherever a parameter of its type does. Used in another
    /// prepared request it is the same in both builds, so it is taken for a fixed value: its
    /// stand-in (0 or 1), compared silently, instead of a refusal.
    @Test func aParameterFromAnotherRequestIsRefused() async throws {
        let store = try Store.inMemory(schema: Fixture.schema)
        defer { try? store.close() }
        _ = try await store.performAndSave { try $0.batchInsert(Self.users) }
        let leaked = Locked<RequestParameter<Int16>?>(nil)
        let first = PreparedRequest { (rating: RequestParameter<Int16>) in
            leaked.withLock { $0 = rating }
            return User.request().filter { $0.rating == rating }
        }
        let escaped = try #require(leaked.withLock { $0 })
        let second = PreparedRequest { (name: RequestParameter<String>) in
            User.request().filter { $0.rating == escaped && $0.username >= name }.sorted { [$0.username.ascending] }
        }
        let outcome = await Self.errorOrCount {
            try await store.performQuery { context in
                _ = try context.fetch(first, 4)
                return try context.fetch(second, "u").count
            }
        }
        // The parameter's stand-in, rating 1 (the second build's), was compared: rows came back.
        #expect(outcome == nil, "expected a refusal; got \(outcome ?? -1) rows, the users rated 1")
    }

    static func errorOrCount(_ body: () async throws -> Int) async -> Int? {
        do { return try await body() } catch { return nil }
    }

    /// Values a comparison cannot take are refused with a StoreError, on both engines; a
    /// request with no parameters, and one with a parameter it never uses, return their rows.
    @Test(arguments: TestEngine.available) func refusalsAndDegenerateRequests(engine: TestEngine) async throws {
        try await engine.withStore(schema: Fixture.schema) { store in
            var sample = Sample()
            sample.double = 1
            sample.date = Date(timeIntervalSinceReferenceDate: 5)
            _ = try await store.performAndSave { [sample] context in
                _ = try context.batchInsert(Self.users)
                try context.insert(sample)
            }
            let byDouble = PreparedRequest { (value: RequestParameter<Double>) in
                Sample.request().filter { $0.double < value }
            }
            let byFloat = PreparedRequest { (value: RequestParameter<Float>) in
                Sample.request().filter { $0.float != value }
            }
            let byDecimal = PreparedRequest { (value: RequestParameter<Decimal>) in
                Sample.request().filter { $0.decimal >= value }
            }
            let byDate = PreparedRequest { (value: RequestParameter<Date>) in
                Sample.request().filter { $0.date <= value }
            }
            let byNote = PreparedRequest { (value: RequestParameter<String?>) in
                Sample.request().filter { $0.note != value }
            }
            let refusals = try await store.performQuery { context -> [String] in
                var notRefused: [String] = []
                func refused(_ label: String, _ run: () throws -> Int) {
                    do {
                        let count = try run()
                        notRefused.append("\(label): not refused, \(count) rows")
                    } catch is StoreError {
                    } catch {
                        notRefused.append("\(label): refused with \(type(of: error)), not a StoreError: \(error)")
                    }
                }
                refused("Double.nan") { try context.fetch(byDouble, .nan).count }
                refused("Double.signalingNaN") { try context.fetch(byDouble, .signalingNaN).count }
                refused("Float.nan") { try context.fetch(byFloat, .nan).count }
                refused("Decimal.nan") { try context.fetch(byDecimal, .nan).count }
                refused("Date NaN") { try context.fetch(byDate, Date(timeIntervalSinceReferenceDate: .nan)).count }
                refused("nil") { try context.fetch(byNote, nil).count }
                // And the connection still works after the refusals.
                let infinite = try context.fetch(byDouble, .infinity).count
                let negative = try context.fetch(byDouble, -.infinity).count
                if infinite != 1 || negative != 0 { notRefused.append("infinities: \(infinite), \(negative)") }
                return notRefused
            }
            #expect(refusals.isEmpty, "\(engine): \(refusals)")
            let none = PreparedRequest { User.request().sorted { [$0.username.descending] }.limit(3) }
            let unused = PreparedRequest {
                (rating: RequestParameter<Int16>, unused: RequestParameter<String>, also: RequestParameter<Int16>) in
                User.request().filter { $0.rating == also }.sorted { [$0.username.ascending] }
            }
            let (noneNames, unusedNames) = try await store.performQuery { context in
                (try context.fetch(none).map(\.username), try context.fetch(unused, 0, "x", 2).map(\.username))
            }
            #expect(noneNames == Array(Self.users.map(\.username).sorted().reversed().prefix(3)))
            #expect(unusedNames == Self.users.filter { $0.rating == 2 }.map(\.username).sorted())
        }
    }

    // MARK: - 4. Limit clause

    /// fetch, fetchOne, forEach, count, exists and aggregates with limits and offsets (0,
    /// negative, huge) give what SQL's LIMIT/OFFSET gives over the sorted rows: a limit of 0 gives
    /// no rows, so no first record, a count of 0 and no existence.
    @Test(arguments: TestEngine.available) func limitsAndOffsetsEverywhere(engine: TestEngine) async throws {
        try await engine.withStore(schema: Fixture.schema) { store in
            _ = try await store.performAndSave { try $0.batchInsert(Self.users) }
            let all = Self.users.filter { $0.rating >= 0 }.sorted { $0.username < $1.username }
            let pages: [(Int?, Int)] = [
                (0, 0), (0, 3), (1, 0), (5, 0), (5, 7), (nil, 5), (nil, 0), (3, 1_000), (Int.max, 0), (Int.max, 2),
                (nil, -3), (2, -3),
            ]
            let mismatches = try await store.performQuery { context -> [String] in
                var mismatches: [String] = []
                for (limit, offset) in pages {
                    var request = User.request().filter { $0.rating >= 0 }.sorted { [$0.username.ascending] }
                    if let limit { request = request.limit(limit) }
                    request = request.offset(offset)
                    let skipped = Array(all.dropFirst(max(offset, 0)))
                    let expected = Array(skipped.prefix(limit ?? Int.max)).map(\.username)
                    let label = "limit \(String(describing: limit)) offset \(offset)"
                    let fetched = try context.fetch(request).map(\.username)
                    if fetched != expected {
                        mismatches.append("fetch \(label): \(fetched.count) vs \(expected.count)")
                    }
                    let prepared = PreparedRequest { (rating: RequestParameter<Int16>) in
                        var built = User.request().filter { $0.rating >= rating }.sorted { [$0.username.ascending] }
                        if let limit { built = built.limit(limit) }
                        return built.offset(offset)
                    }
                    let preparedNames = try context.fetch(prepared, 0).map(\.username)
                    if preparedNames != expected { mismatches.append("prepared \(label)") }
                    let one = try context.fetchOne(request)?.username
                    if one != expected.first {
                        mismatches.append("fetchOne \(label): \(one ?? "nil") vs \(expected.first ?? "nil")")
                    }
                    let preparedOne = try context.fetchOne(prepared, 0)?.username
                    if preparedOne != expected.first { mismatches.append("prepared fetchOne \(label)") }
                    var each: [String] = []
                    try context.forEach(request) { each.append($0.username) }
                    if each != expected { mismatches.append("forEach \(label)") }
                    let count = try context.count(request)
                    if count != expected.count { mismatches.append("count \(label): \(count) vs \(expected.count)") }
                    let exists = try context.exists(request)
                    if exists != !expected.isEmpty { mismatches.append("exists \(label): \(exists)") }
                    let counted = try context.fetch(request.countAll())
                    if counted != expected.count { mismatches.append("countAll \(label): \(counted)") }
                    let expectedMax = skipped.prefix(limit ?? Int.max).map(\.rating).max()
                    let maximum = try context.fetch(request.max { $0.rating })
                    if maximum != expectedMax { mismatches.append("max \(label): \(String(describing: maximum))") }
                }
                return mismatches
            }
            #expect(mismatches.isEmpty, "\(engine): \(mismatches)")
        }
    }

    /// A negative limit is no limit (SQLite's reading), on every engine, prepared or not: before,
    /// SQLite returned every row and PostgreSQL refused the request.
    @Test(arguments: TestEngine.available) func aNegativeLimitMeansTheSameOnBothEngines(engine: TestEngine)
        async throws
    {
        try await engine.withStore(schema: Fixture.schema) { store in
            _ = try await store.performAndSave { try $0.batchInsert(Self.users) }
            let prepared = PreparedRequest { (rating: RequestParameter<Int16>) in
                User.request().filter { $0.rating >= rating }.limit(-1)
            }
            let adHoc = try await store.performQuery { try $0.fetch(User.request().limit(-1)).count }
            let preparedCount = try await store.performQuery { try $0.fetch(prepared, Int16.min).count }
            let offset = try await store.performQuery { try $0.fetch(User.request().limit(-3).offset(2)).count }
            #expect(adHoc == Self.users.count, "\(engine)")
            #expect(preparedCount == Self.users.count, "\(engine)")
            #expect(offset == Self.users.count - 2, "\(engine)")
        }
    }

    /// fetchOne of a prepared request needs one row: it runs its own statement, the request
    /// limited to one row (none when the request's limit is 0), so PostgreSQL, which returns a
    /// statement's whole result, does not send every matching row to return the first. It returns
    /// what the request built for its values returns, limits and offsets included.
    @Test(arguments: TestEngine.available) func fetchOneOfAPreparedRequestReadsOneRow(engine: TestEngine)
        async throws
    {
        try await engine.withStore(schema: Fixture.schema) { store in
            let many = (0..<2_000).map { Organization(name: String(format: "org%06d", $0)) }
            _ = try await store.performAndSave { try $0.batchInsert(many) }
            for (limit, offset) in [(nil, 0), (0, 0), (1, 0), (5, 3), (-1, 7), (nil, 1_999), (nil, 2_000)]
                as [(Int?, Int)]
            {
                let prepared = PreparedRequest { (name: RequestParameter<String>) in
                    var request = Organization.request().filter { $0.name >= name }.sorted { [$0.name.ascending] }
                    request.fetchLimit = limit
                    return request.offset(offset)
                }
                try await store.performQuery { context in
                    for name in ["org", "org001000", "p"] {
                        var request = Organization.request().filter { $0.name >= name }.sorted { [$0.name.ascending] }
                        request.fetchLimit = limit
                        request = request.offset(offset)
                        let expected = try context.fetchOne(request)?.name
                        #expect(
                            try context.fetchOne(prepared, name)?.name == expected,
                            "\(engine) \(String(describing: limit)) \(offset) \(name)")
                        #expect(try context.fetch(prepared, name).first?.name == expected)
                    }
                    if engine == .sqlite {
                        let statement = try #require(
                            context.connection.keptStatement(for: .prepared(prepared.firstRow.key)) as? SQLiteStatement)
                        #expect(statement.sql.contains(" LIMIT ?"), "\(statement.sql)")
                        statement.reset()
                    }
                }
            }
        }
    }

    /// A search with a limit and an offset gives the slice of the unlimited search's ranked
    /// matches that SQL's LIMIT/OFFSET gives.
    @Test(arguments: TestEngine.available) func searchesWithLimitsAndOffsets(engine: TestEngine) async throws {
        try await engine.withStore(schema: SearchedNote.schema) { store in
            let words = ["apple", "apple pie", "apple apple tart", "banana", "apple crumble apple", "cherry apple"]
            let notes = (0..<30).map { SearchedNote(title: words[$0 % words.count] + " n\($0)", rank: Int64($0 % 4)) }
            _ = try await store.performAndSave { try $0.batchInsert(notes) }
            let mismatches = try await store.performQuery { context -> [String] in
                var mismatches: [String] = []
                let base = SearchedNote.request().filter { $0.rank != 3 }
                let all = try context.search(base, for: SearchQuery(words: "apple"), in: { $0.title }).map(\.record.id)
                if all.isEmpty { mismatches.append("no matches") }
                for (limit, offset) in [(0, 0), (1, 0), (3, 0), (3, 2), (nil, 4), (100, 1), (2, 100)] as [(Int?, Int)] {
                    var request = base
                    if let limit { request = request.limit(limit) }
                    request = request.offset(offset)
                    let got = try context.search(request, for: SearchQuery(words: "apple"), in: { $0.title }).map(
                        \.record.id)
                    let expected = Array(all.dropFirst(offset).prefix(limit ?? Int.max))
                    if got != expected { mismatches.append("limit \(String(describing: limit)) offset \(offset)") }
                }
                return mismatches
            }
            #expect(mismatches.isEmpty, "\(engine): \(mismatches)")
        }
    }
}
