import Foundation
import ModelwrightEngineTestSupport
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright
@testable import ModelwrightSchema

/// Devices at an older model version keep syncing with a server at the newest: the server
/// translates their messages through the lightweight stages of its migration plan (names follow
/// renames, what one side's version lacks is left out), and refuses with the typed "update the
/// app" error where a stage changes more.
struct SyncVersionTests {
    static let caseCount = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 200 : 12

    static let v1Text = """
        model Notes version 1
        entity Folder {
            @sync
            name: String
            owner: String
            notes: Set<Note> @inverse(folder) @delete(cascade)
        }
        entity Note {
            @sync
            title: String
            body: String?
            color: String?
            folder: Folder?
            labels: Set<Label> @inverse(notes)
        }
        entity Label {
            @sync
            word: String
            notes: Set<Note> @inverse(labels)
        }
        """

    /// Version 2: `Folder.name` renamed `title`, `Note` renamed `Memo` with `body` renamed `text`,
    /// `color` removed, `priority` (with a default), `pinned` (optional) and a to-one `tag` added,
    /// an entity `Tag` added, and the many-to-many `labels`/`notes` renamed `marks`/`entries` (the
    /// join table stays with `Label`, whose records hold the links).
    static let v2Text = """
        model Notes version 2
        entity Folder {
            @sync
            title: String @renamed(from: name)
            owner: String
            notes: Set<Memo> @inverse(folder) @delete(cascade)
        }
        entity Memo {
            @renamed(from: Note)
            @sync
            title: String
            text: String? @renamed(from: body)
            priority: Int = 3
            pinned: Bool?
            folder: Folder?
            marks: Set<Label> @inverse(entries) @renamed(from: labels)
            tag: Tag? @inverse(memos)
        }
        entity Label {
            @sync
            word: String
            entries: Set<Memo> @inverse(marks) @renamed(from: notes)
        }
        entity Tag {
            @sync
            name: String
            memos: Set<Memo> @inverse(tag)
        }
        """

    /// Version 2 with `title` retyped: no translation.
    static let v2RetypedText = v2Text.replacingOccurrences(of: "word: String", with: "word: String?")

    static func schema(_ text: String, _ name: String) throws -> SchemaDescription {
        try #require(FrontEnd.lower(ResolvedFile.compile(SourceFile(path: name, text: text)))?.schema)
    }

    struct World {
        let serverStore: Store
        let server: SyncServer
        let old: Store
        let oldEngine: SyncEngine
        let new: Store
        let newEngine: SyncEngine
    }

    /// A server at version 2 (on `engine`) with its plan, and a device at each version.
    static func withWorld(
        on engine: TestEngine = .sqlite, serverText: String = v2Text, _ body: (World) async throws -> Void
    ) async throws {
        let v2 = try schema(serverText, "Notes.v2.model")
        try await engine.withStore(schema: v2, history: .enabled(author: "server")) { serverStore in
            try await body(try await world(serverStore: serverStore, serverText: serverText))
        }
    }

    static func world(serverStore: Store, serverText: String) async throws -> World {
        let v1 = try schema(v1Text, "Notes.v1.model")
        let v2 = try schema(serverText, "Notes.v2.model")
        let plan = MigrationPlan(current: v2, stages: [.lightweight(from: v1, to: v2)])
        let server = try await SyncServer(store: serverStore, migrationPlan: plan)
        let old = try Store.inMemory(schema: v1, history: .enabled(author: "app"))
        let new = try Store.inMemory(schema: v2, history: .enabled(author: "app"))
        return World(
            serverStore: serverStore, server: server, old: old,
            oldEngine: try await SyncEngine(store: old, transport: server), new: new,
            newEngine: try await SyncEngine(store: new, transport: server))
    }

    static func write(_ store: Store, _ changes: RowChange...) async throws {
        try await store.performAndSave(author: "app") { context in
            for change in changes { try context.materialize(change) }
        }
    }

    static func stamp() throws -> HybridTimestamp { try ScopeChangeTests.stamp() }

    /// A write of some of a live row's values, as `materialize` takes it (an update alone is no live row).
    static func set(_ key: RowKey, _ values: [String: SyncValue]) throws -> RowChange {
        .insert(key, values: values, at: try stamp())
    }

    /// Adds (or removes) the link between a label and a note as the app's `link`/`unlink` does:
    /// in the join table, recorded in the history as a change of the label's relationship.
    static func link(_ store: Store, label: UUID, note: UUID, present: Bool = true) async throws {
        try await store.performAndSave(author: "app") { context in
            let entity = try context.layout.entity("Label")
            let name = entity.relationships.contains { $0.name == "entries" } ? "entries" : "notes"
            let table = try #require(try context.syncLinkTable(name, of: entity))
            let arguments = [label.sqlValue, note.sqlValue]
            let dialect = context.connection.dialect
            try context.execute(
                present
                    ? dialect.insertIgnoringConflicts(
                        into: quoted(table.table), columns: ["\"source\"", "\"destination\""],
                        "VALUES (\(dialect.parameters(2)))")
                    : "DELETE FROM \(quoted(table.table)) WHERE \"source\" = \(dialect.parameter) AND \"destination\" = \(dialect.parameter)",
                arguments, entity: entity)
            if context.connection.changes > 0 {
                context.changes.rowsInsertedOrDeleted(in: table.table)
                context.history.updated([label], columns: [name], entity: entity.name)
            }
        }
    }

    /// The server's rows as a device at version 1 holds them: v2's names mapped back, what v1
    /// lacks left out.
    static func asVersion1(_ rows: [RowKey: [String: SyncValue]]) -> [RowKey: [String: SyncValue]] {
        let entities = ["Folder": "Folder", "Memo": "Note", "Label": "Label"]
        let names = ["title": "title", "owner": "owner", "text": "body", "folder": "folder", "word": "word"]
        var result: [RowKey: [String: SyncValue]] = [:]
        for (key, values) in rows {
            guard let entity = entities[key.entity] else { continue }
            var mapped: [String: SyncValue] = [:]
            for (name, value) in values {
                let old = key.entity == "Folder" && name == "title" ? "name" : names[name]
                if let old { mapped[old] = value }
            }
            result[RowKey(entity: entity, id: key.id)] = mapped
        }
        return result
    }

    @Test(arguments: TestEngine.available)
    func anOlderDeviceSyncsThroughRenamesAdditionsAndRemovals(engine: TestEngine) async throws {
        try await Self.withWorld(on: engine) { w in try await Self.olderDeviceSyncs(w) }
    }

    static func olderDeviceSyncs(_ w: World) async throws {
        let folder = RowKey(entity: "Folder", id: UUID())
        let note = RowKey(entity: "Note", id: UUID())
        let label = RowKey(entity: "Label", id: UUID())
        try await Self.write(
            w.old,
            .insert(folder, values: ["name": .text("Inbox"), "owner": .text("a")], at: try Self.stamp()),
            .insert(label, values: ["word": .text("urgent")], at: try Self.stamp()),
            .insert(
                note,
                values: [
                    "title": .text("Call"), "body": .text("the bank"), "color": .text("red"),
                    "folder": .uuid(folder.id),
                ], at: try Self.stamp()))
        try await Self.link(w.old, label: label.id, note: note.id)
        try await w.oldEngine.sync()
        try await w.newEngine.sync()
        let memo = RowKey(entity: "Memo", id: note.id)
        let server = try await SyncSnapshot.read(w.serverStore)
        #expect(server.rows[RowKey(entity: "Folder", id: folder.id)]?["title"] == .text("Inbox"))
        #expect(server.rows[memo]?["text"] == .text("the bank"))
        #expect(server.rows[memo]?["priority"] == .integer(3), "the added attribute takes its default")
        #expect(server.rows[memo]?["color"] == nil)
        #expect(server == (try await SyncSnapshot.read(w.new)), "the new device differs from the server")
        let newLinks = try await w.new.performQuery { context in
            try SyncBookkeeping.change(of: label, on: context.connection)?.linkedTargets
        }
        #expect(newLinks == ["entries": [note.id]], "the renamed many-to-many link: \(String(describing: newLinks))")
        #expect(try await Self.noteLabels(w.new) == [[note.id, label.id].sorted { $0.uuidString < $1.uuidString }])

        // The new device edits what both versions have, and what only it has.
        let tag = RowKey(entity: "Tag", id: UUID())
        try await Self.write(
            w.new,
            .insert(tag, values: ["name": .text("work")], at: try Self.stamp()),
            try Self.set(memo, ["text": .text("the bank, at 9"), "priority": .integer(1), "tag": .uuid(tag.id)]),
            try Self.set(RowKey(entity: "Folder", id: folder.id), ["title": .text("Today")]))
        try await w.newEngine.sync()
        try await w.oldEngine.sync()
        let old = try await SyncSnapshot.read(w.old)
        #expect(old.rows[note]?["body"] == .text("the bank, at 9"))
        #expect(old.rows[folder]?["name"] == .text("Today"))
        #expect(old.rows.keys.allSatisfy { $0.entity != "Tag" }, "a row of an entity v1 lacks reached it")

        // The old device edits again: the new attribute keeps the new device's value.
        try await Self.write(w.old, try Self.set(note, ["title": .text("Call back")]))
        try await w.oldEngine.sync()
        try await w.newEngine.sync()
        let after = try await SyncSnapshot.read(w.serverStore)
        #expect(after.rows[memo]?["title"] == .text("Call back"))
        #expect(after.rows[memo]?["priority"] == .integer(1))
        #expect(after.rows[memo]?["tag"] == .uuid(tag.id))
        #expect(after == (try await SyncSnapshot.read(w.new)))
        let oldRows = try await SyncSnapshot.read(w.old).rows
        #expect(Self.withoutRemoved(oldRows) == Self.asVersion1(after.rows))
    }

    /// The many-to-many links of notes (memos) to labels a store holds, each as its two IDs sorted.
    static func noteLabels(_ store: Store) async throws -> Set<[UUID]> {
        try await store.performAndSave(author: "snapshot") { context in
            let entity = try #require(context.layout.entities["Memo"] ?? context.layout.entities["Note"])
            let table = try #require(try context.syncLinkTable(entity.name == "Memo" ? "marks" : "labels", of: entity))
            let statement = try context.connection.statement(
                "SELECT \"source\", \"destination\" FROM \(quoted(table.table))")
            defer { statement.reset() }
            var pairs: Set<[UUID]> = []
            while try statement.step() {
                if let source = statement.uuid(0), let destination = statement.uuid(1) {
                    pairs.insert([source, destination].sorted { $0.uuidString < $1.uuidString })
                }
            }
            return pairs
        }
    }

    /// The old device's values of attributes v2 removed stay on it (its table has them) but go nowhere.
    static func withoutRemoved(_ rows: [RowKey: [String: SyncValue]]) -> [RowKey: [String: SyncValue]] {
        rows.mapValues { $0.filter { $0.key != "color" } }
    }

    @Test func aStageThatChangesMoreThanNamesIsRefusedWithUpdateTheApp() async throws {
        try await Self.withWorld(serverText: Self.v2RetypedText) { w in try await Self.refusesUpdateTheApp(w) }
    }

    static func refusesUpdateTheApp(_ w: World) async throws {
        try await Self.write(
            w.old, .insert(RowKey(entity: "Label", id: UUID()), values: ["word": .text("x")], at: try Self.stamp()))
        await #expect {
            try await w.oldEngine.sync()
        } throws: { error in
            guard case .schemaVersionUnsupported(let device, let server)? = error as? SyncError else { return false }
            return device.version == 1 && server.version == 2 && "\(error)".contains("update the app")
        }
        // Without a plan, too.
        let bare = try await SyncServer(store: w.serverStore)
        let engine = try await SyncEngine(store: w.old, transport: bare)
        await #expect(throws: SyncError.self) { try await engine.sync() }
    }

    /// Drawn: an old and a new device (and a second old one) insert, update, delete and link rows
    /// of every entity they share, sync in a drawn order, then heal. The new devices equal the
    /// server; each old device equals the server as version 1 holds it.
    @Test(arguments: TestEngine.available)
    func drawnWritesOnBothVersionsConverge(engine: TestEngine) async throws {
        var totals = (writes: 0, rows: 0, links: 0)
        for seed in 0..<(engine == .sqlite ? Self.caseCount : Self.caseCount / 3) {
            var random = SplitMix64(seed: 28_300, index: seed)
            try await Self.withWorld(on: engine) { w in
                try await Self.drawnCase(w, seed: seed, random: &random, totals: &totals)
            }
        }
        print(
            "SyncVersionTests (\(engine)): \(totals.writes) writes, \(totals.rows) rows and \(totals.links) links on the servers"
        )
        #expect(totals.links > 0 && totals.rows > 0)
    }

    static func drawnCase(
        _ w: World, seed: Int, random: inout SplitMix64, totals: inout (writes: Int, rows: Int, links: Int)
    ) async throws {
        do {
            let old2 = try Store.inMemory(
                schema: try Self.schema(Self.v1Text, "Notes.v1.model"), history: .enabled(author: "app"))
            let old2Engine = try await SyncEngine(store: old2, transport: w.server)
            let devices: [(store: Store, engine: SyncEngine, isOld: Bool)] = [
                (w.old, w.oldEngine, true), (w.new, w.newEngine, false), (old2, old2Engine, true),
            ]
            var folders: [UUID] = []
            var notes: [UUID] = []
            var labels: [UUID] = []
            for _ in 0..<(4 + random.next(below: 6)) {
                let device = devices[random.next(below: devices.count)]
                let noteEntity = device.isOld ? "Note" : "Memo"
                let folderName = device.isOld ? "name" : "title"
                let bodyName = device.isOld ? "body" : "text"
                var changes: [RowChange] = []
                var linkOps: [(label: UUID, note: UUID, present: Bool)] = []
                for _ in 0..<(1 + random.next(below: 3)) {
                    totals.writes += 1
                    switch random.next(below: 6) {
                    case 0:
                        let id = UUID()
                        folders.append(id)
                        changes.append(
                            .insert(
                                RowKey(entity: "Folder", id: id),
                                values: [folderName: .text("f\(random.next(below: 99))"), "owner": .text("a")],
                                at: try Self.stamp()))
                    case 1:
                        let id = UUID()
                        notes.append(id)
                        var values: [String: SyncValue] = [
                            "title": .text("n\(random.next(below: 99))"),
                            bodyName: random.chance(0.5) ? .text("b\(random.next(below: 99))") : .null,
                        ]
                        if device.isOld { values["color"] = .text("c") } else { values["priority"] = .integer(7) }
                        changes.append(
                            .insert(RowKey(entity: noteEntity, id: id), values: values, at: try Self.stamp()))
                    case 2:
                        let id = UUID()
                        labels.append(id)
                        changes.append(
                            .insert(
                                RowKey(entity: "Label", id: id), values: ["word": .text("w\(random.next(below: 9))")],
                                at: try Self.stamp()))
                    case 3 where !notes.isEmpty:
                        let id = notes[random.next(below: notes.count)]
                        changes.append(
                            try Self.set(
                                RowKey(entity: noteEntity, id: id), ["title": .text("t\(random.next(below: 99))")]))
                    case 4 where !notes.isEmpty && !labels.isEmpty:
                        let note = notes[random.next(below: notes.count)]
                        let label = labels[random.next(below: labels.count)]
                        linkOps.append((label, note, random.chance(0.7)))
                    case 5 where !folders.isEmpty:
                        let id = folders[random.next(below: folders.count)]
                        changes.append(.delete(RowKey(entity: "Folder", id: id), at: try Self.stamp()))
                    default:
                        break
                    }
                }
                // A write on rows this device does not hold yet is skipped, as an app could not make it.
                try? await device.store.performAndSave(author: "app") { [changes] context in
                    for change in changes { try context.materialize(change) }
                }
                for op in linkOps {
                    try? await Self.link(device.store, label: op.label, note: op.note, present: op.present)
                }
                if random.chance(0.6) { try await device.engine.sync() }
            }
            for _ in 0..<3 {
                for device in devices { try await device.engine.sync() }
            }
            let server = try await SyncSnapshot.read(w.serverStore)
            let new = try await SyncSnapshot.read(w.new)
            #expect(new == server, "seed \(seed): the new device differs from the server")
            for (index, device) in devices.enumerated() where device.isOld {
                let rows = try await SyncSnapshot.read(device.store).rows
                #expect(
                    Self.withoutRemoved(rows) == Self.asVersion1(server.rows),
                    "seed \(seed): old device \(index) differs from the server as v1 holds it")
            }
            let serverLinks = try await Self.noteLabels(w.serverStore)
            for (index, device) in devices.enumerated() {
                let links = try await Self.noteLabels(device.store)
                #expect(links == serverLinks, "seed \(seed): device \(index)'s note labels differ from the server's")
            }
            totals.rows += server.rows.count
            totals.links += serverLinks.count
        }
    }
}
