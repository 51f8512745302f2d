import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright
@testable import ModelwrightCoreData

/// Core Data stores written by the rules of `coredata-store-format.md` (every one, the unconfirmed
/// ones too) from random models and random objects: `import-coredata` imports the model, the store
/// importer finds the version by its hashes, imports, migrates to the current version, and every
/// value and link reads back.
@Suite(.heavy, .serialized) struct CoreDataStoreImportTests {
    /// A fixture's model imported: its schema versions, a plan between them, and the store model.
    struct Prepared {
        var folder: URL
        var versions: [SchemaDescription]
        var plan: MigrationPlan
        var storeModel: CoreDataStoreModel
    }

    static func prepare(_ fixture: CoreDataStoreFixture) throws -> Prepared {
        let bundle = try CoreDataTestSupport.makeBundle(
            "Shop",
            versions: [
                "Shop": fixture.contents(),
                "Shop 2": fixture.contents(
                    extra: "<attribute name=\"added\" optional=\"YES\" attributeType=\"String\"/>"),
            ])
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let imported = try CoreDataTestSupport.importModel(bundle.path)
        #expect(!imported.loaded.hasErrors, "\(imported.loaded.diagnostics.filter { $0.severity == .error }.prefix(3))")
        let versions = try #require(imported.loaded.model?.versions.map(\.schema))
        try #require(versions.count == 2)
        let json = try Data(
            contentsOf: imported.folder.appendingPathComponent(FileNames.coreDataStoreModel(of: "Shop")))
        let storeModel = try JSONDecoder().decode(CoreDataStoreModel.self, from: json)
        return Prepared(
            folder: imported.folder, versions: versions,
            plan: MigrationPlan(current: versions[1], stages: [.lightweight(from: versions[0], to: versions[1])]),
            storeModel: storeModel)
    }

    /// The indexes of the store at `url` that its DDL made, with that DDL.
    static func indexes(of url: URL) throws -> [String: String] {
        let connection = try SQLiteConnection(path: url.path, readOnly: true)
        defer { connection.close() }
        var indexes: [String: String] = [:]
        do {
            let statement = try connection.statement(
                "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
            defer { statement.reset() }
            while try statement.step() { indexes[statement.string(0)] = statement.string(1) }
        }
        return indexes
    }

    /// The bytes of the store's files, to show the import left them as they were.
    static func snapshot(_ store: URL) -> [String: Data] {
        var files: [String: Data] = [:]
        for suffix in ["", "-wal", "-shm"] {
            if let data = FileManager.default.contents(atPath: store.path + suffix) { files[suffix] = data }
        }
        return files
    }

    /// Cases drawn per run: a few in CI, many with `MODELWRIGHT_LARGE=1`.
    static let caseCount = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 200 : 8

    @Test(arguments: 0..<caseCount)
    func everyValueAndLinkComesAcross(seed: Int) throws {
        var random = SplitMix64(seed: 29, index: seed)
        let fixture = CoreDataStoreFixture(random: &random)
        let prepared = try Self.prepare(fixture)
        defer { try? FileManager.default.removeItem(at: prepared.folder) }
        let folder = CoreDataTestSupport.temporaryFolder("store")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // Half the stores were written by the first version and migrate; half by the current one.
        let writtenBy = random.chance(0.5) ? 1 : 2
        var written = fixture
        if writtenBy == 2, let author = written.entities.firstIndex(where: { $0.name == "Author" }) {
            written.entities[author].attributes.append(.init(name: "added", type: "String", isOptional: true))
        }
        let writer = CoreDataStoreWriter(fixture: written, random: &random)
        let version = prepared.storeModel.versions[writtenBy - 1]
        let store = try writer.write(
            to: folder, name: "Shop", hashes: CoreDataVersionHashes.hashes(of: version), rowsInLog: random.chance(0.7),
            random: &random)
        let before = Self.snapshot(store)
        let destination = folder.appendingPathComponent("Shop.store")
        let summary = try CoreDataStoreImport.importStore(
            at: store, model: prepared.storeModel, migrationPlan: prepared.plan, to: destination)
        #expect(summary.coreDataVersion == (writtenBy == 1 ? "Shop" : "Shop 2"))
        #expect(summary.schemaVersion == writtenBy)
        #expect(summary.totalRows == writer.objects.count)
        #expect(Self.snapshot(store) == before, "the Core Data store changed")
        // Written without a journal and with its indexes dropped for the rows, the store comes out
        // as a store the app makes: in write-ahead-log mode, with every index a new one has.
        let header = try #require(FileManager.default.contents(atPath: destination.path)?.prefix(20))
        #expect(header.count == 20 && header[18] == 2 && header[19] == 2, "not in write-ahead-log mode")
        let fresh = folder.appendingPathComponent("Fresh.store")
        try Store(url: fresh, migrationPlan: prepared.plan).close()
        #expect(try Self.indexes(of: destination) == Self.indexes(of: fresh))
        try StoreReadBack(destination: destination, schema: prepared.versions[1], model: version, writer: writer)
            .expectEverythingCameAcross()
        // A second run writes the same IDs (they come from the store, not the clock).
        let again = folder.appendingPathComponent("Again.store")
        try CoreDataStoreImport.importStore(
            at: store, model: prepared.storeModel, migrationPlan: prepared.plan, to: again)
        try StoreReadBack(destination: again, schema: prepared.versions[1], model: version, writer: writer)
            .expectEverythingCameAcross()
    }
}

extension CoreDataStoreImportTests {
    /// With `MODELWRIGHT_LARGE=1`: a store of about 100,000 objects with their links imports and
    /// verifies; the time is printed beside a plain copy of the same files, for scale.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1"))
    func aLargeStoreImports() throws {
        var random = SplitMix64(seed: 100_000)
        let fixture = CoreDataStoreFixture(random: &random)
        let prepared = try Self.prepare(fixture)
        defer { try? FileManager.default.removeItem(at: prepared.folder) }
        let folder = CoreDataTestSupport.temporaryFolder("large")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let writer = CoreDataStoreWriter(fixture: fixture, random: &random, objectsPerEntity: 20_000...20_000)
        let store = try writer.write(
            to: folder, name: "Shop", hashes: CoreDataVersionHashes.hashes(of: prepared.storeModel.versions[0]),
            rowsInLog: false, random: &random)
        let clock = ContinuousClock()
        let copying = try clock.measure {
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: store.path + suffix) {
                try FileManager.default.copyItem(
                    atPath: store.path + suffix, toPath: folder.appendingPathComponent("copy.sqlite").path + suffix)
            }
        }
        var summary: CoreDataStoreImport.Summary?
        let importing = try clock.measure {
            summary = try CoreDataStoreImport.importStore(
                at: store, model: prepared.storeModel, migrationPlan: prepared.plan,
                to: folder.appendingPathComponent("Shop.store"))
        }
        #expect(summary?.totalRows == writer.objects.count)
        print(
            "imported \(writer.objects.count) objects, \(summary?.links ?? 0) to-many links in \(importing); copying the files took \(copying)"
        )
    }
}

/// Reads an imported Modelwright store back, row by row and link by link, against what the
/// Core Data store held.
struct StoreReadBack {
    let connection: SQLiteConnection
    let layout: SchemaLayout
    let context: MigrationContext
    let model: CoreDataStoreModel.Version
    let writer: CoreDataStoreWriter

    init(destination: URL, schema: SchemaDescription, model: CoreDataStoreModel.Version, writer: CoreDataStoreWriter)
        throws
    {
        connection = try SQLiteConnection(path: destination.path)
        layout = try SchemaLayout(schema)
        context = MigrationContext(connection: connection, layout: layout)
        self.model = model
        self.writer = writer
    }

    func id(_ root: String, _ key: Int64) -> SQLValue {
        let uuid = UUIDVersion7.imported(storeUUID: writer.storeUUID, rootEntity: root, primaryKey: key)
        return withUnsafeBytes(of: uuid.uuid) { .blob(Data($0)) }
    }

    func schemaName(_ entity: String) -> String? { model.entity(named: entity)?.schemaName }

    /// Every row of `entity`, read once per read-back.
    private let cache = RowCache()

    final class RowCache {
        var rows: [String: [MigrationRow]] = [:]
    }

    func rows(of entity: String) throws -> [MigrationRow] {
        if let rows = cache.rows[entity] { return rows }
        let rows = try context.rows(of: entity)
        cache.rows[entity] = rows
        return rows
    }

    func expectEverythingCameAcross(sourceLocation: SourceLocation = #_sourceLocation) throws {
        defer { connection.close() }
        // Values.
        var rowsByEntity: [String: [SQLValue: MigrationRow]] = [:]
        for entity in model.entities {
            guard let name = entity.schemaName else { continue }
            let rows = try rows(of: name).filter { $0["_entity"] == .null || $0["_entity"] == .text(name) }
            rowsByEntity[entity.name] = Dictionary(rows.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        }
        for object in writer.objects {
            let row = rowsByEntity[object.entity]?[id(object.root, object.primaryKey)]
            #expect(row != nil, "\(object.entity) Z_PK \(object.primaryKey) is missing", sourceLocation: sourceLocation)
            guard let row else { continue }
            for owner in writer.lineage(object.entity) {
                for attribute in owner.attributes {
                    let key = model.entity(named: owner.name)?.attributes.first { $0.name == attribute.name }?
                        .schemaName
                    guard let key else {
                        Issue.record("\(owner.name).\(attribute.name) was not imported", sourceLocation: sourceLocation)
                        continue
                    }
                    #expect(
                        row[key] == object.expected[attribute.name] ?? .null,
                        "\(object.entity).\(attribute.name) (\(attribute.type)) of Z_PK \(object.primaryKey): stored \(object.stored[attribute.name] ?? .null)",
                        sourceLocation: sourceLocation)
                }
            }
        }
        #expect(rowsByEntity.values.map(\.count).reduce(0, +) == writer.objects.count, sourceLocation: sourceLocation)
        // Links.
        for entity in writer.fixture.entities {
            for relationship in entity.relationships {
                try expectLinks(of: relationship, declaredBy: entity.name, sourceLocation: sourceLocation)
            }
        }
    }

    /// What the Core Data store links, from each source key to its destination keys.
    func expectedLinks(_ relationship: CoreDataStoreFixture.Relationship, of entity: String) -> [Int64: [Int64]] {
        let key = CoreDataStoreWriter.key(entity, relationship.name)
        if !relationship.toMany { return (writer.toOne[key] ?? [:]).mapValues { [$0] } }
        if writer.drawsLinks(relationship, of: entity) || writer.toMany[key] != nil { return writer.toMany[key] ?? [:] }
        // The other side of a many-to-many pair.
        guard let inverseName = relationship.inverse,
            let (inverse, owner) = writer.relationship(inverseName, of: relationship.destination)
        else { return [:] }
        var links: [Int64: [Int64]] = [:]
        for (source, destinations) in writer.toMany[CoreDataStoreWriter.key(owner, inverse.name)] ?? [:] {
            for destination in destinations { links[destination, default: []].append(source) }
        }
        return links
    }

    func expectLinks(
        of relationship: CoreDataStoreFixture.Relationship, declaredBy entity: String, sourceLocation: SourceLocation
    ) throws {
        guard let entityName = schemaName(entity),
            let relationshipName = model.entity(named: entity)?.relationships.first(where: {
                $0.name == relationship.name
            })?.schemaName,
            let entityLayout = layout.entities[entityName],
            let description = entityLayout.relationships.first(where: { $0.name == relationshipName }),
            let destinationLayout = layout.entities[description.destination]
        else {
            Issue.record("\(entity).\(relationship.name) was not imported", sourceLocation: sourceLocation)
            return
        }
        let sourceRoot = writer.roots[entity] ?? entity
        let destinationRoot = writer.roots[relationship.destination] ?? relationship.destination
        var expected: [SQLValue: [SQLValue]] = [:]
        for (source, destinations) in expectedLinks(relationship, of: entity) where !destinations.isEmpty {
            expected[id(sourceRoot, source)] = destinations.map { id(destinationRoot, $0) }
        }
        var actual: [SQLValue: [SQLValue]] = [:]
        if description.cardinality == .toOne {
            for row in try rows(of: entityName) where row[relationshipName] != .null {
                actual[row.id] = [row[relationshipName]]
            }
        } else {
            let pairs: [MigrationRow]
            switch try layout.storage(of: description, from: entityLayout) {
            case .inverseColumn(let column, let position):
                pairs = try context.query(
                    "SELECT \(quoted(column)) AS s, \"id\" AS d, \(position.map(quoted) ?? "NULL") AS p FROM \(quoted(destinationLayout.table)) WHERE \(quoted(column)) IS NOT NULL ORDER BY p"
                )
            case .joinTable(let table, let source, let destination, let position):
                pairs = try context.query(
                    "SELECT \(quoted(source)) AS s, \(quoted(destination)) AS d, \(position.map(quoted) ?? "NULL") AS p FROM \(quoted(table)) ORDER BY p"
                )
            }
            for pair in pairs { actual[pair["s"], default: []].append(pair["d"]) }
        }
        if relationship.ordered {
            #expect(actual == expected, "\(entity).\(relationship.name) (ordered)", sourceLocation: sourceLocation)
        } else {
            #expect(
                actual.mapValues(Set.init) == expected.mapValues(Set.init), "\(entity).\(relationship.name)",
                sourceLocation: sourceLocation)
        }
    }
}
