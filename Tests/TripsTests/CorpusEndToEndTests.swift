import Foundation
import ModelwrightCoreData
import ModelwrightSchema
import Testing

@testable import Modelwright
@testable import ModelwrightGenerator

/// Every Core Data bundle of the corpus, used as an app would: imported, validated, generated,
/// compiled with `-warnings-as-errors` and the type-check budgets, then a store at the first version
/// with rows in every concrete entity is migrated through every version by the generated
/// `openStore(at:migrations:)`, and every row of every entity is fetched with the generated records
/// of the last version.
///
/// The corpus is `../shared/corpus` beside the package, or the folder `MODELWRIGHT_CORPUS` names (so
/// other apps' histories can be run through the same checks).
@Suite(.serialized, .enabled(if: CorpusEndToEnd.corpus != nil, "no Core Data corpus beside the package"))
struct CorpusEndToEndTests {
    @Test(arguments: CorpusEndToEnd.bundles)
    func bundleImportsCompilesMigratesAndReadsBack(_ bundle: String) throws {
        let run = try CorpusEndToEnd(bundle: bundle)
        defer { run.removeFiles() }
        try run.check()
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

    let bundle: String
    let folder: URL
    let model: PlannedModel
    let files: [RenderedFile]

    init(bundle: String) throws {
        self.bundle = bundle
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("corpus-\(UUID().uuidString)")
        let path = try #require(Self.corpus).appendingPathComponent(bundle).path
        let imported = CoreDataImporter.importModel(try CoreDataBundle.open(path: path))
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

    func check() throws {
        let mismatches = try ColumnOrder.mismatches(files: files, model: model)
        #expect(mismatches.isEmpty, "\(bundle): records and the store's layout disagree: \(mismatches.prefix(5))")
        let current = try #require(model.current).schema
        let first = try #require(model.versions.first).schema
        let program = try compile(current: current)
        let store = folder.appendingPathComponent("store.sqlite")
        let before = try populate(store, at: first)
        let linksBefore = try Self.linkCounts(store, first)
        try FileManager.default.copyItem(at: store, to: folder.appendingPathComponent("first-version.sqlite"))

        // The generated code migrates the store and reads every row of every entity.
        let counts = try run(program, "migrate", store)
        let after = try rawRows(store, current)
        // The store is wholly at the last version, shaped as a store created there would be.
        let migrated = try SQLiteConnection(path: store.path, readOnly: true)
        let checksum = try MigrationContext(connection: migrated, layout: SchemaLayout(current))
            .query("SELECT \"value\" FROM \"\(SchemaSQL.metadataTable)\" WHERE \"key\" = 'checksum'").first?["value"]
        #expect(checksum == .text(current.checksum.hexDigits), "\(bundle): the store holds the last version's checksum")
        #expect(
            try StoreSchema.read(migrated).differences(from: StoreSchema.fresh(SchemaLayout(current))) == [],
            "\(bundle): the migrated store is shaped like a fresh one")
        #expect(counts == after.mapValues(\.count), "\(bundle): records fetched against rows stored")
        for (entity, rows) in before where after[entity] != nil && Self.unchanged(entity, in: model) {
            #expect(after[entity]?.count == rows.count, "\(bundle): \(entity) kept its rows")
        }
        try expectKeptValues(before, after)
        // Links of a relationship stored the same way in every version are kept.
        let linksAfter = try Self.linkCounts(store, current)
        let everywhere = try model.versions.map { Set(try Self.joinTables(SchemaLayout($0.schema)).map(\.0)) }
            .reduce(Set(linksBefore.keys)) { $0.intersection($1) }
        for table in everywhere.sorted() {
            #expect(linksAfter[table] == linksBefore[table], "\(bundle): the links of \(table) are kept")
        }
        #expect(linksBefore.values.allSatisfy { $0 > 0 }, "\(bundle): every join table holds a link")

        // Each record holds exactly what is stored: writing it back unchanged changes no byte.
        _ = try run(program, "resave", store)
        let resaved = try rawRows(store, current)
        let layout = try SchemaLayout(current)
        for (entity, rows) in after {
            #expect(resaved[entity]?.count == rows.count, "\(bundle): \(entity) keeps its rows")
            let floating = Set(
                (layout.entities[entity]?.columns ?? []).filter { $0.type == .double || $0.type == .float }.map(\.name))
            for (row, written) in zip(rows, resaved[entity] ?? []) {
                let changed = row.values.keys.sorted().filter {
                    !Self.same(row[$0], written[$0], floating: floating.contains($0))
                }
                #expect(
                    changed.isEmpty,
                    "\(bundle): \(entity) reads and writes back unchanged: \(changed.map { "\($0): \(row[$0]) → \(written[$0])" })"
                )
            }
        }
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

    /// Builds the generated code with a program that migrates and reads a store.
    private func compile(current: SchemaDescription) throws -> URL {
        let names = try TypeNames(model: model, naming: Naming(), configPath: nil)
        let main = Self.program(model: model, current: current, typeNames: names)
        let source = folder.appendingPathComponent("source")
        try OutputWriter.write(files + [RenderedFile(name: "main.swift", contents: main)], to: source)
        let program = folder.appendingPathComponent("program")
        let result = try GeneratedCodeTypeChecker.build(
            files: (files.map(\.name) + ["main.swift"]).map { source.appendingPathComponent($0) }, to: program,
            typeCheckBudget: 100)
        try #require(result.status == 0, "\(bundle): the generated code compiles:\n\(result.errors.prefix(4000))")
        return program
    }

    /// Creates the store at `schema` with rows in every concrete entity and links in every join
    /// table; returns its rows by entity.
    private func populate(_ store: URL, at schema: SchemaDescription) throws -> [String: [MigrationRow]] {
        let layout = try SchemaLayout(schema)
        let connection = try SQLiteConnection(path: store.path)
        try connection.execute(SchemaSQL.createStatements(for: layout))
        try Migrator.recordVersion(schema, on: connection)
        try SyntheticRows.insert(for: layout, into: connection)
        let rows = try Self.rows(connection, layout)
        let context = MigrationContext(connection: connection, layout: layout)
        for (table, source, destination, position) in try Self.joinTables(layout) {
            guard let from = rows[source]?.first?.id, let to = rows[destination]?.first?.id else { continue }
            let columns = position.map { ", \"\($0)\"" } ?? ""
            try context.execute(
                "INSERT OR IGNORE INTO \"\(table)\" (\"source\", \"destination\"\(columns)) VALUES (?, ?\(position == nil ? "" : ", 0"))",
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
    private static func linkCounts(_ store: URL, _ schema: SchemaDescription) throws -> [String: Int] {
        let connection = try SQLiteConnection(path: store.path, readOnly: true)
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

    private func rawRows(_ store: URL, _ schema: SchemaDescription) throws -> [String: [MigrationRow]] {
        let connection = try SQLiteConnection(path: store.path, readOnly: true)
        return try Self.rows(connection, try SchemaLayout(schema))
    }

    private static func rows(_ connection: SQLiteConnection, _ layout: SchemaLayout) throws -> [String: [MigrationRow]]
    {
        let context = MigrationContext(connection: connection, layout: layout)
        var rows: [String: [MigrationRow]] = [:]
        for entity in layout.schema.entities where !entity.isAbstract {
            rows[entity.name] = try context.rows(of: entity.name).sorted { $0.id.sortKey < $1.id.sortKey }
        }
        return rows
    }

    /// An attribute the same in every version keeps every value it had in the first.
    private func expectKeptValues(_ before: [String: [MigrationRow]], _ after: [String: [MigrationRow]]) throws {
        let first = try #require(model.versions.first).schema
        var compared = 0
        for entity in first.entities where !entity.isAbstract && Self.unchanged(entity.name, in: model) {
            let kept = entity.attributes.filter { attribute in
                model.versions.allSatisfy { version in
                    version.schema.entity(named: entity.name)?.attributes.contains(attribute) ?? false
                }
            }
            let stored = Dictionary((after[entity.name] ?? []).map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            for row in before[entity.name] ?? [] {
                guard let migrated = stored[row.id] else { continue }
                for attribute in kept {
                    #expect(
                        migrated[attribute.name] == row[attribute.name], "\(bundle): \(entity.name).\(attribute.name)")
                    compared += 1
                }
            }
        }
        #expect(compared > 0 || model.versions.count == 1, "\(bundle): values were compared")
    }

    /// Whether `entity` exists under that name in every version.
    private static func unchanged(_ entity: String, in model: PlannedModel) -> Bool {
        model.versions.allSatisfy { $0.schema.entity(named: entity) != nil }
    }

    /// Runs the program on the store; returns the number of records it read per entity.
    private func run(_ program: URL, _ mode: String, _ store: URL) throws -> [String: Int] {
        let result = try GeneratedCodeTypeChecker.launch(program, [mode, store.path])
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
    /// then one fetch per concrete entity with the generated records.
    static func program(model: PlannedModel, current: SchemaDescription, typeNames: TypeNames) -> String {
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
        return """
            import Foundation
            import Modelwright

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
            let store = try \(model.name).openStore(
                at: URL(fileURLWithPath: arguments[2]), migrations: StubMigrations())
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
