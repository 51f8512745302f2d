import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright
@testable import ModelwrightSchema

/// A synced model with uniqueness constraints: tags unique by name and merged
/// (`@sync(unique: merge)`), codes unique by value and rejected (`@sync(unique: reject)`), and
/// notes that refer to a tag (a to-one link without a foreign key).
enum UniqueSyncModel {
    /// The entities with a uniqueness rule, written in the schema language: the front end lowers
    /// `@sync(unique: …)` into the runtime's description, as generated code carries it.
    static let syncedText = """
        model UniqueSync version 1
        entity UTag {
            @sync(unique: merge)
            name: String @unique
            color: String
        }
        entity UCode {
            @sync(unique: reject)
            value: String @unique
        }
        """

    /// `UTag` and `UCode` as the front end lowers `syncedText` (empty when it has an error, which
    /// `theRulesComeFromTheSchemaLanguage` reports).
    static let lowered: [EntityDescription] =
        FrontEnd.lower(ResolvedFile.compile(SourceFile(path: "UniqueSync.v1.model", text: syncedText)))?.schema.entities
        ?? []

    static let schema = SchemaDescription(
        modelName: "UniqueSync",
        version: 1,
        entities: lowered + [
            EntityDescription(
                name: "UNote",
                attributes: [AttributeDescription(name: "title", type: .string)],
                relationships: [RelationshipDescription(name: "tag", destination: "UTag", cardinality: .toOne)]
            ),
            EntityDescription(
                name: "UParent",
                attributes: [AttributeDescription(name: "name", type: .string)],
                relationships: [
                    RelationshipDescription(
                        name: "nullKids", destination: "UChild", inverse: "nullParent", cardinality: .toMany,
                        deleteRule: .nullify),
                    RelationshipDescription(
                        name: "cascadeKids", destination: "UChild", inverse: "cascadeParent", cardinality: .toMany,
                        deleteRule: .cascade),
                    RelationshipDescription(
                        name: "denyKids", destination: "UChild", inverse: "denyParent", cardinality: .toMany,
                        deleteRule: .deny),
                ]
            ),
            EntityDescription(
                name: "UChild",
                attributes: [AttributeDescription(name: "title", type: .string)],
                relationships: [
                    RelationshipDescription(
                        name: "nullParent", destination: "UParent", inverse: "nullKids", cardinality: .toOne),
                    RelationshipDescription(
                        name: "cascadeParent", destination: "UParent", inverse: "cascadeKids", cardinality: .toOne),
                    RelationshipDescription(
                        name: "denyParent", destination: "UParent", inverse: "denyKids", cardinality: .toOne),
                ]
            ),
        ]
    )
}

struct UParent: ListedRecord {
    typealias Fields = NoFields<UParent>
    static let entityName = "UParent"
    static var columns: [RecordColumn<UParent>] { [RecordColumn(\.name)] }
    var id = RecordID<UParent>()
    var name = ""
}

struct UChild: ListedRecord {
    typealias Fields = NoFields<UChild>
    static let entityName = "UChild"
    static var columns: [RecordColumn<UChild>] {
        [RecordColumn(\.title), RecordColumn(\.parents[0]), RecordColumn(\.parents[1]), RecordColumn(\.parents[2])]
    }
    var id = RecordID<UChild>()
    var title = ""
    /// The parent through each relationship: 0 nullify, 1 cascade, 2 deny.
    var parents: [UParent.ID?] = [nil, nil, nil]
}

struct UTag: ListedRecord {
    typealias Fields = NoFields<UTag>
    static let entityName = "UTag"
    static var columns: [RecordColumn<UTag>] { [RecordColumn(\.name), RecordColumn(\.color)] }
    var id = RecordID<UTag>()
    var name = ""
    var color = ""
}

struct UCode: ListedRecord {
    typealias Fields = NoFields<UCode>
    static let entityName = "UCode"
    static var columns: [RecordColumn<UCode>] { [RecordColumn(\.value)] }
    var id = RecordID<UCode>()
    var value = ""
}

struct UNote: ListedRecord {
    typealias Fields = NoFields<UNote>
    static let entityName = "UNote"
    static var columns: [RecordColumn<UNote>] { [RecordColumn(\.title), RecordColumn(\.tagID)] }
    var id = RecordID<UNote>()
    var title = ""
    var tagID: UTag.ID?
}

/// Devices offline create rows whose unique values collide; the server resolves them by the
/// model's rule and every device ends with the server's rows.
struct UniquenessSyncTests {
    static let caseCount = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 300 : 25

    /// Drawn: 2 to 4 devices each make tags, codes and notes offline from a small pool of names
    /// (so they collide), some renamed into a collision after a first sync, and sync in a drawn
    /// order. Every sync succeeds (no push is refused forever), all devices equal the server row
    /// for row, every tag name and code value written survives exactly once, and every note's tag
    /// is a tag that exists.
    /// The rules the suite syncs by are the ones `@sync(unique: …)` lowers to, not set by hand.
    @Test func theRulesComeFromTheSchemaLanguage() {
        let rules = Dictionary(
            UniqueSyncModel.lowered.map { ($0.name, $0.syncUniqueness) }, uniquingKeysWith: { first, _ in first })
        #expect(rules == ["UTag": .merge, "UCode": .reject])
    }

    @Test func collidingUniqueKeysConvergeByTheModelsRule() async throws {
        var collisions = 0
        var rows = 0
        for seed in 0..<Self.caseCount {
            var random = SplitMix64(seed: 2_828_1, index: seed)
            let serverStore = try Store.inMemory(schema: UniqueSyncModel.schema, history: .enabled(author: "server"))
            let server = try await SyncServer(store: serverStore)
            let resolutions = Locked(0)
            let transport = CountingTransport(server: server, resolutions: resolutions)
            var stores: [Store] = []
            var engines: [SyncEngine] = []
            var names: Set<String> = []
            var values: Set<String> = []
            // What the devices' reports said: every resolution the server sent, and each rejected
            // row among the discarded ones, as last saved.
            var reported = 0
            func sync(_ engine: SyncEngine) async throws {
                let report = try await engine.sync()
                reported += report.resolutions.count
                for case .rejected(let entity, _, let row, _) in report.resolutions {
                    #expect(
                        report.discarded.contains { $0.key == RowKey(entity: entity, id: row) },
                        "seed \(seed): rejected \(entity) \(row) is not among the discarded rows")
                }
            }
            let deviceCount = 2 + random.next(below: 3)
            for _ in 0..<deviceCount {
                let store = try Store.inMemory(schema: UniqueSyncModel.schema, history: .enabled(author: "app"))
                stores.append(store)
                engines.append(try await SyncEngine(store: store, transport: transport))
            }
            for round in 0..<2 {
                for device in 0..<deviceCount {
                    var draws: [(kind: Int, name: String, color: String)] = []
                    for _ in 0..<(1 + random.next(below: 4)) {
                        draws.append(
                            (random.next(below: 3), "k\(random.next(below: 3))", "c\(random.next(below: 100))"))
                    }
                    try await stores[device].performAndSave { [draws] context in
                        for draw in draws {
                            switch draw.kind {
                            case 0:
                                if let tag = try context.fetch(UTag.request()).first(where: { $0.name == draw.name }) {
                                    var changed = tag
                                    changed.color = draw.color
                                    try context.update(changed)
                                } else {
                                    try context.insert(UTag(name: draw.name, color: draw.color))
                                }
                            case 1:
                                if try context.fetch(UCode.request()).contains(where: { $0.value == draw.name }) {
                                    continue
                                }
                                try context.insert(UCode(value: draw.name))
                            default:
                                let tag = try context.fetch(UTag.request()).first { $0.name == draw.name }
                                try context.insert(UNote(title: draw.color, tagID: tag?.id))
                            }
                        }
                    }
                    for draw in draws where draw.kind == 0 { names.insert(draw.name) }
                    for draw in draws where draw.kind == 1 { values.insert(draw.name) }
                    if round == 0 || random.chance(0.5) { try await sync(engines[device]) }
                }
            }
            // Heal: everyone syncs until quiet.
            for _ in 0..<3 {
                for engine in engines { try await sync(engine) }
            }
            #expect(reported == resolutions.withLock { $0 }, "seed \(seed): resolutions sent and reported differ")
            let expected = try await SyncSnapshot.read(serverStore)
            for (index, store) in stores.enumerated() {
                let snapshot = try await SyncSnapshot.read(store)
                #expect(snapshot == expected, "seed \(seed): device \(index) differs from the server")
            }
            let (tags, codes, notes) = try await serverStore.performQuery { context in
                (
                    try context.fetch(UTag.request()), try context.fetch(UCode.request()),
                    try context.fetch(UNote.request())
                )
            }
            #expect(Set(tags.map(\.name)) == names && tags.count == names.count, "seed \(seed): tags \(tags)")
            #expect(Set(codes.map(\.value)) == values && codes.count == values.count, "seed \(seed): codes \(codes)")
            let tagIDs = Set(tags.map(\.id))
            #expect(notes.allSatisfy { $0.tagID.map(tagIDs.contains) ?? true }, "seed \(seed): a note lost its tag")
            collisions += resolutions.withLock { $0 }
            rows += expected.rows.count
        }
        print("UniquenessSyncTests: \(Self.caseCount) cases, \(collisions) resolutions, \(rows) rows on the servers")
        #expect(collisions > 0)
    }
}

/// A device deletes a row while another, offline, links a row to it; both sync in a drawn
/// order. The link's delete rule settles it on the server and every device alike.
struct DeletedReferenceSyncTests {
    static let caseCount = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 300 : 24

    /// Drawn: the rule (nullify, cascade, deny), who syncs first, and extra devices. Every sync
    /// succeeds; all devices equal the server; nullify leaves the child with no parent, cascade
    /// deletes the child, deny brings the parent back with the child linked to it.
    @Test func linksToDeletedRowsSettleByTheDeleteRule() async throws {
        var outcomes = [0, 0, 0]
        for seed in 0..<Self.caseCount {
            var random = SplitMix64(seed: 2_828_2, index: seed)
            let rule = seed % 3
            let serverStore = try Store.inMemory(schema: UniqueSyncModel.schema, history: .enabled(author: "server"))
            let server = try await SyncServer(store: serverStore)
            var stores: [Store] = []
            var engines: [SyncEngine] = []
            for _ in 0..<(2 + random.next(below: 2)) {
                let store = try Store.inMemory(schema: UniqueSyncModel.schema, history: .enabled(author: "app"))
                stores.append(store)
                engines.append(
                    try await SyncEngine(store: store, transport: server, pullLimit: 1 + random.next(below: 4)))
            }
            let parent = UParent(name: "p")
            try await stores[0].performAndSave { try $0.insert(parent) }
            for engine in engines { try await engine.sync() }
            try await stores[0].performAndSave { try $0.delete(parent.id) }
            var parents: [UParent.ID?] = [nil, nil, nil]
            parents[rule] = parent.id
            let child = UChild(title: "c", parents: parents)
            try await stores[1].performAndSave { try $0.insert(child) }
            let order = random.chance(0.5) ? [0, 1] : [1, 0]
            for index in order { try await engines[index].sync() }
            for _ in 0..<2 {
                for engine in engines { try await engine.sync() }
            }
            let expected = try await SyncSnapshot.read(serverStore)
            for (index, store) in stores.enumerated() {
                let snapshot = try await SyncSnapshot.read(store)
                #expect(snapshot == expected, "seed \(seed): device \(index) differs from the server")
            }
            let (storedParents, children) = try await serverStore.performQuery { context in
                (try context.fetch(UParent.request()), try context.fetch(UChild.request()))
            }
            switch rule {
            case 0:
                #expect(storedParents.isEmpty && children.map(\.parents) == [[nil, nil, nil]], "seed \(seed)")
            case 1:
                #expect(storedParents.isEmpty && children.isEmpty, "seed \(seed)")
            default:
                #expect(storedParents.map(\.id) == [parent.id] && children.map(\.parents) == [parents], "seed \(seed)")
            }
            outcomes[rule] += 1
        }
        print(
            "DeletedReferenceSyncTests: \(Self.caseCount) cases (nullify \(outcomes[0]), cascade \(outcomes[1]), deny \(outcomes[2]))"
        )
    }
}

/// A transport straight to a server that counts the resolutions its pushes were answered with.
private struct CountingTransport: SyncTransport {
    let server: SyncServer
    let resolutions: Locked<Int>

    func push(_ request: PushRequest) async throws -> PushResponse {
        let response = try await server.push(request)
        resolutions.withLock { $0 += response.resolutions.count }
        return response
    }

    func pull(_ request: PullRequest) async throws -> PullResponse {
        try await server.pull(request)
    }
}
