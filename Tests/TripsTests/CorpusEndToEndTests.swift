import Foundation
import ModelwrightCoreData
import ModelwrightEngineTestSupport
import ModelwrightSchema
import ModelwrightTestSupport
import Testing

@testable import Modelwright
@testable import ModelwrightGenerator

#if MODELWRIGHT_POSTGRES
    import ModelwrightPostgres
#endif

/// Every Core Data bundle of the corpus, used as an app would: imported (every version, those after
/// Core Data's current one included), validated, generated, compiled with `-warnings-as-errors` and
/// the type-check budgets, then a store at the first version with rows in every concrete entity is
/// migrated through every version by the generated `openStore(at:migrations:)`, and every row of
/// every entity is fetched with the generated records of the last version. The same store migrated
/// one step at a time in process must end the same, and after each step hold every value of the
/// attributes the step leaves as they were, and every link of the relationships it keeps.
///
/// The same checks run on every engine of the machine (``TestEngine/available``) with the same
/// program: on PostgreSQL, the generated code opens its database with its own migration plan. A
/// history longer than twice ``CorpusEndToEnd/boundedSteps`` is migrated there only through its
/// first and its last steps (each from a store populated at its first version), unless
/// `MODELWRIGHT_LARGE=1` asks for every step.
///
/// The corpus is `../shared/corpus` beside the package, or the folder `MODELWRIGHT_CORPUS` names (so
/// other apps' histories can be run through the same checks).
@Suite(.heavy, .serialized, .enabled(if: CorpusEndToEnd.corpus != nil, "no Core Data corpus beside the package"))
struct CorpusEndToEndTests {
    @Test(arguments: CorpusEndToEnd.bundles)
    func bundleImportsCompilesMigratesAndReadsBack(_ bundle: String) throws {
        let run = try CorpusEndToEnd(bundle: bundle)
        defer { run.removeFiles() }
        let program = try run.compile()
        var compared: [TestEngine: [CorpusEndToEnd.ComparedStep: CorpusEndToEnd.ComparedCounts]] = [:]
        for engine in TestEngine.available { compared[engine] = try run.check(on: engine, program: program) }
        // Every value and link is kept on every engine: where two engines migrate the same step from
        // a store populated at the same version, they compare the same numbers of values and links
        // (fewer on one is a lost row or a weaker check there).
        if let sqlite = compared[.sqlite], let postgres = compared[.postgres] {
            for (step, counts) in postgres.sorted(by: { $0.key.step < $1.key.step }) where sqlite[step] != nil {
                #expect(
                    sqlite[step] == counts,
                    "\(bundle), step \(step.step + 1) from version \(step.populatedAt + 1): SQLite compared \(sqlite[step].map { "\($0)" } ?? ""), PostgreSQL \(counts)"
                )
            }
        }
    }

    @Test func theCorpusHasBundles() {
        #expect(CorpusEndToEnd.bundles.count >= 10, "\(CorpusEndToEnd.bundles)")
    }
}

/// One bundle's run through the whole pipeline.
struct CorpusEndToEnd {
    static let corpus: URL? = {
        let url =
            ProcessInfo.processInfo.environment["MODELWRIGHT_CORPUS"].map { URL(fileURLWithPath: $0) }
            ?? GeneratedCodeTypeChecker.root.deletingLastPathComponent().appendingPathComponent("shared/corpus")
        return FileManager.default.fileExists(atPath: url.path) ? url : nil
    }()

    /// Every `.xcdatamodeld`, and every `.xcdatamodel` outside one, relative to the corpus, sorted.
    static let bundles: [String] = {
        guard let corpus, let walker = FileManager.default.enumerator(atPath: corpus.path) else { return [] }
        var found: [String] = []
        while let path = walker.nextObject() as? String {
            let components = path.split(separator: "/")
            guard let last = components.last else { continue }
            if last.hasSuffix(".xcdatamodeld")
                || (last.hasSuffix(".xcdatamodel") && !components.dropLast().contains { $0.hasSuffix(".xcdatamodeld") })
            {
                found.append(path)
                walker.skipDescendants()
            }
        }
        return found.sorted()
    }()

    /// How many steps at each end of a long history a bounded run (PostgreSQL, without
    /// `MODELWRIGHT_LARGE=1`) migrates.
    static let boundedSteps = 3

    /// Whether every step of every history runs on every engine.
    static let large = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1"

    let bundle: String
    let folder: URL
    let model: PlannedModel
    let files: [RenderedFile]

    init(bundle: String) throws {
        self.bundle = bundle
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("corpus-\(UUID().uuidString)")
        let path = try #require(Self.corpus).appendingPathComponent(bundle).path
        // Every version, those after Core Data's current one included: more steps to check.
        let imported = CoreDataImporter.importModel(
            try CoreDataBundle.open(path: path), options: .init(includesVersionsAfterCurrent: true))
        let errors = imported.diagnostics.filter { $0.severity == .error }
        #expect(errors.isEmpty, "\(bundle) imports: \(errors.prefix(5))")
        let modelFolder = folder.appendingPathComponent("model")
        _ = try CoreDataImporter.write(imported, to: modelFolder.path)
        let result = try Pipeline.run(
            Pipeline.Request(modelPath: modelFolder.path, goal: .render, config: GeneratorConfig()))
        model = try #require(result.model, "\(bundle) validates: \(result.diagnostics.prefix(5))")
        files = result.files
    }

    /// Removes the run's files, unless `MODELWRIGHT_KEEP_CORPUS_RUNS` is set (to look at a failure).
    func removeFiles() {
        guard ProcessInfo.processInfo.environment["MODELWRIGHT_KEEP_CORPUS_RUNS"] == nil else {
            print("\(bundle): kept \(folder.path)")
            return
        }
        try? FileManager.default.removeItem(at: folder)
    }

    /// The ranges of steps a run on `engine` migrates, each from a store populated at the version
    /// it starts from; the last ends at the current version. Every step at once, unless the run is
    /// bounded (PostgreSQL without `MODELWRIGHT_LARGE=1`) and the history is longer than twice
    /// ``boundedSteps``: then its first and its last ``boundedSteps`` steps, and each step between
    /// that removes an entity (dropping tables that reference each other is where PostgreSQL, which
    /// checks foreign keys on `DROP TABLE`, parts from SQLite: WooCommerce's step 14 → 15).
    func windows(on engine: TestEngine) -> [Range<Int>] {
        let count = model.steps.count
        guard engine == .postgres, !Self.large, count > 2 * Self.boundedSteps else { return [0..<count] }
        let removals = (Self.boundedSteps..<(count - Self.boundedSteps)).filter { index in
            let source = model.versions[index].schema
            let kept = Set(model.versions[index + 1].schema.entities.map { $0.renamedFrom ?? $0.name })
            return source.entities.contains { !kept.contains($0.name) }
        }
        return [0..<Self.boundedSteps] + removals.map { $0..<($0 + 1) } + [(count - Self.boundedSteps)..<count]
    }

    /// A step migrated step by step, and the version index its store was populated at.
    struct ComparedStep: Hashable {
        let populatedAt: Int
        let step: Int
    }

    /// How many values and links a step's comparison checked.
    struct ComparedCounts: Equatable, CustomStringConvertible {
        let values: Int
        let links: Int
        var description: String { "\(values) values and \(links) links" }
    }

    /// Runs every check on `engine`; returns how many values and links each step compared.
    @discardableResult
    func check(on engine: TestEngine, program: URL) throws -> [ComparedStep: ComparedCounts] {
        let bundle = "\(self.bundle) on \(engine)"
        let mismatches = try ColumnOrder.mismatches(files: files, model: model)
        #expect(mismatches.isEmpty, "\(bundle): records and the store's layout disagree: \(mismatches.prefix(5))")
        let current = try #require(model.current).schema
        let windows = windows(on: engine)
        let tail = try #require(windows.last)
        let first = model.versions[tail.lowerBound].schema
        let store = try CorpusDatabase.create(engine, in: folder, named: "store")
        let before = try Self.populate(store, at: first)
        let linksBefore = try Self.linkCounts(store, first)
        let stepwise = try store.copy(in: folder, named: "first-version")

        // The generated code migrates the store and reads every row of every entity.
        let counts = try run(program, "migrate", store)
        let after = try rawRows(store, current)
        // The store is wholly at the last version, shaped as a store created there would be.
        let migrated = try store.connect()
        defer { migrated.close() }
        let layout = try SchemaLayout(current)
        let checksum = try MigrationContext(connection: migrated, layout: layout)
            .query("SELECT \"value\" FROM \"\(SchemaSQL.metadataTable)\" WHERE \"key\" = 'checksum'").first?["value"]
        #expect(checksum == .text(current.checksum.hexDigits), "\(bundle): the store holds the last version's checksum")
        #expect(
            try StoreMetadata.read(on: migrated).version == current.version,
            "\(bundle): the store records the last version's number")
        let freshTables = SchemaSQL.tables(for: layout, in: migrated.dialect)
        let fresh = try migrated.inTransaction(.immediate) { try StoreSchema.fresh(freshTables, on: migrated) }
        let shape = try StoreSchema.read(migrated).differences(from: fresh)
        #expect(shape == [], "\(bundle): the migrated store is shaped like a fresh one: \(shape.prefix(5))")
        #expect(counts == after.mapValues(\.count), "\(bundle): records fetched against rows stored")
        for (entity, rows) in before where after[entity] != nil && Self.unchanged(entity, in: model) {
            #expect(after[entity]?.count == rows.count, "\(bundle): \(entity) kept its rows")
        }
        #expect(linksBefore.values.allSatisfy { $0 > 0 }, "\(bundle): every join table holds a link")
        // The generated plan, all at once, leaves what the steps one at a time left.
        var compared = try checkStepByStep(stepwise, steps: tail, bundle)
        // A bounded run's other steps, each window from a store populated at its first version.
        for window in windows.dropLast() {
            let head = try CorpusDatabase.create(engine, in: folder, named: "head-\(window.lowerBound)")
            _ = try Self.populate(head, at: model.versions[window.lowerBound].schema)
            let counted = try checkStepByStep(head, steps: window, bundle)
            compared = (
                compared.steps + counted.steps, compared.values + counted.values, compared.links + counted.links,
                compared.perStep.merging(counted.perStep) { first, _ in first }
            )
        }
        print(
            "\(bundle): \(compared.steps) of \(model.steps.count) steps, \(compared.values) values and \(compared.links) links compared step by step"
        )
        let timeDependent = Set(
            current.entities.flatMap { entity in
                entity.attributes.filter { $0.defaultValue == .now }.map(\.name)
            })
        let expected = try rawRows(stepwise, current)
        let same = Self.same(on: engine, layout)
        for (entity, rows) in after {
            let stepRows = Dictionary(
                (expected[entity] ?? []).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            for row in rows {
                let other = stepRows[row.id]
                let differing = row.values.keys.sorted().filter { column in
                    !timeDependent.contains(column) && !(other.map { same(entity, row, $0, column) } ?? false)
                }
                #expect(
                    other != nil && differing.isEmpty,
                    "\(bundle): \(entity) migrated by the program as step by step: \(differing.prefix(3))")
            }
        }

        // Each record holds exactly what is stored: writing it back unchanged changes no byte.
        _ = try run(program, "resave", store)
        let resaved = try rawRows(store, current)
        for (entity, rows) in after {
            #expect(resaved[entity]?.count == rows.count, "\(bundle): \(entity) keeps its rows")
            for (row, written) in zip(rows, resaved[entity] ?? []) {
                let changed = row.values.keys.sorted().filter { !same(entity, row, written, $0) }
                #expect(
                    changed.isEmpty,
                    "\(bundle): \(entity) reads and writes back unchanged: \(changed.map { "\($0): \(row[$0]) → \(written[$0])" })"
                )
            }
        }
        return compared.perStep
    }

    /// Whether a column holds the same value in two rows of an entity of `layout` on `engine`.
    private static func same(
        on engine: TestEngine, _ layout: SchemaLayout
    ) -> (_ entity: String, _ row: MigrationRow, _ other: MigrationRow, _ column: String) -> Bool {
        var floating: [String: Set<String>] = [:]
        var json: [String: Set<String>] = [:]
        for (entity, entityLayout) in layout.entities {
            for column in entityLayout.columns {
                switch column.type {
                case .double?, .float?: floating[entity, default: []].insert(column.name)
                case .codable?: json[entity, default: []].insert(column.name)
                default: break
                }
            }
        }
        return { entity, row, other, column in
            if engine == .postgres, json[entity]?.contains(column) == true {
                return sameJSON(row[column], other[column])
            }
            return same(row[column], other[column], floating: floating[entity]?.contains(column) == true)
        }
    }

    /// Whether two values of a `jsonb` column hold the same JSON: PostgreSQL keeps a `Codable`
    /// value's JSON, not its text (spacing, escapes, key order).
    private static func sameJSON(_ lhs: SQLValue, _ rhs: SQLValue) -> Bool {
        guard case .text(let left) = lhs, case .text(let right) = rhs else { return lhs == rhs }
        func parsed(_ text: String) -> NSObject? {
            try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) as? NSObject
        }
        return parsed(left).map { $0 == parsed(right) } ?? (left == right)
    }

    /// Whether two stored values are the same value. A column that `ALTER TABLE … ADD COLUMN`
    /// gave an integral `Double` default reads that default back as an integer in the rows that
    /// existed (SQLite keeps such a default in its compact form), and the runtime reads it as the
    /// same `Double`.
    private static func same(_ stored: SQLValue, _ written: SQLValue, floating: Bool) -> Bool {
        if floating, case .integer(let integer) = stored, case .real(let real) = written {
            return Double(integer) == real && real.sign == .plus
        }
        return stored == written
    }

    /// Builds the generated code with a program that migrates and reads a store, on every engine
    /// of the machine.
    func compile() throws -> URL {
        let current = try #require(model.current).schema
        let postgres = TestEngine.available.contains(.postgres)
        let names = try TypeNames(model: model, naming: Naming(), configPath: nil)
        let main = Self.program(model: model, current: current, typeNames: names, postgres: postgres)
        let source = folder.appendingPathComponent("source")
        try RenderedFile.write(files + [RenderedFile(name: "main.swift", contents: main)], to: source.path)
        let program = folder.appendingPathComponent("program")
        let result = try GeneratedCodeTypeChecker.build(
            files: (files.map(\.name) + ["main.swift"]).map { source.appendingPathComponent($0) }, to: program,
            typeCheckBudget: 100, postgres: postgres)
        try #require(result.status == 0, "\(bundle): the generated code compiles:\n\(result.errors.prefix(4000))")
        return program
    }

    /// Creates the store at `schema` with rows in every concrete entity and links in every join
    /// table; returns its rows by entity.
    static func populate(_ store: CorpusDatabase, at schema: SchemaDescription) throws -> [String: [MigrationRow]] {
        let layout = try SchemaLayout(schema)
        let connection = try store.connect()
        defer { connection.close() }
        try connection.execute(SchemaSQL.createStatements(for: layout, in: connection.dialect))
        try StoreMetadata.record(schema, on: connection)
        // In one transaction: a row may point at a row of an entity inserted after it, which
        // PostgreSQL's deferred foreign keys accept only when they are checked at a commit that
        // follows both (statement by statement, it kept none of those rows and reported no error).
        try connection.inTransaction(.immediate) { try SyntheticRows.insert(for: layout, into: connection) }
        let rows = try Self.rows(connection, layout)
        let context = MigrationContext(connection: connection, layout: layout)
        for (table, source, destination, position) in try Self.joinTables(layout) {
            guard let from = rows[source]?.first?.id, let to = rows[destination]?.first?.id else { continue }
            let columns = ["\"source\"", "\"destination\""] + (position.map { ["\"\($0)\""] } ?? [])
            try context.execute(
                connection.dialect.insertIgnoringConflicts(
                    into: quoted(table), columns: columns, "VALUES (?, ?\(position == nil ? "" : ", 0"))"),
                [from, to])
        }
        return rows
    }

    /// The join tables of to-many relationships: the table, the entities whose rows it links, and
    /// its position column.
    private static func joinTables(_ layout: SchemaLayout) throws -> [(String, String, String, String?)] {
        var tables: [(String, String, String, String?)] = []
        for entity in layout.schema.entities {
            let entityLayout = try layout.entity(entity.name)
            for relationship in entity.relationships where relationship.cardinality == .toMany {
                guard
                    case .joinTable(let table, let source, _, let position) = try layout.storage(
                        of: relationship, from: entityLayout),
                    source == "source", !tables.contains(where: { $0.0 == table })
                else { continue }
                tables.append((table, entity.name, relationship.destination, position))
            }
        }
        return tables
    }

    /// The number of links in each join table.
    private static func linkCounts(_ store: CorpusDatabase, _ schema: SchemaDescription) throws -> [String: Int] {
        let connection = try store.connect()
        defer { connection.close() }
        let layout = try SchemaLayout(schema)
        let context = MigrationContext(connection: connection, layout: layout)
        var counts: [String: Int] = [:]
        for (table, _, _, _) in try joinTables(layout) {
            if case .integer(let count) = try context.query("SELECT count(*) AS n FROM \"\(table)\"").first?["n"] {
                counts[table] = Int(count)
            }
        }
        return counts
    }

    private func rawRows(_ store: CorpusDatabase, _ schema: SchemaDescription) throws -> [String: [MigrationRow]] {
        let connection = try store.connect()
        defer { connection.close() }
        return try Self.rows(connection, try SchemaLayout(schema))
    }

    private static func rows(
        _ connection: any DatabaseConnection, _ layout: SchemaLayout
    ) throws -> [String: [MigrationRow]] {
        let context = MigrationContext(connection: connection, layout: layout)
        var rows: [String: [MigrationRow]] = [:]
        for entity in layout.schema.entities where !entity.isAbstract {
            rows[entity.name] = try context.rows(of: entity.name).sorted { $0.id.sortKey < $1.id.sortKey }
        }
        return rows
    }

    /// Migrates a store populated at the first version of `steps` again, in process and one step at a time, with the
    /// losses each step declares (as the generated plan's stages carry them) and stub
    /// custom stages like the program's; after each step, every attribute the step leaves as it was
    /// (the same entity declares it, renamed or not, with the same type and optionality) holds the
    /// values it held before in every row that is still there, and every link of a relationship
    /// the step keeps (same destination and cardinality) between rows that are still there is kept.
    /// Returns how many steps, values and links it compared.
    private func checkStepByStep(
        _ store: CorpusDatabase, steps: Range<Int>, _ bundle: String
    ) throws -> (steps: Int, values: Int, links: Int, perStep: [ComparedStep: ComparedCounts]) {
        let started = ContinuousClock.now
        let connection = try store.connect()
        defer { connection.close() }
        // A scratch copy: no need to wait for the disk at each of a hundred commits.
        if store.engine == .sqlite { try connection.execute(["PRAGMA synchronous=OFF", "PRAGMA journal_mode=MEMORY"]) }
        let freshSchemas = FreshSchemaCache()
        var source = model.versions[steps.lowerBound].schema
        var snapshot = try Snapshot(connection, SchemaLayout(source))
        var (values, links) = (0, 0)
        var perStep: [ComparedStep: ComparedCounts] = [:]
        for index in steps {
            let step = model.steps[index]
            let destination = step.to.schema
            let stage =
                step.customStages.isEmpty
                ? MigrationStage.lightweight(from: source, to: destination, lossy: step.losses)
                : .custom(
                    from: source, to: destination,
                    steps: step.customStages.map {
                        .init(name: $0.name, label: $0.label, didMigrate: Self.fillRequiredColumns)
                    }, lossy: step.losses)
            try Migrator(connection: connection, progress: nil).run(
                stage, number: index + 1, of: model.steps.count, freshSchemas: freshSchemas)
            let next = try Snapshot(connection, SchemaLayout(destination))
            let name = "\(bundle), version \(source.version) → \(destination.version)"
            let counts = ComparedCounts(
                values: compareValues(snapshot, next, source, destination, name),
                links: compareLinks(snapshot, next, source, destination, name))
            perStep[ComparedStep(populatedAt: steps.lowerBound, step: index)] = counts
            values += counts.values
            links += counts.links
            (source, snapshot) = (destination, next)
        }
        print(
            "\(bundle): steps \(steps.lowerBound + 1)…\(steps.upperBound) of \(model.steps.count), \(values) values and \(links) links compared step by step in \(ContinuousClock.now - started)"
        )
        #expect(values > 0 || steps.isEmpty, "\(bundle): values were compared")
        return (steps.count, values, links, perStep)
    }

    /// The rows and links of a store at one version.
    private struct Snapshot {
        /// Every entity's rows (sub-entities' rows included), by ID.
        var rows: [String: [SQLValue: MigrationRow]] = [:]
        /// Every relationship's links as (row, destination row), by `Entity.relationship`.
        var links: [String: Set<[SQLValue]>] = [:]
        /// Every row's ID.
        var ids: Set<SQLValue> = []

        init(_ connection: any DatabaseConnection, _ layout: SchemaLayout) throws {
            let context = MigrationContext(connection: connection, layout: layout)
            for entity in layout.schema.entities {
                let rows = try context.rows(of: entity.name)
                self.rows[entity.name] = Dictionary(rows.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
                ids.formUnion(rows.map(\.id))
            }
            for entity in layout.schema.entities {
                let entityLayout = try layout.entity(entity.name)
                for relationship in entity.relationships {
                    var pairs: Set<[SQLValue]> = []
                    if relationship.cardinality == .toOne {
                        for row in self.rows[entity.name]?.values ?? [:].values where row[relationship.name] != .null {
                            pairs.insert([row.id, row[relationship.name]])
                        }
                    } else {
                        switch try layout.storage(of: relationship, from: entityLayout) {
                        case .inverseColumn(let column, _):
                            for row in self.rows[relationship.destination]?.values ?? [:].values
                            where row[column] != .null {
                                pairs.insert([row[column], row.id])
                            }
                        case .joinTable(let table, let source, let destination, _):
                            for row in try context.query(
                                "SELECT \(quoted(source)) AS s, \(quoted(destination)) AS d FROM \(quoted(table))")
                            {
                                pairs.insert([row["s"], row["d"]])
                            }
                        }
                    }
                    links["\(entity.name).\(relationship.name)"] = pairs
                }
            }
        }
    }

    /// Compares the values of the attributes a step leaves as they were; returns how many.
    private func compareValues(
        _ before: Snapshot, _ after: Snapshot, _ source: SchemaDescription, _ destination: SchemaDescription,
        _ name: String
    ) -> Int {
        var compared = 0
        for entity in destination.entities {
            guard let old = source.entity(named: entity.renamedFrom ?? entity.name) else { continue }
            for attribute in entity.attributes {
                guard
                    let was = old.attributes.first(where: { $0.name == (attribute.renamedFrom ?? attribute.name) }),
                    was.type == attribute.type, was.isOptional == attribute.isOptional
                else { continue }
                let floating = attribute.type == .double || attribute.type == .float
                for (id, row) in before.rows[old.name] ?? [:] {
                    guard let migrated = after.rows[entity.name]?[id] else { continue }
                    // A composite is several columns, `name.field`.
                    for column in row.values.keys where column == was.name || column.hasPrefix(was.name + ".") {
                        let kept = attribute.name + column.dropFirst(was.name.count)
                        #expect(
                            Self.same(row[column], migrated[kept], floating: floating),
                            "\(name): \(entity.name).\(kept) was \(row[column]), is \(migrated[kept])")
                        compared += 1
                    }
                }
            }
        }
        return compared
    }

    /// Compares the links of the relationships a step keeps, between rows still there; returns how many.
    private func compareLinks(
        _ before: Snapshot, _ after: Snapshot, _ source: SchemaDescription, _ destination: SchemaDescription,
        _ name: String
    ) -> Int {
        var compared = 0
        for entity in destination.entities {
            guard let old = source.entity(named: entity.renamedFrom ?? entity.name) else { continue }
            for relationship in entity.relationships {
                guard
                    let was = old.relationships.first(where: {
                        $0.name == (relationship.renamedFrom ?? relationship.name)
                    }),
                    was.cardinality == relationship.cardinality,
                    destination.entity(named: relationship.destination).map({ $0.renamedFrom ?? $0.name })
                        == was.destination
                else { continue }
                let kept = (before.links["\(old.name).\(was.name)"] ?? []).filter { $0.allSatisfy(after.ids.contains) }
                let now = (after.links["\(entity.name).\(relationship.name)"] ?? []).filter {
                    $0.allSatisfy(before.ids.contains)
                }
                #expect(now == kept, "\(name): the links of \(entity.name).\(relationship.name) are kept")
                compared += kept.count
            }
        }
        return compared
    }

    /// The program's stub custom stage, in process: gives every required column left empty a placeholder.
    @Sendable private static func fillRequiredColumns(_ context: MigrationContext) throws {
        for entity in context.schema.entities {
            let root = TableMapping.lineage(of: entity, in: context.schema).first ?? entity
            for attribute in entity.attributes where !attribute.isOptional && attribute.defaultValue == nil {
                try context.execute(
                    "UPDATE \(quoted(root.name)) SET \(quoted(attribute.name)) = ? WHERE \(quoted(attribute.name)) IS NULL",
                    [placeholder(for: attribute.type)])
            }
        }
    }

    private static func placeholder(for type: AttributeType) -> SQLValue {
        switch type {
        case .bool, .int16, .int32, .int64, .int: .integer(0)
        case .double, .float, .date: .real(0)
        case .data, .uuid: .blob(Data(repeating: 0, count: 16))
        case .codable: .text("null")
        case .enumeration(let description):
            description.rawType == .int
                ? .integer(Int64(description.cases.first?.rawValue ?? "") ?? 0)
                : .text(description.cases.first?.rawValue ?? "")
        default: .text("")
        }
    }

    /// Whether `entity` exists under that name in every version.
    private static func unchanged(_ entity: String, in model: PlannedModel) -> Bool {
        model.versions.allSatisfy { $0.schema.entity(named: entity) != nil }
    }

    /// Runs the program on the store; returns the number of records it read per entity.
    private func run(_ program: URL, _ mode: String, _ store: CorpusDatabase) throws -> [String: Int] {
        let result = try GeneratedCodeTypeChecker.launch(program, [mode, store.location])
        try #require(
            result.status == 0, "\(bundle): \(mode) failed:\n\(result.output.prefix(2000))\(result.errors.prefix(4000))"
        )
        var counts: [String: Int] = [:]
        for line in result.output.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let count = Int(parts[1]) { counts[String(parts[0])] = count }
        }
        return counts
    }

    /// The program: stub custom stages that give every required column left empty a placeholder,
    /// then one fetch per concrete entity with the generated records. It opens the store its second
    /// argument names: a file, or with `postgres` a `postgresql://` URL too, which it opens with the
    /// generated migration plan, as a server would.
    static func program(
        model: PlannedModel, current: SchemaDescription, typeNames: TypeNames, postgres: Bool = false
    ) -> String {
        let stages = model.steps.flatMap(\.customStages).map(\.name)
        var conformance = stages.map {
            "    func \($0)DidMigrate(_ context: MigrationContext) throws { try fillRequiredColumns(context) }"
        }
        // Each obligation a stage owes, met as a hurried app would: a placeholder value, or the
        // same filling of required columns.
        for obligation in model.steps.flatMap(\.obligations) {
            let name = MigrationsContext.requirementName(obligation)
            guard let type = MigrationsContext.valueTypeName(obligation) else {
                conformance.append(
                    "    func \(name)(_ context: MigrationContext) throws { try fillRequiredColumns(context) }")
                continue
            }
            let placeholders = [
                "String": "\"\"", "Bool": "false", "Date": "Date(timeIntervalSinceReferenceDate: 0)", "Data": "Data()",
                "UUID": "UUID()", "URL": "URL(fileURLWithPath: \"/\")",
            ]
            let value = type.hasSuffix("?") ? "nil" : placeholders[type] ?? "0"
            conformance.append("    func \(name)(_ row: MigrationRow) throws -> \(type) { \(value) }")
        }
        let reads = current.entities.filter { !$0.isAbstract }.map {
            "print(\"\($0.name)\", try await read(\(typeNames[$0.name]).self, from: store, resave: resave))"
        }
        let open =
            postgres
            ? """
            let store =
                arguments[2].hasPrefix("postgresql://")
                ? try Store(
                    postgres: PostgresConfiguration(arguments[2]),
                    migrationPlan: \(model.name).migrationPlan(StubMigrations()), readers: 1)
                : try \(model.name).openStore(at: URL(fileURLWithPath: arguments[2]), migrations: StubMigrations())
            """
            : """
            let store = try \(model.name).openStore(
                at: URL(fileURLWithPath: arguments[2]), migrations: StubMigrations())
            """
        return """
            import Foundation
            import Modelwright
            \(postgres ? "import ModelwrightPostgres\n" : "")

            struct StubMigrations: \(model.name)Migrations {
            \(conformance.joined(separator: "\n"))
            }

            func fillRequiredColumns(_ context: MigrationContext) throws {
                for entity in context.schema.entities {
                    var root = entity
                    for _ in 0..<64 {
                        guard let parent = root.parent.flatMap(context.schema.entity(named:)) else { break }
                        root = parent
                    }
                    for attribute in entity.attributes where !attribute.isOptional && attribute.defaultValue == nil {
                        let column = quoted(attribute.name)
                        try context.execute(
                            "UPDATE " + quoted(root.name) + " SET " + column + " = ? WHERE " + column + " IS NULL",
                            [placeholder(for: attribute.type)])
                    }
                }
            }

            func quoted(_ name: String) -> String {
                let mark = "\\u{22}"
                return mark + name.replacingOccurrences(of: mark, with: mark + mark) + mark
            }

            func placeholder(for type: AttributeType) -> SQLValue {
                switch type {
                case .bool, .int16, .int32, .int64, .int: return .integer(0)
                case .double, .float, .date: return .real(0)
                case .data, .uuid: return .blob(Data(repeating: 0, count: 16))
                case .codable: return .text("null")
                case .enumeration(let description):
                    let first = description.cases.first?.rawValue ?? ""
                    return description.rawType == .int ? .integer(Int64(first) ?? 0) : .text(first)
                default: return .text("")
                }
            }

            func read<Target: Record>(_ type: Target.Type, from store: Store, resave: Bool) async throws -> Int {
                let records = try await store.performQuery { try $0.fetch(Target.request()) }
                if resave {
                    try await store.performAndSave { context in
                        for record in records { try context.update(record) }
                    }
                }
                return records.count
            }

            let arguments = CommandLine.arguments
            \(open)
            let resave = arguments[1] == "resave"
            \(reads.joined(separator: "\n"))

            """
    }
}

extension SQLValue {
    /// An order for IDs (blobs), so rows of two reads line up.
    fileprivate var sortKey: String {
        if case .blob(let data) = self { return data.map { String(format: "%02x", $0) }.joined() }
        return "\(self)"
    }
}

/// One database of a run: a file in the run's folder on SQLite, a database of the test cluster on
/// PostgreSQL.
struct CorpusDatabase {
    let engine: TestEngine
    /// The file's path, or the database's name.
    let name: String

    /// A new, empty database.
    static func create(_ engine: TestEngine, in folder: URL, named name: String) throws -> CorpusDatabase {
        switch engine {
        case .sqlite:
            return CorpusDatabase(engine: engine, name: folder.appendingPathComponent("\(name).sqlite").path)
        case .postgres:
            return CorpusDatabase(engine: engine, name: try cluster().createDatabase())
        }
    }

    /// What the program opens: the file's path, or the database's URL.
    var location: String {
        get throws {
            engine == .sqlite ? name : try Self.cluster().url(database: name)
        }
    }

    /// A new connection to the database.
    func connect() throws -> any DatabaseConnection {
        switch engine {
        case .sqlite:
            return try SQLiteConnection(path: name)
        case .postgres:
            #if MODELWRIGHT_POSTGRES
                return try PostgresConnection(
                    connectingNow: PostgresConfiguration(try Self.cluster().connectionString(database: name)))
            #else
                throw Unavailable()
            #endif
        }
    }

    /// A copy of every table and row, as a new database (no connection may be open on this one).
    func copy(in folder: URL, named copy: String) throws -> CorpusDatabase {
        switch engine {
        case .sqlite:
            let path = folder.appendingPathComponent("\(copy).sqlite").path
            try FileManager.default.copyItem(atPath: name, toPath: path)
            return CorpusDatabase(engine: engine, name: path)
        case .postgres:
            let cluster = try Self.cluster()
            let path = "mw_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())"
            try cluster.psql("CREATE DATABASE \(path) TEMPLATE \(name)", database: "postgres")
            return CorpusDatabase(engine: engine, name: path)
        }
    }

    private static func cluster() throws -> PostgresCluster {
        guard let cluster = PostgresCluster.shared else { throw Unavailable() }
        return cluster
    }

    /// PostgreSQL was asked for on a machine without it.
    private struct Unavailable: Error, CustomStringConvertible {
        var description: String { "PostgreSQL is not available to this test run" }
    }
}
