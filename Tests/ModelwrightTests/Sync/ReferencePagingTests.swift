import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright

/// A to-one link with a foreign key across page boundaries: a device applies each pulled page in
/// one transaction, and the store checks its foreign keys when that transaction commits, so a
/// page must never hold a row whose link target the device has not received in its current state.
@Suite struct ReferencePagingTests {
    static let isLarge = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1"
    static let caseCount = isLarge ? 400 : 24

    /// Drawn link graphs (self-links, cycles, chains, several links to one node): one device
    /// inserts, re-points and deletes nodes over a few rounds and syncs; another pulls after each
    /// round one to three rows a page. Every pull commits, and the second device then holds the
    /// server's rows exactly.
    @Test func pagesCarryTheRowsTheirLinksNeed() async throws {
        var links = 0
        var cycles = 0
        for seed in 0..<Self.caseCount {
            var random = SplitMix64(seed: 2_904, index: seed)
            let serverStore = try Store.inMemory(schema: LinkedModel.schema, history: .enabled(author: "server"))
            let server = try await SyncServer(store: serverStore)
            let writer = try Store.inMemory(schema: LinkedModel.schema, history: .enabled(author: "app"))
            let reader = try Store.inMemory(schema: LinkedModel.schema, history: .enabled(author: "app"))
            let writing = try await SyncEngine(store: writer, transport: server)
            let reading = try await SyncEngine(store: reader, transport: server, pullLimit: 1 + random.next(below: 3))
            for _ in 0..<(1 + random.next(below: 4)) {
                let nodes = try await writer.performQuery { try $0.fetch(LinkedNode.request()) }.sorted {
                    $0.id.uuid.uuidString < $1.id.uuid.uuidString
                }
                // New nodes, made in ID order, each linked to any node (later ones included).
                var fresh = (0..<(1 + random.next(below: 6))).map { LinkedNode(name: "n\($0)") }
                let all = nodes + fresh
                for index in fresh.indices where random.chance(0.8) {
                    fresh[index].nextID = random.pick(all).id
                }
                var changed: [LinkedNode] = []
                for var node in nodes where random.chance(0.4) {
                    node.nextID = random.chance(0.2) ? nil : random.pick(all).id
                    changed.append(node)
                }
                let doomed = nodes.filter { _ in random.chance(0.15) }
                try await writer.performAndSave { [fresh, changed, doomed] context in
                    for node in fresh { try context.insert(node) }
                    for node in changed { try context.update(node) }
                    for node in doomed { try context.delete(node.id) }
                }
                try await writing.sync()
                try await reading.sync()
                let expected = try await SyncSnapshot.read(serverStore)
                let found = try await SyncSnapshot.read(reader)
                let differing = expected.rows.keys.filter { found.rows[$0] != expected.rows[$0] }.map {
                    "\($0): reader \(found.rows[$0].map { "\($0)" } ?? "nothing"), server \(expected.rows[$0].map { "\($0)" } ?? "nothing")"
                }
                #expect(found == expected, "seed \(seed): \(differing)")
            }
            let final = try await serverStore.performQuery { try $0.fetch(LinkedNode.request()) }
            links += final.filter { $0.nextID != nil }.count
            cycles += Self.cycleCount(final)
        }
        print("ReferencePagingTests: \(Self.caseCount) graphs, \(links) links, \(cycles) nodes on cycles at the end")
        #expect(cycles > 0)
    }

    /// How many nodes lie on a cycle of `next` links.
    private static func cycleCount(_ nodes: [LinkedNode]) -> Int {
        let next = Dictionary(uniqueKeysWithValues: nodes.map { ($0.id, $0.nextID) })
        return nodes.filter { node in
            var current = node.nextID
            for _ in 0...nodes.count {
                guard let id = current else { return false }
                if id == node.id { return true }
                current = next[id] ?? nil
            }
            return false
        }.count
    }
}

/// A model whose one entity links to itself through a to-one with a foreign key: `next`'s inverse,
/// `previous`, nullifies on delete, so the store declares the column a reference.
enum LinkedModel {
    static let schema = SchemaDescription(
        modelName: "Linked",
        version: 1,
        entities: [
            EntityDescription(
                name: "LinkedNode",
                attributes: [AttributeDescription(name: "name", type: .string)],
                relationships: [
                    RelationshipDescription(
                        name: "next", destination: "LinkedNode", inverse: "previous", cardinality: .toOne),
                    RelationshipDescription(
                        name: "previous", destination: "LinkedNode", inverse: "next", cardinality: .toMany,
                        deleteRule: .nullify),
                ]
            )
        ]
    )
}

struct LinkedNode: ListedRecord {
    static let entityName = "LinkedNode"
    static var columns: [RecordColumn<LinkedNode>] { [RecordColumn(\.name), RecordColumn(\.nextID)] }
    var id = RecordID<LinkedNode>()
    var name = ""
    var nextID: RecordID<LinkedNode>?

    struct Fields: RecordFields {
        typealias Target = LinkedNode
        let path: FieldPath
        var name: Field<String> { path.field("name") }
    }
}
