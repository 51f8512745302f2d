import Foundation
@_spi(Generated) import Modelwright
import ModelwrightTestSupport
import Testing

/// A migration that commits leaves only rows the app's records decode: a `Codable` attribute
/// retyped by a stage that does not convert it (valid JSON of the old type, which the store's own
/// value check accepts) fails the last stage, which rolls back, instead of every fetch after it.
struct RecordDecodingCheckTests {
    /// A `Book` record whose `tags` attribute has the Swift type `Tags`, after a `title`.
    private struct Book<Tags: Codable & Hashable & Sendable>: Record {
        static var entityName: String { "Book" }
        let id: RecordID<Book>
        let title: String
        let tags: Tags

        func encode(to row: inout RowEncoder) throws {
            try row.encode(title)
            try row.encodeJSON(tags)
        }

        init(id: RecordID<Book>, row: inout RowDecoder) throws {
            self.id = id
            title = try row.decode()
            tags = try row.decodeRequiredJSON()
        }

        struct Fields: RecordFields {
            typealias Target = Book
            let path: FieldPath
        }
    }

    private static func schema(version: Int, tags: String) -> SchemaDescription {
        SchemaDescription(
            modelName: "Shelf", version: version,
            entities: [
                EntityDescription(
                    name: "Book",
                    attributes: [
                        AttributeDescription(name: "title", type: .string),
                        AttributeDescription(name: "tags", type: .codable(typeName: tags)),
                    ])
            ])
    }

    /// A Swift type the new version may declare, with how to migrate to it and read it back.
    private struct Target: Sendable {
        let name: String
        /// Migrates rows holding `json` with a stage that leaves `tags` as it is, and reads every
        /// record after it when it commits; returns the error that stopped it, if any.
        let migrate: @Sendable (_ json: [String]) async throws -> (any Error)?
    }

    private static func target<Tags: Codable & Hashable & Sendable>(_ type: Tags.Type, _ name: String) -> Target {
        Target(name: name) { json in
            let v1 = schema(version: 1, tags: "Old")
            let v2 = schema(version: 2, tags: name)
            // The stage's hook does nothing: what an app wrote before the obligation was typed.
            let stage = MigrationStage.custom(
                from: v1, to: v2,
                steps: [
                    .init(
                        name: "retag", label: "Retype tags",
                        obligations: [.hook(of: "Book", "tags") { _ in }], didMigrate: { _ in })
                ])
            let plan = MigrationPlan(current: v2, stages: [stage], records: [Book<Tags>.self])
            let tester = try MigrationTester(plan: plan, startingAt: v1)
            for (index, text) in json.enumerated() {
                try tester.insert("Book", ["title": .text("b\(index)"), "tags": .text(text)])
            }
            let store: Store
            do {
                store = try tester.migrate()
            } catch {
                // Rolled back: the rows still hold what version 1 wrote.
                let kept = try tester.rows(of: "Book").map(\.["tags"])
                #expect(kept == json.map(SQLValue.text), "\(kept)")
                return error
            }
            let books = try await store.performQuery { try $0.fetch(FetchRequest<Book<Tags>>()) }
            #expect(books.count == json.count)
            return nil
        }
    }

    private static let targets: [Target] = [
        target([String].self, "[String]"), target([String: Int].self, "[String: Int]"),
        target([Int].self, "[Int]"), target([Double].self, "[Double]"), target(Int.self, "Int"),
        target(String.self, "String"), target(Bool.self, "Bool"), target(Set<String>.self, "Set<String>"),
        target([String: [Int]].self, "[String: [Int]]"), target(Int?.self, "Int?"),
    ]

    /// JSON a version may have written: each maker draws a value of one Swift type.
    private static let makers: [(String, @Sendable (inout SplitMix64) -> String)] = [
        ("[String]", { rng in json((0..<Int.random(in: 0...3, using: &rng)).map { "t\($0)" }) }),
        (
            "[String: Int]",
            { rng in json(["k\(Int.random(in: 0...9, using: &rng))": Int.random(in: -5...5, using: &rng)]) }
        ),
        (
            "[Int]",
            { rng in json((0..<Int.random(in: 1...3, using: &rng)).map { _ in Int.random(in: -9...9, using: &rng) }) }
        ),
        ("Int", { rng in json(Int.random(in: -1000...1000, using: &rng)) }),
        ("String", { rng in json("s\(Int.random(in: 0...99, using: &rng))") }),
        ("Bool", { rng in json(Bool.random(using: &rng)) }),
        ("Double", { rng in json(Double.random(in: -1...1, using: &rng)) }),
    ]

    private static func json<Value: Encodable>(_ value: Value) -> String {
        (try? JSONEncoder().encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }

    /// Old types against new ones, drawn (every pair, three stores each, with `MODELWRIGHT_LARGE=1`):
    /// a stage that leaves JSON the new type cannot decode never commits, and one that commits
    /// leaves every record readable.
    @Test func everyRetypeEitherRollsBackNamingTheRowOrLeavesRecordsThatDecode() async throws {
        var rng = SplitMix64(seed: 25)
        let large = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1"
        let pairs =
            large
            ? Self.makers.indices.flatMap { maker in
                Self.targets.indices.flatMap { target in Array(repeating: (maker, target), count: 3) }
            }
            : (0..<24).map { _ in
                (Int.random(in: Self.makers.indices, using: &rng), Int.random(in: Self.targets.indices, using: &rng))
            }
        var refused = 0
        var committed = 0
        for (maker, target) in pairs {
            let (oldName, make) = Self.makers[maker]
            let target = Self.targets[target]
            let json = (0..<Int.random(in: 1...3, using: &rng)).map { _ in make(&rng) }
            let error = try await target.migrate(json)
            guard let error else {
                committed += 1
                continue
            }
            refused += 1
            // A target spelled with standard types is checked by its shape right after the stage
            // (`wrongJSONShape`); the record check catches the rest.
            let row: String
            switch error {
            case MigrationError.undecodableRecord(_, "Book", "tags", let named, _),
                MigrationError.wrongJSONShape(_, "Book", "tags", let named, _, _):
                row = named
            default:
                Issue.record("\(oldName) → \(target.name): \(error)")
                continue
            }
            #expect(UUID(uuidString: row) != nil, "\(row)")
            #expect("\(error)".contains("rolled back"))
        }
        // Both outcomes occur, so neither branch is vacuous.
        #expect(refused >= pairs.count / 4 && committed >= 2, "refused \(refused), committed \(committed)")
        print("RecordDecodingCheckTests: \(pairs.count) retypes, \(refused) refused, \(committed) committed")
    }

    @Test func aListRetypedToADictionaryWithoutConversionIsRefused() async throws {
        let error = try await Self.target([String: Int].self, "[String: Int]").migrate(["[\"a\",\"b\"]"])
        #expect("\(error.map { "\($0)" } ?? "committed")".contains("'tags'"))
    }

    @Test func aTypedObligationConvertsTheOldJSONAndTheStoreOpens() async throws {
        let v1 = Self.schema(version: 1, tags: "[String]")
        let v2 = Self.schema(version: 2, tags: "[String: Int]")
        let stage = MigrationStage.custom(
            from: v1, to: v2,
            steps: [
                .init(
                    name: "count", label: "Count tags",
                    obligations: [
                        .json(of: "Book", "tags") { row in
                            Dictionary(
                                (try row.json("tags", as: [String].self) ?? []).map { ($0, 1) }, uniquingKeysWith: +)
                        }
                    ], didMigrate: { _ in })
            ])
        let tester = try MigrationTester(
            plan: MigrationPlan(current: v2, stages: [stage], records: [Book<[String: Int]>.self]), startingAt: v1)
        try tester.insert("Book", ["title": .text("a"), "tags": .text("[\"x\",\"y\",\"x\"]")])
        let store = try tester.migrate()
        let books = try await store.performQuery { try $0.fetch(FetchRequest<Book<[String: Int]>>()) }
        #expect(books.map(\.tags) == [["x": 2, "y": 1]])
    }
    /// A bad value written by an earlier stage fails that stage, named, whatever comes after: a
    /// later lightweight stage (another entity added) or a later custom stage that would read it.
    /// Drawn: how many stages follow the one that leaves the JSON unconverted, and which overwrites it.
    @Test func theStageThatWritesAnUndecodableValueIsTheOneThatFails() throws {
        var rng = SplitMix64(seed: 2525)
        for _ in 0..<8 {
            let total = Int.random(in: 2...4, using: &rng)
            // The later stage that overwrites the value, if any.
            let masking = Bool.random(using: &rng) ? Int.random(in: 2...total, using: &rng) : nil
            // Version 1 holds lists; every later version a dictionary, and adds an entity.
            let versions = (1...total + 1).map { version -> SchemaDescription in
                var schema = Self.schema(version: version, tags: version == 1 ? "[String]" : "[String: Int]")
                for extra in 2..<(version + 1) where extra > 1 {
                    schema.entities.append(
                        EntityDescription(
                            name: "Extra\(extra)", attributes: [AttributeDescription(name: "n", type: .int64)]))
                }
                return schema
            }
            // The retype (stage 1) leaves the lists unconverted.
            let stages = (1...total).map { number -> MigrationStage in
                let (from, to) = (versions[number - 1], versions[number])
                guard number == 1 else {
                    // A later custom stage that would mask the value by overwriting it.
                    return number == masking
                        ? .custom(
                            from: from, to: to,
                            steps: [
                                .init(
                                    name: "later", label: "Later", obligations: [],
                                    didMigrate: { context in
                                        try context.execute("UPDATE \"Book\" SET \"tags\" = '{}'")
                                    })
                            ]) : .lightweight(from: from, to: to)
                }
                return .custom(
                    from: from, to: to,
                    steps: [
                        .init(
                            name: "retag", label: "Retype", obligations: [.hook(of: "Book", "tags") { _ in }],
                            didMigrate: { _ in })
                    ])
            }
            let plan = MigrationPlan(current: versions[total], stages: stages, records: [Book<[String: Int]>.self])
            let tester = try MigrationTester(plan: plan, startingAt: versions[0])
            try tester.insert("Book", ["title": .text("b"), "tags": .text("[\"x\"]")])
            #expect {
                _ = try tester.migrate()
            } throws: { error in
                switch error {
                case MigrationError.undecodableRecord(let stage, "Book", "tags", _, _),
                    MigrationError.wrongJSONShape(let stage, "Book", "tags", _, _, _):
                    return stage == "from version 1 to 2"
                default:
                    return false
                }
            }
        }
    }

    /// What the check costs: a lightweight migration (a new optional attribute) of
    /// `MODELWRIGHT_LARGE=1`'s 200,000 rows with and without the records to decode (printed;
    /// timings belong in Benchmarks, so nothing is asserted).
    @Test(.enabled(if: ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1"))
    func theCheckCostsOneReadOfEveryRow() throws {
        let v1 = Self.schema(version: 1, tags: "[String]")
        var v2 = Self.schema(version: 2, tags: "[String]")
        v2.entities[0].attributes.append(AttributeDescription(name: "note", type: .string, isOptional: true))
        for records in [[], [Book<[String]>.self] as [any Record.Type]] {
            let tester = try MigrationTester(
                plan: MigrationPlan(current: v2, stages: [.lightweight(from: v1, to: v2)], records: records),
                startingAt: v1)
            try tester.execute(
                "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 199999) "
                    + "INSERT INTO \"Book\" (\"id\", \"title\", \"tags\") SELECT randomblob(16), 'b' || i, '[\"x\",\"y\"]' FROM n"
            )
            let start = Date()
            _ = try tester.migrate()
            print(
                "RecordDecodingCheckTests: 200000 rows, records checked: \(!records.isEmpty), migration \(Date().timeIntervalSince(start)) s"
            )
        }
    }
}
