import Foundation
import ModelwrightEngineTestSupport
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright

/// Random condition trees over the fixture's trips, read by every reader of the one traversal:
/// the SQL a store runs (first rendered, then cached with other values of the same shape) and an
/// in-memory evaluation of `Condition`'s documented rules must select the same trips; the reads
/// of a request must cover every column whose change can change its result; the `NSPredicate`
/// format must place one argument per placeholder; and the SQL text stays what it was before the
/// renderers shared one traversal.
@Suite(.heavy)
struct ConditionPropertyTests {
    /// Worlds (random rows in a fresh store) and trees per world.
    private static let worlds = 40
    private static let treesPerWorld = 25
    /// Worlds of the large run of ``preparedRequestsReturnWhatTheirValuesReturn(engine:)``.
    private static let largeWorlds = 400
    private static let isLarge = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1"

    /// On both engines (``TestEngine``): trees negate at every depth (`NOT`, `notInList`), which
    /// PostgreSQL refused while a negation's fallback was SQLite's integer `0`. PostgreSQL draws
    /// fewer worlds (each is a new database), every one with as many trees.
    @Test(arguments: TestEngine.available) func sqlSelectsWhatTheDocumentedRulesSelect(engine: TestEngine)
        async throws
    {
        for worldIndex in 0..<(engine == .sqlite ? Self.worlds : 6) {
            var random = SplitMix64(seed: 26, index: worldIndex)
            let world = MemoryWorld.random(&random)
            try await engine.withStore(schema: Fixture.schema) { store in
                try await world.load(into: store)
                try await Self.check(world, worldIndex: worldIndex, in: store)
            }
        }
    }

    private static func check(_ world: MemoryWorld, worldIndex: Int, in store: Store) async throws {
        for treeIndex in 0..<Self.treesPerWorld {
            let seed = UInt64(worldIndex * 1000 + treeIndex)
            let condition = ConditionGenerator.tree(structure: seed, values: 1, derived: true)
            // The same structure with other values: the store reuses the first one's SQL.
            let sameShape = ConditionGenerator.tree(structure: seed, values: 2, derived: true)
            #expect(QueryShape.shape(condition) == QueryShape.shape(sameShape))
            for tree in [condition, sameShape] {
                let expected = world.trips(matching: tree)
                let fetched = try await store.performQuery { context in
                    Set(try context.fetch(FetchRequest<Trip>(condition: tree)).map(\.id.uuid))
                }
                #expect(
                    fetched == expected,
                    "world \(worldIndex), tree \(treeIndex): \(tree)\nSQL: \((try? Self.sql(tree)) ?? "?")")
            }
        }
    }

    /// The same trees as prepared requests: up to three of each tree's compared values become
    /// parameters, some trees sorted, limited and offset. The request is built once and run with
    /// the first tree's values, then with those of a second tree of the same structure (other
    /// values), on a connection that already holds its statement; each run must return the rows,
    /// in order, of the request built for those values, and count them. CI draws 16 worlds on
    /// SQLite and 6 on PostgreSQL; `MODELWRIGHT_LARGE=1` draws ``largeWorlds`` on each.
    @Test(arguments: TestEngine.available) func preparedRequestsReturnWhatTheirValuesReturn(engine: TestEngine)
        async throws
    {
        var parameters = 0
        let worlds = Self.isLarge ? Self.largeWorlds : engine == .sqlite ? 16 : 6
        for worldIndex in 0..<worlds {
            var random = SplitMix64(seed: 3001, index: worldIndex)
            let world = MemoryWorld.random(&random)
            parameters += try await engine.withStore(schema: Fixture.schema) { store in
                try await world.load(into: store)
                var parameters = 0
                for treeIndex in 0..<Self.treesPerWorld {
                    let seed = UInt64(worldIndex * 1000 + treeIndex)
                    let trees = [1, 2].map {
                        ConditionGenerator.tree(structure: seed, values: UInt64($0), derived: true)
                    }
                    var page = FetchRequest<Trip>()
                    if treeIndex % 3 > 0 {
                        page.sortKeys = [SortKey(path: ColumnPath(column: "title"), ascending: treeIndex % 2 == 0)]
                        page.sortKeys.append(SortKey(path: ColumnPath(column: "id"), ascending: true))
                        page.fetchLimit = treeIndex % 3 == 1 ? 1 + treeIndex % 4 : nil
                        page.fetchOffset = treeIndex % 5
                    }
                    let prepared = PreparedRequest {
                        (a: RequestParameter<Stored>, b: RequestParameter<Stored>, c: RequestParameter<Stored>) in
                        var request = page
                        var next = [a.standIn, b.standIn, c.standIn][...]
                        request.condition = Self.parameterized(trees[0], &next)
                        return request
                    }
                    for tree in trees {
                        // The first tree with its first compared values taken from `tree`: the
                        // request the run's values make.
                        let compared = Self.comparedValues(tree).prefix(3)
                        var taken = compared
                        let condition = Self.parameterized(trees[0], &taken)
                        let values =
                            compared.map(Stored.init(sqlValue:))
                            + Array(repeating: Stored(sqlValue: .integer(0)), count: 3 - compared.count)
                        var request = page
                        request.condition = condition
                        let (expected, fetched, counted, exists) = try await store.performQuery {
                            [request] context in
                            (
                                try context.fetch(request).map(\.id),
                                try context.fetch(prepared, values[0], values[1], values[2]).map(\.id),
                                try context.count(prepared, values[0], values[1], values[2]),
                                try context.exists(prepared, values[0], values[1], values[2])
                            )
                        }
                        #expect(fetched == expected, "world \(worldIndex), tree \(treeIndex): \(condition)")
                        #expect(counted == expected.count && exists == !expected.isEmpty, "\(condition)")
                        if page.fetchLimit == nil, page.fetchOffset == 0 {
                            #expect(Set(fetched.map(\.uuid)) == world.trips(matching: condition))
                        }
                    }
                    parameters += min(Self.comparedValues(trees[0]).count, 3)
                }
                return parameters
            }
        }
        #expect(parameters > (engine == .sqlite ? 100 : 30), "enough parameters in the trees")
        print("prepared requests over drawn trees on \(engine): \(worlds) worlds, \(parameters) parameters")
    }

    /// A value of any stored type, for a prepared request over generated trees.
    private struct Stored: ColumnValue {
        let value: SQLValue
        var sqlValue: SQLValue { value }
        init(sqlValue: SQLValue) { value = sqlValue }
    }

    /// The values of `condition`'s comparisons with a value, in the order ``parameterized(_:_:)`` meets them.
    private static func comparedValues(_ condition: Condition) -> [SQLValue] {
        switch condition {
        case .comparison(_, _, let value): value == .null ? [] : [value]
        case .not(let operand), .quantified(_, _, let operand): comparedValues(operand)
        case .and(let operands), .or(let operands): operands.flatMap(comparedValues)
        case .constant, .inList, .notInList, .between, .string, .search, .count: []
        }
    }

    /// `condition` with its first comparisons with a value comparing with the next of `standIns`
    /// instead (parameters' stand-ins, or other values).
    private static func parameterized(_ condition: Condition, _ standIns: inout ArraySlice<SQLValue>) -> Condition {
        switch condition {
        case .comparison(let path, let comparison, let value):
            guard value != .null, let standIn = standIns.popFirst() else { return condition }
            return .comparison(path, comparison, standIn)
        case .not(let operand): return .not(parameterized(operand, &standIns))
        case .quantified(let path, let quantifier, let operand):
            return .quantified(path, quantifier, parameterized(operand, &standIns))
        case .and(let operands): return .and(operands.map { parameterized($0, &standIns) })
        case .or(let operands): return .or(operands.map { parameterized($0, &standIns) })
        case .constant, .inList, .notInList, .between, .string, .search, .count: return condition
        }
    }

    @Test func readsCoverEveryColumnWhoseChangeChangesTheResult() throws {
        let layout = try SchemaLayout(Fixture.schema)
        var checked = 0
        for worldIndex in 0..<Self.worlds {
            var random = SplitMix64(seed: 2601, index: worldIndex)
            let world = MemoryWorld.random(&random)
            for treeIndex in 0..<Self.treesPerWorld {
                let condition = ConditionGenerator.tree(
                    structure: UInt64(worldIndex * 1000 + treeIndex), values: 3, derived: true)
                let reads = try layout.reads(of: FetchRequest<Trip>(condition: condition))
                let before = world.trips(matching: condition)
                for _ in 0..<8 {
                    var changed = world
                    let touched = try changed.mutate(&random, layout: layout)
                    guard changed.trips(matching: condition) != before else { continue }
                    checked += 1
                    let columns = reads.columns[touched.table]
                    #expect(
                        columns != nil && (touched.column.map { columns?.contains($0) ?? false } ?? true),
                        "\(touched) changed the result of \(condition), but the reads are \(reads.columns)")
                }
            }
        }
        #expect(checked > 100, "enough changes that matter")
    }

    /// `NSPredicate` has no full-text search: a tree holding one anywhere (under `NOT`, `OR`, a
    /// quantifier) renders as `FALSEPREDICATE` whole, never as a predicate that selects rows the
    /// store's search excludes (`NOT (FALSEPREDICATE)` selected every row).
    @Test func aConditionWithASearchAnywhereRendersAsFindingNothing() throws {
        var searches = 0
        for index in 0..<2000 {
            let drawn = ConditionGenerator.tree(structure: UInt64(index), values: 4, derived: true)
            let search = Condition.search(ColumnPath(column: "title"), try SearchQuery("swift"))
            for condition in [drawn, .not(search), .or([drawn, .not(search)]), .and([.not(.not(search)), drawn])] {
                guard "\(condition)".contains("search") else { continue }
                searches += 1
                let rendered = PredicateFormatRenderer.render(condition)
                #expect(rendered.format == "FALSEPREDICATE" && rendered.arguments.isEmpty, "\(condition)")
            }
        }
        #expect(searches >= 6000)
    }

    @Test func predicateFormatHasOneArgumentPerPlaceholder() {
        for index in 0..<1000 {
            let condition = ConditionGenerator.tree(structure: UInt64(index), values: 4, derived: true)
            let rendered = PredicateFormatRenderer.render(condition)
            var placeholders: [Bool] = []  // true for %K
            var scalars = Array(rendered.format.unicodeScalars)[...]
            while let percent = scalars.firstIndex(of: "%") {
                let next = scalars.index(after: percent)
                placeholders.append(scalars[next] == "K")
                scalars = scalars[scalars.index(after: next)...]
            }
            let arguments = rendered.arguments.map { argument in
                if case .keyPath = argument { return true }
                return false
            }
            #expect(placeholders == arguments, "\(condition)")
            let keyPaths = Set(
                rendered.arguments.compactMap { argument -> String? in
                    guard case .keyPath(let path) = argument else { return nil }
                    return path
                })
            #expect(keyPaths.isSubset(of: ConditionGenerator.keyPaths(of: condition)), "\(condition)")
        }
    }

    /// A statement cached for a shape binds the values `QueryShape` collects: they must be the
    /// rendered statement's arguments, in its order, for every tree.
    /// On each engine's dialect: PostgreSQL binds a list as one argument, SQLite a value each.
    @Test func cachedArgumentsAreTheRenderedOnes() throws {
        let layout = try SchemaLayout(Fixture.schema)
        let dialects: [any SQLDialect] = [SQLiteDialect(), PostgresDialect()]
        for index in 0..<2000 {
            let condition = ConditionGenerator.tree(structure: UInt64(index), values: 6, derived: true)
            for dialect in dialects {
                var renderer = SQLPredicateRenderer(layout: layout, dialect: dialect)
                _ = try renderer.render(QueryShape.shape(condition), entity: layout.entity("Trip"), alias: "t0")
                var shapeArguments: [SQLValue] = []
                QueryShape.collectArguments(of: QueryShape.shape(condition), dialect: dialect, into: &shapeArguments)
                #expect(shapeArguments == renderer.arguments, "\(condition)")
                var rendered = SQLPredicateRenderer(layout: layout, dialect: dialect)
                _ = try rendered.render(condition, entity: layout.entity("Trip"), alias: "t0")
                var collected: [SQLValue] = []
                QueryShape.collectArguments(of: condition, dialect: dialect, into: &collected)
                #expect(collected == rendered.arguments, "\(condition)")
            }
        }
    }

    /// The SQL and arguments of 2,000 seeded trees, as the renderer wrote them before the walkers
    /// shared one traversal: a digest, so a change of spelling (a dialect seam, a new operator)
    /// that alters any byte shows here. The trees hold no derived operator (`notInList`), so
    /// adding one leaves them as they were. Changed once on purpose: an empty `IN` list is now
    /// the constant false (`0` on SQLite), which PostgreSQL accepts and `IN ()` it does not.
    @Test func renderedSQLIsUnchanged() throws {
        var transcript = ""
        for index in 0..<2000 {
            let condition = ConditionGenerator.tree(structure: UInt64(index), values: 5)
            transcript += try Self.sql(condition) + "\n"
        }
        #expect(
            SHA256.hexDigest(of: Array(transcript.utf8))
                == "85b5bf509fcbc9f42046a4fdebe8ceaf78ecdea659b00189dd8b921b80768c20")
    }

    private static func sql(_ condition: Condition) throws -> String {
        let layout = try SchemaLayout(Fixture.schema)
        var renderer = SQLPredicateRenderer(layout: layout, dialect: SQLiteDialect())
        let text = try renderer.render(condition, entity: layout.entity("Trip"), alias: "t0")
        return text + " -- " + renderer.arguments.map { "\($0)" }.joined(separator: ", ")
    }
}

// MARK: - Trees

/// Draws condition trees over the fixture's `Trip`, reaching users, organizations, stops and tags.
/// Every structural choice (node kinds, paths, operators, list lengths, which values are missing)
/// comes from one stream and every value from another, so two value seeds give two trees of one
/// shape.
private enum ConditionGenerator {
    enum Kind { case text, decimal, integer, role, reference }

    static let columns: [String: [(name: String, kind: Kind)]] = [
        "Trip": [("title", .text), ("budget", .decimal)],
        "User": [
            ("username", .text), ("namePrefix", .text), ("rating", .integer), ("role", .role),
            ("organization", .reference),
        ],
        "Organization": [("name", .text)],
        "Stop": [("name", .text), ("trip", .reference)],
        "Tag": [("name", .text)],
    ]
    static let toOne: [String: [(name: String, destination: String)]] = [
        "Trip": [("owner", "User")], "User": [("organization", "Organization")], "Stop": [("trip", "Trip")],
    ]
    static let toMany: [String: [(name: String, destination: String)]] = [
        "Trip": [("stops", "Stop"), ("tags", "Tag")],
        "User": [("trips", "Trip"), ("favourites", "Trip")],
        "Organization": [("members", "User")],
        "Tag": [("trips", "Trip")],
    ]
    static let texts = ["", "a", "A", "á", "ab", "Ab", "b", "ba", "é", "e", "a*", "?b", "%", "_"]
    static let decimals = ["0.5", "1", "2.25", "10", "-3"]
    static let roles = ["member", "administrator"]

    /// A tree; with `derived`, some of its `IN` tests are `notInList` (an extra draw from the
    /// structure stream, so trees without it are those drawn before the operator existed).
    static func tree(structure: UInt64, values: UInt64, derived: Bool = false) -> Condition {
        var generator = Generator(
            shape: SplitMix64(seed: 0x5EED, index: Int(structure)),
            values: SplitMix64(seed: values, index: Int(structure)), derived: derived)
        return generator.condition(on: "Trip", depth: 3)
    }

    static func value(_ kind: Kind, _ random: inout SplitMix64) -> SQLValue {
        switch kind {
        case .text: .text(texts[random.next(below: texts.count)])
        case .decimal: .text(decimals[random.next(below: decimals.count)])
        case .integer: .integer(Int64(random.next(below: 6)) - 2)
        case .role: .text(roles[random.next(below: roles.count)])
        case .reference: .null
        }
    }

    /// Every key path a tree names, as `NSPredicate` spells it.
    static func keyPaths(of condition: Condition) -> Set<String> {
        switch condition {
        case .constant: []
        case .comparison(let path, _, _), .inList(let path, _), .notInList(let path, _), .between(let path, _, _),
            .string(let path, _, _, _), .search(let path, _):
            [path.keyPath]
        case .count(let path, _, _): [path.keyPath]
        case .not(let operand): keyPaths(of: operand)
        case .and(let operands), .or(let operands): operands.reduce(into: []) { $0.formUnion(keyPaths(of: $1)) }
        case .quantified(let path, _, let operand): keyPaths(of: operand).union([path.keyPath])
        }
    }

    private struct Generator {
        var shape: SplitMix64
        var values: SplitMix64
        let derived: Bool

        mutating func condition(on entity: String, depth: Int) -> Condition {
            let choice = depth == 0 ? shape.next(below: 6) : shape.next(below: 11)
            switch choice {
            case 0: return .constant(shape.next(below: 2) == 0)
            case 1, 2: return comparison(on: entity)
            case 3: return inList(on: entity)
            case 4: return string(on: entity) ?? comparison(on: entity)
            case 5:
                let (path, _) = relationship(from: entity)
                return .count(path, comparisonOperator(), shape.next(below: 4))
            case 6: return .not(condition(on: entity, depth: depth - 1))
            case 7: return .and((0..<shape.next(below: 4)).map { _ in condition(on: entity, depth: depth - 1) })
            case 8: return .or((0..<shape.next(below: 4)).map { _ in condition(on: entity, depth: depth - 1) })
            case 9: return between(on: entity)
            default:
                let (path, destination) = relationship(from: entity)
                let quantifier = [Quantifier.any, .all, .none][shape.next(below: 3)]
                return .quantified(path, quantifier, condition(on: destination, depth: depth - 1))
            }
        }

        private mutating func hops(from entity: String) -> (hops: [String], entity: String) {
            var hops: [String] = []
            var current = entity
            while shape.next(below: 3) == 0, let choices = toOne[current] {
                let hop = choices[shape.next(below: choices.count)]
                hops.append(hop.name)
                current = hop.destination
            }
            return (hops, current)
        }

        private mutating func column(from entity: String) -> (ColumnPath, Kind) {
            let (hops, last) = hops(from: entity)
            let choices = columns[last] ?? []
            let column = choices[shape.next(below: choices.count)]
            return (ColumnPath(hops: hops, column: column.name), column.kind)
        }

        private mutating func relationship(from entity: String) -> (RelationshipPath, String) {
            var (hops, last) = hops(from: entity)
            // A stop has no to-many relationship: go on to its trip.
            while toMany[last] == nil, let hop = toOne[last]?.first {
                hops.append(hop.name)
                last = hop.destination
            }
            let choices = toMany[last] ?? []
            let choice = choices[shape.next(below: choices.count)]
            return (RelationshipPath(hops: hops, relationship: choice.name), choice.destination)
        }

        private mutating func comparisonOperator() -> ComparisonOperator {
            [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual][shape.next(below: 6)]
        }

        /// A value of `kind`, missing one time in six (a reference column's only value).
        private mutating func value(_ kind: Kind) -> SQLValue {
            let isMissing = shape.next(below: 6) == 0
            let drawn = ConditionGenerator.value(kind, &values)
            return isMissing ? .null : drawn
        }

        private mutating func comparison(on entity: String) -> Condition {
            let (path, kind) = column(from: entity)
            guard kind != .reference else {
                return .comparison(path, shape.next(below: 2) == 0 ? .equal : .notEqual, .null)
            }
            return .comparison(path, comparisonOperator(), value(kind))
        }

        private mutating func inList(on entity: String) -> Condition {
            let (path, kind) = column(from: entity)
            let list = (0..<shape.next(below: 4)).map { _ in value(kind) }
            return derived && shape.next(below: 2) == 0 ? .notInList(path, list) : .inList(path, list)
        }

        private mutating func between(on entity: String) -> Condition {
            let (path, kind) = column(from: entity)
            guard kind != .reference else { return comparison(on: entity) }
            return .between(path, value(kind), value(kind))
        }

        private mutating func string(on entity: String) -> Condition? {
            let (path, kind) = column(from: entity)
            guard kind == .text else { return nil }
            let operation = [StringOperation.hasPrefix, .hasSuffix, .contains, .like, .equals][shape.next(below: 5)]
            let options = StringComparisonOptions(rawValue: shape.next(below: 4))
            guard case .text(let needle) = ConditionGenerator.value(.text, &values) else { return nil }
            return .string(path, operation, needle, options)
        }
    }
}

// MARK: - The world in memory

/// Rows of the fixture's users, organizations, trips, stops and tags, as plain values, with an
/// evaluation of `Condition` that follows its documentation, not the SQL.
private struct MemoryWorld {
    struct Row {
        let id: UUID
        var values: [String: SQLValue]
        var references: [String: UUID]
    }

    var rows: [String: [Row]] = [:]
    /// Links of the join-table relationships, by `Entity.relationship` of the side that lists them.
    var links: [String: Set<[UUID]>] = ["Trip.tags": [], "User.favourites": []]

    static func random(_ random: inout SplitMix64) -> MemoryWorld {
        var world = MemoryWorld()
        func pick(_ entity: String) -> UUID? {
            let rows = world.rows[entity] ?? []
            return rows.isEmpty ? nil : rows[random.next(below: rows.count)].id
        }
        for _ in 0..<random.next(below: 3) {
            world.insert("Organization", ["name": ConditionGenerator.value(.text, &random)], [:])
        }
        var usernames = ConditionGenerator.texts  // unique, as the schema says
        for _ in 0..<(1 + random.next(below: 3)) {
            let username = usernames.remove(at: random.next(below: usernames.count))
            var references: [String: UUID] = [:]
            if random.next(below: 3) > 0 { references["organization"] = pick("Organization") }
            world.insert(
                "User",
                [
                    "username": .text(username),
                    "namePrefix": random.next(below: 3) == 0 ? .null : ConditionGenerator.value(.text, &random),
                    "rating": ConditionGenerator.value(.integer, &random),
                    "role": ConditionGenerator.value(.role, &random),
                ], references)
        }
        for _ in 0..<(1 + random.next(below: 5)) {
            world.insert(
                "Trip",
                [
                    "title": ConditionGenerator.value(.text, &random),
                    "budget": random.next(below: 3) == 0 ? .null : ConditionGenerator.value(.decimal, &random),
                ], ["owner": pick("User")!])
        }
        for _ in 0..<random.next(below: 5) {
            var references: [String: UUID] = [:]
            if random.next(below: 4) > 0 { references["trip"] = pick("Trip") }
            world.insert("Stop", ["name": ConditionGenerator.value(.text, &random)], references)
        }
        for _ in 0..<random.next(below: 4) {
            world.insert("Tag", ["name": ConditionGenerator.value(.text, &random)], [:])
        }
        for _ in 0..<random.next(below: 6) {
            if let trip = pick("Trip"), let tag = pick("Tag") {
                world.links["Trip.tags", default: []].insert([trip, tag])
            }
            if let user = pick("User"), let trip = pick("Trip") {
                world.links["User.favourites", default: []].insert([user, trip])
            }
        }
        return world
    }

    private mutating func insert(_ entity: String, _ values: [String: SQLValue], _ references: [String: UUID]) {
        let count = rows.values.reduce(0) { $0 + $1.count } + 1
        let id = UUID(uuidString: String(format: "00000000-0000-7000-8000-%012x", count)) ?? UUID()
        rows[entity, default: []].append(Row(id: id, values: values, references: references))
    }

    func load(into store: Store) async throws {
        let world = self
        try await store.performAndSave { context in
            for row in world.rows["Organization"] ?? [] {
                try context.insert(Organization(id: .init(row.id), name: row.text("name")))
            }
            for row in world.rows["User"] ?? [] {
                let prefix: String? = if case .text(let text) = row.values["namePrefix"] { text } else { nil }
                try context.insert(
                    User(
                        id: .init(row.id), username: row.text("username"), givenName: row.text("username"),
                        familyName: "",
                        namePrefix: prefix, rating: Int16(row.integer("rating")),
                        role: row.text("role") == "member" ? .member : .admin,
                        organizationID: row.references["organization"].map { .init($0) }))
            }
            for row in world.rows["Trip"] ?? [] {
                let budget: Decimal? =
                    if case .text(let text) = row.values["budget"] { Decimal(string: text) } else { nil }
                try context.insert(
                    Trip(
                        id: .init(row.id), title: row.text("title"), budget: budget,
                        ownerID: .init(row.references["owner"]!)))
            }
            for row in world.rows["Stop"] ?? [] {
                try context.insert(
                    Stop(
                        id: .init(row.id), name: row.text("name"),
                        tripID: row.references["trip"].map { .init($0) }))
            }
            for row in world.rows["Tag"] ?? [] {
                try context.insert(Tag(id: .init(row.id), name: row.text("name")))
            }
            for link in world.links["Trip.tags"] ?? [] {
                try context.link(Trip.ID(link[0]), to: Tag.ID(link[1]), through: { $0.tags })
            }
            for link in world.links["User.favourites"] ?? [] {
                try context.link(User.ID(link[0]), to: Trip.ID(link[1]), through: { $0.favourites })
            }
        }
    }

    // MARK: Evaluation

    func trips(matching condition: Condition) -> Set<UUID> {
        Set((rows["Trip"] ?? []).filter { evaluate(condition, "Trip", $0) }.map(\.id))
    }

    private func row(_ entity: String, _ id: UUID?) -> Row? {
        guard let id else { return nil }
        return rows[entity]?.first { $0.id == id }
    }

    /// The row reached through to-one `hops`, nil when a relationship on the way is empty.
    private func follow(_ hops: [String], _ entity: String, _ row: Row) -> (String, Row)? {
        var current = (entity, row)
        for hop in hops {
            guard let destination = ConditionGenerator.toOne[current.0]?.first(where: { $0.name == hop })?.destination,
                let next = self.row(destination, current.1.references[hop])
            else { return nil }
            current = (destination, next)
        }
        return current
    }

    private func destinations(_ path: RelationshipPath, _ entity: String, _ row: Row) -> (String, [Row])? {
        guard let (owner, ownerRow) = follow(path.hops, entity, row),
            let destination = ConditionGenerator.toMany[owner]?.first(where: { $0.name == path.relationship })?
                .destination
        else { return nil }
        let all = rows[destination] ?? []
        let found: [Row] =
            switch (owner, path.relationship) {
            case ("Trip", "stops"): all.filter { $0.references["trip"] == ownerRow.id }
            case ("User", "trips"): all.filter { $0.references["owner"] == ownerRow.id }
            case ("Organization", "members"): all.filter { $0.references["organization"] == ownerRow.id }
            case ("Trip", "tags"): all.filter { (links["Trip.tags"] ?? []).contains([ownerRow.id, $0.id]) }
            case ("Tag", "trips"): all.filter { (links["Trip.tags"] ?? []).contains([$0.id, ownerRow.id]) }
            case ("User", "favourites"): all.filter { (links["User.favourites"] ?? []).contains([ownerRow.id, $0.id]) }
            default: []
            }
        return (destination, found)
    }

    /// The value at `path`, or nil when a to-one relationship on the way is empty.
    private func value(_ path: ColumnPath, _ entity: String, _ row: Row) -> (SQLValue, ConditionGenerator.Kind)? {
        guard let (last, lastRow) = follow(path.hops, entity, row),
            let kind = ConditionGenerator.columns[last]?.first(where: { $0.name == path.column })?.kind
        else { return nil }
        if kind == .reference {
            return (lastRow.references[path.column].map { .blob(Data($0.uuidString.utf8)) } ?? .null, kind)
        }
        return (lastRow.values[path.column] ?? .null, kind)
    }

    private func evaluate(_ condition: Condition, _ entity: String, _ row: Row) -> Bool {
        switch condition {
        case .constant(let value):
            return value
        case .not(let operand):
            return !evaluate(operand, entity, row)
        case .and(let operands):
            return operands.allSatisfy { evaluate($0, entity, row) }
        case .or(let operands):
            return operands.contains { evaluate($0, entity, row) }
        case .search(let path, let query):
            // Not drawn (the fixture has no full-text index; `FullTextSearchTests` covers it).
            guard case (.text(let text), _)? = self.value(path, entity, row) else { return false }
            return query.matches(text)
        case .comparison(let path, let comparison, let value):
            guard let (stored, kind) = self.value(path, entity, row) else { return false }
            switch (comparison, value) {
            case (.equal, .null): return stored == .null
            case (.notEqual, .null): return stored != .null
            case (.notEqual, _): return stored == .null || Self.order(stored, value, kind) != 0
            default:
                guard stored != .null, value != .null else { return false }
                let order = Self.order(stored, value, kind)
                switch comparison {
                case .equal: return order == 0
                case .less: return order < 0
                case .lessOrEqual: return order <= 0
                case .greater: return order > 0
                case .greaterOrEqual, .notEqual: return order >= 0
                }
            }
        case .inList(let path, let values):
            guard let (stored, kind) = self.value(path, entity, row) else { return false }
            guard stored != .null else { return values.contains(.null) }
            return values.contains { $0 != .null && Self.order(stored, $0, kind) == 0 }
        case .notInList(let path, let values):
            // None of the values: a missing value is none of them unless the list holds nil, and
            // through a missing to-one relationship the `IN` it negates is false.
            guard let (stored, kind) = self.value(path, entity, row) else { return true }
            guard stored != .null else { return !values.contains(.null) }
            return !values.contains { $0 != .null && Self.order(stored, $0, kind) == 0 }
        case .between(let path, let lower, let upper):
            guard let (stored, kind) = self.value(path, entity, row), stored != .null, lower != .null, upper != .null
            else { return false }
            return Self.order(lower, stored, kind) <= 0 && Self.order(stored, upper, kind) <= 0
        case .string(let path, let operation, let needle, let options):
            guard let (stored, _) = self.value(path, entity, row), case .text(let text) = stored else { return false }
            return operation.matches(text, needle, options: options)
        case .count(let path, let comparison, let number):
            guard let (_, found) = destinations(path, entity, row) else { return false }
            let order = found.count < number ? -1 : found.count == number ? 0 : 1
            switch comparison {
            case .equal: return order == 0
            case .notEqual: return order != 0
            case .less: return order < 0
            case .lessOrEqual: return order <= 0
            case .greater: return order > 0
            case .greaterOrEqual: return order >= 0
            }
        case .quantified(let path, let quantifier, let operand):
            guard let (destination, found) = destinations(path, entity, row) else { return false }
            switch quantifier {
            case .any: return found.contains { evaluate(operand, destination, $0) }
            case .none: return !found.contains { evaluate(operand, destination, $0) }
            case .all: return found.allSatisfy { evaluate(operand, destination, $0) }
            }
        }
    }

    /// How SQLite orders two present values of a column: text by its UTF-8 bytes, decimals (exact
    /// text) as numbers, integers as integers.
    private static func order(_ lhs: SQLValue, _ rhs: SQLValue, _ kind: ConditionGenerator.Kind) -> Int {
        switch (lhs, rhs) {
        case (.integer(let left), .integer(let right)): return left < right ? -1 : left == right ? 0 : 1
        case (.text(let left), .text(let right)) where kind == .decimal:
            let (left, right) = (Double(left) ?? 0, Double(right) ?? 0)
            return left < right ? -1 : left == right ? 0 : 1
        case (.text(let left), .text(let right)):
            let (left, right) = (Array(left.utf8), Array(right.utf8))
            return left.lexicographicallyPrecedes(right) ? -1 : left == right ? 0 : 1
        default: return lhs == rhs ? 0 : 1
        }
    }

    // MARK: Changes

    /// What a change wrote: a column of a table, or (nil column) a row of a table added or removed.
    struct Touched: CustomStringConvertible {
        let table: String
        let column: String?
        var description: String { "\(table).\(column ?? "<row>")" }
    }

    /// Makes one random change, as a commit would, and says what it wrote.
    mutating func mutate(_ random: inout SplitMix64, layout: SchemaLayout) throws -> Touched {
        let entities = ["Trip", "User", "Organization", "Stop", "Tag"]
        let entity = entities[random.next(below: entities.count)]
        let table = try layout.entity(entity).table
        switch random.next(below: 4) {
        case 0 where !(rows[entity] ?? []).isEmpty && entity != "User" && entity != "Organization":
            let count = rows[entity]?.count ?? 1
            rows[entity]?.remove(at: random.next(below: count))
            return Touched(table: table, column: nil)
        case 1 where entity == "Trip" || entity == "User":
            let key = entity == "Trip" ? "Trip.tags" : "User.favourites"
            let relationship = entity == "Trip" ? "tags" : "favourites"
            let destination = entity == "Trip" ? "Tag" : "Trip"
            guard let source = rows[entity]?.randomElement(using: &random),
                let target = rows[destination]?.randomElement(using: &random)
            else { return Touched(table: table, column: nil) }
            if links[key]?.remove([source.id, target.id]) == nil {
                links[key, default: []].insert([source.id, target.id])
            }
            let entityLayout = try layout.entity(entity)
            let (description, _) = try layout.destination(of: relationship, from: entityLayout)
            guard case .joinTable(let joinTable, _, _, _) = try layout.storage(of: description, from: entityLayout)
            else { return Touched(table: table, column: nil) }
            return Touched(table: joinTable, column: nil)
        default:
            guard let index = (rows[entity] ?? []).indices.randomElement(using: &random),
                let column = ConditionGenerator.columns[entity]?.randomElement(using: &random)
            else { return Touched(table: table, column: nil) }
            if column.kind == .reference {
                let destination = ConditionGenerator.toOne[entity]?.first { $0.name == column.name }?.destination ?? ""
                let target = rows[destination]?.randomElement(using: &random)?.id
                rows[entity]?[index].references[column.name] = target
            } else {
                rows[entity]?[index].values[column.name] = ConditionGenerator.value(column.kind, &random)
            }
            return Touched(table: table, column: try layout.entity(entity).columnName(column.name))
        }
    }
}

extension MemoryWorld.Row {
    fileprivate func text(_ key: String) -> String {
        if case .text(let text) = values[key] { return text }
        return ""
    }

    fileprivate func integer(_ key: String) -> Int64 {
        if case .integer(let value) = values[key] { return value }
        return 0
    }
}
