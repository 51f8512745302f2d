import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright

/// Sync across a lightweight migration that renames a many-to-many's join table: drawn version-2
/// models rename either entity or either relationship of `Card.labels <-> Label.cards` (the join
/// table's name is built from the owner's entity and relationship names), and some draws make the
/// other side the table's owner. Devices link and unlink at version 1 (one syncs before the server
/// upgrades, two stay offline with pending edits), the server migrates, the devices upgrade and one
/// of them edits again at version 2 before pulling; after syncing, every device holds the server's
/// links, link for link, and the server holds each pair as its last edit left it: no remove undone,
/// no add lost.
@Suite("SyncJoinTableMigration")
struct SyncJoinTableMigrationTests {
    static let caseCount = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 48 : 6

    /// The names of the two sides of the many-to-many at one version.
    struct Names: Equatable, CustomStringConvertible {
        var card = "Card"
        var labels = "labels"
        var label = "Label"
        var cards = "cards"

        var description: String { "\(card).\(labels) <-> \(label).\(cards)" }

        /// The join table's owner side: the one whose `Entity_relationship` sorts first.
        var cardOwns: Bool { "\(card)_\(labels)" <= "\(label)_\(cards)" }

        /// The model: a version 2 names what it renamed.
        func schema(version: Int, from old: Names? = nil) -> SchemaDescription {
            func was(_ new: String, _ old: String?) -> String? { old.flatMap { $0 == new ? nil : $0 } }
            return SchemaDescription(
                modelName: "Boards", version: version,
                entities: [
                    EntityDescription(
                        name: card, attributes: [AttributeDescription(name: "title", type: .string)],
                        relationships: [
                            RelationshipDescription(
                                name: labels, destination: label, inverse: cards, cardinality: .toMany,
                                renamedFrom: was(labels, old?.labels))
                        ], renamedFrom: was(card, old?.card)),
                    EntityDescription(
                        name: label, attributes: [AttributeDescription(name: "name", type: .string)],
                        relationships: [
                            RelationshipDescription(
                                name: cards, destination: card, inverse: labels, cardinality: .toMany,
                                renamedFrom: was(cards, old?.cards))
                        ], renamedFrom: was(label, old?.label)),
                ])
        }

        /// A version 2 renaming at least one of the four names; about half of the draws that
        /// rename an entity give the table to the other side.
        static func drawn(_ random: inout SplitMix64) -> Names {
            var names = Names()
            repeat {
                names.card = random.pick(["Card", "Ace", "Zed"])
                names.label = random.pick(["Label", "Bag", "Tag"])
                names.labels = random.pick(["labels", "alabels", "zlabels"])
                names.cards = random.pick(["cards", "acards", "zcards"])
            } while names == Names()
            return names
        }
    }

    static func stamp() throws -> HybridTimestamp {
        var clock = HybridLogicalClock(node: SyncNodeID(), maximumDriftMilliseconds: HybridLogicalClock.unbounded)
        return try clock.tick(wallMilliseconds: HybridLogicalClock.wallMilliseconds())
    }

    /// Inserts the cards and labels as the app would, each change recorded in the history.
    static func insert(_ store: Store, cards: [UUID], labels: [UUID]) async throws {
        try await store.performAndSave(author: "app") { context in
            // Sync's tables, which `materialize` reads for links waiting on a row.
            try SyncBookkeeping.prepare(on: context.connection)
            for (index, id) in cards.enumerated() {
                try context.materialize(
                    .insert(RowKey(entity: "Card", id: id), values: ["title": .text("c\(index)")], at: try Self.stamp())
                )
            }
            for (index, id) in labels.enumerated() {
                try context.materialize(
                    .insert(RowKey(entity: "Label", id: id), values: ["name": .text("l\(index)")], at: try Self.stamp())
                )
            }
        }
    }

    /// Links or unlinks one card and one label as the app's `link`/`unlink` would, through the side
    /// drawn (`fromCard`): the join table's row changes and the history records the relationship
    /// of the row written through.
    static func edit(
        _ store: Store, _ names: Names, card: UUID, label: UUID, present: Bool, fromCard: Bool
    ) async throws {
        try await store.performAndSave(author: "app") { context in
            let entity = try context.layout.entity(fromCard ? names.card : names.label)
            let relationship = fromCard ? names.labels : names.cards
            guard let description = entity.relationships.first(where: { $0.name == relationship }),
                case .joinTable(let table, let sourceColumn, let targetColumn, _) = try context.layout.storage(
                    of: description, from: entity)
            else { throw StoreError.unknownProperty(entity: entity.name, property: relationship) }
            let (source, target) = fromCard ? (card, label) : (label, card)
            let marker = context.connection.dialect.parameter
            let sql =
                present
                ? context.connection.dialect.insertIgnoringConflicts(
                    into: quoted(table), columns: [quoted(sourceColumn), quoted(targetColumn)],
                    "VALUES (\(marker), \(marker))")
                : "DELETE FROM \(quoted(table)) WHERE \(quoted(sourceColumn)) = \(marker) AND \(quoted(targetColumn)) = \(marker)"
            try context.execute(sql, [source.sqlValue, target.sqlValue], entity: entity)
            if context.connection.changes > 0 {
                context.changes.rowsInsertedOrDeleted(in: table)
                context.history.updated([source], columns: [relationship], entity: entity.name)
            }
        }
    }

    /// The store's links as (card, label) pairs, whichever side owns the table.
    static func links(_ store: Store, _ names: Names) async throws -> Set<[UUID]> {
        try await store.performAndSave(author: "snapshot") { context in
            let card = try context.layout.entity(names.card)
            guard let table = try context.syncLinkTable(names.labels, of: card) else { return [] }
            let statement = try context.connection.statement(
                "SELECT \"source\", \"destination\" FROM \(quoted(table.table))")
            defer { statement.reset() }
            var result: Set<[UUID]> = []
            while try statement.step() {
                if let source = statement.uuid(0), let destination = statement.uuid(1) {
                    result.insert(table.isOwnerSide ? [source, destination] : [destination, source])
                }
            }
            return result
        }
    }

    @Test func linksFollowARenamedJoinTableOnEveryDeviceAndTheServer() async throws {
        for seed in 0..<Self.caseCount {
            var random = SplitMix64(seed: 2_828, index: seed)
            let v1Names = Names()
            let v2Names = Names.drawn(&random)
            let v1 = v1Names.schema(version: 1)
            let v2 = v2Names.schema(version: 2, from: v1Names)
            let plan = MigrationPlan(current: v2, stages: [.lightweight(from: v1, to: v2)])
            let label =
                "seed \(seed) (\(v1Names) -> \(v2Names)\(v1Names.cardOwns == v2Names.cardOwns ? "" : ", sides swap"))"
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("syncjt-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            do {
                try await Self.run(
                    &random, v1: (v1Names, v1), v2: (v2Names, v2), plan: plan, directory: directory, label: label)
            } catch {
                Issue.record("\(label): \(error)")
            }
        }
    }

    static func run(
        _ random: inout SplitMix64, v1: (names: Names, schema: SchemaDescription),
        v2: (names: Names, schema: SchemaDescription), plan: MigrationPlan, directory: URL, label: String
    ) async throws {
        func url(_ name: String) -> URL { directory.appendingPathComponent("\(name).sqlite") }
        var serverStore = try Store(url: url("server"), schema: v1.schema, history: .enabled(author: "server"))
        var server = try await SyncServer(store: serverStore)
        var devices = try ["a", "b", "c"].map {
            try Store(url: url($0), schema: v1.schema, history: .enabled(author: "app"))
        }
        let cards = (0..<(2 + random.next(below: 3))).map { _ in UUID() }
        let labels = (0..<(2 + random.next(below: 3))).map { _ in UUID() }
        let pairs = cards.flatMap { card in labels.map { [card, $0] } }
        // What each pair's last edit left it as; each pair is edited by one device only, so the
        // last edit is well defined whatever order the devices sync in.
        var expected: Set<[UUID]> = []
        func edit(_ device: Int, _ names: Names, _ pair: [UUID], present: Bool, random: inout SplitMix64) async throws {
            try await Self.edit(
                devices[device], names, card: pair[0], label: pair[1], present: present, fromCard: random.chance(0.5))
            if present { expected.insert(pair) } else { expected.remove(pair) }
        }

        // Device a makes the rows and links about half of the pairs; everyone syncs at version 1.
        try await Self.insert(devices[0], cards: cards, labels: labels)
        for pair in pairs where random.chance(0.5) { try await edit(0, v1.names, pair, present: true, random: &random) }
        for _ in 0..<2 {
            for device in devices { try await SyncEngine(store: device, transport: server).sync() }
        }
        // Each pair belongs to one device from now on.
        let owner = Dictionary(uniqueKeysWithValues: pairs.map { ($0, random.next(below: 3)) })
        func toggles(_ device: Int, _ random: inout SplitMix64) -> [[UUID]] {
            pairs.filter { owner[$0] == device && random.chance(0.6) }
        }
        // b edits and syncs at version 1; a and c edit offline at version 1.
        for pair in toggles(1, &random) {
            try await edit(1, v1.names, pair, present: !expected.contains(pair), random: &random)
        }
        try await SyncEngine(store: devices[1], transport: server).sync()
        for device in [0, 2] {
            for pair in toggles(device, &random) {
                try await edit(device, v1.names, pair, present: !expected.contains(pair), random: &random)
            }
        }

        // The server upgrades; a upgrades with its offline edits and syncs.
        try serverStore.close()
        serverStore = try Store(url: url("server"), migrationPlan: plan, history: .enabled(author: "server"))
        server = try await SyncServer(store: serverStore)
        func upgrade(_ device: Int) throws {
            try devices[device].close()
            devices[device] = try Store(
                url: url(["a", "b", "c"][device]), migrationPlan: plan, history: .enabled(author: "app"))
        }
        try upgrade(0)
        try await SyncEngine(store: devices[0], transport: server).sync()
        // b upgrades and, before pulling a's edits, edits one of its pairs of a card with links.
        try upgrade(1)
        let linkedCards = Set(expected.map { $0[0] })
        let bPairs = pairs.filter { owner[$0] == 1 }
        if let pair = bPairs.first(where: { linkedCards.contains($0[0]) }) ?? bPairs.first {
            try await edit(1, v2.names, pair, present: !expected.contains(pair), random: &random)
        }
        try await SyncEngine(store: devices[1], transport: server).sync()
        // c upgrades last, with its offline edits, and everyone syncs.
        try upgrade(2)
        for _ in 0..<2 {
            for device in devices { try await SyncEngine(store: device, transport: server).sync() }
        }

        let truth = try await Self.links(serverStore, v2.names)
        let undone = truth.subtracting(expected)
        let lost = expected.subtracting(truth)
        #expect(undone.count == 0, "\(label): removed links came back on the server")
        #expect(lost.count == 0, "\(label): added links are missing on the server")
        for (index, device) in devices.enumerated() {
            let links = try await Self.links(device, v2.names)
            #expect(
                links.symmetricDifference(truth).count == 0,
                "\(label): device \(["a", "b", "c"][index]) differs from the server")
        }
        for device in devices { try device.close() }
        try serverStore.close()
    }
}
