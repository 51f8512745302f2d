import Foundation
import Testing

@testable import Modelwright

/// Two versions of a small model, built as the generator would describe them.
private enum People {
    static let v1 = SchemaDescription(
        modelName: "People", version: 1,
        entities: [
            EntityDescription(
                name: "Person",
                attributes: [
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "age", type: .int16, isOptional: true),
                    AttributeDescription(name: "nickname", type: .string, isOptional: true),
                ],
                relationships: [
                    RelationshipDescription(name: "pets", destination: "Pet", inverse: "owner", cardinality: .toMany)
                ],
                indexes: [["name"]]
            ),
            EntityDescription(
                name: "Pet",
                attributes: [AttributeDescription(name: "species", type: .string)],
                relationships: [
                    RelationshipDescription(name: "owner", destination: "Person", inverse: "pets", cardinality: .toOne)
                ]
            ),
        ]
    )

    /// Lightweight: a renamed entity, attribute and relationship, an added optional attribute,
    /// an added required attribute with a default.
    static let v2 = SchemaDescription(
        modelName: "People", version: 2,
        entities: [
            EntityDescription(
                name: "Owner",
                attributes: [
                    AttributeDescription(name: "fullName", type: .string, renamedFrom: "name"),
                    AttributeDescription(name: "age", type: .int16, isOptional: true),
                    AttributeDescription(name: "nickname", type: .string, isOptional: true),
                    AttributeDescription(name: "email", type: .string, isOptional: true),
                    AttributeDescription(name: "isActive", type: .bool, defaultValue: .bool(true)),
                ],
                relationships: [
                    RelationshipDescription(
                        name: "animals", destination: "Pet", inverse: "keeper", cardinality: .toMany,
                        renamedFrom: "pets")
                ],
                indexes: [["fullName"]],
                renamedFrom: "Person"
            ),
            EntityDescription(
                name: "Pet",
                attributes: [AttributeDescription(name: "species", type: .string)],
                relationships: [
                    RelationshipDescription(
                        name: "keeper", destination: "Owner", inverse: "animals", cardinality: .toOne,
                        renamedFrom: "owner")
                ]
            ),
        ]
    )

    /// Rebuilds: `nickname` removed, `age` widened to Double and made required with a default,
    /// `givenName` added as required with no default (a custom step fills it).
    static let v3 = SchemaDescription(
        modelName: "People", version: 3,
        entities: [
            EntityDescription(
                name: "Owner",
                attributes: [
                    AttributeDescription(name: "fullName", type: .string),
                    AttributeDescription(name: "givenName", type: .string),
                    AttributeDescription(name: "age", type: .double, defaultValue: .floatingPoint(0)),
                    AttributeDescription(name: "email", type: .string, isOptional: true),
                    AttributeDescription(name: "isActive", type: .bool, defaultValue: .bool(true)),
                ],
                relationships: [
                    RelationshipDescription(
                        name: "animals", destination: "Pet", inverse: "keeper", cardinality: .toMany)
                ],
                indexes: [["fullName"]]
            ),
            EntityDescription(
                name: "Pet",
                attributes: [AttributeDescription(name: "species", type: .string)],
                relationships: [
                    RelationshipDescription(
                        name: "keeper", destination: "Owner", inverse: "animals", cardinality: .toOne)
                ]
            ),
        ]
    )

    static func givenNameStep(_ didMigrate: @escaping MigrationStage.Handler) -> MigrationStage.CustomStep {
        MigrationStage.CustomStep(
            name: "givenName", label: "Take the given name from the full name", didMigrate: didMigrate)
    }

    static func plan(_ didMigrate: @escaping MigrationStage.Handler = fillGivenName) -> MigrationPlan {
        MigrationPlan(
            current: v3,
            stages: [
                .lightweight(from: v1, to: v2),
                .custom(from: v2, to: v3, steps: [givenNameStep(didMigrate)]),
            ]
        )
    }

    @Sendable static func fillGivenName(_ context: MigrationContext) throws {
        for owner in try context.rows(of: "Owner") {
            guard case .text(let name) = owner["fullName"] else { continue }
            // The removed column is still readable here.
            var given = String(name.split(separator: " ").first ?? "")
            if case .text(let nickname) = owner["nickname"] { given = nickname }
            try context.update("Owner", id: owner.id, set: ["givenName": .text(given)])
        }
    }
}

@Suite("Migrator")
struct MigratorTests {
    private func tester(_ plan: MigrationPlan = People.plan()) throws -> (MigrationTester, ines: SQLValue) {
        let tester = try MigrationTester(plan: plan, startingAt: People.v1)
        let ines = try tester.insert("Person", ["name": .text("Inês Ortega"), "age": .integer(41)])
        try tester.insert("Person", ["name": .text("Tom Lee")])
        try tester.insert("Pet", ["species": .text("cat"), "owner": ines])
        return (tester, ines)
    }

    @Test("a lightweight stage renames in place and keeps every value")
    func lightweightStage() throws {
        let operations = try MigrationStage.lightweight(from: People.v1, to: People.v2).operations()
        // Renames are in place; only the renamed tables' and columns' indexes are built again under
        // a fresh store's names (one index build each), so a later entity of the old name fits.
        let indexBuilds = operations.filter {
            switch $0 {
            case .dropIndex, .createIndex: true
            default: false
            }
        }
        #expect(operations.filter { !indexBuilds.contains($0) }.allSatisfy { $0.isConstantTime }, "\(operations)")
        #expect(operations.contains(.renameTable(from: "Person", to: "Owner")))
        #expect(operations.contains(.renameColumn(table: "Owner", from: "name", to: "fullName")))
        #expect(operations.contains(.renameColumn(table: "Pet", from: "owner", to: "keeper")))
        #expect(operations.contains(.addColumn(table: "Owner", column: "isActive")))

        let (tester, ines) = try tester(
            MigrationPlan(current: People.v2, stages: [.lightweight(from: People.v1, to: People.v2)]))
        _ = try tester.migrate()
        let owners = try tester.rows(of: "Owner")
        let owner = try #require(owners.first { $0.id == ines })
        #expect(owner["fullName"] == .text("Inês Ortega"))
        #expect(owner["age"] == .integer(41))
        #expect(owner["isActive"] == .integer(1))
        #expect(try tester.rows(of: "Pet").first?["keeper"] == ines)
        #expect(try tester.schemaDifferences() == [])
    }

    @Test("a custom stage reads removed columns in didMigrate and fills new required ones")
    func customStage() throws {
        let (tester, ines) = try tester()
        try tester.execute("UPDATE \"Person\" SET \"nickname\" = 'Nessa' WHERE \"id\" = ?", [ines])
        let events = Locked<[MigrationProgress]>([])
        let store = try tester.migrate { progress in events.withLock { $0.append(progress) } }
        let owners = try tester.rows(of: "Owner").sorted { "\($0["fullName"])" < "\($1["fullName"])" }
        #expect(owners.map { $0["givenName"] } == [.text("Nessa"), .text("Tom")])
        #expect(owners.map { $0["age"] } == [.real(41), .real(0)])
        #expect(owners.allSatisfy { $0.values["nickname"] == nil })
        #expect(try tester.schemaDifferences() == [])
        #expect(store.schema.checksum == People.v3.checksum)
        let seen = events.withLock { $0 }
        #expect(
            seen.first
                == MigrationProgress(
                    event: .stageStarted, stage: 1, stageCount: 2, fromVersion: 1, toVersion: 2, table: nil,
                    rowsCopied: 0))
        #expect(seen.contains { $0.event == .tableCopied && $0.table == "Owner" && $0.rowsCopied == 2 })
        #expect(seen.last?.event == .stageCommitted && seen.last?.toVersion == 3)
    }

    @Test("a custom step that leaves a required column empty fails and the store stays at the previous version")
    func missingValues() throws {
        let (tester, _) = try tester(People.plan { _ in })
        #expect(
            throws: MigrationError.missingValues(
                stage: "from version 2 to 3", table: "Owner", column: "givenName", rows: 2)
        ) {
            try tester.migrate()
        }
        let connection = try SQLiteConnection(path: tester.url.path)
        #expect(try StoreMetadata.storedVersion(on: connection) == 2)
        #expect(try StoreSchema.read(connection) == StoreSchema.fresh(SchemaLayout(People.v2)))
    }

    @Test("a stage that throws leaves the store exactly at the previous version")
    func throwingStage() throws {
        struct Refused: Error {}
        let (tester, _) = try tester(
            MigrationPlan(
                current: People.v2,
                stages: [
                    .custom(
                        from: People.v1, to: People.v2,
                        steps: [
                            People.givenNameStep { context in
                                try context.update("Owner", id: .null, set: ["email": .text("x")])
                                throw Refused()
                            }
                        ])
                ]))
        let before = try dump(tester.url)
        #expect(throws: Refused.self) { try tester.migrate() }
        let after = try dump(tester.url)
        #expect(after.0 == before.0)
        #expect(after.1 == before.1)
        #expect(before.1.contains { $0.contains("Inês Ortega") })
    }

    @Test("a store of an unknown or newer version is refused, byte for byte untouched")
    func unknownVersion() throws {
        let (tester, _) = try tester(MigrationPlan(current: People.v2, stages: []))
        let bytes = try Data(contentsOf: tester.url)
        #expect(
            throws: MigrationError.unknownStoreVersion(
                storeChecksum: People.v1.checksum.hexDigits, storeVersion: 1,
                knownChecksums: [People.v2.checksum.hexDigits]
            )
        ) { try tester.migrate() }
        #expect(try Data(contentsOf: tester.url) == bytes)
    }

    @Test("a plan with two stages leaving one version is refused")
    func duplicateSourceVersion() throws {
        let plan = MigrationPlan(
            current: People.v2,
            stages: [
                .lightweight(from: People.v1, to: People.v2), .lightweight(from: People.v1, to: People.v2),
            ])
        #expect(throws: MigrationError.self) { try plan.stages(fromVersion: 1, checksum: People.v1.checksum) }
    }

    @Test("a fresh store's schema is the same whether created or remembered from an earlier stage")
    func freshSchemaCache() throws {
        let cache = FreshSchemaCache()
        for schema in [People.v1, People.v2, People.v3, People.v1, People.v2] {
            let tables = SchemaSQL.tables(for: try SchemaLayout(schema), in: SQLiteDialect())
            #expect(try StoreSchema.fresh(tables, cache: cache) == StoreSchema.fresh(tables))
        }
    }

    @Test("a stage whose result differs from a fresh store of its destination fails, however warm the cache")
    func resultUnlikeAFreshStore() throws {
        let cache = FreshSchemaCache()
        let stage = MigrationStage.lightweight(from: People.v1, to: People.v2)
        #expect(try !stage.operations(freshSchemas: cache).isEmpty)
        let connection = try SQLiteConnection(path: nil)
        try connection.execute(SchemaSQL.createStatements(for: SchemaLayout(People.v1), in: connection.dialect))
        // No version declares this table, so the migrated store holds one a fresh store lacks.
        try connection.execute("CREATE TABLE \"Stray\" (\"id\" BLOB PRIMARY KEY NOT NULL)")
        let error = #expect(throws: MigrationError.self) {
            try Migrator(connection: connection, progress: nil).run(stage, number: 1, of: 1, freshSchemas: cache)
        }
        guard case .schemaMismatch(_, let differences)? = error else {
            Issue.record("expected a schema mismatch, got \(String(describing: error))")
            return
        }
        #expect(differences == ["table Stray should not exist"])
    }

    /// The schema and every table's rows, metadata included, to compare a store before and after.
    @Test("a relationship that becomes ordered places every linked row, in ID order")
    func relationshipBecomesOrdered() throws {
        func schema(_ version: Int, ordered: Bool) -> SchemaDescription {
            SchemaDescription(
                modelName: "People", version: version,
                entities: [
                    EntityDescription(
                        name: "Person", attributes: [AttributeDescription(name: "name", type: .string)],
                        relationships: [
                            RelationshipDescription(
                                name: "pets", destination: "Pet", inverse: "owner", cardinality: .toMany,
                                isOrdered: ordered)
                        ]),
                    EntityDescription(
                        name: "Pet", attributes: [AttributeDescription(name: "species", type: .string)],
                        relationships: [
                            RelationshipDescription(
                                name: "owner", destination: "Person", inverse: "pets", cardinality: .toOne)
                        ]),
                ])
        }
        let (v1, v2) = (schema(1, ordered: false), schema(2, ordered: true))
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20 {
            let tester = try MigrationTester(
                plan: MigrationPlan(current: v2, stages: [.lightweight(from: v1, to: v2)]), startingAt: v1)
            let owners = try (0..<Int.random(in: 1...4, using: &generator)).map {
                try tester.insert("Person", ["name": .text("person \($0)")])
            }
            var petsByOwner: [SQLValue: [SQLValue]] = [:]
            for index in 0..<Int.random(in: 0...12, using: &generator) {
                let owner = Bool.random(using: &generator) ? owners.randomElement(using: &generator) ?? .null : .null
                let pet = try tester.insert("Pet", ["species": .text("pet \(index)"), "owner": owner])
                if owner != .null { petsByOwner[owner, default: []].append(pet) }
            }
            _ = try tester.migrate()
            let pets = try tester.rows(of: "Pet")
            for pet in pets where pet["owner"] == .null {
                #expect(pet["owner._position"] == .null)
            }
            for (owner, ids) in petsByOwner {
                let places = pets.filter { $0["owner"] == owner }.sorted { $0.id.hexKey < $1.id.hexKey }
                    .map(\.["owner._position"])
                #expect(places == ids.indices.map { .integer(Int64($0)) }, "places follow the IDs")
            }
            #expect(try tester.schemaDifferences() == [])
        }
    }

    @Test("a Double column added with a default gives the rows that existed that default, -0.0 with its sign")
    func addedDoubleDefaultsKeepTheirValue() async throws {
        let defaults: [Double] = [-0.0, 0.0, 2.0, -3.0, 1.5]
        func schema(_ version: Int) -> SchemaDescription {
            let added =
                version == 1
                ? []
                : defaults.enumerated().map { index, value in
                    AttributeDescription(name: "d\(index)", type: .double, defaultValue: .floatingPoint(value))
                }
            return SchemaDescription(
                modelName: "Readings", version: version,
                entities: [
                    EntityDescription(
                        name: "Reading", attributes: [AttributeDescription(name: "name", type: .string)] + added)
                ])
        }
        let tester = try MigrationTester(
            plan: MigrationPlan(current: schema(2), stages: [.lightweight(from: schema(1), to: schema(2))]),
            startingAt: schema(1))
        for index in 0..<3 { try tester.insert("Reading", ["name": .text("reading \(index)")]) }
        _ = try tester.migrate()
        for row in try tester.rows(of: "Reading") {
            for (index, value) in defaults.enumerated() {
                let stored: Double? =
                    switch row["d\(index)"] {
                    case .real(let real): real
                    case .integer(let integer): Double(integer)
                    default: nil
                    }
                #expect(stored == value && stored?.sign == value.sign, "d\(index) = \(row["d\(index)"])")
            }
        }
    }

    private func dump(_ url: URL) throws -> (StoreSchema, [String]) {
        let connection = try SQLiteConnection(path: url.path, readOnly: true)
        let schema = try StoreSchema.read(connection)
        var lines: [String] = []
        for table in schema.tables.keys.sorted() {
            let context = MigrationContext(connection: connection, layout: try SchemaLayout(People.v1))
            lines += try context.query("SELECT * FROM \(quoted(table)) ORDER BY 1").map {
                "\(table) \($0.values.sorted { $0.key < $1.key })"
            }
        }
        return (schema, lines)
    }
}

extension SQLValue {
    /// An ID's bytes in hexadecimal, which sort as SQLite sorts blobs.
    fileprivate var hexKey: String {
        guard case .blob(let data) = self else { return "" }
        return data.map { String(format: "%02x", $0) }.joined()
    }
}
