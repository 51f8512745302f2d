import Foundation
import ModelwrightEngineTestSupport
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright

/// Red-team attacks on `count(_:_:)` and `exists(_:_:)` of prepared requests, their interleaving
/// with `fetch`/`fetchOne`, and their refusals. A failing test is a break: each asserts what a
/// user would expect (what `count(_:)`/`exists(_:)` of the request built for the same values
/// returns, or a clear `StoreError`).
struct RedTeamCountTests {
    // MARK: - Support

    /// The count a body returns, or `nil` when it throws a StoreError; another error is reported.
    enum Answer: Equatable, CustomStringConvertible {
        case value(Int)
        case storeError
        case otherError(String)

        var description: String {
            switch self {
            case .value(let value): "\(value)"
            case .storeError: "StoreError"
            case .otherError(let text): "other error: \(text)"
            }
        }
    }

    static func answer(_ body: () throws -> Int) -> Answer {
        do { return .value(try body()) } catch is StoreError { return .storeError } catch {
            return .otherError("\(type(of: error)): \(error)")
        }
    }

    static func answerWhether(_ body: () throws -> Bool) -> Answer {
        answer { try body() ? 1 : 0 }
    }

    /// Organizations, users (in organizations or not, with or without a prefix) and trips
    /// (with or without a budget): the data of the requests below and of `RedTeamPreparedTests`.
    static func seed(_ store: Store) async throws -> (organizations: [Organization], users: [User], trips: [Trip]) {
        let organizations = (0..<3).map { Organization(name: "org\($0)") }
        var users: [User] = []
        var trips: [Trip] = []
        for index in 0..<24 {
            var user = makeUser(String(format: "u%02d", index), rating: Int16(index % 6) - 1)
            user.namePrefix = index % 3 == 0 ? nil : "p\(index % 4)"
            user.role = index % 4 == 0 ? .admin : .member
            user.organizationID = index % 5 == 0 ? nil : organizations[index % 3].id
            users.append(user)
            for tripIndex in 0..<(index % 4) {
                trips.append(
                    Trip(
                        title: "t\(index)-\(tripIndex)", budget: tripIndex == 0 ? nil : Decimal(index * tripIndex),
                        ownerID: user.id))
            }
        }
        _ = try await store.performAndSave { [users, trips] context in
            _ = try context.batchInsert(organizations)
            _ = try context.batchInsert(users)
            _ = try context.batchInsert(trips)
        }
        return (organizations, users, trips)
    }

    static let pages: [(Int?, Int)] = [
        (nil, 0), (0, 0), (0, 5), (1, 0), (3, 2), (nil, -2), (-1, 3), (-5, -5), (Int.min, 0), (Int.max, 1),
        (Int(Int32.max) + 1, 0), (2, 1_000), (nil, Int.max),
    ]

    // MARK: - 1. count and exists equal the built request's

    /// count/exists of a prepared request with to-many quantifiers (any/all/none), a to-one hop
    /// followed by a to-many one, an optional field's `!=` (true when missing), a sort across a
    /// to-one relationship, and every kind of limit/offset (0, negative, Int.min, huge).
    @Test(arguments: TestEngine.available) func countAndExistsAcrossPagesQuantifiersAndHops(engine: TestEngine)
        async throws
    {
        try await engine.withStore(schema: Fixture.schema) { store in
            _ = try await Self.seed(store)
            for kind in 0..<3 {
                for (limit, offset) in Self.pages {
                    @Sendable func build(_ rating: Int16, _ org: String, _ budget: Decimal, _ prefix: String)
                        -> FetchRequest<User>
                    {
                        var request = User.request()
                            .filter { user in
                                let trips: Condition =
                                    switch kind {
                                    case 0: user.trips.any { $0.budget > budget }
                                    case 1: user.trips.all { $0.budget >= budget }
                                    default: user.trips.none { $0.budget < budget }
                                    }
                                return (user.rating >= rating && trips) || user.organization.name == org
                                    || user.organization.members.any { $0.rating == rating && $0.namePrefix != prefix }
                            }
                            .sorted { [$0.organization.name.descending, $0.username.ascending] }
                        if let limit { request = request.limit(limit) }
                        return request.offset(offset)
                    }
                    let prepared = PreparedRequest {
                        (
                            rating: RequestParameter<Int16>, org: RequestParameter<String>,
                            budget: RequestParameter<Decimal>, prefix: RequestParameter<String>
                        ) in
                        var request = User.request()
                            .filter { user in
                                let trips: Condition =
                                    switch kind {
                                    case 0: user.trips.any { $0.budget > budget }
                                    case 1: user.trips.all { $0.budget >= budget }
                                    default: user.trips.none { $0.budget < budget }
                                    }
                                return (user.rating >= rating && trips) || user.organization.name == org
                                    || user.organization.members.any { $0.rating == rating && $0.namePrefix != prefix }
                            }
                            .sorted { [$0.organization.name.descending, $0.username.ascending] }
                        if let limit { request = request.limit(limit) }
                        return request.offset(offset)
                    }
                    let mismatches = try await store.performQuery { context -> [String] in
                        var mismatches: [String] = []
                        for run in 0..<12 {
                            let rating = Int16(run % 6) - 1
                            let org = "org\(run % 4)"
                            let budget = Decimal(run * 3)
                            let prefix = "p\(run % 5)"
                            let built = build(rating, org, budget, prefix)
                            let expectedCount = Self.answer { try context.count(built) }
                            let expectedExists = Self.answerWhether { try context.exists(built) }
                            let fetched = Self.answer { try context.fetch(built).count }
                            let count = Self.answer { try context.count(prepared, rating, org, budget, prefix) }
                            let exists = Self.answerWhether {
                                try context.exists(prepared, rating, org, budget, prefix)
                            }
                            let label = "kind \(kind) limit \(String(describing: limit)) offset \(offset) run \(run)"
                            if count != expectedCount {
                                mismatches.append("\(label): count \(count) vs \(expectedCount)")
                            }
                            if exists != expectedExists {
                                mismatches.append("\(label): exists \(exists) vs \(expectedExists)")
                            }
                            if expectedCount != fetched {
                                mismatches.append("\(label): ad-hoc count \(expectedCount) vs fetched \(fetched)")
                            }
                        }
                        return mismatches
                    }
                    #expect(mismatches.isEmpty, "\(engine): \(mismatches.prefix(4))")
                }
            }
            // The data give counts other than 0 and everything.
            let spread = try await store.performQuery { context in
                Set(
                    try (Int16(-1)...4).map { rating in try context.count(User.request().filter { $0.rating >= rating })
                    })
            }
            #expect(spread.count > 3)
        }
    }

    /// count and exists of long-lived prepared requests between hundreds of distinct statements
    /// (more than PostgreSQL keeps before DEALLOCATE ALL, more than SQLite keeps), and after a
    /// refused run and a failed statement in the same transaction.
    @Test(arguments: TestEngine.available) func countAndExistsSurviveStatementChurn(engine: TestEngine)
        async throws
    {
        try await engine.withStore(schema: Fixture.schema) { store in
            _ = try await store.performAndSave { try $0.batchInsert(RedTeamPreparedTests.users) }
            let prepared = PreparedRequest { (rating: RequestParameter<Int16>, name: RequestParameter<String>) in
                User.request().filter { $0.rating == rating || $0.username < name }.sorted { [$0.username.ascending] }
                    .limit(12).offset(2)
            }
            @Sendable func built(_ rating: Int16, _ name: String) -> FetchRequest<User> {
                User.request().filter { $0.rating == rating || $0.username < name }.sorted { [$0.username.ascending] }
                    .limit(12).offset(2)
            }
            let byDouble = PreparedRequest { (value: RequestParameter<Double>) in
                Sample.request().filter { $0.double < value }
            }
            let mismatches = try await store.performQuery { context -> [String] in
                var mismatches: [String] = []
                for index in 0..<320 {
                    var condition: Condition = .constant(false)
                    for term in 0...(index % 160) {
                        condition = condition || (User.Fields(path: .root).rating == Int16(term % 7) - 2)
                    }
                    var adHoc = User.request()
                    adHoc.condition = condition
                    switch index % 3 {
                    case 0: _ = try context.count(adHoc)
                    case 1: _ = try context.exists(adHoc.limit(index % 5))
                    default: _ = try context.fetch(adHoc.limit(index % 7 + 1))
                    }
                    if index % 50 == 7 { _ = try? context.count(byDouble, .nan) }
                    let rating = Int16(index % 7) - 2
                    let name = String(format: "u%02d", index % 31)
                    let count = try context.count(prepared, rating, name)
                    let exists = try context.exists(prepared, rating, name)
                    let expected = try context.count(built(rating, name))
                    if count != expected || exists != (expected > 0) {
                        mismatches.append("#\(index): \(count)/\(exists) vs \(expected)")
                    }
                    if index % 40 == 0, try context.fetch(prepared, rating, name).count != expected {
                        mismatches.append("#\(index): fetch")
                    }
                }
                return mismatches
            }
            #expect(mismatches.isEmpty, "\(engine): \(mismatches.prefix(5))")
        }
    }

    /// count/exists with a parameter of every stored type (and an optional field), each
    /// comparison, at extreme values, including strings with NUL and emoji, URLs and Data.
    @Test(arguments: TestEngine.available) func countAndExistsForEveryStoredType(engine: TestEngine) async throws {
        var samples = RedTeamPreparedTests.samples()
        // PostgreSQL's text refuses NUL (documented): there a NUL only appears as a parameter.
        let texts = engine == .sqlite ? ["a\u{0}b", "a", "a\u{0}", "👩‍👩‍👧", "\u{0}"] : ["a", "👩‍👩‍👧", "é"]
        for (index, text) in texts.enumerated() {
            var sample = Sample()
            sample.string = text
            sample.note = text
            sample.url = URL(string: "https://example.com/\(index)?q=\(index % 2)")!
            sample.data = Data(text.utf8)
            samples.append(sample)
        }
        try await engine.withStore(schema: Fixture.schema) { [samples] store in
            _ = try await store.performAndSave { try $0.batchInsert(samples) }
            let mismatches = try await store.performQuery { context -> [String] in
                var mismatches: [String] = []
                func compare(
                    _ label: String, _ built: FetchRequest<Sample>, _ count: () throws -> Int,
                    _ exists: () throws -> Bool
                ) {
                    let expectedCount = Self.answer { try context.count(built) }
                    let expectedExists = Self.answerWhether { try context.exists(built) }
                    let gotCount = Self.answer(count)
                    let gotExists = Self.answerWhether(exists)
                    if gotCount != expectedCount {
                        mismatches.append("\(label) count: \(gotCount) vs \(expectedCount)")
                    }
                    if gotExists != expectedExists {
                        mismatches.append("\(label) exists: \(gotExists) vs \(expectedExists)")
                    }
                }
                func ordered<V: ColumnValue & Comparable>(
                    _ name: String, _ field: @escaping @Sendable (Sample.Fields) -> Field<V>, _ values: [V]
                ) {
                    let below = PreparedRequest { (value: RequestParameter<V>) in
                        Sample.request().filter { field($0) < value }.limit(7)
                    }
                    let atLeast = PreparedRequest { (value: RequestParameter<V>) in
                        Sample.request().filter { field($0) >= value }.offset(1)
                    }
                    let between = PreparedRequest { (low: RequestParameter<V>, high: RequestParameter<V>) in
                        Sample.request().filter { field($0) > low && field($0) <= high }
                    }
                    for value in values {
                        compare(
                            "\(name) < \(value)", Sample.request().filter { field($0) < value }.limit(7),
                            { try context.count(below, value) }, { try context.exists(below, value) })
                        compare(
                            "\(name) >= \(value)", Sample.request().filter { field($0) >= value }.offset(1),
                            { try context.count(atLeast, value) }, { try context.exists(atLeast, value) })
                        for high in values {
                            compare(
                                "\(name) in (\(value), \(high)]",
                                Sample.request().filter { field($0) > value && field($0) <= high },
                                { try context.count(between, value, high) },
                                { try context.exists(between, value, high) }
                            )
                        }
                    }
                }
                func equatable<V: ColumnValue>(
                    _ name: String, _ field: @escaping @Sendable (Sample.Fields) -> Field<V>, _ values: [V]
                ) {
                    let equal = PreparedRequest { (value: RequestParameter<V>) in
                        Sample.request().filter { field($0) == value }
                    }
                    let notEqual = PreparedRequest { (value: RequestParameter<V>) in
                        Sample.request().filter { field($0) != value }.limit(3).offset(2)
                    }
                    for value in values {
                        compare(
                            "\(name) == \(value)", Sample.request().filter { field($0) == value },
                            { try context.count(equal, value) }, { try context.exists(equal, value) })
                        compare(
                            "\(name) != \(value)", Sample.request().filter { field($0) != value }.limit(3).offset(2),
                            { try context.count(notEqual, value) }, { try context.exists(notEqual, value) })
                    }
                }
                let values = samples
                ordered("int16", { $0.int16 }, values.map(\.int16) + [.min, .max])
                ordered("int32", { $0.int32 }, values.map(\.int32) + [.min, .max])
                ordered("int64", { $0.int64 }, values.map(\.int64) + [.min, .max])
                ordered("int", { $0.int }, values.map(\.int) + [.min, .max])
                ordered("double", { $0.double }, values.map(\.double) + [.infinity, 0.1 + 0.2])
                ordered("float", { $0.float }, values.map(\.float) + [.infinity, 0.1])
                ordered("decimal", { $0.decimal }, values.map(\.decimal) + [Decimal(string: "0.30000000000000004")!])
                ordered("date", { $0.date }, values.map(\.date) + [Date(timeIntervalSince1970: 0)])
                ordered("string", { $0.string }, Array(Set(values.map(\.string))) + ["a\u{0}c", ""])
                equatable("data", { $0.data }, Array(Set(values.map(\.data))) + [Data([0, 1, 2])])
                equatable("uuid", { $0.uuid }, Array(Set(values.map(\.uuid))))
                equatable("url", { $0.url }, Array(Set(values.map(\.url))) + [URL(string: "file:///a%00b")!])
                equatable("bool", { $0.bool }, [false, true])
                equatable("role", { $0.role }, [.admin, .member])
                // An optional field compared with a parameter of its wrapped type.
                let noteBelow = PreparedRequest { (value: RequestParameter<String>) in
                    Sample.request().filter { $0.note <= value || $0.note != value }.limit(9)
                }
                for value in Set(values.compactMap(\.note)) {
                    compare(
                        "note <= or != \(value.debugDescription)",
                        Sample.request().filter { $0.note <= value || $0.note != value }.limit(9),
                        { try context.count(noteBelow, value) }, { try context.exists(noteBelow, value) })
                }
                return mismatches
            }
            #expect(mismatches.isEmpty, "\(engine): \(mismatches.count): \(mismatches.prefix(6))")
        }
    }

    /// count/exists of scoped requests (an ordered join table, an ordered to-many with an inverse,
    /// an unordered many-to-many), with limits and offsets, and of an abstract parent and its
    /// subentity sharing a table; a parameter used three times.
    @Test(arguments: TestEngine.available) func countAndExistsOfScopedAndInheritedRequests(engine: TestEngine)
        async throws
    {
        try await engine.withStore(schema: Fixture.schema) { store in
            let owners = (0..<3).map { makeUser("owner\($0)", rating: Int16($0)) }
            let trips = (0..<12).map { Trip(title: "trip\($0 % 5)-\($0)", ownerID: owners[$0 % 3].id) }
            let stops = (0..<20).map { Stop(name: "s\($0 % 6)", tripID: trips[$0 % 4].id) }
            let tags = (0..<3).map { Tag(name: "tag\($0)") }
            let notes = (0..<10).map { Note(title: "n\($0 % 3)", body: "b\($0)") }
            _ = try await store.performAndSave { context in
                _ = try context.batchInsert(owners)
                _ = try context.batchInsert(trips)
                _ = try context.batchInsert(stops)
                _ = try context.batchInsert(tags)
                _ = try context.batchInsert(notes)
                for (index, trip) in trips.enumerated().reversed() where index % 2 == 0 {
                    try context.link(owners[index % 3].id, to: trip.id, through: { $0.favourites })
                    try context.link(owners[(index + 1) % 3].id, to: trip.id, through: { $0.favourites })
                }
                for (index, trip) in trips.enumerated() {
                    try context.link(tags[index % 3].id, to: trip.id, through: { $0.trips })
                    if index % 2 == 1 { try context.link(tags[(index + 1) % 3].id, to: trip.id, through: { $0.trips }) }
                }
            }
            let mismatches = try await store.performQuery { context -> [String] in
                var mismatches: [String] = []
                func compare(_ label: String, _ built: FetchRequest<some Record>, _ count: Int, _ exists: Bool) {
                    let expectedCount = Self.answer { try context.count(built) }
                    let expectedExists = Self.answerWhether { try context.exists(built) }
                    if expectedCount != .value(count) || expectedExists != .value(exists ? 1 : 0) {
                        mismatches.append(
                            "\(label): \(count)/\(exists) vs \(expectedCount)/\(expectedExists)")
                    }
                }
                for (limit, offset) in Self.pages {
                    func paged<T: Record>(_ request: FetchRequest<T>) -> FetchRequest<T> {
                        var request = request
                        if let limit { request = request.limit(limit) }
                        return request.offset(offset)
                    }
                    let page = "limit \(String(describing: limit)) offset \(offset)"
                    for owner in owners {
                        let favourites = PreparedRequest { (title: RequestParameter<String>) in
                            paged(owner.request { $0.favourites }.filter { $0.title != title || $0.title > title })
                        }
                        let owned = PreparedRequest { (title: RequestParameter<String>) in
                            paged(owner.request { $0.trips }.filter { $0.title >= title })
                        }
                        for title in ["trip0-0", "trip2-2", "trip4-4", "z"] {
                            compare(
                                "favourites \(owner.username) \(title) \(page)",
                                paged(owner.request { $0.favourites }.filter { $0.title != title || $0.title > title }),
                                try context.count(favourites, title), try context.exists(favourites, title))
                            compare(
                                "owned \(owner.username) \(title) \(page)",
                                paged(owner.request { $0.trips }.filter { $0.title >= title }),
                                try context.count(owned, title), try context.exists(owned, title))
                        }
                    }
                    for trip in trips.prefix(4) {
                        let tripStops = PreparedRequest { (name: RequestParameter<String>) in
                            paged(trip.request { $0.stops }.filter { $0.name != name })
                        }
                        for name in ["s0", "s3", "x"] {
                            compare(
                                "stops \(trip.title) \(name) \(page)",
                                paged(trip.request { $0.stops }.filter { $0.name != name }),
                                try context.count(tripStops, name), try context.exists(tripStops, name))
                        }
                    }
                    for tag in tags {
                        let tagged = PreparedRequest { (title: RequestParameter<String>) in
                            paged(
                                tag.request { $0.trips }
                                    .filter { $0.title < title && $0.owner.username != title && $0.title != title }
                            )
                        }
                        for title in ["trip1", "trip3-3", "zz"] {
                            compare(
                                "tag \(tag.name) \(title) \(page)",
                                paged(
                                    tag.request { $0.trips }
                                        .filter { $0.title < title && $0.owner.username != title && $0.title != title }),
                                try context.count(tagged, title), try context.exists(tagged, title))
                        }
                    }
                    let items = PreparedRequest { (title: RequestParameter<String>) in
                        paged(Item.request().filter { $0.title == title }.sorted { [$0.title.ascending] })
                    }
                    let notesRequest = PreparedRequest { (title: RequestParameter<String>) in
                        paged(Note.request().filter { $0.title != title && $0.body > title })
                    }
                    for title in ["n0", "n1", "n3", "b"] {
                        let expectedItems = paged(Item.request().filter { $0.title == title })
                        let itemCount = Self.answer { try context.count(items, title) }
                        let itemExists = Self.answerWhether { try context.exists(items, title) }
                        let expectedItemCount = Self.answer { try context.count(expectedItems) }
                        let expectedItemExists = Self.answerWhether { try context.exists(expectedItems) }
                        if itemCount != expectedItemCount || itemExists != expectedItemExists {
                            mismatches.append(
                                "items \(title) \(page): \(itemCount)/\(itemExists) vs \(expectedItemCount)/\(expectedItemExists)"
                            )
                        }
                        compare(
                            "notes \(title) \(page)",
                            paged(Note.request().filter { $0.title != title && $0.body > title }),
                            try context.count(notesRequest, title), try context.exists(notesRequest, title))
                    }
                }
                return mismatches
            }
            #expect(mismatches.isEmpty, "\(engine): \(mismatches.count): \(mismatches.prefix(6))")
        }
    }

    /// count/exists in a write transaction after its own inserts, updates, deletes, batch
    /// updates, links and a rolled-back savepoint; then in the next transaction.
    @Test(arguments: TestEngine.available) func countAndExistsAfterWritesInTheSameTransaction(engine: TestEngine)
        async throws
    {
        try await engine.withStore(schema: Fixture.schema) { store in
            let seeded = try await Self.seed(store)
            let prepared = PreparedRequest { (rating: RequestParameter<Int16>, title: RequestParameter<String>) in
                User.request().filter { $0.rating >= rating || $0.trips.any { $0.title == title } }
                    .sorted { [$0.organization.name.ascending] }.limit(30).offset(1)
            }
            @Sendable func built(_ rating: Int16, _ title: String) -> FetchRequest<User> {
                User.request().filter { $0.rating >= rating || $0.trips.any { $0.title == title } }
                    .sorted { [$0.organization.name.ascending] }.limit(30).offset(1)
            }
            let mismatches = try await store.performAndSave { context -> [String] in
                var mismatches: [String] = []
                func check(_ step: String) throws {
                    for rating in Int16(-1)...5 {
                        let title = "t\(rating + 10)-1"
                        let count = try context.count(prepared, rating, title)
                        let exists = try context.exists(prepared, rating, title)
                        let fetched = try context.fetch(prepared, rating, title).count
                        let expected = try context.count(built(rating, title))
                        let expectedExists = try context.exists(built(rating, title))
                        if count != expected || fetched != expected || exists != expectedExists {
                            mismatches.append(
                                "\(step) rating \(rating): count \(count) fetched \(fetched) exists \(exists) vs \(expected)/\(expectedExists)"
                            )
                        }
                    }
                }
                try check("start")
                var added = makeUser("zz", rating: 5)
                try context.insert(added)
                try check("insert")
                added.rating = -1
                try context.update(added)
                try check("update")
                try context.insert(Trip(title: "t9-1", ownerID: added.id))
                try check("trip insert")
                _ = try context.batchUpdate(User.request().filter { $0.rating == 2 }) { [try $0.rating.set(to: 4)] }
                try check("batch update")
                try context.delete(seeded.users[5])
                _ = try context.batchDelete(Trip.request().filter { $0.title == "t11-1" })
                try check("deletes")
                return mismatches
            }
            #expect(mismatches.isEmpty, "\(engine): \(mismatches.prefix(5))")
            let after = try await store.performQuery { context in
                (try context.count(prepared, 4, "t9-1"), try context.count(built(4, "t9-1")))
            }
            #expect(after.0 == after.1, "\(engine): after the transaction \(after.0) vs \(after.1)")
        }
    }

    // MARK: - 2. Interleavings

    /// One prepared request run with fetch, fetchOne, count and exists in turn, inside forEach
    /// loops (of its built twin, and of another request), across transactions and stores of both
    /// engines (in both orders), each answer checked against the built request's.
    @Test func interleavedRunsAcrossLoopsTransactionsAndEngines() async throws {
        let prepared = PreparedRequest { (rating: RequestParameter<Int16>, name: RequestParameter<String>) in
            User.request().filter { $0.rating <= rating && $0.username != name }.sorted { [$0.username.ascending] }
                .limit(6).offset(1)
        }
        @Sendable func built(_ rating: Int16, _ name: String) -> FetchRequest<User> {
            User.request().filter { $0.rating <= rating && $0.username != name }.sorted { [$0.username.ascending] }
                .limit(6).offset(1)
        }
        @Sendable func check(_ context: ReadContext, _ rating: Int16, _ name: String, _ label: String) throws
            -> [String]
        {
            var mismatches: [String] = []
            let request = built(rating, name)
            let expected = try context.fetch(request).map(\.username)
            for order in 0..<4 {
                for step in 0..<4 {
                    switch (order + step) % 4 {
                    case 0:
                        let got = try context.fetch(prepared, rating, name).map(\.username)
                        if got != expected { mismatches.append("\(label) fetch \(got) vs \(expected)") }
                    case 1:
                        let got = try context.fetchOne(prepared, rating, name)?.username
                        if got != expected.first { mismatches.append("\(label) fetchOne \(String(describing: got))") }
                    case 2:
                        let got = try context.count(prepared, rating, name)
                        if got != expected.count { mismatches.append("\(label) count \(got) vs \(expected.count)") }
                    default:
                        let got = try context.exists(prepared, rating, name)
                        if got == expected.isEmpty { mismatches.append("\(label) exists \(got)") }
                    }
                }
            }
            return mismatches
        }
        var stores: [(String, Store)] = []
        for engine in TestEngine.available + TestEngine.available.reversed() {
            try await engine.withStore(schema: Fixture.schema) { store in
                _ = try await store.performAndSave { try $0.batchInsert(RedTeamPreparedTests.users) }
                let mismatches = try await store.performQuery { context -> [String] in
                    var mismatches: [String] = []
                    // Inside a loop over the built twin's rows (a statement still stepping).
                    try context.forEach(built(2, "u03")) { user in
                        mismatches += try check(context, 2, "u03", "\(engine) in twin loop at \(user.username)")
                        mismatches += try check(context, user.rating, user.username, "\(engine) own row")
                    }
                    try context.forEach(User.request().sorted { [$0.username.descending] }) { user in
                        let count = try context.count(prepared, user.rating, user.username)
                        let expected = try context.count(built(user.rating, user.username))
                        if count != expected {
                            mismatches.append("\(engine) outer \(user.username): \(count) vs \(expected)")
                        }
                    }
                    return mismatches
                }
                #expect(mismatches.isEmpty, "\(mismatches.prefix(4))")
                for transaction in 0..<3 {
                    let rating = Int16(transaction) - 1
                    let more = try await store.performAndSave { context -> [String] in
                        let before = try check(context, rating, "u0\(transaction)", "\(engine) write \(transaction)")
                        try context.insert(makeUser("w\(transaction)", rating: rating))
                        return before + (try check(context, rating, "u0\(transaction)", "\(engine) after insert"))
                    }
                    #expect(more.isEmpty, "\(more.prefix(4))")
                }
                stores.append(("\(engine)", store))
            }
        }
        #expect(stores.count == 2 * TestEngine.available.count)
    }

    /// Many readers count and test existence at once on a file store (SQLite) and on the test
    /// engine's store while another store on the same file (or the same store) writes: within a
    /// read, count, exists and fetch of the prepared request and of the built one agree.
    @Test(arguments: TestEngine.available) func concurrentCountsWhileAnotherStoreWrites(engine: TestEngine)
        async throws
    {
        let prepared = (0..<4).map { index in
            PreparedRequest { (rating: RequestParameter<Int16>) in
                User.request().filter { $0.rating >= rating && $0.username != "u\(index)" }
                    .sorted { [$0.username.ascending] }.limit(index % 2 == 0 ? 50 : 8).offset(index)
            }
        }
        @Sendable func built(_ index: Int, _ rating: Int16) -> FetchRequest<User> {
            User.request().filter { $0.rating >= rating && $0.username != "u\(index)" }
                .sorted { [$0.username.ascending] }.limit(index % 2 == 0 ? 50 : 8).offset(index)
        }
        @Sendable func hammer(reader: Store, writer: Store, label: String) async throws {
            let failures = try await withThrowingTaskGroup(of: [String].self) { group in
                group.addTask {
                    for round in 0..<40 {
                        _ = try await writer.performAndSave { context in
                            try context.insert(makeUser("\(label)-w\(round)", rating: Int16(round % 7) - 2))
                            if round % 3 == 0 {
                                _ = try context.batchDelete(
                                    User.request().filter { $0.username == "\(label)-w\(round - 3)" })
                            }
                        }
                    }
                    return []
                }
                for task in 0..<8 {
                    group.addTask {
                        var failures: [String] = []
                        for run in 0..<25 {
                            let got = try await reader.performQuery { context -> String? in
                                let index = (task + run) % prepared.count
                                let rating = Int16((task + run) % 7) - 2
                                let count = try context.count(prepared[index], rating)
                                let exists = try context.exists(prepared[index], rating)
                                let fetched = try context.fetch(prepared[index], rating).count
                                let expected = try context.count(built(index, rating))
                                let expectedFetch = try context.fetch(built(index, rating)).count
                                guard count == expected, fetched == expectedFetch, count == fetched,
                                    exists == (expected > 0)
                                else {
                                    return
                                        "task \(task) run \(run): \(count) \(exists) \(fetched) vs \(expected) \(expectedFetch)"
                                }
                                return nil
                            }
                            if let got { failures.append(got) }
                        }
                        return failures
                    }
                }
                return try await group.reduce([], +)
            }
            #expect(failures.isEmpty, "\(label): \(failures.count): \(failures.prefix(4))")
        }
        switch engine {
        case .sqlite:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rtcount-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let url = folder.appendingPathComponent("Trips.store")
            let reader = try Store(url: url, schema: Fixture.schema)
            defer { try? reader.close() }
            _ = try await reader.performAndSave { try $0.batchInsert(RedTeamPreparedTests.users) }
            let writer = try Store(url: url, schema: Fixture.schema)
            defer { try? writer.close() }
            try await hammer(reader: reader, writer: writer, label: "file store, other writer")
            try await hammer(reader: reader, writer: reader, label: "file store, own writer")
        case .postgres:
            try await engine.withStore(schema: Fixture.schema) { store in
                _ = try await store.performAndSave { try $0.batchInsert(RedTeamPreparedTests.users) }
                try await hammer(reader: store, writer: store, label: "postgres")
            }
        }
    }

    // MARK: - 3. Refusals

    /// What fetch refuses, count and exists refuse too, with a StoreError: NaN, nil, a parameter
    /// of another prepared request, keyset paging; the connection stays usable afterwards.
    @Test(arguments: TestEngine.available) func countAndExistsRefuseWhatFetchRefuses(engine: TestEngine)
        async throws
    {
        try await engine.withStore(schema: Fixture.schema) { store in
            _ = try await store.performAndSave { try $0.batchInsert(RedTeamPreparedTests.users) }
            let byDouble = PreparedRequest { (value: RequestParameter<Double>) in
                Sample.request().filter { $0.double < value }
            }
            let byNote = PreparedRequest { (value: RequestParameter<String?>) in
                Sample.request().filter { $0.note != value }
            }
            let byDecimal = PreparedRequest { (value: RequestParameter<Decimal>) in
                Sample.request().filter { $0.decimal >= value }.limit(0)
            }
            let leaked = Locked<RequestParameter<Int16>?>(nil)
            let first = PreparedRequest { (rating: RequestParameter<Int16>) in
                leaked.withLock { $0 = rating }
                return User.request().filter { $0.rating == rating }
            }
            let escaped = try #require(leaked.withLock { $0 })
            let foreign = PreparedRequest { (name: RequestParameter<String>) in
                User.request().filter { $0.rating == escaped || $0.username == name }
            }
            let pagedFrom = try await store.performQuery {
                try $0.fetchOne(User.request().sorted { [$0.username.ascending] })
            }
            let paged = PreparedRequest { (rating: RequestParameter<Int16>) in
                User.request().filter { $0.rating >= rating }.sorted { [$0.username.ascending] }.after(pagedFrom)
                    .limit(5)
            }
            let pagedFromNil = PreparedRequest { (rating: RequestParameter<Int16>) in
                User.request().filter { $0.rating >= rating }.sorted { [$0.username.ascending] }.after(nil).limit(0)
            }
            let notRefused = try await store.performQuery { context -> [String] in
                var notRefused: [String] = []
                func refused(_ label: String, _ answer: Answer) {
                    if answer != .storeError { notRefused.append("\(label): \(answer)") }
                }
                _ = try context.fetch(first, 1)
                refused("count NaN", Self.answer { try context.count(byDouble, .nan) })
                refused("exists NaN", Self.answerWhether { try context.exists(byDouble, -.nan) })
                refused("count nil", Self.answer { try context.count(byNote, nil) })
                refused("exists nil", Self.answerWhether { try context.exists(byNote, nil) })
                refused("exists Decimal.nan, limit 0", Self.answerWhether { try context.exists(byDecimal, .nan) })
                refused("count Decimal.nan, limit 0", Self.answer { try context.count(byDecimal, .nan) })
                refused("fetch foreign", Self.answer { try context.fetch(foreign, "u01").count })
                refused("count foreign", Self.answer { try context.count(foreign, "u01") })
                refused("exists foreign", Self.answerWhether { try context.exists(foreign, "u01") })
                refused("fetch after", Self.answer { try context.fetch(paged, 0).count })
                refused("count after", Self.answer { try context.count(paged, 0) })
                refused("exists after", Self.answerWhether { try context.exists(paged, 0) })
                refused("fetchOne after", Self.answer { try context.fetchOne(paged, 0) == nil ? 0 : 1 })
                refused("exists after(nil) limit 0", Self.answerWhether { try context.exists(pagedFromNil, 0) })
                refused("count after(nil) limit 0", Self.answer { try context.count(pagedFromNil, 0) })
                // Still usable.
                let users = try context.count(first, 1)
                if users != RedTeamPreparedTests.users.filter({ $0.rating == 1 }).count {
                    notRefused.append("after the refusals: \(users)")
                }
                return notRefused
            }
            #expect(notRefused.isEmpty, "\(engine): \(notRefused)")
        }
    }

    private final class Counter: @unchecked Sendable {
        var value = 0
    }

    /// A builder whose limit differs between its two builds (5, then 0) is refused by fetch; its
    /// exists, fetchOne and count must be refused too, not answered from one of the builds.
    @Test func aBuilderWhoseLimitDiffersIsRefusedByExistsAndFetchOne() async throws {
        let store = try Store.inMemory(schema: Fixture.schema)
        defer { try? store.close() }
        _ = try await store.performAndSave { try $0.batchInsert(RedTeamPreparedTests.users) }
        let calls = Counter()
        let changing = PreparedRequest { (rating: RequestParameter<Int16>) in
            defer { calls.value += 1 }
            return User.request().filter { $0.rating >= rating }.limit(calls.value == 0 ? 5 : 0)
        }
        let answers = try await store.performQuery { context in
            [
                "fetch": Self.answer { try context.fetch(changing, 0).count },
                "fetchOne": Self.answer { try context.fetchOne(changing, 0) == nil ? 0 : 1 },
                "count": Self.answer { try context.count(changing, 0) },
                "exists": Self.answerWhether { try context.exists(changing, 0) },
            ]
        }
        for (name, answer) in answers.sorted(by: { $0.key < $1.key }) {
            #expect(answer == .storeError, "\(name): expected a refusal, got \(answer)")
        }
        // The other way round (0, then 5): fetchOne and exists answer from the first build, "no row".
        let reversedCalls = Counter()
        let reversed = PreparedRequest { (rating: RequestParameter<Int16>) in
            defer { reversedCalls.value += 1 }
            return User.request().filter { $0.rating >= rating }.limit(reversedCalls.value == 0 ? 0 : 5)
        }
        let reversedAnswers = try await store.performQuery { context in
            [
                "fetchOne": Self.answer { try context.fetchOne(reversed, 0) == nil ? 0 : 1 },
                "exists": Self.answerWhether { try context.exists(reversed, 0) },
                "fetch": Self.answer { try context.fetch(reversed, 0).count },
            ]
        }
        for (name, answer) in reversedAnswers.sorted(by: { $0.key < $1.key }) {
            #expect(answer == .storeError, "limit 0 then 5, \(name): expected a refusal, got \(answer)")
        }
    }

    /// A builder whose sort differs between its two builds is refused by fetch; count and
    /// exists drop the sort before comparing the builds, so they answer instead of refusing.
    @Test func aBuilderWhoseSortDiffersIsRefusedByCountAndExists() async throws {
        let store = try Store.inMemory(schema: Fixture.schema)
        defer { try? store.close() }
        _ = try await store.performAndSave { try $0.batchInsert(RedTeamPreparedTests.users) }
        let calls = Counter()
        let changing = PreparedRequest { (rating: RequestParameter<Int16>) in
            defer { calls.value += 1 }
            return User.request().filter { $0.rating >= rating }
                .sorted { calls.value == 0 ? [$0.username.ascending] : [$0.rating.descending] }
        }
        let answers = try await store.performQuery { context in
            [
                "fetch": Self.answer { try context.fetch(changing, 0).count },
                "count": Self.answer { try context.count(changing, 0) },
                "exists": Self.answerWhether { try context.exists(changing, 0) },
            ]
        }
        for (name, answer) in answers.sorted(by: { $0.key < $1.key }) {
            #expect(answer == .storeError, "\(name): expected a refusal, got \(answer)")
        }
    }
}
