import Foundation
import Testing

@_spi(Generated) @testable import Modelwright

/// Generated plans refer to historical versions by their archives: opening a store decodes only
/// the versions it migrates through, each once, and an archive that does not match its recorded
/// checksum stops the migration with a clear error.
struct ArchivedVersionTests {
    /// Version `number` of a model whose versions each add one optional column (and, from version 3,
    /// an entity), so every step is a lightweight stage.
    static func version(_ number: Int) -> SchemaDescription {
        var entities = [
            EntityDescription(
                name: "Note",
                attributes: (1...number).map { AttributeDescription(name: "a\($0)", type: .string, isOptional: true) })
        ]
        if number >= 3 {
            entities.append(EntityDescription(name: "Tag", attributes: [AttributeDescription(name: "t", type: .int)]))
        }
        return SchemaDescription(modelName: "Notes", version: number, entities: entities)
    }

    static let count = 6

    /// A plan as generated code builds it: versions 1…5 archived, version 6 typed.
    static func plan() -> (MigrationPlan, versions: [SchemaVersion]) {
        let versions =
            (1..<count).map { number in
                let schema = version(number)
                return SchemaVersion(version: number, checksum: schema.checksum.hexDigits, archive: schema.archive)
            } + [SchemaVersion(version(count))]
        let stages = zip(versions, versions.dropFirst()).map { MigrationStage.lightweight(from: $0, to: $1) }
        return (MigrationPlan(current: version(count), stages: stages), versions)
    }

    @Test func anArchivedVersionIsDecodedOnFirstUseAndEqualsItsSchema() throws {
        let schema = Self.version(4)
        let archived = SchemaVersion(version: 4, checksum: schema.checksum.hexDigits, archive: schema.archive)
        let copy = archived
        #expect(!archived.isDecoded)
        #expect(archived.checksum == schema.checksum)
        #expect(try copy.schema() == schema)
        #expect(archived.isDecoded, "copies share one decoding")
    }

    @Test func concurrentReadersAllGetTheSchema() throws {
        let schema = Self.version(5)
        let archived = SchemaVersion(version: 5, checksum: schema.checksum.hexDigits, archive: schema.archive)
        let results = Locked<[SchemaDescription]>([])
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            if let decoded = try? archived.schema() { results.withLock { $0.append(decoded) } }
        }
        #expect(results.withLock { $0 } == Array(repeating: schema, count: 16))
    }

    @Test(arguments: 1...count)
    func openingAStoreDecodesOnlyTheVersionsItMigratesThrough(start: Int) throws {
        let (plan, versions) = Self.plan()
        let tester = try MigrationTester(plan: plan, startingAt: Self.version(start))
        try tester.insert("Note", ["a1": .text("kept")])
        _ = try tester.migrate()
        let decoded = versions.filter(\.isDecoded).map(\.version)
        #expect(decoded == Array(start...Self.count), "from version \(start)")
        #expect(try tester.rows(of: "Note").map { $0["a1"] } == [.text("kept")])
        #expect(try tester.schemaDifferences().isEmpty)
    }

    @Test func aStoreOfTheCurrentVersionDecodesNothing() throws {
        let (plan, versions) = Self.plan()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("archived-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Notes.sqlite")
        _ = try Store(url: url, migrationPlan: plan)
        _ = try Store(url: url, migrationPlan: plan)
        #expect(versions.dropLast().allSatisfy { !$0.isDecoded })
    }

    @Test func anArchiveWithAnotherChecksumStopsTheMigrationThatNeedsIt() throws {
        let (plan, _) = Self.plan()
        // Version 2's archive holds version 2 with one column more than its recorded checksum says.
        var edited = Self.version(2)
        edited.entities[0].attributes.append(AttributeDescription(name: "extra", type: .string, isOptional: true))
        let forged = SchemaVersion(version: 2, checksum: Self.version(2).checksum.hexDigits, archive: edited.archive)
        var stages = plan.stages
        stages[0] = .lightweight(from: stages[0].source, to: forged)
        stages[1] = .lightweight(from: forged, to: stages[1].destination)
        let broken = MigrationPlan(current: plan.current, stages: stages)

        let expected = MigrationError.archivedSchemaMismatch(
            version: 2, recordedChecksum: Self.version(2).checksum.hexDigits,
            archiveChecksum: edited.checksum.hexDigits)
        let early = try MigrationTester(plan: broken, startingAt: Self.version(1))
        #expect(throws: expected) { try early.migrate() }
        #expect("\(expected)".contains("version 2"))
        // A store past version 2 never needs it.
        let late = try MigrationTester(plan: broken, startingAt: Self.version(3))
        #expect(throws: Never.self) { try late.migrate() }
    }

    @Test func anUnreadableArchiveIsAMigrationError() throws {
        let schema = Self.version(1)
        let cut = String(schema.archive.dropLast(3))
        #expect {
            try SchemaVersion(version: 1, checksum: schema.checksum.hexDigits, archive: cut).schema()
        } throws: { error in
            guard case .unreadableSchemaArchive(version: 1, let reason)? = error as? MigrationError else {
                return false
            }
            return reason.contains("line")
        }
        let other = SchemaVersion(version: 7, checksum: schema.checksum.hexDigits, archive: schema.archive)
        #expect(throws: MigrationError.unreadableSchemaArchive(version: 7, reason: "the archive holds version 1")) {
            try other.schema()
        }
    }

    @Test func aTesterStartsAtAnArchivedVersion() throws {
        let (plan, versions) = Self.plan()
        let tester = try MigrationTester(plan: plan, startingAt: versions[2])
        try tester.insert("Note", ["a3": .text("three")])
        _ = try tester.migrate()
        #expect(try tester.rows(of: "Note").map { $0["a3"] } == [.text("three")])
    }
}
