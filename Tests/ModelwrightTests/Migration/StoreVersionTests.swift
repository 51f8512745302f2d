import Foundation
import Testing

@testable import Modelwright

/// `MigrationPlan.stages(fromVersion:checksum:)`: stages go by the version a store records, and a
/// store without a usable number resolves by checksum only when that cannot change its data.
struct StoreVersionTests {
    private static func schema(_ version: Int, token: Bool, extra: Bool = false) -> SchemaDescription {
        var attributes = [AttributeDescription(name: "name", type: .string)]
        if token { attributes.append(AttributeDescription(name: "token", type: .string, isOptional: true)) }
        if extra { attributes.append(AttributeDescription(name: "extra", type: .int64, isOptional: true)) }
        return SchemaDescription(
            modelName: "Wire", version: version, entities: [EntityDescription(name: "Client", attributes: attributes)])
    }

    private static func plan(_ schemas: [SchemaDescription], custom: Int? = nil) -> MigrationPlan {
        MigrationPlan(
            current: schemas[schemas.count - 1],
            stages: zip(schemas, schemas.dropFirst()).map { source, destination in
                source.version == custom
                    ? .custom(
                        from: source, to: destination,
                        steps: [.init(name: "fill", label: "fills", didMigrate: { _ in })])
                    : .lightweight(from: source, to: destination)
            })
    }

    private static func route(_ stages: [MigrationStage]?) -> [Int]? {
        stages.map { $0.map(\.source.version) }
    }

    @Test func aStructureThatComesBackIsToldApartByTheRecordedNumber() throws {
        // v1 and v3 have one checksum; v2 adds `token`.
        let (v1, v2, v3) = (Self.schema(1, token: false), Self.schema(2, token: true), Self.schema(3, token: false))
        #expect(v1.checksum == v3.checksum)
        let plan = Self.plan([v1, v2, v3])
        #expect(Self.route(try plan.stages(fromVersion: 1, checksum: v1.checksum)) == [1, 2])
        #expect(Self.route(try plan.stages(fromVersion: 2, checksum: v2.checksum)) == [2])
        #expect(Self.route(try plan.stages(fromVersion: 3, checksum: v3.checksum)) == [])
        // No number: v1 → v3 is net-zero (the token lived and died in between), so it is v3.
        #expect(Self.route(try plan.stages(fromVersion: nil, checksum: v1.checksum)) == [])
        #expect(Self.route(try plan.stages(fromVersion: nil, checksum: v2.checksum)) == [2])
        // A number whose checksum is another version's: the checksum decides.
        #expect(Self.route(try plan.stages(fromVersion: 1, checksum: v2.checksum)) == [2])
        // A number past the current version is a newer app's store, whatever its checksum.
        #expect(try plan.stages(fromVersion: 9, checksum: v3.checksum) == nil)
        // A checksum the plan does not know.
        #expect(try plan.stages(fromVersion: 4, checksum: Self.schema(4, token: true, extra: true).checksum) == nil)
    }

    @Test func withoutANumberStepsThatChangeDataBetweenEqualChecksumsAreRefused() throws {
        // `token` exists in v1 and v3 but not in v2: migrating v1 through v2 empties it.
        let (v1, v2, v3) = (Self.schema(1, token: true), Self.schema(2, token: false), Self.schema(3, token: true))
        let plan = Self.plan([v1, v2, v3])
        #expect(Self.route(try plan.stages(fromVersion: 1, checksum: v1.checksum)) == [1, 2])
        #expect {
            try plan.stages(fromVersion: nil, checksum: v1.checksum)
        } throws: { error in
            guard case StoreError.unresolvableStoreVersion(_, [1, 3], let reason) = error else { return false }
            return reason.contains("Client.token is added in the step from version 2 to 3")
        }
        // A custom stage between them is refused too, even when nothing else changes.
        let custom = Self.plan(
            [Self.schema(1, token: false), Self.schema(2, token: true), Self.schema(3, token: false)], custom: 2)
        #expect {
            try custom.stages(fromVersion: nil, checksum: Self.schema(1, token: false).checksum)
        } throws: { error in
            guard case StoreError.unresolvableStoreVersion(_, _, let reason) = error else { return false }
            return reason.contains("custom stage (fill)")
        }
    }

    @Test func aStoreWithoutANumberOpensAsTheVersionItResolvesToAndRecordsIt() throws {
        let (v1, v2, v3) = (Self.schema(1, token: false), Self.schema(2, token: true), Self.schema(3, token: false))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("StoreVersion-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Wire.sqlite")
        try Store(url: url, schema: v1).close()
        let connection = try SQLiteConnection(path: url.path)
        try connection.execute("DELETE FROM \(quoted(SchemaSQL.metadataTable)) WHERE \"key\" = 'version'")
        #expect(try StoreMetadata.read(on: connection).version == nil)
        try Store(url: url, migrationPlan: Self.plan([v1, v2, v3])).close()
        #expect(try StoreMetadata.read(on: connection).version == 3)
    }
}
