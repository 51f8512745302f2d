import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright

/// Red team 9: attacks on the sync identity and scope boundary and on "what is kept is kept".
/// A failing test is a break found; each says what a user or an attacker does and what should hold.
@Suite(.serialized) struct RedTeam9Tests {
    static let ownerScope: SyncServer.Scope = { user, row in
        row.values["owner"] == .text(user) || row.values["owner"] == .text("all")
    }

    struct Setup {
        let serverStore: Store
        let server: SyncServer
    }

    static func setup() async throws -> Setup {
        let serverStore = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "server"))
        let server = try await SyncServer(
            store: serverStore, authenticate: { $0 }, scopes: ["Card": ownerScope, "Label": ownerScope])
        return Setup(serverStore: serverStore, server: server)
    }

    static func device(_ server: SyncServer, _ user: String) async throws -> (Store, SyncEngine) {
        let store = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "app"))
        return (store, try await SyncEngine(store: store, transport: server.transport(credentials: user)))
    }

    /// Syncs `engine` `times` times, keeping the errors.
    static func syncs(_ engine: SyncEngine, _ times: Int = 4) async -> [String] {
        var errors: [String] = []
        for _ in 0..<times {
            do { try await engine.sync() } catch { errors.append("\(error)") }
        }
        return errors
    }

    static func stamp(_ milliseconds: UInt64? = nil, node: SyncNodeID = SyncNodeID()) throws -> HybridTimestamp {
        var clock = HybridLogicalClock(node: node, maximumDriftMilliseconds: HybridLogicalClock.unbounded)
        return try clock.tick(wallMilliseconds: milliseconds ?? HybridLogicalClock.wallMilliseconds())
    }

    // MARK: - Class 2: what is kept is kept

    /// Alice points her shared card at her private card (allowed: both are hers); Bob sees the
    /// shared card with its parent hidden (nil). Bob sets that parent to his own card: the write
    /// over the hidden link is accepted (Sync.md: a user is never stuck with a link she cannot
    /// see), and a new card Bob makes afterwards reaches the server once his device syncs.
    @Test func aWriteOverAHiddenLinkDoesNotBlockEveryLaterEdit() async throws {
        let s = try await Self.setup()
        let (alice, aliceEngine) = try await Self.device(s.server, "alice")
        let (bob, bobEngine) = try await Self.device(s.server, "bob")
        let secret = Card(title: "secret", owner: "alice")
        var shared = Card(title: "shared", owner: "all")
        try await alice.performAndSave { [secret, shared] context in
            try context.insert(secret)
            try context.insert(shared)
        }
        try await aliceEngine.sync()
        shared.parentID = secret.id
        try await alice.performAndSave { [shared] in try $0.update(shared) }
        try await aliceEngine.sync()
        #expect(await Self.syncs(bobEngine, 1).isEmpty)
        let mine = Card(title: "bob's", owner: "bob")
        try await bob.performAndSave { [mine] in try $0.insert(mine) }
        #expect(await Self.syncs(bobEngine, 1).isEmpty)
        // Bob re-points the shared card (his device shows its parent as nil).
        let sharedID = shared.id
        var bobsView = try #require(try await bob.performQuery { try $0.existing(sharedID) })
        #expect(bobsView.parentID == nil)
        bobsView.parentID = mine.id
        try await bob.performAndSave { [bobsView] in try $0.update(bobsView) }
        _ = await Self.syncs(bobEngine, 2)
        // Later, an unrelated card.
        let later = Card(title: "later", owner: "bob")
        try await bob.performAndSave { [later] in try $0.insert(later) }
        let errors = await Self.syncs(bobEngine, 4)
        let truth = try await SyncSnapshot.read(s.serverStore)
        #expect(
            truth.rows[RowKey(entity: "Card", id: later.id.uuid)] != nil,
            "bob's later card never reaches the server; his syncs fail with \(errors.suffix(1))")
        #expect(truth.rows[RowKey(entity: "Card", id: shared.id.uuid)]?["parent"] == .uuid(mine.id.uuid))
        // What Bob's device shows of the shared card is what the server holds.
        let bobsCard = try await bob.performQuery { try $0.existing(sharedID) }
        #expect(
            bobsCard?.parentID == mine.id,
            "bob's device holds a parent the server does not: \(String(describing: bobsCard))")
    }

    /// Bob edits his card's title and points it at a shared card in one save, offline; the shared
    /// card then leaves his scope before he pushes. The link is lost (documented), but the title,
    /// written in the same save, must reach the server and Bob must not be blocked.
    @Test func aTitleSavedWithALinkToARowThatLeftTheScopeIsKept() async throws {
        let s = try await Self.setup()
        let (alice, aliceEngine) = try await Self.device(s.server, "alice")
        let (bob, bobEngine) = try await Self.device(s.server, "bob")
        var target = Card(title: "target", owner: "all")
        try await alice.performAndSave { [target] in try $0.insert(target) }
        try await aliceEngine.sync()
        var mine = Card(title: "v1", owner: "bob")
        try await bob.performAndSave { [mine] in try $0.insert(mine) }
        #expect(await Self.syncs(bobEngine, 1).isEmpty)
        mine.title = "v2"
        mine.parentID = target.id
        try await bob.performAndSave { [mine] in try $0.update(mine) }
        target.owner = "alice"
        try await alice.performAndSave { [target] in try $0.update(target) }
        try await aliceEngine.sync()
        let errors = await Self.syncs(bobEngine, 4)
        let truth = try await SyncSnapshot.read(s.serverStore)
        #expect(
            truth.rows[RowKey(entity: "Card", id: mine.id.uuid)]?["title"] == .text("v2"),
            "bob's saved title is lost: server \(String(describing: truth.rows[RowKey(entity: "Card", id: mine.id.uuid)])), errors \(errors.suffix(1))"
        )
        #expect(errors.count < 4, "bob's device never syncs again: \(errors.suffix(1))")
        let bobs = try await SyncSnapshot.read(bob)
        #expect(bobs.rows[RowKey(entity: "Card", id: mine.id.uuid)]?["title"] == .text("v2"))
    }

    /// The same with a many-to-many link: Bob links his card to a shared label and edits its title
    /// in one save; the label leaves his scope before he pushes. The title must be kept.
    @Test func aTitleSavedWithAManyToManyLinkToARowThatLeftTheScopeIsKept() async throws {
        let s = try await Self.setup()
        let (alice, aliceEngine) = try await Self.device(s.server, "alice")
        let (bob, bobEngine) = try await Self.device(s.server, "bob")
        var label = Label(name: "L", owner: "all")
        try await alice.performAndSave { [label] in try $0.insert(label) }
        try await aliceEngine.sync()
        var mine = Card(title: "v1", owner: "bob")
        try await bob.performAndSave { [mine] in try $0.insert(mine) }
        #expect(await Self.syncs(bobEngine, 1).isEmpty)
        mine.title = "v2"
        try await bob.performAndSave { [mine, label] context in
            try context.update(mine)
            try context.link(mine.id, to: label.id) { $0.labels }
        }
        label.owner = "alice"
        try await alice.performAndSave { [label] in try $0.update(label) }
        try await aliceEngine.sync()
        let errors = await Self.syncs(bobEngine, 4)
        let truth = try await SyncSnapshot.read(s.serverStore)
        #expect(
            truth.rows[RowKey(entity: "Card", id: mine.id.uuid)]?["title"] == .text("v2"),
            "bob's saved title is lost; errors \(errors.suffix(1))")
        #expect(errors.count < 4, "bob's device never syncs again: \(errors.suffix(1))")
    }

    /// Two devices of one user race on one card: each edits a different attribute offline, both
    /// push, both pull; every device and the server end with both edits.
    @Test func twoDevicesOfOneUserRacingKeepBothEdits() async throws {
        let s = try await Self.setup()
        let (phone, phoneEngine) = try await Self.device(s.server, "bob")
        let (laptop, laptopEngine) = try await Self.device(s.server, "bob")
        var card = Card(title: "t", rating: 1, owner: "bob")
        try await phone.performAndSave { [card] in try $0.insert(card) }
        try await phoneEngine.sync()
        try await laptopEngine.sync()
        card.title = "phone"
        try await phone.performAndSave { [card] in try $0.update(card) }
        let cardID = card.id
        var other = try #require(try await laptop.performQuery { try $0.existing(cardID) })
        other.rating = 7
        try await laptop.performAndSave { [other] in try $0.update(other) }
        async let a = phoneEngine.sync()
        async let b = laptopEngine.sync()
        _ = try await (a.pushed, b.pushed)
        for _ in 0..<2 {
            try await phoneEngine.sync()
            try await laptopEngine.sync()
        }
        let truth = try await SyncSnapshot.read(s.serverStore)
        let row = truth.rows[RowKey(entity: "Card", id: card.id.uuid)]
        #expect(row?["title"] == .text("phone") && row?["rating"] == .integer(7), "\(String(describing: row))")
        #expect(try await SyncSnapshot.read(phone).rows == truth.rows)
        #expect(try await SyncSnapshot.read(laptop).rows == truth.rows)
    }

    /// Bob's device is restored from a backup taken while it held a pending edit of a shared card
    /// (its title, and its parent set to a shared card P). The edit was pushed after the backup;
    /// then P left Bob's scope. The restored device pushes the same edit again (same stamps, a
    /// no-op on the server): it must not be refused for ever, and Bob's later cards must arrive.
    @Test func aDeviceRestoredFromABackupWithAPendingLinkToARowThatLeftIsNotStuck() async throws {
        let s = try await Self.setup()
        let (alice, aliceEngine) = try await Self.device(s.server, "alice")
        var target = Card(title: "P", owner: "all")
        var shared = Card(title: "S", owner: "all")
        try await alice.performAndSave { [target, shared] context in
            try context.insert(target)
            try context.insert(shared)
        }
        try await aliceEngine.sync()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rt9-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("bob.sqlite")
        let backup = folder.appendingPathComponent("backup.sqlite")
        func open() async throws -> (Store, SyncEngine) {
            let store = try Store(url: url, schema: SyncPlanner.schema, history: .enabled(author: "app"))
            return (store, try await SyncEngine(store: store, transport: s.server.transport(credentials: "bob")))
        }
        var (bob, bobEngine) = try await open()
        try await bobEngine.sync()
        shared.title = "bob's title"
        shared.parentID = target.id
        try await bob.performAndSave { [shared] in try $0.update(shared) }
        try bob.close()
        try FileManager.default.copyItem(at: url, to: backup)
        (bob, bobEngine) = try await open()
        try await bobEngine.sync()
        target.owner = "alice"
        try await alice.performAndSave { [target] in try $0.update(target) }
        try await aliceEngine.sync()
        try await bobEngine.sync()
        try bob.close()
        removeStore(at: url)
        try FileManager.default.copyItem(at: backup, to: url)
        (bob, bobEngine) = try await open()
        let later = Card(title: "later", owner: "bob")
        try await bob.performAndSave { [later] in try $0.insert(later) }
        let errors = await Self.syncs(bobEngine, 4)
        let truth = try await SyncSnapshot.read(s.serverStore)
        #expect(
            truth.rows[RowKey(entity: "Card", id: later.id.uuid)] != nil,
            "bob's later card is stuck: \(errors.suffix(1))")
        #expect(truth.rows[RowKey(entity: "Card", id: shared.id.uuid)]?["parent"] == .uuid(target.id.uuid))
        #expect(truth.rows[RowKey(entity: "Card", id: shared.id.uuid)]?["title"] == .text("bob's title"))
        let bobs = try await SyncSnapshot.read(bob)
        #expect(bobs.rows[RowKey(entity: "Card", id: target.id.uuid)] == nil, "bob holds a row out of his scope")
        #expect(bobs.rows[RowKey(entity: "Card", id: shared.id.uuid)]?["parent"] == .null)
        try bob.close()
    }

    /// Bob links his own private card to a shared label; the label then leaves his scope (Alice
    /// takes it private). Bob deletes his own card: a row only he may see. The delete must reach
    /// the server (it changes no row of Alice's: the link is his card's), and Bob is not stuck.
    @Test func deletingMyOwnCardLinkedToALabelThatLeftMyScope() async throws {
        let s = try await Self.setup()
        let (alice, aliceEngine) = try await Self.device(s.server, "alice")
        let (bob, bobEngine) = try await Self.device(s.server, "bob")
        var label = Label(name: "L", owner: "all")
        try await alice.performAndSave { [label] in try $0.insert(label) }
        try await aliceEngine.sync()
        try await bobEngine.sync()
        let mine = Card(title: "mine", owner: "bob")
        try await bob.performAndSave { [mine, label] context in
            try context.insert(mine)
            try context.link(mine.id, to: label.id) { $0.labels }
        }
        #expect(await Self.syncs(bobEngine, 1).isEmpty)
        label.owner = "alice"
        try await alice.performAndSave { [label] in try $0.update(label) }
        try await aliceEngine.sync()
        #expect(await Self.syncs(bobEngine, 1).isEmpty)
        try await bob.performAndSave { [mine] in try $0.delete(mine) }
        let later = Card(title: "later", owner: "bob")
        try await bob.performAndSave { [later] in try $0.insert(later) }
        let errors = await Self.syncs(bobEngine, 4)
        let truth = try await SyncSnapshot.read(s.serverStore)
        #expect(
            truth.rows[RowKey(entity: "Card", id: mine.id.uuid)] == nil,
            "bob cannot delete his own card: \(errors.suffix(1))")
        #expect(truth.rows[RowKey(entity: "Card", id: later.id.uuid)] != nil, "bob is stuck: \(errors.suffix(1))")
    }

    /// A uniqueness merge settled on Bob's device (his pull meets Alice's shared tag while his own
    /// private tag of the same name is not pushed yet; the pull comes first because his push was
    /// refused for a doc that left his scope) must not take Alice's shared tag out of her sight:
    /// the server refuses exactly that for a merge it settles itself.
    @Test func aMergeSettledOnADeviceDoesNotTakeAnotherUsersSharedRow() async throws {
        // Known break, left to the lead: a device-settled uniqueness merge takes another user's shared row.
        await withKnownIssue(isIntermittent: true) {
            let schema = try #require(AccessControlTests.schema)
            let serverStore = try Store.inMemory(schema: schema, history: .enabled(author: "server"))
            let server = try await SyncServer(
                store: serverStore, authenticate: { $0 }, scopes: AccessControlTests.scopes)
            func device(_ user: String) async throws -> (Store, SyncEngine) {
                let store = try Store.inMemory(schema: schema, history: .enabled(author: "app"))
                return (store, try await SyncEngine(store: store, transport: server.transport(credentials: user)))
            }
            func set(_ store: Store, _ entity: String, _ id: UUID, _ values: [String: SyncValue]) async throws {
                let change = RowChange.insert(RowKey(entity: entity, id: id), values: values, at: try Self.stamp())
                try await store.performAndSave(author: "app") { try $0.materialize(change) }
            }
            let (alice, aliceEngine) = try await device("alice")
            let (bob, bobEngine) = try await device("bob")
            let doc = UUID()
            try await set(alice, "Doc", doc, ["title": .text("d"), "owner": .text("all")])
            try await aliceEngine.sync()
            try await bobEngine.sync()
            // Bob, offline: edits the shared doc and makes his own private tag "x".
            try await set(bob, "Doc", doc, ["title": .text("bob's edit"), "owner": .text("all")])
            let bobsTag = UUID()
            try await set(bob, "Tag", bobsTag, ["name": .text("x"), "owner": .text("bob")])
            // Alice: a shared tag "x" (made before Bob's), and takes the doc private.
            let alicesTag = UUID()
            let early = try Self.stamp(HybridLogicalClock.wallMilliseconds() - 60_000)
            try await alice.performAndSave(author: "app") {
                try $0.materialize(
                    RowChange.insert(
                        RowKey(entity: "Tag", id: alicesTag), values: ["name": .text("x"), "owner": .text("all")],
                        at: early))
            }
            try await set(alice, "Doc", doc, ["title": .text("d"), "owner": .text("alice")])
            try await aliceEngine.sync()
            let errors = await Self.syncs(bobEngine, 4)
            _ = await Self.syncs(aliceEngine, 2)
            let truth = try await SyncSnapshot.read(serverStore)
            let tags = truth.rows.filter { $0.key.entity == "Tag" }
            #expect(
                tags.values.contains { $0["owner"] == .text("all") },
                "alice's shared tag left her sight: \(tags) (alice's tag \(alicesTag), bob's \(bobsTag)), bob's errors \(errors)"
            )
            let alices = try await SyncSnapshot.read(alice)
            #expect(alices.rows.keys.contains { $0.entity == "Tag" }, "alice lost her tag: \(alices.rows)")
        }
    }

    /// Alice points the shared card at her private card; Bob sees the link hidden. A write of that
    /// link by Bob is refused (documented). Bob deletes the shared card and undoes the delete (the
    /// same ID inserted again, as the app's undo does): the row comes back, and the link Bob may
    /// not see must come back with it (or the undo be refused), not be silently cleared.
    @Test func aDeleteAndUndoDoesNotClearALinkTheUserMayNotSee() async throws {
        let s = try await Self.setup()
        let (alice, aliceEngine) = try await Self.device(s.server, "alice")
        let (bob, bobEngine) = try await Self.device(s.server, "bob")
        let secret = Card(title: "secret", owner: "alice")
        var shared = Card(title: "shared", owner: "all")
        try await alice.performAndSave { [secret, shared] context in
            try context.insert(secret)
            try context.insert(shared)
        }
        try await aliceEngine.sync()
        shared.parentID = secret.id
        try await alice.performAndSave { [shared] in try $0.update(shared) }
        try await aliceEngine.sync()
        try await bobEngine.sync()
        let sharedID = shared.id
        let bobsView = try #require(try await bob.performQuery { try $0.existing(sharedID) })
        #expect(bobsView.parentID == nil)
        try await bob.performAndSave { [bobsView] in try $0.delete(bobsView) }
        try await bobEngine.sync()
        try await bob.performAndSave { [bobsView] in try $0.insert(bobsView) }
        let errors = await Self.syncs(bobEngine, 3)
        _ = await Self.syncs(aliceEngine, 1)
        let truth = try await SyncSnapshot.read(s.serverStore)
        let row = truth.rows[RowKey(entity: "Card", id: shared.id.uuid)]
        // The undo brings the row back as it was: the insert's nil for the hidden link is no write of it.
        #expect(errors.isEmpty, "\(errors)")
        #expect(
            row?["parent"] == .uuid(secret.id.uuid),
            "bob's undo cleared alice's link he may not see: server \(String(describing: row)), errors \(errors)")
        let alices = try await alice.performQuery { try $0.existing(sharedID) }
        #expect(alices?.parentID == secret.id, "alice's device: \(String(describing: alices))")
        let bobs = try await bob.performQuery { try $0.existing(sharedID) }
        #expect(bobs != nil && bobs?.parentID == nil, "bob's device: \(String(describing: bobs))")
    }

    /// Bob edits only the title of a shared card whose parent is hidden from him, through the
    /// record API (which writes every column, the hidden link as nil): the title arrives, the
    /// hidden link stays, Bob is not refused.
    @Test func editingARowWithAHiddenLinkKeepsTheLink() async throws {
        let s = try await Self.setup()
        let (alice, aliceEngine) = try await Self.device(s.server, "alice")
        let (bob, bobEngine) = try await Self.device(s.server, "bob")
        let secret = Card(title: "secret", owner: "alice")
        var shared = Card(title: "shared", owner: "all")
        try await alice.performAndSave { [secret, shared] context in
            try context.insert(secret)
            try context.insert(shared)
        }
        try await aliceEngine.sync()
        try await bobEngine.sync()
        shared.parentID = secret.id
        try await alice.performAndSave { [shared] in try $0.update(shared) }
        try await aliceEngine.sync()
        try await bobEngine.sync()
        let sharedID = shared.id
        var bobsView = try #require(try await bob.performQuery { try $0.existing(sharedID) })
        bobsView.title = "bob's title"
        bobsView.rating = 3
        try await bob.performAndSave { [bobsView] in try $0.update(bobsView) }
        let errors = await Self.syncs(bobEngine, 3)
        #expect(errors.isEmpty, "\(errors)")
        let row = try await SyncSnapshot.read(s.serverStore).rows[RowKey(entity: "Card", id: shared.id.uuid)]
        #expect(
            row?["parent"] == .uuid(secret.id.uuid) && row?["title"] == .text("bob's title"),
            "\(String(describing: row))")
    }

    /// Alice links her private card to a shared label. Bob deletes the shared label: that would
    /// clear a link of Alice's private card (her card loses its label), which a push by one user
    /// never does to another user's row: refused. The refusal holds nothing else of Bob's back:
    /// his device reports the label refused and holds it again, and his next card reaches the server.
    @Test func deletingASharedLabelDoesNotClearAnotherUsersPrivateLink() async throws {
        let s = try await Self.setup()
        let (alice, aliceEngine) = try await Self.device(s.server, "alice")
        let (bob, bobEngine) = try await Self.device(s.server, "bob")
        let label = Label(name: "L", owner: "all")
        let secret = Card(title: "secret", owner: "alice")
        try await alice.performAndSave { [label, secret] context in
            try context.insert(label)
            try context.insert(secret)
            try context.link(secret.id, to: label.id) { $0.labels }
        }
        try await aliceEngine.sync()
        try await bobEngine.sync()
        try await bob.performAndSave { [label] in try $0.delete(label) }
        let later = Card(title: "later", owner: "bob")
        try await bob.performAndSave { [later] in try $0.insert(later) }
        let report = try await bobEngine.sync()
        #expect(report.refused == [RowKey(entity: "Label", id: label.id.uuid)])
        let errors = await Self.syncs(bobEngine, 2)
        #expect(errors.isEmpty, "\(errors)")
        let labelID = label.id
        #expect(try await bob.performQuery { try $0.existing(labelID) } == label, "bob's device lacks the label")
        _ = await Self.syncs(aliceEngine, 2)
        let truth = try await SyncSnapshot.read(s.serverStore)
        let linked = truth.links.contains { $0.contains(secret.id.uuid) && $0.contains(label.id.uuid) }
        #expect(
            linked || truth.rows[RowKey(entity: "Label", id: label.id.uuid)] != nil,
            "bob's delete cleared alice's private card's link; bob's errors \(errors)")
        let alices = try await SyncSnapshot.read(alice)
        #expect(alices.links == truth.links)
        #expect(
            truth.rows[RowKey(entity: "Card", id: later.id.uuid)] != nil, "bob's later card never reached the server")
    }

    /// Bob makes a shared card; the server applies his push but the answer is lost, so his device
    /// still marks the card as made here (not acknowledged). Alice takes the card private, and the
    /// server forgets Bob's device. Back, Bob's device pulls from the beginning naming the rows it
    /// holds, leaving out the card (made here): it is never told to drop it, keeps a row of Alice's
    /// it may no longer see, and its push of it is refused at every sync.
    @Test func aForgottenDeviceWhoseAcknowledgmentWasLostDropsARowThatLeftItsScope() async throws {
        let s = try await Self.setup()
        let (alice, aliceEngine) = try await Self.device(s.server, "alice")
        let transport = LosingTransport(s.server.transport(credentials: "bob"))
        let bob = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "app"))
        let bobEngine = try await SyncEngine(store: bob, transport: transport)
        try await bobEngine.sync()
        var card = Card(title: "bob's shared card", owner: "all")
        try await bob.performAndSave { [card] in try $0.insert(card) }
        transport.loseNextPushAnswer = true
        _ = await Self.syncs(bobEngine, 1)
        try await aliceEngine.sync()
        card.owner = "alice"
        try await alice.performAndSave { [card] in try $0.update(card) }
        try await aliceEngine.sync()
        let node = try await bob.performAndSave(author: "probe") { try SyncBookkeeping.node(on: $0.connection) }
        try await s.server.forgetDevice(node)
        let errors = await Self.syncs(bobEngine, 4)
        let bobs = try await SyncSnapshot.read(bob)
        #expect(
            bobs.rows[RowKey(entity: "Card", id: card.id.uuid)] == nil,
            "bob's device keeps alice's private card: \(String(describing: bobs.rows[RowKey(entity: "Card", id: card.id.uuid)]))"
        )
        #expect(errors.count < 4, "bob's device never syncs again: \(errors.suffix(1))")
    }

    /// A new user names the device store's history author "sync" (the app's sync feature, say).
    /// Every local write then carries the engine's own author, which the stamp step skips: nothing
    /// the user saves ever leaves the device, and no error says so. The engine should refuse such
    /// a store, or push the writes.
    @Test func aStoreWhoseAuthorIsTheEnginesStillPushesItsWrites() async throws {
        let s = try await Self.setup()
        let phone = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "sync"))
        let engine: SyncEngine
        do {
            engine = try await SyncEngine(store: phone, transport: s.server.transport(credentials: "bob"))
        } catch {
            return  // refused: the user is told
        }
        let card = Card(title: "saved", owner: "bob")
        try await phone.performAndSave { [card] in try $0.insert(card) }
        let errors = await Self.syncs(engine, 2)
        let truth = try await SyncSnapshot.read(s.serverStore)
        #expect(
            truth.rows[RowKey(entity: "Card", id: card.id.uuid)] != nil,
            "a saved card never leaves the device, silently (errors: \(errors))")
    }

    /// The server's own code renames a card (a direct write, no sync), then, later, the user renames
    /// it on a device that syncs at once. The server stamps its own write only when the next request
    /// arrives, which is the device's push of the later rename: the older write gets the later
    /// stamp and the user's rename is lost everywhere.
    @Test func aLaterDeviceEditBeatsAnEarlierServerCodeWrite() async throws {
        let s = try await Self.setup()
        let (phone, phoneEngine) = try await Self.device(s.server, "bob")
        var card = Card(title: "v1", owner: "bob")
        try await phone.performAndSave { [card] in try $0.insert(card) }
        try await phoneEngine.sync()
        var serverCopy = card
        serverCopy.title = "server code, earlier"
        try await s.serverStore.performAndSave(author: "admin") { [serverCopy] in try $0.update(serverCopy) }
        try await Task.sleep(nanoseconds: 30_000_000)
        card.title = "user, later"
        try await phone.performAndSave { [card] in try $0.update(card) }
        try await phoneEngine.sync()
        try await phoneEngine.sync()
        let truth = try await SyncSnapshot.read(s.serverStore)
        #expect(
            truth.rows[RowKey(entity: "Card", id: card.id.uuid)]?["title"] == .text("user, later"),
            "the user's later rename lost to an earlier server write: \(String(describing: truth.rows[RowKey(entity: "Card", id: card.id.uuid)]?["title"]))"
        )
    }

    /// Two devices of one user: the phone renames a card offline; 50 ms later the laptop renames it
    /// and syncs; then the phone syncs. The phone's edit is stamped when it syncs, not when it was
    /// saved, so the earlier edit wins over the later one.
    @Test func anEarlierOfflineEditDoesNotBeatALaterOne() async throws {
        let s = try await Self.setup()
        let (phone, phoneEngine) = try await Self.device(s.server, "bob")
        let (laptop, laptopEngine) = try await Self.device(s.server, "bob")
        var card = Card(title: "v1", owner: "bob")
        try await phone.performAndSave { [card] in try $0.insert(card) }
        try await phoneEngine.sync()
        try await laptopEngine.sync()
        card.title = "phone, earlier"
        try await phone.performAndSave { [card] in try $0.update(card) }
        try await Task.sleep(nanoseconds: 50_000_000)
        card.title = "laptop, later"
        try await laptop.performAndSave { [card] in try $0.update(card) }
        try await laptopEngine.sync()
        try await phoneEngine.sync()
        try await laptopEngine.sync()
        let truth = try await SyncSnapshot.read(s.serverStore)
        #expect(
            truth.rows[RowKey(entity: "Card", id: card.id.uuid)]?["title"] == .text("laptop, later"),
            "the earlier offline edit won: \(String(describing: truth.rows[RowKey(entity: "Card", id: card.id.uuid)]?["title"]))"
        )
    }

    /// The many-to-many case of a pending change to a row that left the scope, as an unlink: Bob
    /// removes a shared label from his card and renames the card in one save; the label leaves his
    /// scope before he pushes. The rename must arrive and Bob must not be stuck.
    @Test func aTitleSavedWithAnUnlinkOfARowThatLeftTheScopeIsKept() async throws {
        let s = try await Self.setup()
        let (alice, aliceEngine) = try await Self.device(s.server, "alice")
        let (bob, bobEngine) = try await Self.device(s.server, "bob")
        var label = Label(name: "L", owner: "all")
        try await alice.performAndSave { [label] in try $0.insert(label) }
        try await aliceEngine.sync()
        try await bobEngine.sync()
        var mine = Card(title: "v1", owner: "bob")
        try await bob.performAndSave { [mine, label] context in
            try context.insert(mine)
            try context.link(mine.id, to: label.id) { $0.labels }
        }
        #expect(await Self.syncs(bobEngine, 1).isEmpty)
        mine.title = "v2"
        try await bob.performAndSave { [mine, label] context in
            try context.update(mine)
            try context.unlink(mine.id, from: label.id) { $0.labels }
        }
        label.owner = "alice"
        try await alice.performAndSave { [label] in try $0.update(label) }
        try await aliceEngine.sync()
        let errors = await Self.syncs(bobEngine, 4)
        let truth = try await SyncSnapshot.read(s.serverStore)
        #expect(
            truth.rows[RowKey(entity: "Card", id: mine.id.uuid)]?["title"] == .text("v2"),
            "bob's saved title is lost; errors \(errors.suffix(1))")
        #expect(errors.count < 4, "bob's device never syncs again: \(errors.suffix(1))")
    }

    /// The server's store records history under the server's own author name ("sync-server"): every
    /// write the server's code makes is then skipped by the stamp step and never reaches a device.
    @Test func aServerStoreWhoseAuthorIsTheServersStillServesItsWrites() async throws {
        let serverStore = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "sync-server"))
        let server: SyncServer
        do {
            server = try await SyncServer(
                store: serverStore, authenticate: { $0 }, scopes: ["Card": Self.ownerScope, "Label": Self.ownerScope])
        } catch {
            return  // refused: the developer is told
        }
        let card = Card(title: "from the server's code", owner: "bob")
        try await serverStore.performAndSave { [card] in try $0.insert(card) }
        let (phone, engine) = try await Self.device(server, "bob")
        try await engine.sync()
        let held = try await SyncSnapshot.read(phone)
        #expect(held.rows[RowKey(entity: "Card", id: card.id.uuid)] != nil, "the server's own write never reaches bob")
    }

    /// The same merge without any refused push: Bob saves his private tag "x" while his device's
    /// sync is between its push and its pull (an ordinary race), and the pull brings Alice's shared
    /// tag "x". The device settles the merge, Alice's shared tag takes Bob's later owner, and it
    /// leaves Alice's sight.
    @Test func aMergeSettledOnADeviceDuringAnOrdinarySyncKeepsTheSharedRowShared() async throws {
        // Known break, left to the lead: a device-settled merge in an ordinary race takes another user's shared row.
        await withKnownIssue(isIntermittent: true) {
            let schema = try #require(AccessControlTests.schema)
            let serverStore = try Store.inMemory(schema: schema, history: .enabled(author: "server"))
            let server = try await SyncServer(
                store: serverStore, authenticate: { $0 }, scopes: AccessControlTests.scopes)
            let alice = try Store.inMemory(schema: schema, history: .enabled(author: "app"))
            let aliceEngine = try await SyncEngine(store: alice, transport: server.transport(credentials: "alice"))
            let bob = try Store.inMemory(schema: schema, history: .enabled(author: "app"))
            let network = FlakyNetwork(server: server.transport(credentials: "bob"), seed: 9)
            let bobEngine = try await SyncEngine(store: bob, transport: network)
            try await bobEngine.sync()
            let alicesTag = UUID()
            try await alice.performAndSave(author: "app") {
                try $0.materialize(
                    RowChange.insert(
                        RowKey(entity: "Tag", id: alicesTag), values: ["name": .text("x"), "owner": .text("all")],
                        at: try Self.stamp()))
            }
            try await aliceEngine.sync()
            let bobsTag = UUID()
            let once = Once()
            network.interleave {
                guard once.first() else { return }
                let change = RowChange.insert(
                    RowKey(entity: "Tag", id: bobsTag), values: ["name": .text("x"), "owner": .text("bob")],
                    at: try Self.stamp())
                try await bob.performAndSave(author: "app") { try $0.materialize(change) }
            }
            let errors = await Self.syncs(bobEngine, 3)
            network.interleave(nil)
            _ = await Self.syncs(aliceEngine, 2)
            let truth = try await SyncSnapshot.read(serverStore)
            let tags = truth.rows.filter { $0.key.entity == "Tag" }
            #expect(
                tags.values.contains { $0["owner"] == .text("all") },
                "alice's shared tag left her sight: \(tags) (alice's \(alicesTag), bob's \(bobsTag)); bob's errors \(errors)"
            )
        }
    }

    // MARK: - Class 1: hand-made requests

    /// Bob's hand-made push re-inserts (stamped after the delete) a card Alice made private and
    /// deleted, under his own name: a row made under another user's ID, so it must be refused.
    @Test func aForgedResurrectionOfAnotherUsersDeletedRowIsRefused() async throws {
        let s = try await Self.setup()
        let (alice, aliceEngine) = try await Self.device(s.server, "alice")
        let secret = Card(title: "secret", owner: "alice")
        try await alice.performAndSave { [secret] in try $0.insert(secret) }
        try await aliceEngine.sync()
        try await alice.performAndSave { [secret] in try $0.delete(secret) }
        try await aliceEngine.sync()
        let key = RowKey(entity: "Card", id: secret.id.uuid)
        let later = try Self.stamp(HybridLogicalClock.wallMilliseconds() + 1_000)
        let change = RowChange.insert(
            key,
            values: [
                "title": .text("mine now"), "rating": .integer(0), "done": .bool(false), "due": .null,
                "owner": .text("bob"), "parent": .null,
            ], at: later)
        let response = try await s.server.push(
            PushRequest(
                device: SyncNodeID(), schema: SyncPlanner.version, after: nil, through: HistoryToken(1),
                changes: ChangeSet([change])),
            credentials: "bob")
        #expect(response.refusal != nil, "bob took over alice's deleted row: \(response)")
        let truth = try await SyncSnapshot.read(s.serverStore)
        #expect(truth.rows[key] == nil)
    }

    /// Bob's hand-made push links his card to Alice's private label with an *unlink* stamp only
    /// (a link record the server has never seen, absent): it names another user's row, so it is
    /// refused like a link, and the server keeps no record naming it.
    @Test func aForgedUnlinkOfAnotherUsersRowIsRefused() async throws {
        let s = try await Self.setup()
        let (alice, aliceEngine) = try await Self.device(s.server, "alice")
        let secret = Label(name: "secret", owner: "alice")
        try await alice.performAndSave { [secret] in try $0.insert(secret) }
        try await aliceEngine.sync()
        let card = RowKey(entity: "Card", id: UUID())
        let stamp = try Self.stamp()
        var changes = ChangeSet([
            RowChange.insert(
                card,
                values: [
                    "title": .text("c"), "rating": .integer(0), "done": .bool(false), "due": .null,
                    "owner": .text("bob"), "parent": .null,
                ], at: stamp)
        ])
        changes.merge(RowChange.unlink(card, "labels", from: secret.id.uuid, at: stamp))
        let response = try await s.server.push(
            PushRequest(
                device: SyncNodeID(), schema: SyncPlanner.version, after: nil, through: HistoryToken(1),
                changes: changes),
            credentials: "bob")
        #expect(response.refusal != nil, "an unlink naming alice's private label was accepted: \(response)")
    }

    /// Pulls with forged cursors: negative is refused on decoding, huge and another server's are
    /// refused (cursorAhead, epochChanged); none sends a row.
    @Test func forgedCursorsSendNothing() async throws {
        let s = try await Self.setup()
        let (alice, aliceEngine) = try await Self.device(s.server, "alice")
        try await alice.performAndSave { try $0.insert(Card(title: "secret", owner: "alice")) }
        try await aliceEngine.sync()
        let version = SyncPlanner.version
        let huge = try await s.server.pull(
            PullRequest(device: SyncNodeID(), schema: version, since: SyncCursor(Int64.max), limit: 100),
            credentials: "bob")
        #expect(huge.refusal != nil && huge.changes.rows.isEmpty, "\(huge)")
        let other = try await s.server.pull(
            PullRequest(
                device: SyncNodeID(), schema: version, since: SyncCursor(1), limit: 100, epoch: SyncEpoch()),
            credentials: "bob")
        #expect(other.refusal != nil, "a cursor of another server's epoch was served: \(other)")
        let json = Data(#"{"protocolVersion":1,"device":"\#(UUID().uuidString)","since":-1,"limit":10}"#.utf8)
        #expect(throws: (any Error).self) { try JSONDecoder().decode(PullRequest.self, from: json) }
    }
}

/// A transport that loses the answer of the next push when told to (the server applied it).
private final class LosingTransport<Base: SyncTransport>: SyncTransport, @unchecked Sendable {
    private let base: Base
    private let lock = NSLock()
    private var lose = false
    init(_ base: Base) { self.base = base }
    var loseNextPushAnswer: Bool {
        get { lock.withLock { lose } }
        set { lock.withLock { lose = newValue } }
    }
    struct Lost: Error {}
    func push(_ request: PushRequest) async throws -> PushResponse {
        let answer = try await base.push(request)
        if lock.withLock({ () -> Bool in
            defer { lose = false }
            return lose
        }) {
            throw Lost()
        }
        return answer
    }
    func pull(_ request: PullRequest) async throws -> PullResponse { try await base.pull(request) }
}

/// True the first time only.
private final class Once: @unchecked Sendable {
    private let lock = NSLock()
    private var done = false
    func first() -> Bool {
        lock.withLock {
            defer { done = true }
            return !done
        }
    }
}
