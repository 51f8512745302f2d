import Foundation
import ModelwrightTestSupport
import Testing
import Trips

@_spi(Generated) @testable import Modelwright
@testable import ModelwrightPostgres
@testable import ModelwrightSchema

/// Red team 10: the PostgreSQL engine attacked as a new user and an attacker would, with model
/// text planned as `plan` plans it (`FrontEnd.run`) and migrated on both engines. A failing test
/// is a break.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct RedTeam10PostgresTests {
    // MARK: - Harness

    enum Engine: String, CaseIterable { case sqlite, postgres }

    /// The model of `texts` (version 1, 2, …) as `plan` plans it, or the errors.
    static func planned(_ texts: [String]) throws -> (PlannedModel?, [String]) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("rt10-\(UUID().uuidString)")
        let folder = root.appendingPathComponent("RedTen")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        for (index, text) in texts.enumerated() {
            try Data(text.utf8).write(to: folder.appendingPathComponent("RedTen.v\(index + 1).model"))
        }
        let loaded = FrontEnd.run(modelAt: folder.path)
        let errors = loaded.diagnostics.filter { $0.severity == .error }.map(\.description)
        return (loaded.model, errors)
    }

    /// The plan the generated code would carry (custom stages met by `plan`'s stubs).
    static func plan(of model: PlannedModel) -> MigrationPlan {
        MigrationPlan(current: model.versions.last!.schema, stages: model.steps.map(\.shadowStage))
    }

    /// A fresh database's configuration and name.
    static func freshDatabase() throws -> (PostgresConfiguration, String) {
        let cluster = try #require(PostgresCluster.shared)
        let name = "mw_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())"
        let admin = try PostgresConnection(connectingNow: PostgresConfiguration(cluster.connectionString()))
        try admin.execute("CREATE DATABASE \(name)")
        admin.close()
        return (PostgresConfiguration(cluster.connectionString(database: name)), name)
    }

    /// A tester at `start` on `engine` (as the property suites make them).
    static func tester(_ engine: Engine, plan: MigrationPlan, start: SchemaDescription) throws -> MigrationTester {
        switch engine {
        case .sqlite:
            return try MigrationTester(plan: plan, startingAt: start)
        case .postgres:
            let cluster = try #require(PostgresCluster.shared)
            let (configuration, name) = try freshDatabase()
            return try MigrationTester(
                plan: plan, startingAt: start, connection: PostgresConnection(connectingNow: configuration),
                location: URL(string: "postgresql://127.0.0.1:\(cluster.port)/\(name)") ?? URL(fileURLWithPath: name),
                reconnect: { try PostgresConnection(connectingNow: configuration) },
                open: { plan, progress in
                    try Store(postgres: configuration, migrationPlan: plan, readers: 1, progress: progress)
                })
        }
    }

    /// A value as records read it, for comparing engines.
    static func canonical(_ value: SQLValue, as type: AttributeType) -> String {
        if value == .null { return "NULL" }
        switch type {
        case .bool: return (try? Bool(sqlValue: value)).map { "\($0)" } ?? "unreadable \(value)"
        case .int16, .int32, .int64, .int: return (try? Int64(sqlValue: value)).map { "\($0)" } ?? "unreadable \(value)"
        case .double, .float, .date:
            guard let number = try? Double(sqlValue: value) else { return "unreadable \(value)" }
            return number.isNaN ? "nan" : "\(number) [\(String(number.bitPattern, radix: 16))]"
        case .decimal: return (try? Decimal(sqlValue: value)).map { "\($0)" } ?? "unreadable \(value)"
        case .data, .uuid:
            guard let data = try? Data(sqlValue: value) else { return "unreadable \(value)" }
            return data.map { String($0, radix: 16) }.joined(separator: " ")
        case .url: return (try? URL(sqlValue: value)).map(\.absoluteString) ?? "unreadable \(value)"
        case .day: return (try? Day(sqlValue: value)).map(\.description) ?? "unreadable \(value)"
        case .codable:
            guard case .text(let text) = value,
                let parsed = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
                    as? NSObject
            else { return "unreadable \(value)" }
            return "\(parsed)"
        case .enumeration(let description):
            if case .integer(let raw) = value {
                return description.cases.contains { $0.rawValue == "\(raw)" } ? "\(raw)" : "not a case \(raw)"
            }
            guard let raw = try? String(sqlValue: value) else { return "unreadable \(value)" }
            return description.cases.contains { $0.rawValue == raw } ? raw : "not a case \(raw)"
        case .string, .composite: return (try? String(sqlValue: value)) ?? "unreadable \(value)"
        }
    }

    /// The columns an attribute reads (a composite's fields as `attr.field`).
    static func columns(of attribute: AttributeDescription) -> [(String, AttributeType)] {
        guard case .composite(let composite) = attribute.type else { return [(attribute.name, attribute.type)] }
        return composite.fields.map { ("\(attribute.name).\($0.name)", $0.type) }
    }

    /// Every row of every concrete entity of `schema`, by `k`, as `column -> canonical value`.
    static func rows(of tester: MigrationTester, in schema: SchemaDescription) throws -> [Int64: [String: String]] {
        var result: [Int64: [String: String]] = [:]
        for entity in schema.entities where !entity.isAbstract {
            let lineage = TableMapping.lineage(of: entity, in: schema).flatMap(\.attributes)
            for row in try tester.rows(of: entity.name)
            where row["_entity"] == .null || row["_entity"] == .text(entity.name) {
                guard case .integer(let key) = row["k"] else { continue }
                var values: [String: String] = ["entity": entity.name]
                for attribute in lineage {
                    for (column, type) in columns(of: attribute) { values[column] = canonical(row[column], as: type) }
                }
                result[key] = values
            }
        }
        return result
    }

    /// Result of one migration on both engines.
    struct Outcome {
        var refused: [String] = []
        var failures: [String: String] = [:]
        var before: [Engine: [Int64: [String: String]]] = [:]
        var after: [Engine: [Int64: [String: String]]] = [:]
        /// Rows both engines stored alike before.
        var alike: Set<Int64> = []
        /// The PostgreSQL tester's database.
        var postgresDatabase = ""
    }

    /// Plans `texts`, stores `rows` (entity, values with `k`) at version 1 on both engines,
    /// migrates to the last version, and reads every row back.
    static func migrate(_ texts: [String], rows: [(String, [String: SQLValue])]) throws -> Outcome {
        var outcome = Outcome()
        let (model, errors) = try planned(texts)
        guard let model else {
            outcome.refused = errors
            return outcome
        }
        let plan = plan(of: model)
        let first = model.versions[0].schema
        let last = model.versions.last!.schema
        for engine in Engine.allCases {
            let tester = try tester(engine, plan: plan, start: first)
            if engine == .postgres { outcome.postgresDatabase = tester.url.lastPathComponent }
            for (entity, values) in rows {
                do { _ = try tester.insert(entity, values) } catch {
                    print("[\(engine)] insert refused \(values["k"] ?? .null): \(error)")
                }
            }
            outcome.before[engine] = try Self.rows(of: tester, in: first)
            do {
                try tester.migrate().close()
                outcome.after[engine] = try Self.rows(of: tester, in: last)
            } catch {
                outcome.failures[engine.rawValue] = "\(error)"
            }
        }
        let sqliteBefore = outcome.before[.sqlite] ?? [:]
        let postgresBefore = outcome.before[.postgres] ?? [:]
        outcome.alike = Set(sqliteBefore.keys.filter { sqliteBefore[$0] == postgresBefore[$0] })
        return outcome
    }

    /// The differences between the engines' migrated rows (for rows stored alike before).
    static func differences(_ outcome: Outcome) -> [String] {
        var found: [String] = []
        let sqlite = outcome.after[.sqlite] ?? [:]
        let postgres = outcome.after[.postgres] ?? [:]
        for key in outcome.alike.sorted() {
            guard let left = sqlite[key], let right = postgres[key] else {
                found.append(
                    "row \(key): SQLite \(sqlite[key] == nil ? "lost" : "kept"), PostgreSQL \(postgres[key] == nil ? "lost" : "kept")"
                )
                continue
            }
            for column in Set(left.keys).union(right.keys).sorted() where left[column] != right[column] {
                found.append(
                    "row \(key) \(column) (was \(outcome.before[.sqlite]?[key]?[column] ?? "-")): "
                        + "SQLite \(left[column] ?? "-"), PostgreSQL \(right[column] ?? "-")")
            }
        }
        return found
    }

    // MARK: - Class 1: migrations that lose or corrupt a value

    static let boxV1 = """
        model RedTen version 1
        entity Box {
            k: Int64
            a: Int64
            d: Double
            f: Double?
        }

        """
    static let boxV2 = """
        model RedTen version 2
        entity Box {
            k: Int64
            b: Int32 = 7 @renamed(from: a)
            d: Float = 1.5
            f: Float?
        }
        migration from 1 {
            lossy Box.a
            lossy Box.d
            lossy Box.f
        }

        """
    static let boxV3 = """
        model RedTen version 3
        entity Box {
            k: Int64
            c: Double @renamed(from: b)
            d: Double
            f: Double?
            e: String = "it's ? $1 -- /* x"
        }

        """

    /// The doubles narrowed to `Float`: every edge of its range and rounding.
    static let narrowedDoubles: [Double] = [
        0, -0.0, .nan, .infinity, -.infinity, 0.1, -0.1, 1.5,
        Double(Float.greatestFiniteMagnitude), -Double(Float.greatestFiniteMagnitude),
        3.4028235677973366e38, 3.4028235677973362e38, -3.4028235677973366e38, 3.5e38, 1e300,
        .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
        Double(Float.leastNonzeroMagnitude), Double(Float.leastNonzeroMagnitude) / 2,
        Double(Float.leastNonzeroMagnitude) / 2 * 1.000001, -Double(Float.leastNonzeroMagnitude) / 2 * 1.000001,
        Double(Float.leastNormalMagnitude), 1e-40, -1e-40, 1e-50, -1e-50, .leastNonzeroMagnitude,
        -.leastNonzeroMagnitude, .leastNormalMagnitude, 16_777_217, 1.0000000596046448, 1.0000000596046446,
    ]

    /// What `Float(_:)` then widening gives, or the default for a value the `Float` cannot hold.
    static func expectedNarrowed(_ value: Double, default fallback: Double?) -> Double? {
        guard value.isFinite else { return value }
        let rounded = Float(value)
        return rounded.isFinite ? Double(rounded) : fallback
    }

    /// v1 → v2 → v3 in one open: `a` narrowed into a renamed `Int32` with a default, then renamed
    /// again and widened to `Double`; `d`/`f` narrowed to `Float` and widened back; a new string
    /// with SQL-looking text as its default. Both engines must give exactly what Swift gives.
    @Test func threeStepsRenameNarrowWidenKeepEveryValueAlike() throws {
        var rows: [(String, [String: SQLValue])] = []
        let integers: [Int64] = [
            .min, .max, Int64(Int32.min), Int64(Int32.max), Int64(Int32.max) + 1, Int64(Int32.min) - 1, 0, -1, 7,
        ]
        var key: Int64 = 0
        var expectedC: [Int64: Double] = [:]
        var expectedD: [Int64: Double] = [:]
        var expectedF: [Int64: Double?] = [:]
        for (index, double) in Self.narrowedDoubles.enumerated() {
            key += 1
            let integer = integers[index % integers.count]
            rows.append(("Box", ["k": .integer(key), "a": .integer(integer), "d": .real(double), "f": .real(-double)]))
            expectedC[key] = Int32(exactly: integer).map(Double.init) ?? 7
            expectedD[key] = Self.expectedNarrowed(double, default: 1.5)
            expectedF[key] = Self.expectedNarrowed(-double, default: nil)
        }
        let outcome = try Self.migrate([Self.boxV1, Self.boxV2, Self.boxV3], rows: rows)
        #expect(outcome.refused.isEmpty, "refused: \(outcome.refused)")
        #expect(outcome.failures.isEmpty, "failed: \(outcome.failures)")
        let differences = Self.differences(outcome)
        #expect(differences.isEmpty, "\(differences.count) differ:\n\(differences.prefix(20).joined(separator: "\n"))")
        for engine in Engine.allCases {
            guard let after = outcome.after[engine] else { continue }
            var wrong: [String] = []
            for (key, row) in after.sorted(by: { $0.key < $1.key }) {
                guard outcome.before[engine]?[key]?["d"] != "NULL" else { continue }
                let want = [
                    "c": Self.canonical(.real(expectedC[key]!), as: .double),
                    "d": Self.canonical(.real(expectedD[key]!), as: .double),
                    "f": expectedF[key]!.map { Self.canonical(.real($0), as: .double) } ?? "NULL",
                    "e": "it's ? $1 -- /* x",
                ]
                for (column, value) in want where row[column] != value {
                    wrong.append(
                        "row \(key) \(column) (was \(outcome.before[engine]?[key]?[column] ?? "-")): \(row[column] ?? "-"), expected \(value)"
                    )
                }
            }
            #expect(wrong.isEmpty, "\(engine): \(wrong.count) wrong:\n\(wrong.prefix(20).joined(separator: "\n"))")
        }
    }

    /// A `@unique` integer narrowed with a default that a kept row already holds: a value out of
    /// range becomes the default and meets that row. If `plan` accepts the step, it must migrate.
    @Test func aUniqueIntegerNarrowedOntoItsDefaultEitherIsRefusedOrMigrates() throws {
        let v1 = """
            model RedTen version 1
            entity Tag {
                k: Int64
                code: Int64 @unique
            }

            """
        let v2 = """
            model RedTen version 2
            entity Tag {
                k: Int64
                code: Int16 = 0 @unique
            }
            migration from 1 {
                lossy Tag.code
            }

            """
        let rows: [(String, [String: SQLValue])] = [
            ("Tag", ["k": .integer(1), "code": .integer(0)]), ("Tag", ["k": .integer(2), "code": .integer(100_000)]),
        ]
        let outcome = try Self.migrate([v1, v2], rows: rows)
        print("unique narrowing: refused \(outcome.refused), failures \(outcome.failures)")
        if outcome.refused.isEmpty {
            #expect(outcome.failures.isEmpty, "plan accepted the step, the migration fails: \(outcome.failures)")
        }
    }

    /// An attribute moved up a hierarchy while widened, the other child's rows taking its default,
    /// with an Int enum whose cases keep their names at new raw values, and a child's optional
    /// attribute made required with a default, all in one step.
    @Test func movedUpWidenedWithEnumRawValuesRewrittenAlike() throws {
        let v1 = """
            model RedTen version 1
            enum Level: Int { low, mid, high }
            abstract entity Base {
                k: Int64
            }
            entity Leaf: Base {
                n: Int32
                lvl: Level = .mid
                s: String?
            }
            entity Twig: Base {
                m: String?
            }

            """
        let v2 = """
            model RedTen version 2
            enum Level: Int { low = 10, mid = 20, high = 30 }
            abstract entity Base {
                k: Int64
                n: Int64 = 5
            }
            entity Leaf: Base {
                lvl: Level = .mid
                s: String = "none"
            }
            entity Twig: Base {
                m: String?
            }

            """
        var rows: [(String, [String: SQLValue])] = []
        let ns: [Int64] = [Int64(Int32.min), Int64(Int32.max), 0, -1]
        for (index, n) in ns.enumerated() {
            rows.append(
                (
                    "Leaf",
                    [
                        "k": .integer(Int64(index)), "n": .integer(n), "lvl": .integer(Int64(index % 3)),
                        "s": index % 2 == 0 ? .null : .text("t\(index)"),
                    ]
                ))
        }
        rows.append(("Twig", ["k": .integer(100), "m": .text("twig")]))
        rows.append(("Twig", ["k": .integer(101), "m": .null]))
        let outcome = try Self.migrate([v1, v2], rows: rows)
        #expect(outcome.refused.isEmpty, "refused: \(outcome.refused)")
        #expect(outcome.failures.isEmpty, "failed: \(outcome.failures)")
        let differences = Self.differences(outcome)
        #expect(differences.isEmpty, "\(differences.count) differ:\n\(differences.prefix(20).joined(separator: "\n"))")
        for engine in Engine.allCases {
            guard let after = outcome.after[engine] else { continue }
            for (index, n) in ns.enumerated() {
                let row = after[Int64(index)]
                #expect(row?["n"] == "\(n)", "\(engine) Leaf \(index) n: \(row?["n"] ?? "lost")")
                #expect(
                    row?["lvl"] == "\([10, 20, 30][index % 3])", "\(engine) Leaf \(index) lvl: \(row?["lvl"] ?? "lost")"
                )
                #expect(
                    row?["s"] == (index % 2 == 0 ? "none" : "t\(index)"),
                    "\(engine) Leaf \(index) s: \(row?["s"] ?? "lost")")
            }
            #expect(
                after[100]?["n"] == "5" && after[101]?["n"] == "5", "\(engine) Twig n: \(after[100]?["n"] ?? "lost")")
            #expect(after[100]?["m"] == "twig", "\(engine) Twig m: \(after[100]?["m"] ?? "lost")")
        }
    }

    /// A field of an optional composite narrowed from `Double?` to a required `Float` with a
    /// default: a record without the composite must stay without it (readable), one with it gets
    /// the rounded value or the default.
    @Test func anOptionalCompositesFieldMadeRequiredWithADefault() async throws {
        let v1 = """
            model RedTen version 1
            composite Spot {
                city: String
                lat: Double?
            }
            entity Pin {
                k: Int64
                at: Spot?
            }

            """
        let v2 = """
            model RedTen version 2
            composite Spot {
                city: String
                lat: Double = 2.5
            }
            entity Pin {
                k: Int64
                at: Spot?
            }

            """
        let rows: [(String, [String: SQLValue])] = [
            ("Pin", ["k": .integer(1), "at.city": .null, "at.lat": .null]),
            ("Pin", ["k": .integer(2), "at.city": .text("Oslo"), "at.lat": .null]),
            ("Pin", ["k": .integer(3), "at.city": .text("Rome"), "at.lat": .real(41.9)]),
            ("Pin", ["k": .integer(4), "at.city": .text("Far"), "at.lat": .real(1e300)]),
            ("Pin", ["k": .integer(5), "at.city": .text("Tiny"), "at.lat": .real(-1e-50)]),
            ("Pin", ["k": .integer(6), "at.city": .text("Inf"), "at.lat": .real(-.infinity)]),
        ]
        let outcome = try Self.migrate([v1, v2], rows: rows)
        print("composite: refused \(outcome.refused), failures \(outcome.failures)")
        guard outcome.refused.isEmpty else { return }
        #expect(outcome.failures.isEmpty, "plan accepted the step, the migration fails: \(outcome.failures)")
        let differences = Self.differences(outcome)
        #expect(differences.isEmpty, "\(differences.count) differ:\n\(differences.prefix(20).joined(separator: "\n"))")
        for engine in Engine.allCases {
            guard let after = outcome.after[engine] else { continue }
            print("composite \(engine): \(after.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" })")
            #expect(
                after[1]?["at.city"] == "NULL" && after[1]?["at.lat"] == "NULL",
                "\(engine) absent composite: \(after[1] ?? [:])")
            #expect(after[2]?["at.lat"] == Self.canonical(.real(2.5), as: .double), "\(engine): \(after[2] ?? [:])")
            #expect(after[3]?["at.lat"] == Self.canonical(.real(41.9), as: .double), "\(engine): \(after[3] ?? [:])")
            #expect(after[4]?["at.lat"] == Self.canonical(.real(1e300), as: .double), "\(engine): \(after[4] ?? [:])")
            #expect(after[5]?["at.lat"] == Self.canonical(.real(-1e-50), as: .double), "\(engine): \(after[5] ?? [:])")
            #expect(
                after[6]?["at.lat"] == Self.canonical(.real(-.infinity), as: .double), "\(engine): \(after[6] ?? [:])")
        }
        // What the app reads on PostgreSQL: Pin 2 was `Spot(city: "Oslo", lat: nil)` in version 1.
        let cluster = try #require(PostgresCluster.shared)
        let store = try Store(
            postgres: PostgresConfiguration(cluster.connectionString(database: outcome.postgresDatabase)),
            schema: try #require(try Self.planned([v1, v2]).0).versions[1].schema, readers: 1)
        let pins = try await store.performQuery { try $0.fetch(FetchRequest<Pin>()) }
        let oslo = pins.first { $0.k == 2 }
        #expect(
            oslo?.at?.city == "Oslo", "Pin 2 reads as \(String(describing: oslo)): its composite (city Oslo) is gone")
        try store.close()
    }

    struct Spot: CompositeValue, Hashable {
        static let columnCount = 2
        var city: String
        var lat: Double
        init(city: String, lat: Double) {
            self.city = city
            self.lat = lat
        }
        func encode(to row: inout RowEncoder) throws {
            try row.encode(city)
            try row.encode(lat)
        }
        init?(row: inout RowDecoder) throws {
            let city: String? = try row.decode()
            let lat: Double? = try row.decode()
            guard let city, let lat else { return nil }
            self.init(city: city, lat: lat)
        }
    }

    struct Pin: Record, Hashable {
        typealias ID = RecordID<Pin>
        static let entityName = "Pin"
        let id: ID
        var k: Int64
        var at: Spot?
        func encode(to row: inout RowEncoder) throws {
            try row.encode(k)
            try row.encodeComposite(at)
        }
        init(id: ID, row: inout RowDecoder) throws {
            self.id = id
            k = try row.decode()
            at = try row.decodeComposite()
        }
        struct Fields: RecordFields {
            typealias Target = Pin
            let path: FieldPath
        }
    }

    /// Int64 → Float at values where rounding through a double first would differ from rounding
    /// once (2^60 + 2^36 + 1), and Int32/Int16 → Float, moved down the hierarchy at once.
    @Test func integersToFloatRoundOnceOnBothEngines() throws {
        let v1 = """
            model RedTen version 1
            entity Base {
                k: Int64
                w: Int64?
            }
            entity Leaf: Base {
                x: Int32?
            }

            """
        let v2 = """
            model RedTen version 2
            entity Base {
                k: Int64
            }
            entity Leaf: Base {
                w: Float?
                x: Float?
            }
            migration from 1 {
                lossy Base.w
                lossy Leaf.x
            }

            """
        let specials: [Int64] = [
            (1 << 60) + (1 << 36) + 1, (1 << 60) + (1 << 36), (1 << 60) + (1 << 36) - 1, -((1 << 60) + (1 << 36) + 1),
            (1 << 62) + (1 << 38) + 1, .max, .min, 16_777_217, 16_777_219, (1 << 53) + 1, (1 << 54) + (1 << 30) + 1,
        ]
        var rows: [(String, [String: SQLValue])] = []
        for (index, value) in specials.enumerated() {
            rows.append(
                (
                    "Leaf",
                    [
                        "k": .integer(Int64(index)), "w": .integer(value),
                        "x": .integer(Int64(Int32(truncatingIfNeeded: value))),
                    ]
                ))
        }
        rows.append(("Base", ["k": .integer(100), "w": .integer(5)]))
        let outcome = try Self.migrate([v1, v2], rows: rows)
        print("int→float: refused \(outcome.refused), failures \(outcome.failures)")
        guard outcome.refused.isEmpty else { return }
        #expect(outcome.failures.isEmpty, "failed: \(outcome.failures)")
        let differences = Self.differences(outcome)
        #expect(differences.isEmpty, "\(differences.count) differ:\n\(differences.prefix(20).joined(separator: "\n"))")
        for engine in Engine.allCases {
            guard let after = outcome.after[engine] else { continue }
            for (index, value) in specials.enumerated() {
                let want = Self.canonical(.real(Double(Float(value))), as: .float)
                #expect(
                    after[Int64(index)]?["w"] == want,
                    "\(engine) \(value): \(after[Int64(index)]?["w"] ?? "lost"), expected \(want)")
                let x = Int32(truncatingIfNeeded: value)
                let wantX = Self.canonical(.real(Double(Float(x))), as: .float)
                #expect(
                    after[Int64(index)]?["x"] == wantX,
                    "\(engine) x \(x): \(after[Int64(index)]?["x"] ?? "lost"), expected \(wantX)")
            }
        }
    }

    /// Defaults that new required attributes and optional → required give existing rows: text
    /// with quotes, question marks, dollar signs and comment marks, a fractional date, a decimal
    /// with 38 digits, a tiny decimal, a URL, a UUID and a day. Both engines must store the
    /// same values.
    @Test func defaultsGivenToExistingRowsAreTheSameOnBothEngines() throws {
        // Known break, left open: SQLite stores a Float attribute's default as the Double written
        // (0.1), where Swift and PostgreSQL hold Float(0.1); widened to Double later, the two differ.
        // Rounding the literal changes the schema checksum of every model with such a default.
        withKnownIssue {
            let v1 = """
                model RedTen version 1
                entity Row {
                    k: Int64
                    s: String?
                    t: Date?
                }

                """
            let v2 = """
                model RedTen version 2
                entity Row {
                    k: Int64
                    s: String = "a'b''c ? $1 $$ -- x /* y */ \\\\ é 🙂"
                    t: Date = "1999-12-31T23:59:59.999999+14:00"
                    t2: Date = "2001-01-01T00:00:00.0000005Z"
                    t3: Date = "0001-01-01T00:00:00.123456Z"
                    dec: Decimal = 12345678901234567890123456789.012345678
                    tiny: Decimal = 0.00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001
                    neg: Decimal = -99999999999999999999999999999999999999
                    u: URL = "https://example.com/a?b=c&d=%20e#f"
                    id2: UUID = "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"
                    day: Day = "0001-01-01"
                    fl: Float = 0.1
                    db: Double = 2.2250738585072014e-308
                    i16: Int16 = -32768
                }

                """
            let rows: [(String, [String: SQLValue])] = [
                ("Row", ["k": .integer(1), "s": .null, "t": .null]),
                ("Row", ["k": .integer(2), "s": .text("kept"), "t": .real(123.25)]),
            ]
            let outcome = try Self.migrate([v1, v2], rows: rows)
            print("defaults: refused \(outcome.refused), failures \(outcome.failures)")
            guard outcome.refused.isEmpty else {
                Issue.record("refused (check the literals): \(outcome.refused)")
                return
            }
            #expect(outcome.failures.isEmpty, "failed: \(outcome.failures)")
            // Dates below a microsecond differ by design (PostgreSQL rounds, SQLite keeps the double).
            let differences = Self.differences(outcome).filter { !$0.contains(" t (") && !$0.contains(" t2 (") }
            #expect(
                differences.isEmpty, "\(differences.count) differ:\n\(differences.prefix(30).joined(separator: "\n"))")
            for engine in Engine.allCases { print("defaults \(engine): \(outcome.after[engine]?[1] ?? [:])") }
        }
    }

    /// Enum cases that swap raw values (string and int; one case's new raw value is another's old
    /// one) with a rename beside them: each row must keep its case by name, on both engines.
    /// (Attributes or entities that swap names are refused by `plan` at a located error.)
    @Test func swappedRawValuesKeepEveryRowsCase() throws {
        let v1 = """
            model RedTen version 1
            enum Kind: String { a = "x", b = "y", c }
            enum Level: Int { low, mid, high }
            entity Box {
                k: Int64
                kind: Kind
                level: Level
                p: Int64
                q: Int64
                r: String?
                t: String?
            }

            """
        let v2 = """
            model RedTen version 2
            enum Kind: String { a = "y", b = "x", c = "a" }
            enum Level: Int { low = 1, mid = 2, high = 0 }
            entity Box {
                k: Int64
                kind: Kind
                level: Level
                p2: Int64 @renamed(from: p)
                q: Int64
                r: String?
                t: String?
            }

            """
        let kinds = ["x", "y", "c"]
        var rows: [(String, [String: SQLValue])] = []
        for index in 0..<6 {
            rows.append(
                (
                    "Box",
                    [
                        "k": .integer(Int64(index)), "kind": .text(kinds[index % 3]),
                        "level": .integer(Int64(index % 3)),
                        "p": .integer(Int64(100 + index)), "q": .integer(Int64(200 + index)), "r": .text("r\(index)"),
                        "t": index % 2 == 0 ? .null : .text("t\(index)"),
                    ]
                ))
        }
        let outcome = try Self.migrate([v1, v2], rows: rows)
        print("swaps: refused \(outcome.refused), failures \(outcome.failures)")
        guard outcome.refused.isEmpty else { return }
        #expect(outcome.failures.isEmpty, "plan accepted the step, the migration fails: \(outcome.failures)")
        let newKinds = ["y", "x", "a"]  // a, b, c by case
        let newLevels = ["1", "2", "0"]
        for engine in Engine.allCases {
            guard let after = outcome.after[engine] else { continue }
            for index in 0..<6 {
                let row = after[Int64(index)] ?? [:]
                let want = [
                    "kind": newKinds[index % 3], "level": newLevels[index % 3], "p2": "\(100 + index)",
                    "q": "\(200 + index)",
                    "r": "r\(index)", "t": index % 2 == 0 ? "NULL" : "t\(index)",
                ]
                for (column, value) in want where row[column] != value {
                    Issue.record("\(engine) row \(index) \(column): \(row[column] ?? "lost"), expected \(value)")
                }
            }
        }
    }

    /// Two entities that swap names (and so tables), one with a relationship to the other, in one step.
    @Test func entitiesThatSwapNamesKeepTheirRowsAndLinks() throws {
        let v1 = """
            model RedTen version 1
            entity Alpha {
                k: Int64
                label: String
                beta: Beta? @inverse(alphas)
            }
            entity Beta {
                k: Int64
                weight: Double
                alphas: Set<Alpha> @inverse(beta)
            }

            """
        let v2 = """
            model RedTen version 2
            entity Beta {
                @renamed(from: Alpha)
                k: Int64
                label: String
                alpha: Alpha? @inverse(betas) @renamed(from: beta)
            }
            entity Alpha {
                @renamed(from: Beta)
                k: Int64
                weight: Double
                betas: Set<Beta> @inverse(alpha) @renamed(from: alphas)
            }

            """
        let (model, errors) = try Self.planned([v1, v2])
        guard let model else {
            print("entity swap refused: \(errors)")
            return
        }
        let plan = Self.plan(of: model)
        for engine in Engine.allCases {
            let tester = try Self.tester(engine, plan: plan, start: model.versions[0].schema)
            let beta = try tester.insert("Beta", ["k": .integer(1), "weight": .real(2.5)])
            _ = try tester.insert("Alpha", ["k": .integer(2), "label": .text("l"), "beta": beta])
            do {
                try tester.migrate().close()
                let alphas = try tester.rows(of: "Alpha")
                let betas = try tester.rows(of: "Beta")
                #expect(alphas.first?["weight"] == .real(2.5), "\(engine): \(alphas)")
                #expect(betas.first?["label"] == .text("l"), "\(engine): \(betas)")
                #expect(betas.first?["alpha"] == beta, "\(engine): \(betas)")
            } catch {
                Issue.record("\(engine): the accepted step fails: \(error)")
            }
        }
    }

    /// A `@unique` optional attribute made required with a default, on a table where several
    /// rows have no value: each gets the default and they meet. `plan`'s check fills every
    /// column, so it never sees a NULL; if `plan` accepts the step, it must migrate.
    @Test func aUniqueOptionalMadeRequiredWithADefaultEitherIsRefusedOrMigrates() throws {
        let v1 = """
            model RedTen version 1
            entity Tag {
                k: Int64
                code: String? @unique
            }

            """
        let v2 = """
            model RedTen version 2
            entity Tag {
                k: Int64
                code: String = "none" @unique
            }

            """
        let rows: [(String, [String: SQLValue])] = [
            ("Tag", ["k": .integer(1), "code": .null]), ("Tag", ["k": .integer(2), "code": .null]),
            ("Tag", ["k": .integer(3), "code": .text("c")]),
        ]
        let outcome = try Self.migrate([v1, v2], rows: rows)
        print("unique optional → required: refused \(outcome.refused), failures \(outcome.failures)")
        if outcome.refused.isEmpty {
            #expect(outcome.failures.isEmpty, "plan accepted the step, the migration fails: \(outcome.failures)")
        }
    }

    /// A new required field with a default in an optional composite: a record that has the
    /// composite gets the default, one without keeps none.
    @Test func aNewRequiredFieldInAnOptionalComposite() throws {
        let v1 = """
            model RedTen version 1
            composite Spot {
                city: String
            }
            entity Pin {
                k: Int64
                at: Spot?
            }

            """
        let v2 = """
            model RedTen version 2
            composite Spot {
                city: String
                zoom: Int16 = 4
            }
            entity Pin {
                k: Int64
                at: Spot?
            }

            """
        let rows: [(String, [String: SQLValue])] = [
            ("Pin", ["k": .integer(1), "at.city": .null]), ("Pin", ["k": .integer(2), "at.city": .text("Oslo")]),
        ]
        let outcome = try Self.migrate([v1, v2], rows: rows)
        print("new composite field: refused \(outcome.refused), failures \(outcome.failures)")
        guard outcome.refused.isEmpty else { return }
        #expect(outcome.failures.isEmpty, "failed: \(outcome.failures)")
        for engine in Engine.allCases {
            let after = outcome.after[engine] ?? [:]
            #expect(after[2]?["at.city"] == "Oslo" && after[2]?["at.zoom"] == "4", "\(engine): \(after[2] ?? [:])")
            #expect(after[1]?["at.city"] == "NULL", "\(engine): \(after[1] ?? [:])")
        }
    }

    /// A `Float` default given to existing rows, then widened to `Double`: Swift's `Float(0.1)`
    /// widened is 0.10000000149011612 on both engines, or the engines disagree for good.
    @Test func aFloatDefaultThenWidenedIsTheSameOnBothEngines() throws {
        // Known break, left open: SQLite stores a Float attribute's default as the Double written
        // (0.1), where Swift and PostgreSQL hold Float(0.1); widened to Double later, the two differ.
        // Rounding the literal changes the schema checksum of every model with such a default.
        withKnownIssue {
            let v1 = "model RedTen version 1\nentity Row {\n    k: Int64\n}\n"
            let v2 = "model RedTen version 2\nentity Row {\n    k: Int64\n    fl: Float = 0.1\n}\n"
            let v3 = "model RedTen version 3\nentity Row {\n    k: Int64\n    fl: Double\n}\n"
            let outcome = try Self.migrate([v1, v2, v3], rows: [("Row", ["k": .integer(1)])])
            #expect(outcome.refused.isEmpty && outcome.failures.isEmpty, "\(outcome.refused) \(outcome.failures)")
            let want = Self.canonical(.real(Double(Float(0.1))), as: .double)
            for engine in Engine.allCases {
                #expect(
                    outcome.after[engine]?[1]?["fl"] == want,
                    "\(engine): \(outcome.after[engine]?[1]?["fl"] ?? "lost"), Swift gives \(want)")
            }
        }
    }

    /// A child entity renamed while one of its attributes, in a compound `@unique` and an index,
    /// becomes text (Int32 → String) and another widens (Int16 → Int64), in a shared table: values
    /// alike on both engines, and the PostgreSQL store opens as a fresh store of version 2.
    @Test func aRenamedChildRetypedInsideACompoundUniqueOpensAsAFreshStore() throws {
        let v1 = """
            model RedTen version 1
            entity Base {
                k: Int64
            }
            entity Leaf: Base {
                a: Int32 @indexed
                b: Int16?
                name: String
                @unique(a, name)
                @index(b, name)
            }

            """
        let v2 = """
            model RedTen version 2
            entity Base {
                k: Int64
            }
            entity Sprout: Base {
                @renamed(from: Leaf)
                a: String @indexed
                b: Int64?
                name: String
                @unique(a, name)
                @index(b, name)
            }

            """
        var rows: [(String, [String: SQLValue])] = [("Base", ["k": .integer(100)])]
        let values: [Int64] = [Int64(Int32.min), Int64(Int32.max), 0, -1, 10, 9]
        for (index, value) in values.enumerated() {
            rows.append(
                (
                    "Leaf",
                    [
                        "k": .integer(Int64(index)), "a": .integer(value), "name": .text("n"),
                        "b": index % 2 == 0 ? .null : .integer(Int64(Int16.min) + Int64(index)),
                    ]
                ))
        }
        let outcome = try Self.migrate([v1, v2], rows: rows)
        print("renamed child: refused \(outcome.refused), failures \(outcome.failures)")
        guard outcome.refused.isEmpty else { return }
        #expect(outcome.failures.isEmpty, "failed: \(outcome.failures)")
        let differences = Self.differences(outcome)
        #expect(differences.isEmpty, "\(differences.count) differ:\n\(differences.prefix(20).joined(separator: "\n"))")
        for engine in Engine.allCases {
            for (index, value) in values.enumerated() {
                #expect(
                    outcome.after[engine]?[Int64(index)]?["a"] == "\(value)",
                    "\(engine): \(outcome.after[engine]?[Int64(index)] ?? [:])")
            }
        }
        let cluster = try #require(PostgresCluster.shared)
        let schema = try #require(try Self.planned([v1, v2]).0).versions[1].schema
        try Store(
            postgres: PostgresConfiguration(cluster.connectionString(database: outcome.postgresDatabase)),
            schema: schema,
            readers: 1
        ).close()
    }

    // MARK: - Class 2: identifiers and names

    /// 63-byte names (the limit), with indexes and a compound unique constraint whose derived
    /// names agree in their first 63 bytes, a many-to-many join table at the limit, all renamed
    /// in a migration; the migrated store must open as a fresh store of version 2 and keep its rows.
    @Test func sixtyThreeByteNamesRenamedKeepTheirRowsAndIndexes() throws {
        let entity1 = "E" + String(repeating: "n", count: 30)  // 31 bytes
        let entity2 = "F" + String(repeating: "m", count: 30)
        let attrA = String(repeating: "a", count: 62) + "1"  // 63 bytes
        let attrB = String(repeating: "a", count: 62) + "2"
        let newA = String(repeating: "b", count: 62) + "1"
        let relationship = String(repeating: "r", count: 63 - entity1.count - 2)  // `_E…_r…` = 63
        let v1 = """
            model RedTen version 1
            entity \(entity1) {
                k: Int64 @indexed
                \(attrA): String @indexed
                \(attrB): String @indexed
                \(relationship): Set<Other> @inverse(back)
                @unique(\(attrA), \(attrB))
            }
            entity Other {
                k: Int64
                back: Set<\(entity1)> @inverse(\(relationship))
            }

            """
        let v2 = """
            model RedTen version 2
            entity \(entity2) {
                @renamed(from: \(entity1))
                k: Int64 @indexed
                \(newA): String @indexed @renamed(from: \(attrA))
                \(attrB): String? @indexed
                \(relationship): Set<Other> @inverse(back)
                @unique(\(newA), \(attrB))
            }
            entity Other {
                k: Int64
                back: Set<\(entity2)> @inverse(\(relationship))
            }

            """
        let (model, errors) = try Self.planned([v1, v2])
        guard let model else {
            print("long names refused: \(errors)")
            // Refused at a located error is fine; note it for the report.
            return
        }
        let plan = Self.plan(of: model)
        let tester = try Self.tester(.postgres, plan: plan, start: model.versions[0].schema)
        let id = try tester.insert(entity1, ["k": .integer(1), attrA: .text("x"), attrB: .text("y")])
        let other = try tester.insert("Other", ["k": .integer(2)])
        print("ids \(id) \(other)")
        do {
            try tester.migrate().close()
        } catch {
            Issue.record("the accepted step fails on PostgreSQL: \(error)")
            return
        }
        let after = try tester.rows(of: entity2)
        #expect(after.count == 1)
        #expect(after.first?[newA] == .text("x"))
        let cluster = try #require(PostgresCluster.shared)
        let store = try Store(
            postgres: PostgresConfiguration(cluster.connectionString(database: tester.url.lastPathComponent)),
            schema: model.versions[1].schema, readers: 1)
        try store.close()
    }

    /// Names that are SQL keywords and differ from each other only by case, and non-ASCII names,
    /// where `validate` accepts them: created, written, reopened and migrated on PostgreSQL.
    @Test func keywordNamesCreateReopenMigrateAndCaseTwinsAreRefused() throws {
        let v1 = """
            model RedTen version 1
            entity Select {
                k: Int64
                `order`: Int32 @indexed
                `from`: String @unique
            }
            entity Group {
                k: Int64
                `user`: String?
            }

            """
        let v2 = """
            model RedTen version 2
            entity Table {
                @renamed(from: Select)
                k: Int64
                `group`: Int64 @indexed @renamed(from: order)
                `from`: String @unique
                `where`: String = "ü"
            }
            entity Group {
                k: Int64
                `user`: String?
            }

            """
        let (model, errors) = try Self.planned([v1, v2])
        let planned = try #require(model, "\(errors)")
        let plan = Self.plan(of: planned)
        for engine in Engine.allCases {
            let tester = try Self.tester(engine, plan: plan, start: planned.versions[0].schema)
            _ = try tester.insert("Select", ["k": .integer(1), "order": .integer(9), "from": .text("f")])
            do {
                try tester.migrate().close()
                let rows = try tester.rows(of: "Table")
                #expect(rows.first?["group"] == .integer(9), "\(engine): \(rows)")
                #expect(rows.first?["where"] == .text("ü"), "\(engine): \(rows)")
            } catch {
                Issue.record("\(engine): \(error)")
            }
        }
        // Names that differ only by case, and non-ASCII names: refused with an error that says why.
        let twins = """
            model RedTen version 1
            entity Select {
                k: Int64
                `order`: Int32
                oRDER: String?
                größe: Int16 = 3
            }
            entity SELECT {
                k: Int64
            }

            """
        let (refused, reasons) = try Self.planned([twins])
        #expect(refused == nil)
        #expect(
            reasons.contains { $0.contains("without case") } && reasons.contains { $0.contains("not a valid name") },
            "\(reasons)")
    }

    // MARK: - Class 3: bad input and the boundary

    /// A role whose password has every character a URL or a conninfo string treats specially;
    /// every error a store can give on that connection (newer version, another model, a column
    /// dropped, a migration refused, a bad database name, a statement timeout) must not show it,
    /// in any spelling.
    @Test func noErrorOfAStoreShowsAnOddPassword() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let (_, name) = try Self.freshDatabase()
        let password = "Zq9'x\"y\\ w@r:d/%2F?#&=é"
        let role = "rt10_\(UUID().uuidString.prefix(8).lowercased())"
        let admin = try await PostgresConnection(PostgresConfiguration(cluster.connectionString()))
        let quoted = password.replacingOccurrences(of: "'", with: "''")
        _ = try await admin.execute("CREATE ROLE \(role) LOGIN SUPERUSER PASSWORD '\(quoted)'")
        await admin.close()
        let encoded = password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let url = "postgresql://\(role):\(encoded)@127.0.0.1:\(cluster.port)/\(name)"
        let escaped = password.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
        let keyValue = "host=127.0.0.1 port=\(cluster.port) user=\(role) password='\(escaped)' dbname=\(name)"
        let spellings = [password, encoded, escaped, "Zq9", encoded.lowercased(), "w@r:d"]
        var texts: [String] = []
        func collect(_ error: any Error) {
            texts.append("\(error)")
            texts.append(String(reflecting: error))
            texts.append(error.localizedDescription)
            texts.append((error as? LocalizedError)?.errorDescription ?? "")
        }
        let v1 = """
            model RedTen version 1
            entity Box {
                k: Int64
                a: Int64
            }

            """
        let v2 = """
            model RedTen version 2
            entity Box {
                k: Int64
                a: Int16 = 0
            }
            migration from 1 {
                lossy Box.a
            }

            """
        let (model, errors) = try Self.planned([v1, v2])
        let planned = try #require(model, "\(errors)")
        let plan1 = MigrationPlan(current: planned.versions[0].schema, stages: [])
        let plan2 = Self.plan(of: planned)
        for connectionString in [url, keyValue] {
            let configuration = PostgresConfiguration(connectionString)
            texts.append("\(configuration)")
            texts.append(String(reflecting: configuration))
            // Created at version 2, then opened as version 1: newer.
            let (_, database) = try Self.freshDatabase()
            let here = connectionString.replacingOccurrences(of: name, with: database)
            try Store(postgres: PostgresConfiguration(here), migrationPlan: plan2, readers: 1).close()
            do { try Store(postgres: PostgresConfiguration(here), migrationPlan: plan1, readers: 1).close() } catch {
                collect(error)
            }
            // Another model's schema.
            do {
                try Store(postgres: PostgresConfiguration(here), schema: RedTeam9PostgresTests.schema, readers: 1)
                    .close()
            } catch {
                collect(error)
            }
            // A column dropped behind the store's back.
            try cluster.psql("ALTER TABLE \"Box\" DROP COLUMN \"a\"", database: database)
            do {
                try Store(postgres: PostgresConfiguration(here), schema: planned.versions[1].schema, readers: 1).close()
            } catch {
                collect(error)
            }
            // A database that does not exist, and an unreachable port.
            do {
                try Store(
                    postgres: PostgresConfiguration(
                        connectionString.replacingOccurrences(of: name, with: "nope_\(role)")),
                    schema: planned.versions[1].schema, readers: 1
                ).close()
            } catch {
                collect(error)
            }
            do {
                let badPort = connectionString.replacingOccurrences(of: "\(cluster.port)", with: "1")
                try Store(postgres: PostgresConfiguration(badPort), schema: planned.versions[1].schema, readers: 1)
                    .close()
            } catch {
                collect(error)
            }
            // A migration that fails: v1 rows with a value v2 cannot read in a composite-free way:
            // a v1 database whose Box table lost its column, migrated.
            let (_, third) = try Self.freshDatabase()
            let there = connectionString.replacingOccurrences(of: name, with: third)
            try Store(postgres: PostgresConfiguration(there), migrationPlan: plan1, readers: 1).close()
            try cluster.psql("ALTER TABLE \"Box\" RENAME COLUMN \"a\" TO \"zz\"", database: third)
            do { try Store(postgres: PostgresConfiguration(there), migrationPlan: plan2, readers: 1).close() } catch {
                collect(error)
            }
            // A statement timeout on a plain connection.
            var timed = configuration
            timed.statementTimeout = .milliseconds(50)
            do {
                let connection = try await PostgresConnection(timed)
                _ = try await connection.execute("SELECT pg_sleep(2)")
                await connection.close()
            } catch {
                collect(error)
            }
        }
        #expect(texts.count > 10)
        for text in texts {
            for spelling in spellings where text.contains(spelling) {
                Issue.record("the password shows as \(spelling) in: \(text)")
            }
        }
        print("collected \(texts.count) error texts; first: \(texts.prefix(4))")
    }

    /// A migration whose writer is ended by `pg_terminate_backend` while it rewrites a large
    /// table: the error must say so, nothing half-written may stay (the database still at
    /// version 1 with every value), and the next open migrates.
    @Test func aMigrationKilledMidwayLeavesVersionOneWhole() async throws {
        let v1 = """
            model RedTen version 1
            entity Box {
                k: Int64
                a: Int64
                s: String
            }

            """
        let v2 = """
            model RedTen version 2
            entity Box {
                k: Int64 @indexed
                a: Int16 = -1
                t: String @renamed(from: s)
            }
            migration from 1 {
                lossy Box.a
            }

            """
        let (model, errors) = try Self.planned([v1, v2])
        let planned = try #require(model, "\(errors)")
        let (configuration, name) = try Self.freshDatabase()
        let plan1 = MigrationPlan(current: planned.versions[0].schema, stages: [])
        try Store(postgres: configuration, migrationPlan: plan1, readers: 1).close()
        let cluster = try #require(PostgresCluster.shared)
        try cluster.psql(
            "INSERT INTO \"Box\" (id, k, a, s) SELECT gen_random_uuid(), g, g * 1000, 'row ' || g FROM generate_series(1, 600000) g",
            database: name)
        let killer = Task.detached {
            let connection = try await PostgresConnection(configuration)
            var killed = 0
            for _ in 0..<4000 {
                let rows = try await connection.query(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
                        + "AND pid <> pg_backend_pid() AND state = 'active' AND query NOT ILIKE '%pg_stat_activity%' "
                        + "AND (query ILIKE '%ALTER TABLE%' OR query ILIKE '%UPDATE \"Box%' OR query ILIKE '%INSERT INTO \"Box%')",
                    format: .text)
                killed += Int(rows.count)
                if killed > 0 { break }
                try await Task.sleep(for: .milliseconds(5))
            }
            await connection.close()
            return killed
        }
        let plan2 = Self.plan(of: planned)
        var failure = "none"
        do {
            try Store(postgres: configuration, migrationPlan: plan2, readers: 1).close()
        } catch {
            failure = "\(error)"
        }
        let killed = try await killer.value
        print("killed \(killed), migration error: \(failure)")
        if killed > 0, failure != "none" {
            // Still version 1, whole.
            let count = try cluster.psql("SELECT count(*), sum(a), count(DISTINCT s) FROM \"Box\"", database: name)
            #expect(
                count.trimmingCharacters(in: .whitespacesAndNewlines) == "600000|180000300000000|600000",
                "after the kill: \(count)")
            #expect(
                failure.localizedCaseInsensitiveContains("lost") || failure.localizedCaseInsensitiveContains("terminat")
                    || failure.localizedCaseInsensitiveContains("connection"),
                "the error does not say the connection went: \(failure)")
            // The next open migrates.
            try Store(postgres: configuration, migrationPlan: plan2, readers: 1).close()
            let after = try cluster.psql(
                "SELECT count(*), count(*) FILTER (WHERE a = -1), count(DISTINCT t) FROM \"Box\"", database: name)
            #expect(
                after.trimmingCharacters(in: .whitespacesAndNewlines) == "600000|599968|600000",
                "after the migration: \(after)")
        }
    }

    /// Values written behind the store's back that the column type takes but the record cannot
    /// read: JSON of another shape in a `Codable` column, a raw value that is no enum case, a
    /// number of JSON too large for any Swift number. Each fetch must fail with an error, never
    /// read `nil` or a default, never crash.
    @Test func valuesWrittenBehindTheStoresBackAreErrorsNotNil() async throws {
        let configuration = try await makeDatabase()
        let store = try Store(postgres: configuration, schema: Trips.schema, readers: 1)
        try await store.performAndSave {
            try $0.insert(
                User(username: "u", givenName: "G", familyName: "F", joinedAt: Date(timeIntervalSinceReferenceDate: 0)))
        }
        let name = try await databaseName(configuration)
        let cluster = try #require(PostgresCluster.shared)
        let attacks = [
            "UPDATE \"User\" SET preferences = '[1, 2]'",
            "UPDATE \"User\" SET preferences = '{\"a\": 1e400}'",
            "UPDATE \"User\" SET preferences = '\"just text\"'",
            "UPDATE \"User\" SET preferences = 'null'",
            "UPDATE \"User\" SET role = 'superuser', preferences = NULL",
            "UPDATE \"User\" SET role = 'member', \"joinedAt\" = 'infinity'",
        ]
        for attack in attacks {
            try cluster.psql(attack, database: name)
            var outcome: String
            do {
                let users = try await store.performQuery { try $0.fetch(User.request()) }
                outcome =
                    "read \(users.map { "preferences \(String(describing: $0.preferences)), role \($0.role), joinedAt \($0.joinedAt)" })"
            } catch {
                outcome = "error: \(error)"
            }
            print("\(attack) → \(outcome)")
            if attack.contains("infinity") { continue }
            #expect(outcome.hasPrefix("error"), "\(attack) → \(outcome)")
        }
        try store.close()
    }

    /// Every connection of a store that observes (writer, readers, listener) is ended by the
    /// server; another store then commits. The observer must hear it with the row, and the
    /// first store must write again (a failed write saying whether it may have committed).
    @Test func aStoreWhoseConnectionsAreAllEndedHearsAndWritesAgain() async throws {
        let configuration = try await makeDatabase()
        let first = try Store(postgres: configuration, schema: Trips.schema, readers: 2)
        let second = try Store(postgres: configuration, schema: Trips.schema, readers: 1)
        try await first.performAndSave { try $0.insert(Organization(name: "before")) }
        let seen = LockedValue<[String]>([])
        let ending = LockedValue<String>("still observing")
        let watcher = Task {
            do {
                for try await organizations in first.observe(Organization.request()) {
                    seen.set(organizations.map(\.name).sorted())
                }
                ending.set("the observation ended")
            } catch {
                ending.set("the observation failed: \(error)")
            }
        }
        // The observation must be under way before its connections are ended (a loaded CI machine
        // took over 10 s to start it).
        let deadline0 = ContinuousClock.now + .seconds(60)
        while seen.get() != ["before"], ContinuousClock.now < deadline0 { try await Task.sleep(for: .milliseconds(20)) }
        try #require(seen.get() == ["before"], "the observer saw \(seen.get()); \(ending.get())")
        // End every backend of the database except the second store's.
        let secondPIDs = try await second.performQuery { _ in 0 }
        _ = secondPIDs
        let name = try await databaseName(configuration)
        let cluster = try #require(PostgresCluster.shared)
        // The second store's connections are identified by being opened later: end all, then
        // let the second reconnect too; what matters is the first store.
        let ended = try cluster.psql(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '\(name)' AND pid <> pg_backend_pid()",
            database: "postgres")
        print("ended \(ended.trimmingCharacters(in: .whitespacesAndNewlines)) backends")
        try await Task.sleep(for: .milliseconds(300))
        var secondWrite = "ok"
        for attempt in 0..<3 {
            do {
                try await second.performAndSave { try $0.insert(Organization(name: "after")) }
                secondWrite = "ok after \(attempt)"
                break
            } catch {
                secondWrite = "\(error)"
            }
        }
        print("second store's write: \(secondWrite)")
        let deadline = ContinuousClock.now + .seconds(60)
        while !seen.get().contains("after"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(seen.get().contains("after"), "the first store's observer saw \(seen.get()); \(ending.get())")
        var firstWrite = "none"
        do {
            try await first.performAndSave { try $0.insert(Organization(name: "first again")) }
            firstWrite = "ok"
        } catch {
            firstWrite = "\(error)"
        }
        print("first store's write after the kill: \(firstWrite)")
        if firstWrite != "ok" {
            #expect(
                firstWrite.contains("may or may not") || firstWrite.contains("not committed")
                    || firstWrite.contains("lost"),
                "\(firstWrite)")
            try await first.performAndSave { try $0.insert(Organization(name: "first again")) }
        }
        let names = try await first.performQuery { try $0.fetch(Organization.request()) }.map(\.name).sorted()
        #expect(names == ["after", "before", "first again"], "\(names)")
        watcher.cancel()
        try first.close()
        try second.close()
    }

    /// A write blocked by another session's lock meets the statement timeout, and another is
    /// cancelled while blocked: each fails with an error that says so, promptly, and nothing of
    /// either transaction (an earlier insert into another table) remains; after the lock the
    /// store writes again.
    @Test func aBlockedWriteTimesOutOrIsCancelledAndLeavesNothing() async throws {
        var configuration = try await makeDatabase()
        try Store(postgres: configuration, schema: Trips.schema, readers: 1).close()
        configuration.statementTimeout = .milliseconds(300)
        let store = try Store(postgres: configuration, schema: Trips.schema, readers: 1)
        var plain = configuration
        plain.statementTimeout = nil
        // Opened before the lock: opening reads the tables, and would wait on it.
        let patient = try Store(postgres: plain, schema: Trips.schema, readers: 1)
        let locker = try await PostgresConnection(plain)
        _ = try await locker.execute("BEGIN")
        _ = try await locker.execute("LOCK TABLE \"Organization\" IN ACCESS EXCLUSIVE MODE")
        let started = ContinuousClock.now
        var timedOut = "no error"
        do {
            try await store.performAndSave {
                try $0.insert(
                    User(
                        username: "t1", givenName: "G", familyName: "F",
                        joinedAt: Date(timeIntervalSinceReferenceDate: 0)))
                try $0.insert(Organization(name: "blocked"))
            }
        } catch {
            timedOut = "\(error)"
        }
        let took = ContinuousClock.now - started
        print("timed out after \(took): \(timedOut)")
        #expect(timedOut.localizedCaseInsensitiveContains("time"), "\(timedOut)")
        #expect(took < .seconds(10))
        // Cancelled while blocked (no timeout on this store).
        let task = Task {
            try await patient.performAndSave {
                try $0.insert(
                    User(
                        username: "t2", givenName: "G", familyName: "F",
                        joinedAt: Date(timeIntervalSinceReferenceDate: 0)))
                try $0.insert(Organization(name: "cancelled"))
            }
        }
        try await Task.sleep(for: .milliseconds(500))
        let cancelledAt = ContinuousClock.now
        let finished = LockedValue<String?>(nil)
        Task {
            do {
                try await task.value
                finished.set("no error")
            } catch { finished.set("\(error)") }
        }
        task.cancel()
        while finished.get() == nil, ContinuousClock.now - cancelledAt < .seconds(10) {
            try await Task.sleep(for: .milliseconds(20))
        }
        let cancelTook = ContinuousClock.now - cancelledAt
        print("cancelled: after \(cancelTook): \(finished.get() ?? "still waiting")")
        #expect(finished.get() != nil, "the cancelled write still waits on the lock \(cancelTook) after the cancel")
        _ = try await locker.execute("ROLLBACK")
        await locker.close()
        while finished.get() == nil { try await Task.sleep(for: .milliseconds(20)) }
        print("cancelled write, once the lock went: \(finished.get() ?? "-")")
        let users = try await patient.performQuery { try $0.fetch(User.request()) }.map(\.username)
        let organizations = try await patient.performQuery { try $0.fetch(Organization.request()) }.map(\.name)
        #expect(users.isEmpty && organizations.isEmpty, "left behind: \(users) \(organizations)")
        try await store.performAndSave { try $0.insert(Organization(name: "after")) }
        try await patient.performAndSave { try $0.insert(Organization(name: "after 2")) }
        try store.close()
        try patient.close()
    }

    // MARK: - Class 4: several stores

    /// A version-2 app and a version-3 app open a version-1 database at once: each migration runs
    /// once, the older app is refused if the newer got there first, no row is lost, and the
    /// database ends at one version with a fresh store's schema.
    @Test func appsOfTwoVersionsOpeningAnOldDatabaseAtOnce() async throws {
        let (model, errors) = try Self.planned([Self.boxV1, Self.boxV2, Self.boxV3])
        let planned = try #require(model, "\(errors)")
        let schemas = planned.versions.map(\.schema)
        let plan3 = Self.plan(of: planned)
        let plan2 = MigrationPlan(current: schemas[1], stages: [planned.steps[0].shadowStage])
        let plan1 = MigrationPlan(current: schemas[0], stages: [])
        let cluster = try #require(PostgresCluster.shared)
        for round in 0..<4 {
            let (configuration, name) = try Self.freshDatabase()
            try Store(postgres: configuration, migrationPlan: plan1, readers: 1).close()
            try cluster.psql(
                "INSERT INTO \"Box\" (id, k, a, d, f) SELECT gen_random_uuid(), g, g, g * 0.5, NULL FROM generate_series(1, 20000) g",
                database: name)
            let plans = round % 2 == 0 ? [plan2, plan3] : [plan3, plan2]
            let results = await withTaskGroup(of: (Int, String).self) { group in
                for plan in plans {
                    group.addTask {
                        do {
                            try Store(postgres: configuration, migrationPlan: plan, readers: 1).close()
                            return (plan.current.version, "opened")
                        } catch {
                            return (plan.current.version, "\(error)")
                        }
                    }
                }
                var all: [(Int, String)] = []
                for await result in group { all.append(result) }
                return all
            }
            print("round \(round): \(results)")
            let v3 = results.first { $0.0 == 3 }?.1
            #expect(v3 == "opened", "the version-3 app: \(v3 ?? "-")")
            let count = try cluster.psql("SELECT count(*), sum(k), sum(c) FROM \"Box\"", database: name)
            #expect(
                count.trimmingCharacters(in: .whitespacesAndNewlines) == "20000|200010000|200010000",
                "round \(round): \(count)")
            try Store(postgres: configuration, schema: schemas[2], readers: 1).close()
        }
    }

    /// Two stores on one database insert and update at once; an observer in each sees the
    /// other's commits with the right rows, and no write is lost.
    @Test func twoStoresInterleavedWritesAndObserveEachOther() async throws {
        let configuration = try await makeDatabase()
        let first = try Store(postgres: configuration, schema: Trips.schema, readers: 2)
        let second = try Store(postgres: configuration, schema: Trips.schema, readers: 2)
        let seen = LockedValue<Int>(0)
        let watcher = Task {
            for try await organizations in first.observe(Organization.request()) {
                seen.set(organizations.count)
                if organizations.count == 400 { break }
            }
        }
        async let a: Void = {
            for index in 0..<200 {
                try await first.performAndSave { try $0.insert(Organization(name: "first \(index)")) }
            }
        }()
        async let b: Void = {
            for index in 0..<200 {
                try await second.performAndSave { try $0.insert(Organization(name: "second \(index)")) }
            }
        }()
        try await a
        try await b
        let deadline = ContinuousClock.now + .seconds(20)
        while seen.get() != 400, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        watcher.cancel()
        #expect(seen.get() == 400, "the observer of the first store saw \(seen.get()) of 400")
        let names = try await second.performQuery { try $0.fetch(Organization.request()) }.map(\.name)
        #expect(Set(names).count == 400)
        try first.close()
        try second.close()
    }
}
