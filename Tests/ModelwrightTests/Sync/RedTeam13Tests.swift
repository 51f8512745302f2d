import Foundation
import ModelwrightEngineTestSupport
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright
@testable import ModelwrightSchema

/// Red team 13: attacks on devices at older model versions (the server's translation through the
/// lightweight stages of its plan) and on devices put back from a backup. A failing test is a
/// break found. Helpers come from SyncVersionTests and red teams 10 and 12.
@Suite(.serialized) struct RedTeam13Tests {
    typealias V = SyncVersionTests
    typealias R10 = RedTeam10Tests
    typealias R12 = RedTeam12Tests

    /// A server at the last of `texts` (a chain of lightweight stages), a device at the first and
    /// one at the last.
    struct Chain {
        let serverStore: Store
        let server: SyncServer
        let old: Store
        let oldEngine: SyncEngine
        let new: Store
        let newEngine: SyncEngine
    }

    static func chain(_ texts: [String]) async throws -> Chain {
        let schemas = try texts.enumerated().map { try V.schema($0.element, "Notes.v\($0.offset + 1).model") }
        let last = try #require(schemas.last)
        let plan = MigrationPlan(
            current: last,
            stages: zip(schemas, schemas.dropFirst()).map { MigrationStage.lightweight(from: $0.0, to: $0.1) })
        let serverStore = try Store.inMemory(schema: last, history: .enabled(author: "server"))
        let server = try await SyncServer(store: serverStore, migrationPlan: plan)
        let old = try Store.inMemory(schema: schemas[0], history: .enabled(author: "app"))
        let new = try Store.inMemory(schema: last, history: .enabled(author: "app"))
        return Chain(
            serverStore: serverStore, server: server, old: old,
            oldEngine: try await SyncEngine(store: old, transport: server), new: new,
            newEngine: try await SyncEngine(store: new, transport: server))
    }

    static func syncAll(_ c: Chain, rounds: Int = 2) async -> [String] {
        var errors: [String] = []
        for _ in 0..<rounds {
            errors += await R10.syncs(c.oldEngine, 1)
            errors += await R10.syncs(c.newEngine, 1)
        }
        return errors
    }

    // MARK: - Class 1: older model versions

    static let hierarchyV1 = """
        model Notes version 1
        abstract entity Item {
            @sync
            label: String
            owner: String
        }
        entity Book: Item {
            pages: Int
        }
        """

    /// Version 2 only adds an entity; nothing of Item or Book changes.
    static let hierarchyV2 = """
        model Notes version 2
        abstract entity Item {
            @sync
            label: String
            owner: String
        }
        entity Book: Item {
            pages: Int
        }
        entity Shelf {
            @sync
            name: String
        }
        """

    /// An old device inserts a book and edits its (inherited) label; the new device edits it back.
    /// A stage that does not touch the hierarchy at all must carry the inherited attributes both ways.
    @Test func inheritedAttributesOfASubentityCrossTheTranslation() async throws {
        let c = try await Self.chain([Self.hierarchyV1, Self.hierarchyV2])
        let book = RowKey(entity: "Book", id: UUID())
        try await V.write(
            c.old,
            .insert(
                book, values: ["label": .text("Dune"), "owner": .text("a"), "pages": .integer(412)],
                at: try V.stamp()))
        var errors = await Self.syncAll(c)
        let server = try await SyncSnapshot.read(c.serverStore).rows
        #expect(
            server[book]?["label"] == .text("Dune") && server[book]?["pages"] == .integer(412),
            "the old device's book reached the server as \(String(describing: server[book])); errors \(errors)")
        try await V.write(c.new, try V.set(book, ["label": .text("Dune II")]))
        errors += await Self.syncAll(c)
        let old = try await SyncSnapshot.read(c.old).rows
        #expect(
            old[book]?["label"] == .text("Dune II"),
            "the new device's label edit never reached the old device: \(String(describing: old[book])); errors \(errors)"
        )
    }

    /// Version 2 renames `body` to `text` and adds a new `body` (another meaning, another type)
    /// in the same stage: the old device's body must land in `text`, never in the new `body`.
    @Test func aRenamedAttributesOldNameReusedInTheSameStage() async throws {
        let v1 = """
            model Notes version 1
            entity Note {
                @sync
                title: String
                body: String?
            }
            """
        let v2 = """
            model Notes version 2
            entity Note {
                @sync
                title: String
                text: String? @renamed(from: body)
                body: String?
            }
            """
        let c = try await Self.chain([v1, v2])
        let note = RowKey(entity: "Note", id: UUID())
        try await V.write(
            c.old, .insert(note, values: ["title": .text("T"), "body": .text("old body")], at: try V.stamp()))
        let errors = await Self.syncAll(c)
        let server = try await SyncSnapshot.read(c.serverStore).rows
        #expect(
            server[note]?["text"] == .text("old body") && server[note]?["body"] == .null,
            "the old device's body is written under the server's names as \(String(describing: server[note])); errors \(errors)"
        )
    }

    /// Version 2 renames entity `Note` to `Memo` and adds a new entity `Note` (another meaning).
    @Test func aRenamedEntitysOldNameReusedInTheSameStage() async throws {
        let v1 = """
            model Notes version 1
            entity Note {
                @sync
                title: String
            }
            """
        let v2 = """
            model Notes version 2
            entity Memo {
                @renamed(from: Note)
                @sync
                title: String
            }
            entity Note {
                @sync
                title: String
            }
            """
        let c = try await Self.chain([v1, v2])
        let note = RowKey(entity: "Note", id: UUID())
        try await V.write(c.old, .insert(note, values: ["title": .text("mine")], at: try V.stamp()))
        let errors = await Self.syncAll(c)
        let server = try await SyncSnapshot.read(c.serverStore).rows
        #expect(
            server[RowKey(entity: "Memo", id: note.id)]?["title"] == .text("mine") && server[note] == nil,
            "the old device's note is written under the server's names as Memo: \(String(describing: server[RowKey(entity: "Memo", id: note.id)])), Note: \(String(describing: server[note])); errors \(errors)"
        )
    }

    /// Version 2 swaps two names (`a` is v1's `b` and the other way round).
    @Test func twoAttributesSwappingTheirNames() async throws {
        let v1 = """
            model Notes version 1
            entity Note {
                @sync
                a: String?
                b: String?
            }
            """
        let v2 = """
            model Notes version 2
            entity Note {
                @sync
                a: String? @renamed(from: b)
                b: String? @renamed(from: a)
            }
            """
        let c = try await Self.chain([v1, v2])
        let note = RowKey(entity: "Note", id: UUID())
        try await V.write(c.old, .insert(note, values: ["a": .text("A1"), "b": .text("B1")], at: try V.stamp()))
        var errors = await Self.syncAll(c)
        let server = try await SyncSnapshot.read(c.serverStore).rows
        #expect(
            server[note]?["a"] == .text("B1") && server[note]?["b"] == .text("A1"),
            "\(String(describing: server[note])); \(errors)")
        try await V.write(c.new, try V.set(note, ["a": .text("B2")]))
        errors += await Self.syncAll(c)
        let old = try await SyncSnapshot.read(c.old).rows
        #expect(
            old[note]?["b"] == .text("B2") && old[note]?["a"] == .text("A1"),
            "\(String(describing: old[note])); \(errors)")
    }

    /// v1 → v2 → v3: `body` renamed `text` then `content`; `color` (text) removed in v2 and a new
    /// `color` (an Int) added in v3. The old device's body lands in `content`; its color goes
    /// nowhere; the server's color never comes down into the old device's text column.
    @Test func aRenameChainAndANameRemovedThenAddedAgain() async throws {
        let v1 = """
            model Notes version 1
            entity Note {
                @sync
                title: String
                body: String?
                color: String?
            }
            """
        let v2 = """
            model Notes version 2
            entity Note {
                @sync
                title: String
                text: String? @renamed(from: body)
            }
            """
        let v3 = """
            model Notes version 3
            entity Note {
                @sync
                title: String
                content: String? @renamed(from: text)
                color: Int?
            }
            """
        let c = try await Self.chain([v1, v2, v3])
        let note = RowKey(entity: "Note", id: UUID())
        try await V.write(
            c.old,
            .insert(note, values: ["title": .text("T"), "body": .text("B"), "color": .text("red")], at: try V.stamp()))
        var errors = await Self.syncAll(c)
        let server = try await SyncSnapshot.read(c.serverStore).rows
        #expect(
            server[note]?["content"] == .text("B") && server[note]?["color"] == .null,
            "\(String(describing: server[note])); errors \(errors)")
        try await V.write(c.new, try V.set(note, ["color": .integer(7), "content": .text("B2")]))
        errors += await Self.syncAll(c)
        let old = try await SyncSnapshot.read(c.old).rows
        #expect(
            old[note]?["body"] == .text("B2") && old[note]?["color"] == .text("red"),
            "\(String(describing: old[note])); errors \(errors)")
    }

    /// The new device sets the added `priority` (default 3) to 1; the old device deletes the note
    /// and undoes the delete (an insert of the same ID, stamped later, with every value v1 has).
    /// Its undo cannot know `priority`: the server must not reset it to the default.
    @Test func anOldDevicesUndoOfADeleteKeepsTheAddedAttribute() async throws {
        let v1 = """
            model Notes version 1
            entity Note {
                @sync
                title: String
            }
            """
        let v2 = """
            model Notes version 2
            entity Note {
                @sync
                title: String
                priority: Int = 3
            }
            """
        let c = try await Self.chain([v1, v2])
        let note = RowKey(entity: "Note", id: UUID())
        try await V.write(c.old, .insert(note, values: ["title": .text("T")], at: try V.stamp()))
        var errors = await Self.syncAll(c)
        try await V.write(c.new, try V.set(note, ["priority": .integer(1)]))
        errors += await Self.syncAll(c)
        try await V.write(c.old, .delete(note, at: try V.stamp()))
        try await V.write(c.old, .insert(note, values: ["title": .text("T")], at: try V.stamp()))
        errors += await Self.syncAll(c)
        let server = try await SyncSnapshot.read(c.serverStore).rows
        let new = try await SyncSnapshot.read(c.new).rows
        #expect(
            server[note]?["priority"] == .integer(1),
            "the old device's undo reset the new device's priority: server \(String(describing: server[note])), new \(String(describing: new[note])); errors \(errors)"
        )
        #expect(server == new)
    }

    /// A `now` default added in v2: the row the old device inserts takes the server's time, and
    /// every device at v2 holds that one value.
    @Test func anAddedNowDefaultIsOneValueEverywhere() async throws {
        try await Self.addedDefaults("created: Date = now", check: ["created"])
    }

    /// Defaults of other types added in v2 (a real, a bool, a decimal, a day, an enum case, a UUID).
    @Test func addedDefaultsOfOtherTypesAreOneValueEverywhere() async throws {
        try await Self.addedDefaults(
            """
            score: Double = 1.5
                done: Bool = true
                amount: Decimal = 2.50
                due: Day = "2024-05-01"
                mood: Mood = .calm
                at: Date = "2024-05-01T09:30:00Z"
            """, check: ["score", "done", "amount", "due", "mood", "at"])
    }

    static func addedDefaults(_ added: String, check: [String]) async throws {
        let v1 = """
            model Notes version 1
            enum Mood: String { happy, calm }
            entity Note {
                @sync
                title: String
            }
            """
        let v2 = """
            model Notes version 2
            enum Mood: String { happy, calm }
            entity Note {
                @sync
                title: String
                \(added)
            }
            """
        let c = try await Self.chain([v1, v2])
        let note = RowKey(entity: "Note", id: UUID())
        try await V.write(c.old, .insert(note, values: ["title": .text("T")], at: try V.stamp()))
        var errors = await Self.syncAll(c)
        try await V.write(c.old, try V.set(note, ["title": .text("T2")]))
        errors += await Self.syncAll(c)
        let server = try await SyncSnapshot.read(c.serverStore).rows
        let new = try await SyncSnapshot.read(c.new).rows
        for name in check {
            #expect(
                server[note]?[name] != nil && server[note]?[name] != .null,
                "\(name): server \(String(describing: server[note])); errors \(errors)")
        }
        #expect(server == new, "server \(String(describing: server[note])) new \(String(describing: new[note]))")
        #expect(errors.isEmpty, "the old device is stuck: \(errors.first ?? "")")
    }

    /// Stages the server must refuse with "update the app": an enum case added, a composite field
    /// added, an attribute made optional.
    @Test(arguments: ["enum", "composite", "optional"])
    func stagesThatChangeValuesAreRefused(kind: String) async throws {
        let v1 = """
            model Notes version 1
            enum Mood: String { case happy, sad }
            composite Place { city: String }
            entity Note {
                @sync
                title: String
                mood: Mood?
                place: Place?
            }
            """
        let v2: String
        switch kind {
        case "enum": v2 = v1.replacingOccurrences(of: "case happy, sad", with: "case happy, sad, calm")
        case "composite": v2 = v1.replacingOccurrences(of: "city: String }", with: "city: String; zip: String? }")
        default: v2 = v1.replacingOccurrences(of: "title: String\n", with: "title: String?\n")
        }
        let c = try await Self.chain([v1, v2.replacingOccurrences(of: "version 1", with: "version 2")])
        try await V.write(
            c.old, .insert(RowKey(entity: "Note", id: UUID()), values: ["title": .text("x")], at: try V.stamp()))
        await #expect {
            try await c.oldEngine.sync()
        } throws: { error in
            guard case .schemaVersionUnsupported = error as? SyncError else { return false }
            return true
        }
    }

    /// An old device (at v1, with v1's released checksum) sends `body.x`: a dotted key as a
    /// composite's field takes, on an attribute that is no composite. Translated to `text.x`, it
    /// must not be written under any name on the server.
    @Test func aDottedKeyOnAPlainAttributeIsNotWrittenUnderTheServersNames() async throws {
        try await V.withWorld { w in
            let v1 = try V.schema(V.v1Text, "Notes.v1.model")
            let hand = AccessControlTests.Hand(
                "x",
                version: SyncSchemaVersion(model: v1.modelName, version: v1.version, checksum: v1.checksum.hexDigits))
            let note = RowKey(entity: "Note", id: UUID())
            let answer = try await hand.push(
                [
                    .insert(
                        note, values: ["title": .text("T"), "body.x": .text("smuggled"), "priority": .integer(99)],
                        at: try hand.stamp())
                ],
                to: w.server)
            let record = try await w.serverStore.performQuery {
                try SyncBookkeeping.change(of: RowKey(entity: "Memo", id: note.id), on: $0.connection)
            }
            let server = try await SyncSnapshot.read(w.serverStore).rows
            #expect(
                record?.attributes.keys.contains("text.x") != true
                    && record?.attributes.keys.contains("priority") != true,
                "the server holds \(String(describing: record?.attributes.keys.sorted())) (refusal \(String(describing: answer.refusal)))"
            )
            #expect(server[RowKey(entity: "Memo", id: note.id)]?["priority"] != .integer(99))
        }
    }

    /// A scope over an attribute renamed in v2 (`owner` → `user`), with authentication: user a's
    /// old device makes a folder of hers and one of b's; b's old device must see hers only, a's
    /// must be refused the write into b's scope, and a's own folder reaches a's new device.
    @Test func aScopeOverARenamedAttributeHoldsForOldDevices() async throws {
        let v1 = """
            model Notes version 1
            entity Folder {
                @sync
                name: String
                owner: String
            }
            """
        let v2 = """
            model Notes version 2
            entity Folder {
                @sync
                name: String
                user: String @renamed(from: owner)
            }
            """
        let s1 = try V.schema(v1, "Notes.v1.model")
        let s2 = try V.schema(v2, "Notes.v2.model")
        let serverStore = try Store.inMemory(schema: s2, history: .enabled(author: "server"))
        let server = try await SyncServer(
            store: serverStore, authenticate: { $0 },
            scopes: ["Folder": { user, row in row.values["user"] == .text(user) }],
            migrationPlan: MigrationPlan(current: s2, stages: [.lightweight(from: s1, to: s2)]))
        let a = try Store.inMemory(schema: s1, history: .enabled(author: "app"))
        let aEngine = try await SyncEngine(store: a, transport: server.transport(credentials: "a"))
        let b = try Store.inMemory(schema: s1, history: .enabled(author: "app"))
        let bEngine = try await SyncEngine(store: b, transport: server.transport(credentials: "b"))
        let aNew = try Store.inMemory(schema: s2, history: .enabled(author: "app"))
        let aNewEngine = try await SyncEngine(store: aNew, transport: server.transport(credentials: "a"))
        let hers = RowKey(entity: "Folder", id: UUID())
        let planted = RowKey(entity: "Folder", id: UUID())
        try await V.write(a, .insert(hers, values: ["name": .text("hers"), "owner": .text("a")], at: try V.stamp()))
        var errors = await R10.syncs(aEngine, 2)
        try await V.write(
            b,
            .insert(
                RowKey(entity: "Folder", id: UUID()), values: ["name": .text("bs"), "owner": .text("b")],
                at: try V.stamp()))
        try await V.write(
            a, .insert(planted, values: ["name": .text("planted"), "owner": .text("b")], at: try V.stamp()))
        errors += await R10.syncs(aEngine, 2)
        errors += await R10.syncs(bEngine, 2)
        errors += await R10.syncs(aNewEngine, 2)
        let server2 = try await SyncSnapshot.read(serverStore).rows
        let bRows = try await SyncSnapshot.read(b).rows
        let aNewRows = try await SyncSnapshot.read(aNew).rows
        #expect(server2[hers]?["user"] == .text("a"), "\(String(describing: server2[hers])); \(errors)")
        #expect(server2[planted]?["user"] != .text("b"), "a's old device wrote into b's scope")
        #expect(bRows[hers] == nil && bRows[planted] == nil, "b's old device sees a's rows: \(bRows)")
        #expect(aNewRows[hers]?["user"] == .text("a"), "\(aNewRows)")
    }

    // MARK: - Class 2: a device put back from a backup

    /// A file-backed phone of the planner model whose store can be closed, copied and opened again.
    final class Phone: @unchecked Sendable {
        let url: URL
        let backup: URL
        let transport: any SyncTransport
        let wallClock: @Sendable () -> UInt64
        var store: Store!
        var engine: SyncEngine!
        init(folder: URL, transport: any SyncTransport, wallClock: @escaping @Sendable () -> UInt64) {
            url = folder.appendingPathComponent("phone.sqlite")
            backup = folder.appendingPathComponent("backup.sqlite")
            self.transport = transport
            self.wallClock = wallClock
        }
        func open() async throws {
            store = try Store(url: url, schema: SyncPlanner.schema, history: .enabled(author: "app"))
            engine = try await SyncEngine(store: store, transport: transport, wallClock: wallClock)
        }
        func close() throws {
            try store.close()
            store = nil
            engine = nil
        }
        func takeBackup() throws { try FileManager.default.copyItem(at: url, to: backup) }
        func restore() throws {
            removeStore(at: url)
            try FileManager.default.copyItem(at: backup, to: url)
        }
    }

    /// Restored, the phone (wall clock an hour behind) is opened, the user renames the card,
    /// the app is quit; it is opened again, the user edits the card's rating, and only then syncs.
    /// The rename made in the first session after the restore is the user's newest and must win.
    @Test func aRestoredPhoneOpenedTwiceBeforeSyncingKeepsItsFirstSessionsEdit() async throws {
        let serverStore = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "server"))
        let server = try await SyncServer(store: serverStore)
        let laptop = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "app"))
        let laptopEngine = try await SyncEngine(store: laptop, transport: server)
        var card = Card(title: "first", owner: "x")
        try await laptop.performAndSave { [card] in try $0.insert(card) }
        try await laptopEngine.sync()
        let folder = try R12.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let phone = Phone(
            folder: folder, transport: server, wallClock: { HybridLogicalClock.wallMilliseconds() - 3_600_000 })
        try await phone.open()
        try await phone.engine.sync()
        try phone.close()
        try phone.takeBackup()
        try await phone.open()
        for title in ["one", "two", "three"] {
            card.title = title
            try await phone.store.performAndSave { [card] in try $0.update(card) }
            try await phone.engine.sync()
        }
        try phone.close()
        try phone.restore()
        try await phone.open()
        try await Task.sleep(for: .milliseconds(20))
        card.title = "newest"
        try await phone.store.performAndSave { [card] in try $0.update(card) }
        try phone.close()
        try await phone.open()
        card.rating = 5
        try await phone.store.performAndSave { [card] in try $0.update(card) }
        let errors = await R10.syncs(phone.engine, 3)
        _ = await R10.syncs(laptopEngine, 1)
        let key = RowKey(entity: "Card", id: card.id.uuid)
        let truth = try await SyncSnapshot.read(serverStore).rows
        let phoneRows = try await SyncSnapshot.read(phone.store).rows
        #expect(
            truth[key]?["title"] == .text("newest") && truth[key]?["rating"] == .integer(5),
            "the restored phone's first-session edit is lost: server \(String(describing: truth[key])), phone \(String(describing: phoneRows[key])); errors \(errors)"
        )
        #expect(phoneRows == truth)
        try phone.close()
    }

    /// Restored, the phone sets the card's to-one `parent` (its newest write; before the restore it
    /// had set it to A then B), pulling first: the laptop's sync shows it nothing new, then it pushes.
    @Test func aRestoredPhonesNewestToOneLinkIsKept() async throws {
        let serverStore = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "server"))
        let server = try await SyncServer(store: serverStore)
        let laptop = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "app"))
        let laptopEngine = try await SyncEngine(store: laptop, transport: server)
        var card = Card(title: "c", owner: "x")
        let a = Card(title: "A", owner: "x")
        let b = Card(title: "B", owner: "x")
        let c = Card(title: "C", owner: "x")
        try await laptop.performAndSave { [card, a, b, c] in
            try $0.insert(card)
            try $0.insert(a)
            try $0.insert(b)
            try $0.insert(c)
        }
        try await laptopEngine.sync()
        let folder = try R12.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // The phone's wall clock runs four minutes ahead (within the server's bound).
        let phone = Phone(
            folder: folder, transport: server, wallClock: { HybridLogicalClock.wallMilliseconds() + 240_000 })
        try await phone.open()
        try await phone.engine.sync()
        try phone.close()
        try phone.takeBackup()
        try await phone.open()
        for parent in [a, b] {
            card.parentID = parent.id
            try await phone.store.performAndSave { [card] in try $0.update(card) }
            try await phone.engine.sync()
        }
        try phone.close()
        try phone.restore()
        // Restored on a machine whose clock is right: its stamps now fall below those it gave A and B.
        let restored = Phone(folder: folder, transport: server, wallClock: { HybridLogicalClock.wallMilliseconds() })
        try await restored.open()
        card.parentID = c.id
        try await restored.store.performAndSave { [card] in try $0.update(card) }
        let errors = await R10.syncs(restored.engine, 3)
        _ = await R10.syncs(laptopEngine, 1)
        let key = RowKey(entity: "Card", id: card.id.uuid)
        let truth = try await SyncSnapshot.read(serverStore).rows
        let phoneRows = try await SyncSnapshot.read(restored.store).rows
        #expect(
            truth[key]?["parent"] == .uuid(c.id.uuid),
            "the restored phone's newest link is lost: server \(String(describing: truth[key]?["parent"])) (C is \(c.id.uuid)), phone \(String(describing: phoneRows[key]?["parent"])); errors \(errors)"
        )
        #expect(phoneRows == truth)
        try restored.close()
    }

    /// An honest phone, not restored, reopened, renames card X offline. The laptop renames X
    /// later and syncs. Then an attacker pushes a stamp under the phone's node far above its clock.
    /// The phone syncs: it must not take itself for a restored device and stamp its older rename
    /// again above the laptop's later one.
    @Test func aForgedStampUnderAnHonestPhonesNodeDoesNotReStampItsOlderWrite() async throws {
        let serverStore = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "server"))
        let server = try await SyncServer(store: serverStore)
        let laptop = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "app"))
        let laptopEngine = try await SyncEngine(store: laptop, transport: server)
        var card = Card(title: "first", owner: "x")
        try await laptop.performAndSave { [card] in try $0.insert(card) }
        try await laptopEngine.sync()
        let folder = try R12.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let phone = Phone(folder: folder, transport: server, wallClock: { HybridLogicalClock.wallMilliseconds() })
        try await phone.open()
        try await phone.engine.sync()
        try phone.close()
        try await phone.open()
        card.title = "phone"
        try await phone.store.performAndSave { [card] in try $0.update(card) }
        try await Task.sleep(for: .milliseconds(20))
        card.title = "laptop"
        try await laptop.performAndSave { [card] in try $0.update(card) }
        try await laptopEngine.sync()
        let node = try await phone.store.performQuery { try SyncBookkeeping.node(on: $0.connection) }
        let attacker = AccessControlTests.Hand("m", version: SyncPlanner.version)
        let other = Card(title: "bait", owner: "x")
        let answer = try await attacker.push(
            [
                .insert(
                    RowKey(entity: "Card", id: other.id.uuid),
                    values: [
                        "title": .text("bait"), "rating": .integer(0), "done": .bool(false), "owner": .text("x"),
                    ],
                    at: HybridTimestamp(
                        milliseconds: HybridLogicalClock.wallMilliseconds() + 60_000, counter: 0, node: node))
            ], to: server)
        #expect(answer.refusal == nil, "\(String(describing: answer.refusal))")
        let errors = await R10.syncs(phone.engine, 3)
        _ = await R10.syncs(laptopEngine, 1)
        let key = RowKey(entity: "Card", id: card.id.uuid)
        let truth = try await SyncSnapshot.read(serverStore).rows
        #expect(
            truth[key]?["title"] == .text("laptop"),
            "the phone's older offline rename was stamped again over the laptop's later one: server \(String(describing: truth[key]?["title"])); errors \(errors)"
        )
        try phone.close()
    }

    /// The tablet's wall clock runs an hour ahead: the phone pulls its stamps and writes above
    /// them, syncs, and is closed. Reopened, the phone renames X offline; the tablet renames X
    /// later (by its clock, and in real time) and syncs. The honest phone must not take its own
    /// stamps for a restore's and stamp its rename again over the tablet's.
    @Test func aPhoneWhoseClockAnotherDevicePushedAheadIsNotTakenForRestored() async throws {
        let serverStore = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "server"))
        let server = try await SyncServer(store: serverStore)
        let tablet = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "app"))
        let tabletEngine = try await SyncEngine(
            store: tablet, transport: server, wallClock: { HybridLogicalClock.wallMilliseconds() + 3_600_000 })
        var card = Card(title: "first", owner: "x")
        try await tablet.performAndSave { [card] in try $0.insert(card) }
        try await tabletEngine.sync()
        let folder = try R12.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let phone = Phone(folder: folder, transport: server, wallClock: { HybridLogicalClock.wallMilliseconds() })
        try await phone.open()
        try await phone.engine.sync()
        card.title = "phone 1"
        try await phone.store.performAndSave { [card] in try $0.update(card) }
        try await phone.engine.sync()
        try phone.close()
        try await phone.open()
        card.title = "phone 2"
        try await phone.store.performAndSave { [card] in try $0.update(card) }
        try await Task.sleep(for: .milliseconds(30))
        card.title = "tablet"
        try await tablet.performAndSave { [card] in try $0.update(card) }
        try await tabletEngine.sync()
        let errors = await R10.syncs(phone.engine, 3)
        _ = await R10.syncs(tabletEngine, 1)
        let key = RowKey(entity: "Card", id: card.id.uuid)
        let truth = try await SyncSnapshot.read(serverStore).rows
        #expect(
            truth[key]?["title"] == .text("tablet"),
            "server \(String(describing: truth[key]?["title"])); errors \(errors)")
        try phone.close()
    }
}
