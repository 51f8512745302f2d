import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright

/// Sync across a lightweight migration: drawn version-2 models that rename the entity, rename an
/// attribute and a to-one relationship, remove an attribute and add attributes (optional, and
/// required with a default). A device that wrote offline at version 1 upgrades and its writes
/// reach the server; a server migrated in the middle of its history serves new devices of version
/// 2; every store ends equal to the server's.
@Suite("SyncMigration")
struct SyncMigrationTests {
    static let caseCount = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 64 : 6

    static let v1 = SchemaDescription(
        modelName: "Notes", version: 1,
        entities: [
            EntityDescription(
                name: "Folder", attributes: [AttributeDescription(name: "name", type: .string)],
                relationships: [
                    RelationshipDescription(name: "notes", destination: "Note", inverse: "folder", cardinality: .toMany)
                ]),
            EntityDescription(
                name: "Note",
                attributes: [
                    AttributeDescription(name: "title", type: .string),
                    AttributeDescription(name: "owner", type: .string),
                    AttributeDescription(name: "body", type: .string, isOptional: true),
                ],
                relationships: [
                    RelationshipDescription(
                        name: "folder", destination: "Folder", inverse: "notes", cardinality: .toOne)
                ]),
        ])

    /// What a drawn version 2 changes.
    struct Changes: CustomStringConvertible {
        var renamesEntity: Bool
        var renamesTitle: Bool
        var renamesFolder: Bool
        var removesBody: Bool
        var addsOptional: Bool
        var addsDefaulted: Bool

        init(_ random: inout SplitMix64) {
            renamesEntity = random.chance(0.5)
            renamesTitle = random.chance(0.5)
            renamesFolder = random.chance(0.5)
            removesBody = random.chance(0.5)
            addsOptional = random.chance(0.5)
            addsDefaulted = random.chance(0.5)
        }

        var description: String {
            [
                renamesEntity ? "Note→Memo" : nil, renamesTitle ? "title→heading" : nil,
                renamesFolder ? "folder→place" : nil, removesBody ? "-body" : nil, addsOptional ? "+extra" : nil,
                addsDefaulted ? "+priority" : nil,
            ].compactMap { $0 }.joined(separator: " ")
        }

        var schema: SchemaDescription {
            let note = renamesEntity ? "Memo" : "Note"
            let folder = renamesFolder ? "place" : "folder"
            var attributes = [
                AttributeDescription(
                    name: renamesTitle ? "heading" : "title", type: .string, renamedFrom: renamesTitle ? "title" : nil),
                AttributeDescription(name: "owner", type: .string),
            ]
            if !removesBody { attributes.append(AttributeDescription(name: "body", type: .string, isOptional: true)) }
            if addsOptional { attributes.append(AttributeDescription(name: "extra", type: .string, isOptional: true)) }
            if addsDefaulted {
                attributes.append(AttributeDescription(name: "priority", type: .int64, defaultValue: .integer(7)))
            }
            return SchemaDescription(
                modelName: "Notes", version: 2,
                entities: [
                    EntityDescription(
                        name: "Folder", attributes: [AttributeDescription(name: "name", type: .string)],
                        relationships: [
                            RelationshipDescription(
                                name: "notes", destination: note, inverse: folder, cardinality: .toMany)
                        ]),
                    EntityDescription(
                        name: note, attributes: attributes,
                        relationships: [
                            RelationshipDescription(
                                name: folder, destination: "Folder", inverse: "notes", cardinality: .toOne,
                                renamedFrom: renamesFolder ? "folder" : nil)
                        ],
                        renamedFrom: renamesEntity ? "Note" : nil),
                ])
        }
    }

    static func stamp() throws -> HybridTimestamp {
        var clock = HybridLogicalClock(node: SyncNodeID(), maximumDriftMilliseconds: HybridLogicalClock.unbounded)
        return try clock.tick(wallMilliseconds: HybridLogicalClock.wallMilliseconds())
    }

    /// Writes `count` notes (in a new folder) and retitles one of `earlier` at version 1, as the app
    /// would (the retitle is an insert of the changed value, which `materialize` applies to the
    /// existing row).
    static func writeV1(_ store: Store, count: Int, retitling earlier: [UUID], tag: String) async throws -> [UUID] {
        let folder = UUID()
        let notes = (0..<count).map { _ in UUID() }
        try await store.performAndSave(author: "app") { context in
            try context.materialize(
                .insert(RowKey(entity: "Folder", id: folder), values: ["name": .text(tag)], at: try Self.stamp()))
            for (index, id) in notes.enumerated() {
                try context.materialize(
                    .insert(
                        RowKey(entity: "Note", id: id),
                        values: [
                            "title": .text("\(tag) \(index)"), "owner": .text(tag),
                            "body": index % 2 == 0 ? .text("body \(index)") : .null, "folder": .uuid(folder),
                        ], at: try Self.stamp()))
            }
        }
        if let first = earlier.first {
            try await store.performAndSave(author: "app") { context in
                try context.materialize(
                    .insert(
                        RowKey(entity: "Note", id: first), values: ["title": .text("\(tag) retitled")],
                        at: try Self.stamp()))
            }
        }
        return notes
    }

    static func sync(_ engines: [SyncEngine]) async throws {
        for _ in 0..<2 { for engine in engines { try await engine.sync() } }
    }

    @Test func devicesAndServerConvergeAcrossALightweightMigration() async throws {
        for seed in 0..<Self.caseCount {
            var random = SplitMix64(seed: 2_862, index: seed)
            let changes = Changes(&random)
            let v2 = changes.schema
            let plan = MigrationPlan(current: v2, stages: [.lightweight(from: Self.v1, to: v2)])
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync6-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let label = "seed \(seed) (\(changes))"

            // A server at version 1, with two devices' writes synced.
            let serverURL = directory.appendingPathComponent("server.sqlite")
            var serverStore = try Store(url: serverURL, schema: Self.v1, history: .enabled(author: "server"))
            var server = try await SyncServer(store: serverStore)
            let xURL = directory.appendingPathComponent("x.sqlite")
            var x = try Store(url: xURL, schema: Self.v1, history: .enabled(author: "app"))
            let w = try Store.inMemory(schema: Self.v1, history: .enabled(author: "app"))
            let early = try await Self.writeV1(x, count: 1 + random.next(below: 3), retitling: [], tag: "x")
            _ = try await Self.writeV1(w, count: 1 + random.next(below: 3), retitling: [], tag: "w")
            try await Self.sync([
                try await SyncEngine(store: x, transport: server), try await SyncEngine(store: w, transport: server),
            ])

            // The server migrates in the middle of its history; a new device of version 2 pulls.
            try serverStore.close()
            serverStore = try Store(url: serverURL, migrationPlan: plan, history: .enabled(author: "server"))
            server = try await SyncServer(store: serverStore)
            let y = try Store.inMemory(schema: v2, history: .enabled(author: "app"))
            let yEngine = try await SyncEngine(store: y, transport: server)
            try await yEngine.sync()
            #expect(try await SyncSnapshot.read(y) == SyncSnapshot.read(serverStore), "\(label): new device")

            // Device x writes offline at version 1: a push it makes is refused ("update the app"),
            // it writes more, then upgrades; everything it wrote reaches the server.
            let stamped = try await Self.writeV1(x, count: 1 + random.next(below: 3), retitling: early, tag: "x2")
            do {
                try await SyncEngine(store: x, transport: server).sync()
                Issue.record("\(label): a version 1 device was served by a version 2 server")
            } catch SyncError.schemaVersionUnsupported {
                // The "update the app" refusal: expected before the upgrade.
            }
            let unstamped = try await Self.writeV1(x, count: 1 + random.next(below: 3), retitling: stamped, tag: "x3")
            try x.close()
            x = try Store(url: xURL, migrationPlan: plan, history: .enabled(author: "app"))
            try await Self.sync([try await SyncEngine(store: x, transport: server), yEngine])
            let truth = try await SyncSnapshot.read(serverStore)
            #expect(try await SyncSnapshot.read(x) == truth, "\(label): upgraded device")
            #expect(try await SyncSnapshot.read(y) == truth, "\(label): new device after the upgrade")
            let note = changes.renamesEntity ? "Memo" : "Note"
            let title = changes.renamesTitle ? "heading" : "title"
            for (id, expected) in [(early.first, "x2 retitled"), (stamped.first, "x3 retitled")] {
                guard let id else { continue }
                #expect(truth.rows[RowKey(entity: note, id: id)]?[title] == .text(expected), "\(label): \(expected)")
            }
            for id in unstamped {
                #expect(truth.rows[RowKey(entity: note, id: id)] != nil, "\(label): an offline write was lost")
            }
        }
    }
}
