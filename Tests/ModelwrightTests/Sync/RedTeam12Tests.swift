import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright

/// Red team 12: attacks on "one stamp, one write" (restored devices, forged stamps), on hidden links
/// kept for a device's own unpushed write, on refused changes, and on "what is kept is kept".
/// A failing test is a break found. Helpers come from red teams 9 and 10.
@Suite(.serialized) struct RedTeam12Tests {
    typealias R10 = RedTeam10Tests

    /// A transport whose server can be swapped: the server process restarted over a restored file.
    final class Switch: SyncTransport, @unchecked Sendable {
        private let lock = NSLock()
        private var target: any SyncTransport
        init(_ target: any SyncTransport) { self.target = target }
        var inner: any SyncTransport {
            get { lock.withLock { target } }
            set { lock.withLock { target = newValue } }
        }
        func push(_ request: PushRequest) async throws -> PushResponse { try await inner.push(request) }
        func pull(_ request: PullRequest) async throws -> PullResponse { try await inner.pull(request) }
    }

    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rt12-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// A server of the take model, Alice's plain device and Bob's device behind a pull hook.
    static func takeWorld(
        bobWallClock: @escaping @Sendable () -> UInt64 = { HybridLogicalClock.wallMilliseconds() }
    ) async throws -> (
        serverStore: Store, alice: Store, aliceEngine: SyncEngine, bob: Store, bobEngine: SyncEngine,
        hook: R10.PullHook
    ) {
        let schema = try #require(PushEffectScopeTests.takeSchema)
        let serverStore = try Store.inMemory(schema: schema, history: .enabled(author: "server"))
        let server = try await SyncServer(
            store: serverStore, authenticate: { $0 }, scopes: PushEffectScopeTests.scopes)
        let alice = try Store.inMemory(schema: schema, history: .enabled(author: "app"))
        let aliceEngine = try await SyncEngine(store: alice, transport: server.transport(credentials: "a"))
        let bob = try Store.inMemory(schema: schema, history: .enabled(author: "app"))
        let hook = R10.PullHook(server.transport(credentials: "b"))
        let bobEngine = try await SyncEngine(store: bob, transport: hook, wallClock: bobWallClock)
        return (serverStore, alice, aliceEngine, bob, bobEngine, hook)
    }

    // MARK: - Class 1a: a device put back from a backup

    /// The phone (wall clock an hour behind, so it stamps by its counter on the last stamp it
    /// pulled) renames a card twice after a backup, syncing each; restored from the backup, the
    /// user renames it once more. The new write is stamped with the first rename's stamp, below the
    /// second's: it is the user's newest edit and must win everywhere, not lose to "two".
    @Test func aRestoredPhoneThatWritesLessThanBeforeKeepsItsNewestEdit() async throws {
        let serverStore = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "server"))
        let server = try await SyncServer(store: serverStore)
        let laptop = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "app"))
        let laptopEngine = try await SyncEngine(store: laptop, transport: server)
        var card = Card(title: "first", owner: "x")
        try await laptop.performAndSave { [card] in try $0.insert(card) }
        try await laptopEngine.sync()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("phone.sqlite")
        let backup = folder.appendingPathComponent("backup.sqlite")
        func open() async throws -> (Store, SyncEngine) {
            let store = try Store(url: url, schema: SyncPlanner.schema, history: .enabled(author: "app"))
            return (
                store,
                try await SyncEngine(
                    store: store, transport: server, wallClock: { HybridLogicalClock.wallMilliseconds() - 3_600_000 })
            )
        }
        var (phone, phoneEngine) = try await open()
        try await phoneEngine.sync()
        try phone.close()
        try FileManager.default.copyItem(at: url, to: backup)
        (phone, phoneEngine) = try await open()
        for title in ["one", "two"] {
            card.title = title
            try await phone.performAndSave { [card] in try $0.update(card) }
            try await phoneEngine.sync()
        }
        try phone.close()
        removeStore(at: url)
        try FileManager.default.copyItem(at: backup, to: url)
        (phone, phoneEngine) = try await open()
        try await Task.sleep(for: .milliseconds(20))
        card.title = "three"
        try await phone.performAndSave { [card] in try $0.update(card) }
        let errors = await R10.syncs(phoneEngine, 3)
        _ = await R10.syncs(laptopEngine, 1)
        let key = RowKey(entity: "Card", id: card.id.uuid)
        let truth = try await SyncSnapshot.read(serverStore).rows
        let phoneRows = try await SyncSnapshot.read(phone).rows
        let laptopRows = try await SyncSnapshot.read(laptop).rows
        #expect(
            truth[key]?["title"] == .text("three"),
            "the restored phone's newest edit is lost: server \(String(describing: truth[key]?["title"])), phone \(String(describing: phoneRows[key]?["title"])); errors \(errors)"
        )
        #expect(phoneRows == truth && laptopRows == truth, "stores differ after syncing until quiet")
        try phone.close()
    }

    /// As above for a to-many link and a delete. After the backup the phone unlinks card A from a
    /// label and links it again, and deletes card B and undoes the delete (each its own sync).
    /// Restored, the user unlinks A and deletes B: her newest edits, stamped with the first of
    /// each pair's stamps. The link must stay removed and B deleted, not come back.
    @Test func aRestoredPhonesNewestUnlinkAndDeleteAreKept() async throws {
        let serverStore = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "server"))
        let server = try await SyncServer(store: serverStore)
        let laptop = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "app"))
        let laptopEngine = try await SyncEngine(store: laptop, transport: server)
        let a = Card(title: "A", owner: "x")
        let b = Card(title: "B", owner: "x")
        let label = Label(name: "L", owner: "x")
        try await laptop.performAndSave { [a, b, label] context in
            try context.insert(a)
            try context.insert(b)
            try context.insert(label)
            try context.link(a.id, to: label.id) { $0.labels }
        }
        try await laptopEngine.sync()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("phone.sqlite")
        let backup = folder.appendingPathComponent("backup.sqlite")
        func open() async throws -> (Store, SyncEngine) {
            let store = try Store(url: url, schema: SyncPlanner.schema, history: .enabled(author: "app"))
            return (
                store,
                try await SyncEngine(
                    store: store, transport: server, wallClock: { HybridLogicalClock.wallMilliseconds() - 3_600_000 })
            )
        }
        var (phone, phoneEngine) = try await open()
        try await phoneEngine.sync()
        try phone.close()
        try FileManager.default.copyItem(at: url, to: backup)
        (phone, phoneEngine) = try await open()
        try await phone.performAndSave { [a, b, label] context in
            try context.unlink(a.id, from: label.id) { $0.labels }
            try context.delete(b)
        }
        try await phoneEngine.sync()
        try await phone.performAndSave { [a, b, label] context in
            try context.link(a.id, to: label.id) { $0.labels }
            try context.insert(b)
        }
        try await phoneEngine.sync()
        try phone.close()
        removeStore(at: url)
        try FileManager.default.copyItem(at: backup, to: url)
        (phone, phoneEngine) = try await open()
        try await Task.sleep(for: .milliseconds(20))
        try await phone.performAndSave { [a, b, label] context in
            try context.unlink(a.id, from: label.id) { $0.labels }
            try context.delete(b)
        }
        let errors = await R10.syncs(phoneEngine, 3)
        _ = await R10.syncs(laptopEngine, 1)
        let truth = try await SyncSnapshot.read(serverStore)
        let phoneRows = try await SyncSnapshot.read(phone)
        #expect(
            !truth.links.contains([a.id.uuid, label.id.uuid]),
            "the restored phone's newest unlink is lost: A is linked to L again (phone too: \(phoneRows.links.contains([a.id.uuid, label.id.uuid]))); errors \(errors)"
        )
        #expect(
            truth.rows[RowKey(entity: "Card", id: b.id.uuid)] == nil,
            "the restored phone's newest delete is lost: B is back (phone too: \(phoneRows.rows[RowKey(entity: "Card", id: b.id.uuid)] != nil))"
        )
        #expect(phoneRows == truth)
        try phone.close()
    }

    // MARK: - Class 1b: stamps of another device

    /// Alice's shared card, linked to a shared label. Returns the server's record of the card.
    static func aliceCard() async throws -> (Store, SyncServer, Store, SyncEngine, Card, Label, RowChange) {
        let (serverStore, server, (alice, aliceEngine), _) = try await R10.planner()
        let card = Card(title: "alice's words", owner: "all")
        let label = Label(name: "L", owner: "all")
        try await alice.performAndSave { [card, label] context in
            try context.insert(card)
            try context.insert(label)
            try context.link(card.id, to: label.id) { $0.labels }
        }
        try await aliceEngine.sync()
        let key = RowKey(entity: "Card", id: card.id.uuid)
        let record = try #require(
            try await serverStore.performQuery { try SyncBookkeeping.change(of: key, on: $0.connection) })
        return (serverStore, server, alice, aliceEngine, card, label, record)
    }

    /// Bob stamps his title with Alice's device node one counter above her write's stamp: not the
    /// same stamp, so the tie check lets it by, and the server holds Bob's words as a write of
    /// Alice's phone.
    @Test func aPushCannotWriteJustAboveAnotherDevicesStampUnderItsName() async throws {
        // Known issue: a stamp's node is not authenticated (accepted: it gives a user no write they could not make under their own stamp, and a push refused for another device's stamp blocked an honest device re-sending after a server restore); see Sync.md, Ties.
        await withKnownIssue {
            let (serverStore, server, _, _, card, _, record) = try await Self.aliceCard()
            let key = RowKey(entity: "Card", id: card.id.uuid)
            let theirs = try #require(record.attributes["title"]?.stamp)
            let forged = HybridTimestamp(
                milliseconds: theirs.milliseconds, counter: theirs.counter + 1, node: theirs.node)
            let bob = AccessControlTests.Hand("bob", version: server.schemaVersion)
            let answer = try await bob.push(
                [.update(key, values: ["title": .text("bob's words")], at: forged)],
                to: server.transport(credentials: "bob"))
            let after = try await serverStore.performQuery { try SyncBookkeeping.change(of: key, on: $0.connection) }
            let title = after?.attributes["title"]
            #expect(
                answer.refusal != nil || title?.stamp.node != theirs.node || title?.value == .text("alice's words"),
                "bob's words are held as a write of alice's device (\(String(describing: title)))")
        }
    }

    /// Bob unlinks Alice's card from the label under the very stamp of Alice's link: an add and a
    /// remove under one stamp is absent, so her link is erased under her own device's name.
    @Test func aPushCannotUnlinkUnderTheStampOfAnotherDevicesLink() async throws {
        // Known issue: a stamp's node is not authenticated (accepted: it gives a user no write they could not make under their own stamp, and a push refused for another device's stamp blocked an honest device re-sending after a server restore); see Sync.md, Ties.
        await withKnownIssue {
            let (serverStore, server, alice, aliceEngine, card, label, record) = try await Self.aliceCard()
            let key = RowKey(entity: "Card", id: card.id.uuid)
            let link = LinkKey(relationship: "labels", target: label.id.uuid)
            let added = try #require(record.links[link]?.added)
            let bob = AccessControlTests.Hand("bob", version: server.schemaVersion)
            let answer = try await bob.push(
                [.unlink(key, "labels", from: label.id.uuid, at: added)], to: server.transport(credentials: "bob"))
            _ = await R10.syncs(aliceEngine, 1)
            let truth = try await SyncSnapshot.read(serverStore)
            let mine = try await SyncSnapshot.read(alice)
            #expect(
                answer.refusal != nil || truth.links.contains([card.id.uuid, label.id.uuid]),
                "alice's link was erased under her own stamp \(added)")
            #expect(mine == truth)
        }
    }

    /// Bob deletes Alice's shared card under the stamp of her insert: a delete and an insert under
    /// one stamp is dead, so her insert is erased under her own device's name.
    @Test func aPushCannotDeleteUnderTheStampOfAnotherDevicesInsert() async throws {
        // Known issue: a stamp's node is not authenticated (accepted: it gives a user no write they could not make under their own stamp, and a push refused for another device's stamp blocked an honest device re-sending after a server restore); see Sync.md, Ties.
        await withKnownIssue {
            let (serverStore, server, _, _, card, _, record) = try await Self.aliceCard()
            let key = RowKey(entity: "Card", id: card.id.uuid)
            let inserted = try #require(record.inserted)
            let bob = AccessControlTests.Hand("bob", version: server.schemaVersion)
            let answer = try await bob.push([.delete(key, at: inserted)], to: server.transport(credentials: "bob"))
            let truth = try await SyncSnapshot.read(serverStore)
            #expect(
                answer.refusal != nil || truth.rows[key] != nil,
                "alice's card was deleted under her own insert stamp \(inserted)")
        }
    }

    /// Alice's phone gives a stamp twice (restored from a backup, the doc's first tie case): "aaa"
    /// then "zzz" under one stamp, and the server keeps "zzz"; Carol's laptop pulls it and makes a
    /// card of her own. The server is then restored from a copy taken while it held "aaa", and the
    /// laptop sends everything again (epochChanged): its record of Alice's card carries "zzz" under
    /// Alice's stamp, which would win the tie. An honest device must not be refused for ever, and
    /// Carol's card must reach the server.
    @Test func aDeviceResendingAfterAServerRestoreIsNotRefusedForAnotherDevicesStamp() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("server.sqlite")
        let copy = folder.appendingPathComponent("copy.sqlite")
        func openServer() async throws -> (Store, SyncServer) {
            let store = try Store(url: url, schema: SyncPlanner.schema, history: .enabled(author: "server"))
            return (store, try await SyncServer(store: store))
        }
        var (serverStore, server) = try await openServer()
        let transport = Switch(server)
        let phone = AccessControlTests.Hand("alice", version: server.schemaVersion)
        let key = RowKey(entity: "Card", id: UUID())
        let stamp = try phone.stamp()
        var answer = try await phone.push(
            [
                .insert(
                    key,
                    values: ["title": .text("aaa"), "rating": .integer(0), "done": .bool(false), "owner": .text("x")],
                    at: stamp)
            ], to: transport)
        #expect(answer.refusal == nil)
        try serverStore.close()
        try FileManager.default.copyItem(at: url, to: copy)
        (serverStore, server) = try await openServer()
        transport.inner = server
        answer = try await phone.push([.update(key, values: ["title": .text("zzz")], at: stamp)], to: transport)
        #expect(answer.refusal == nil)
        let laptop = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "app"))
        let laptopEngine = try await SyncEngine(store: laptop, transport: transport)
        try await laptopEngine.sync()
        let carols = Card(title: "carol's", owner: "x")
        try await laptop.performAndSave { [carols] in try $0.insert(carols) }
        try await laptopEngine.sync()
        try serverStore.close()
        removeStore(at: url)
        try FileManager.default.copyItem(at: copy, to: url)
        (serverStore, server) = try await openServer()
        transport.inner = server
        let errors = await R10.syncs(laptopEngine, 3)
        let truth = try await SyncSnapshot.read(serverStore).rows
        #expect(errors.count < 3, "the laptop is refused at every sync: \(errors.suffix(1))")
        #expect(
            truth[RowKey(entity: "Card", id: carols.id.uuid)] != nil,
            "carol's card never reaches the restored server")
        try serverStore.close()
    }

    // MARK: - Class 2: hidden links and the device's own unpushed writes

    /// Bob's wall clock runs a minute behind. Alice re-pins shared page P to her private folder H;
    /// while Bob's sync is between its push and its pull, Bob re-pins P to shared folder G, stamped
    /// by his counter on the last stamp he pulled: before Alice's. The pull keeps Bob's pin (his
    /// own, unpushed); his push then loses to Alice's, changes nothing on the server and takes no
    /// cursor. Bob's device must not go on showing G while the server holds H (hidden from him).
    @Test func aRepinKeptDuringASyncThatLosesIsHiddenAgain() async throws {
        let w = try await Self.takeWorld(bobWallClock: { HybridLogicalClock.wallMilliseconds() - 60_000 })
        let e = R10.key("Folder")
        let g = R10.key("Folder")
        let h = R10.key("Folder")
        let box = R10.key("Box")
        let page = R10.key("Page")
        try await R10.write(
            w.alice,
            .insert(e, values: ["name": .text("E"), "owner": .text("all")], at: try R10.stamp()),
            .insert(g, values: ["name": .text("G"), "owner": .text("all")], at: try R10.stamp()),
            .insert(h, values: ["name": .text("H"), "owner": .text("a")], at: try R10.stamp()),
            .insert(box, values: ["label": .text("X"), "owner": .text("all")], at: try R10.stamp()),
            .insert(
                page,
                values: [
                    "name": .text("P"), "owner": .text("all"), "folder": .uuid(e.id), "item": .uuid(box.id),
                    "pin": .uuid(e.id),
                ], at: try R10.stamp()))
        try await w.aliceEngine.sync()
        try await w.bobEngine.sync()
        try await Task.sleep(for: .milliseconds(5))
        try await R10.write(w.alice, .insert(page, values: ["pin": .uuid(h.id)], at: try R10.stamp()))
        try await w.aliceEngine.sync()
        let bob = w.bob
        w.hook.hook = { try await R10.write(bob, .insert(page, values: ["pin": .uuid(g.id)], at: try R10.stamp())) }
        var errors = await R10.syncs(w.bobEngine, 1)
        #expect(w.hook.hook == nil, "bob's re-pin was not saved during the sync")
        errors += await R10.syncs(w.bobEngine, 3)
        let truth = try await SyncSnapshot.read(w.serverStore).rows
        let bobRows = try await SyncSnapshot.read(w.bob).rows
        #expect(errors.isEmpty, "\(errors)")
        #expect(truth[page]?["pin"] == .uuid(h.id), "server pin: \(String(describing: truth[page]?["pin"]))")
        #expect(
            bobRows[page]?["pin"] == R10.view(of: "b", truth)[page]?["pin"],
            "bob's device shows pin \(bobRows[page]?["pin"] == .uuid(g.id) ? "G" : String(describing: bobRows[page]?["pin"])) for ever; the server holds alice's H (hidden from him)"
        )
        #expect(bobRows == R10.view(of: "b", truth), "bob's device differs from his view of the server")
    }

    /// Alice deletes shared folder F. While Bob's sync is between its push and its pull, Bob
    /// (not yet knowing) re-pins shared page P to F, and a moment later Alice re-pins P to her
    /// private folder H and syncs. Bob's pull keeps his own unpushed pin to F over the hidden value,
    /// then finds it dangling on F's tombstone and clears it stamped *now* (his pin was written
    /// after the delete): that clearing, no one's edit, beats Alice's later re-pin and wipes it.
    @Test func aKeptRepinToADeletedFolderDoesNotWipeALaterPin() async throws {
        let w = try await Self.takeWorld()
        let e = R10.key("Folder")
        let f = R10.key("Folder")
        let h = R10.key("Folder")
        let box = R10.key("Box")
        let page = R10.key("Page")
        try await R10.write(
            w.alice,
            .insert(e, values: ["name": .text("E"), "owner": .text("all")], at: try R10.stamp()),
            .insert(f, values: ["name": .text("F"), "owner": .text("all")], at: try R10.stamp()),
            .insert(h, values: ["name": .text("H"), "owner": .text("a")], at: try R10.stamp()),
            .insert(box, values: ["label": .text("X"), "owner": .text("all")], at: try R10.stamp()),
            .insert(
                page,
                values: [
                    "name": .text("P"), "owner": .text("all"), "folder": .uuid(e.id), "item": .uuid(box.id),
                    "pin": .uuid(e.id),
                ], at: try R10.stamp()))
        try await w.aliceEngine.sync()
        try await w.bobEngine.sync()
        try await R10.write(w.alice, .delete(f, at: try R10.stamp()))
        try await w.aliceEngine.sync()
        let (alice, aliceEngine, bob) = (w.alice, w.aliceEngine, w.bob)
        w.hook.hook = {
            try await Task.sleep(for: .milliseconds(3))
            try await R10.write(bob, .insert(page, values: ["pin": .uuid(f.id)], at: try R10.stamp()))
            try await Task.sleep(for: .milliseconds(3))
            try await R10.write(alice, .insert(page, values: ["pin": .uuid(h.id)], at: try R10.stamp()))
            try await aliceEngine.sync()
        }
        let errors = await R10.syncs(w.bobEngine, 4)
        _ = await R10.syncs(w.aliceEngine, 1)
        let truth = try await SyncSnapshot.read(w.serverStore).rows
        let aliceRows = try await SyncSnapshot.read(w.alice).rows
        let bobRows = try await SyncSnapshot.read(w.bob).rows
        #expect(
            truth[page]?["pin"] == .uuid(h.id),
            "alice's later re-pin to H is wiped: server pin \(String(describing: truth[page]?["pin"])), errors \(errors)"
        )
        #expect(aliceRows[page]?["pin"] == truth[page]?["pin"])
        #expect(bobRows == R10.view(of: "b", truth), "bob's device differs from his view of the server")
    }

    /// A transport that, once armed, fails the `n`th pull after (the engine killed between pages).
    final class KillAtPull: SyncTransport, @unchecked Sendable {
        let inner: any SyncTransport
        private let lock = NSLock()
        private var left: Int?
        struct Killed: Error {}
        init(_ inner: any SyncTransport) { self.inner = inner }
        func arm(_ n: Int) { lock.withLock { left = n } }
        func push(_ request: PushRequest) async throws -> PushResponse { try await inner.push(request) }
        func pull(_ request: PullRequest) async throws -> PullResponse {
            let kill = lock.withLock { () -> Bool in
                guard let count = left else { return false }
                left = count - 1
                if count - 1 == 0 { left = nil }
                return count == 1
            }
            if kill { throw Killed() }
            return try await inner.pull(request)
        }
    }

    /// Alice re-pins shared page P to her private folder H and renames a few shared folders. Bob,
    /// pulling one row a page, re-pins P to shared folder G as his sync starts pulling (later than
    /// Alice); the engine is killed after the first page and a new one opens the store. Bob's
    /// re-pin must reach the server and win, and his device end as his view of the server.
    @Test func aRepinSavedDuringAPagedPullSurvivesAKill() async throws {
        let schema = try #require(PushEffectScopeTests.takeSchema)
        let serverStore = try Store.inMemory(schema: schema, history: .enabled(author: "server"))
        let server = try await SyncServer(store: serverStore, authenticate: { $0 }, scopes: PushEffectScopeTests.scopes)
        let alice = try Store.inMemory(schema: schema, history: .enabled(author: "app"))
        let aliceEngine = try await SyncEngine(store: alice, transport: server.transport(credentials: "a"))
        let bob = try Store.inMemory(schema: schema, history: .enabled(author: "app"))
        let kill = KillAtPull(server.transport(credentials: "b"))
        let hook = R10.PullHook(kill)
        let first = try await SyncEngine(store: bob, transport: hook, pullLimit: 1)
        let e = R10.key("Folder")
        let g = R10.key("Folder")
        let h = R10.key("Folder")
        let box = R10.key("Box")
        let page = R10.key("Page")
        let extra = (0..<3).map { _ in R10.key("Folder") }
        try await R10.write(
            alice,
            .insert(e, values: ["name": .text("E"), "owner": .text("all")], at: try R10.stamp()),
            .insert(g, values: ["name": .text("G"), "owner": .text("all")], at: try R10.stamp()),
            .insert(h, values: ["name": .text("H"), "owner": .text("a")], at: try R10.stamp()),
            .insert(box, values: ["label": .text("X"), "owner": .text("all")], at: try R10.stamp()),
            .insert(
                page,
                values: [
                    "name": .text("P"), "owner": .text("all"), "folder": .uuid(e.id), "item": .uuid(box.id),
                    "pin": .uuid(e.id),
                ], at: try R10.stamp()))
        for (index, key) in extra.enumerated() {
            try await R10.write(
                alice, .insert(key, values: ["name": .text("x\(index)"), "owner": .text("all")], at: try R10.stamp()))
        }
        try await aliceEngine.sync()
        #expect(await R10.syncs(first, 1).isEmpty)
        try await R10.write(alice, .insert(page, values: ["pin": .uuid(h.id)], at: try R10.stamp()))
        for key in extra {
            try await R10.write(alice, .insert(key, values: ["name": .text("renamed")], at: try R10.stamp()))
        }
        try await aliceEngine.sync()
        try await Task.sleep(for: .milliseconds(5))
        hook.hook = { try await R10.write(bob, .insert(page, values: ["pin": .uuid(g.id)], at: try R10.stamp())) }
        kill.arm(2)
        let killed = await R10.syncs(first, 1)
        #expect(hook.hook == nil)
        #expect(killed.count == 1 && killed.first?.contains("Killed") == true, "\(killed)")
        let second = try await SyncEngine(store: bob, transport: server.transport(credentials: "b"), pullLimit: 1)
        let errors = await R10.syncs(second, 3)
        let truth = try await SyncSnapshot.read(serverStore).rows
        let bobRows = try await SyncSnapshot.read(bob).rows
        #expect(errors.isEmpty, "\(errors) (killed: \(killed))")
        #expect(
            truth[page]?["pin"] == .uuid(g.id),
            "bob's later re-pin is lost: server pin \(truth[page]?["pin"] == .uuid(h.id) ? "alice's H" : String(describing: truth[page]?["pin"])) (killed: \(killed))"
        )
        #expect(bobRows == R10.view(of: "b", truth), "bob's device differs from his view of the server")
    }

    // MARK: - Class 1a and 2: a restored device whose older write is now hidden from it

    /// Bob's phone (wall clock an hour behind) pins shared page P to shared folder G after a
    /// backup and syncs; Alice then takes G (the pin is hidden from Bob). Bob's phone is restored
    /// from the backup and Bob pins P to shared folder E2: the same stamp as his pin to G, whose
    /// value (hidden from him, and larger) wins the tie. The device cannot see the server's value
    /// under its own stamp, so it never stamps its newest edit again, and hides it.
    @Test func aRestoredPhoneKeepsItsNewestPinOverItsOwnOlderPinNowHidden() async throws {
        // Known issue: a restored device learns it lost stamps only from its own stamps a pull shows it; one under a link hidden from the user is not shown, so its new write under that stamp loses the tie.
        await withKnownIssue {
            let schema = try #require(PushEffectScopeTests.takeSchema)
            let serverStore = try Store.inMemory(schema: schema, history: .enabled(author: "server"))
            let server = try await SyncServer(
                store: serverStore, authenticate: { $0 }, scopes: PushEffectScopeTests.scopes)
            let alice = try Store.inMemory(schema: schema, history: .enabled(author: "app"))
            let aliceEngine = try await SyncEngine(store: alice, transport: server.transport(credentials: "a"))
            let folder = try Self.folder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let url = folder.appendingPathComponent("bob.sqlite")
            let backup = folder.appendingPathComponent("backup.sqlite")
            func open() async throws -> (Store, SyncEngine) {
                let store = try Store(url: url, schema: schema, history: .enabled(author: "app"))
                return (
                    store,
                    try await SyncEngine(
                        store: store, transport: server.transport(credentials: "b"),
                        wallClock: { HybridLogicalClock.wallMilliseconds() - 3_600_000 })
                )
            }
            func id(_ first: String) -> UUID {
                UUID(uuidString: first + String(UUID().uuidString.dropFirst(first.count)))!
            }
            let e = R10.key("Folder")
            let e2 = RowKey(entity: "Folder", id: id("00000000"))
            let g = RowKey(entity: "Folder", id: id("FFFFFFFF"))
            let box = R10.key("Box")
            let page = R10.key("Page")
            try await R10.write(
                alice,
                .insert(e, values: ["name": .text("E"), "owner": .text("all")], at: try R10.stamp()),
                .insert(e2, values: ["name": .text("E2"), "owner": .text("all")], at: try R10.stamp()),
                .insert(g, values: ["name": .text("G"), "owner": .text("all")], at: try R10.stamp()),
                .insert(box, values: ["label": .text("X"), "owner": .text("all")], at: try R10.stamp()),
                .insert(
                    page,
                    values: [
                        "name": .text("P"), "owner": .text("all"), "folder": .uuid(e.id), "item": .uuid(box.id),
                        "pin": .uuid(e.id),
                    ], at: try R10.stamp()))
            try await aliceEngine.sync()
            var (bob, bobEngine) = try await open()
            try await bobEngine.sync()
            try bob.close()
            try FileManager.default.copyItem(at: url, to: backup)
            (bob, bobEngine) = try await open()
            try await R10.write(bob, .insert(page, values: ["pin": .uuid(g.id)], at: try R10.stamp()))
            try await bobEngine.sync()
            try await R10.write(alice, .insert(g, values: ["owner": .text("a")], at: try R10.stamp()))
            try await aliceEngine.sync()
            try bob.close()
            removeStore(at: url)
            try FileManager.default.copyItem(at: backup, to: url)
            (bob, bobEngine) = try await open()
            try await Task.sleep(for: .milliseconds(20))
            try await R10.write(bob, .insert(page, values: ["pin": .uuid(e2.id)], at: try R10.stamp()))
            let errors = await R10.syncs(bobEngine, 3)
            _ = await R10.syncs(aliceEngine, 1)
            let truth = try await SyncSnapshot.read(serverStore).rows
            let bobRows = try await SyncSnapshot.read(bob).rows
            #expect(
                truth[page]?["pin"] == .uuid(e2.id),
                "bob's newest pin (E2) is lost to his older one (G, hidden from him): server pin \(truth[page]?["pin"] == .uuid(g.id) ? "G" : String(describing: truth[page]?["pin"])), bob's device \(String(describing: bobRows[page]?["pin"])); errors \(errors)"
            )
            #expect(bobRows == R10.view(of: "b", truth), "bob's device differs from his view of the server")
            try bob.close()
        }
    }

    /// Bob's phone pins shared page P to shared folder G after a backup and syncs. Restored from
    /// the backup, it pulls its own pin back (its record of the last acknowledged push is the
    /// backup's, which predates the pin). Alice then re-pins P to her private folder H. Bob's pull
    /// must hide the link: the pin to G is no unpushed write of his (the server has it, and
    /// Alice's later one beat it), yet it looks like one, and it is neither hidden nor pushed.
    @Test func aRestoredPhoneDoesNotKeepItsOwnPushedPinOverALaterHiddenOne() async throws {
        let schema = try #require(PushEffectScopeTests.takeSchema)
        let serverStore = try Store.inMemory(schema: schema, history: .enabled(author: "server"))
        let server = try await SyncServer(store: serverStore, authenticate: { $0 }, scopes: PushEffectScopeTests.scopes)
        let alice = try Store.inMemory(schema: schema, history: .enabled(author: "app"))
        let aliceEngine = try await SyncEngine(store: alice, transport: server.transport(credentials: "a"))
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("bob.sqlite")
        let backup = folder.appendingPathComponent("backup.sqlite")
        func open() async throws -> (Store, SyncEngine) {
            let store = try Store(url: url, schema: schema, history: .enabled(author: "app"))
            return (store, try await SyncEngine(store: store, transport: server.transport(credentials: "b")))
        }
        let e = R10.key("Folder")
        let g = R10.key("Folder")
        let h = R10.key("Folder")
        let box = R10.key("Box")
        let page = R10.key("Page")
        let other = R10.key("Folder")
        try await R10.write(
            alice,
            .insert(e, values: ["name": .text("E"), "owner": .text("all")], at: try R10.stamp()),
            .insert(g, values: ["name": .text("G"), "owner": .text("all")], at: try R10.stamp()),
            .insert(h, values: ["name": .text("H"), "owner": .text("a")], at: try R10.stamp()),
            .insert(box, values: ["label": .text("X"), "owner": .text("all")], at: try R10.stamp()),
            .insert(
                page,
                values: [
                    "name": .text("P"), "owner": .text("all"), "folder": .uuid(e.id), "item": .uuid(box.id),
                    "pin": .uuid(e.id),
                ], at: try R10.stamp()))
        try await aliceEngine.sync()
        var (bob, bobEngine) = try await open()
        try await bobEngine.sync()
        try bob.close()
        try FileManager.default.copyItem(at: url, to: backup)
        (bob, bobEngine) = try await open()
        try await R10.write(bob, .insert(page, values: ["pin": .uuid(g.id)], at: try R10.stamp()))
        try await bobEngine.sync()
        try bob.close()
        removeStore(at: url)
        try FileManager.default.copyItem(at: backup, to: url)
        (bob, bobEngine) = try await open()
        var errors = await R10.syncs(bobEngine, 1)
        let pulledBack = try await SyncSnapshot.read(bob).rows[page]?["pin"]
        #expect(
            pulledBack == .uuid(g.id), "the restored phone did not pull its pin back: \(String(describing: pulledBack))"
        )
        try await Task.sleep(for: .milliseconds(5))
        try await R10.write(alice, .insert(page, values: ["pin": .uuid(h.id)], at: try R10.stamp()))
        try await aliceEngine.sync()
        errors += await R10.syncs(bobEngine, 2)
        // And Bob goes on working: a folder of his own, synced.
        try await R10.write(
            bob, .insert(other, values: ["name": .text("mine"), "owner": .text("b")], at: try R10.stamp()))
        errors += await R10.syncs(bobEngine, 2)
        let truth = try await SyncSnapshot.read(serverStore).rows
        let bobRows = try await SyncSnapshot.read(bob).rows
        #expect(errors.isEmpty, "\(errors)")
        #expect(truth[page]?["pin"] == .uuid(h.id), "server pin: \(String(describing: truth[page]?["pin"]))")
        #expect(
            bobRows[page]?["pin"] == R10.view(of: "b", truth)[page]?["pin"],
            "bob's device shows P pinned to \(bobRows[page]?["pin"] == .uuid(g.id) ? "G" : String(describing: bobRows[page]?["pin"])) for ever; the server holds alice's H (hidden from him)"
        )
        #expect(bobRows == R10.view(of: "b", truth), "bob's device differs from his view of the server")
        try bob.close()
    }

    /// Bob writes shared page P's pin (to shared folder G) under a stamp of Alice's device node a
    /// minute ahead (within the drift bound; a node ID is no secret), and Alice pulls it; then he
    /// pins P to his private folder B under his own, later stamp. Alice's pull hides the link, but
    /// her device takes the forged stamp for a write of its own not pushed yet and keeps G: shown
    /// for ever (never pushed, never pulled again), though the server holds B.
    @Test func aForgedStampUnderMyNodeDoesNotKeepAStaleLinkOnMyDevice() async throws {
        let schema = try #require(PushEffectScopeTests.takeSchema)
        let serverStore = try Store.inMemory(schema: schema, history: .enabled(author: "server"))
        let server = try await SyncServer(store: serverStore, authenticate: { $0 }, scopes: PushEffectScopeTests.scopes)
        let alice = try Store.inMemory(schema: schema, history: .enabled(author: "app"))
        let aliceEngine = try await SyncEngine(store: alice, transport: server.transport(credentials: "a"))
        let bob = AccessControlTests.Hand("b", version: server.schemaVersion)
        let bobs = server.transport(credentials: "b")
        let e = R10.key("Folder")
        let g = R10.key("Folder")
        let mine = R10.key("Folder")
        let box = R10.key("Box")
        let page = R10.key("Page")
        let other = R10.key("Folder")
        try await R10.write(
            alice,
            .insert(e, values: ["name": .text("E"), "owner": .text("all")], at: try R10.stamp()),
            .insert(g, values: ["name": .text("G"), "owner": .text("all")], at: try R10.stamp()),
            .insert(box, values: ["label": .text("X"), "owner": .text("all")], at: try R10.stamp()),
            .insert(
                page,
                values: [
                    "name": .text("P"), "owner": .text("all"), "folder": .uuid(e.id), "item": .uuid(box.id),
                    "pin": .uuid(e.id),
                ], at: try R10.stamp()))
        try await aliceEngine.sync()
        let aliceNode = try await alice.performQuery { try SyncBookkeeping.node(on: $0.connection) }
        var answer = try await bob.push(
            [.insert(mine, values: ["name": .text("B"), "owner": .text("b")], at: try bob.stamp())], to: bobs)
        #expect(answer.refusal == nil)
        let ahead = HybridLogicalClock.wallMilliseconds() + 60_000
        answer = try await bob.push(
            [
                .update(
                    page, values: ["pin": .uuid(g.id)],
                    at: HybridTimestamp(milliseconds: ahead, counter: 0, node: aliceNode))
            ],
            to: bobs)
        #expect(answer.refusal == nil, "\(String(describing: answer.refusal))")
        var errors = await R10.syncs(aliceEngine, 1)
        answer = try await bob.push(
            [
                .update(
                    page, values: ["pin": .uuid(mine.id)],
                    at: HybridTimestamp(milliseconds: ahead + 1, counter: 0, node: bob.node))
            ],
            to: bobs)
        #expect(answer.refusal == nil, "\(String(describing: answer.refusal))")
        errors += await R10.syncs(aliceEngine, 2)
        try await R10.write(
            alice, .insert(other, values: ["name": .text("hers"), "owner": .text("a")], at: try R10.stamp()))
        errors += await R10.syncs(aliceEngine, 2)
        let truth = try await SyncSnapshot.read(serverStore).rows
        let aliceRows = try await SyncSnapshot.read(alice).rows
        #expect(errors.isEmpty, "\(errors)")
        #expect(truth[page]?["pin"] == .uuid(mine.id))
        #expect(
            aliceRows[page]?["pin"] == R10.view(of: "a", truth)[page]?["pin"],
            "alice's device shows P pinned to \(aliceRows[page]?["pin"] == .uuid(g.id) ? "G" : String(describing: aliceRows[page]?["pin"])) for ever; the server holds bob's private B (hidden from her)"
        )
    }

    // MARK: - Class 3: refused changes

    /// Alice, offline, takes shared folder F (refused: Bob holds a page in it) and in the same save
    /// renames her own folder K and makes a page in K. The take is given up; the rename and the new
    /// page are hers to keep and must reach the server.
    @Test func aRefusedTakeKeepsTheOtherWritesOfItsSave() async throws {
        let w = try await Self.takeWorld()
        let f = R10.key("Folder")
        let k = R10.key("Folder")
        let box = R10.key("Box")
        let bobs = R10.key("Page")
        let mine = R10.key("Page")
        try await R10.write(
            w.alice,
            .insert(f, values: ["name": .text("F"), "owner": .text("all")], at: try R10.stamp()),
            .insert(k, values: ["name": .text("K"), "owner": .text("a")], at: try R10.stamp()),
            .insert(box, values: ["label": .text("X"), "owner": .text("all")], at: try R10.stamp()))
        try await w.aliceEngine.sync()
        try await w.bobEngine.sync()
        try await R10.write(
            w.bob,
            .insert(
                bobs, values: ["name": .text("b"), "owner": .text("b"), "folder": .uuid(f.id), "item": .uuid(box.id)],
                at: try R10.stamp()))
        try await w.bobEngine.sync()
        try await R10.write(
            w.alice,
            .insert(f, values: ["owner": .text("a")], at: try R10.stamp()),
            .insert(k, values: ["name": .text("K renamed")], at: try R10.stamp()),
            .insert(
                mine,
                values: ["name": .text("mine"), "owner": .text("a"), "folder": .uuid(k.id), "item": .uuid(box.id)],
                at: try R10.stamp()))
        var refused: [RowKey] = []
        var errors: [String] = []
        for _ in 0..<3 {
            do { refused += try await w.aliceEngine.sync().refused } catch { errors.append("\(error)") }
        }
        let truth = try await SyncSnapshot.read(w.serverStore).rows
        let aliceRows = try await SyncSnapshot.read(w.alice).rows
        #expect(refused == [f], "refused \(refused), errors \(errors)")
        #expect(truth[k]?["name"] == .text("K renamed"), "alice's rename is lost")
        #expect(truth[mine] != nil, "alice's new page is lost")
        #expect(aliceRows == R10.view(of: "a", truth), "alice's device differs from her view of the server")
    }
}
