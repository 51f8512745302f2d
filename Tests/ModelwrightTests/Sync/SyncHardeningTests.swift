import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright

/// A hierarchy whose two subentities share one table, for pushes that name the wrong sibling.
enum SyncHierarchy {
    static let schema = SchemaDescription(
        modelName: "SyncHierarchy", version: 1,
        entities: [
            EntityDescription(
                name: "Base", isAbstract: true,
                attributes: [
                    AttributeDescription(name: "title", type: .string),
                    AttributeDescription(name: "owner", type: .string),
                ]),
            EntityDescription(name: "SubX", parent: "Base"),
            EntityDescription(name: "SubY", parent: "Base"),
        ])

    static var version: SyncSchemaVersion {
        SyncSchemaVersion(model: schema.modelName, version: schema.version, checksum: schema.checksum.hexDigits)
    }
}

/// Hostile messages found by a red team against the server: each test draws many cases of one
/// class of attack and checks the server refuses it, typed, and is left as it was.
struct SyncHardeningTests {
    static let caseCount = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 200 : 16

    static func stamp() throws -> HybridTimestamp {
        var clock = HybridLogicalClock(node: SyncNodeID(), maximumDriftMilliseconds: HybridLogicalClock.unbounded)
        return try clock.tick(wallMilliseconds: HybridLogicalClock.wallMilliseconds())
    }

    static func push(
        _ server: SyncServer, _ version: SyncSchemaVersion, _ changes: [RowChange], _ credentials: String?
    ) async throws -> PushResponse {
        try await server.push(
            PushRequest(
                device: SyncNodeID(), schema: version, after: nil, through: HistoryToken(1),
                changes: ChangeSet(changes)), credentials: credentials)
    }

    /// Every column of every row of `tables`, as SQL text, to compare a store before and after.
    static func dump(_ store: Store) async throws -> [String] {
        try await store.performQuery { context in
            var out: [String] = []
            let tables = try context.connection.statement(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_mw\\_history%' ESCAPE '\\' ORDER BY name"
            )
            var names: [String] = []
            while try tables.step() { names.append(tables.string(0)) }
            tables.reset()
            for table in names {
                let info = try context.connection.statement("SELECT name FROM pragma_table_info('\(table)')")
                var columns: [String] = []
                while try info.step() { columns.append(info.string(0)) }
                info.reset()
                let row = columns.map { "quote(\(quoted($0)))" }.joined(separator: " || ' ' || ")
                let rows = try context.connection.statement("SELECT \(row) FROM \(quoted(table))")
                while try rows.step() { out.append(table + " " + rows.string(0)) }
                rows.reset()
            }
            return out.sorted()
        }
    }

    /// Drawn: user A's pushes that reach one of B's rows by a side door — a row the server holds
    /// without a sync record (written before the server started or by the app's server code),
    /// or a to-many link whose target is B's row — are refused whole, typed, and leave every
    /// table of the server as it was.
    @Test func sideDoorsIntoAnotherUsersRowsAreClosed() async throws {
        var refused = 0
        for seed in 0..<Self.caseCount {
            var random = SplitMix64(seed: 2_811, index: seed)
            let serverStore = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "server"))
            let seededBefore = Card(title: "B's seeded", owner: "b")
            let seededLabel = Label(name: "B's seeded label", owner: "b")
            try await serverStore.performAndSave { context in
                try context.insert(seededBefore)
                try context.insert(seededLabel)
            }
            let server = try await SyncServerTests.makeServer(serverStore)
            let seededAfter = Card(title: "B's later", owner: "b")
            try await serverStore.performAndSave { try $0.insert(seededAfter) }
            let a = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "app"))
            let b = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "app"))
            let mine = Card(title: "A's", owner: "a")
            let theirs = Label(name: "B's synced label", owner: "b")
            try await a.performAndSave { try $0.insert(mine) }
            try await b.performAndSave { try $0.insert(theirs) }
            try await SyncEngine(store: a, transport: server.transport(credentials: "token-a")).sync()
            try await SyncEngine(store: b, transport: server.transport(credentials: "token-b")).sync()
            let before = try await Self.dump(serverStore)
            let stamp = try Self.stamp()
            let bCard = RowKey(entity: "Card", id: random.chance(0.5) ? seededBefore.id.uuid : seededAfter.id.uuid)
            let bLabel = random.chance(0.5) ? seededLabel.id.uuid : theirs.id.uuid
            let own = RowKey(entity: "Card", id: mine.id.uuid)
            var changes: [RowChange] = []
            switch random.next(below: 6) {
            case 0: changes.append(RowChange.update(bCard, values: ["owner": .text("a")], at: stamp))
            case 1: changes.append(RowChange.update(bCard, values: ["title": .text("taken")], at: stamp))
            case 2:
                changes.append(
                    RowChange.insert(
                        bCard,
                        values: [
                            "title": .text("taken"), "rating": .integer(0), "done": .bool(false), "owner": .text("a"),
                        ],
                        at: stamp))
            case 3: changes.append(RowChange.delete(bCard, at: stamp))
            case 4: changes.append(RowChange.link(own, "labels", to: bLabel, at: stamp))
            default: changes.append(RowChange.unlink(own, "labels", from: bLabel, at: stamp))
            }
            if random.chance(0.5) { changes.append(RowChange.update(own, values: ["title": .text("mine")], at: stamp)) }
            let response = try await Self.push(server, SyncPlanner.version, changes, "token-a")
            guard case .outOfScope = response.refusal else {
                Issue.record("seed \(seed): \(changes) was answered \(response)")
                continue
            }
            refused += 1
            #expect(try await Self.dump(serverStore) == before, "seed \(seed): a refused push changed the server")
        }
        #expect(refused == Self.caseCount)
    }

    /// Drawn: a push naming a row by a sibling subentity of its hierarchy (`SubX/id` for a
    /// `SubY` row sharing the table) is refused whatever the user and the change, and the row
    /// stays as it was; the same change under the row's own entity is in scope for its owner.
    @Test func aSiblingSubentityNeverReachesARow() async throws {
        var refused = 0
        for seed in 0..<Self.caseCount {
            var random = SplitMix64(seed: 2_812, index: seed)
            let serverStore = try Store.inMemory(
                schema: SyncHierarchy.schema, history: .enabled(author: "server"))
            let mine: SyncServer.Scope = { user, row in row.values["owner"] == .text(user) }
            let server = try await SyncServer(
                store: serverStore,
                authenticate: { credentials in credentials.flatMap { SyncServerTests.tokens[$0] } },
                scopes: ["SubX": mine, "SubY": mine])
            let (real, wrong) = random.chance(0.5) ? ("SubY", "SubX") : ("SubX", "SubY")
            let id = UUID()
            let inserted = try await Self.push(
                server, SyncHierarchy.version,
                [
                    RowChange.insert(
                        RowKey(entity: real, id: id), values: ["title": .text("B's"), "owner": .text("b")],
                        at: try Self.stamp())
                ],
                "token-b")
            #expect(inserted.refusal == nil)
            let before = try await Self.dump(serverStore)
            let user = random.chance(0.5) ? "a" : "b"
            let key = RowKey(entity: wrong, id: id)
            let stamp = try Self.stamp()
            let change: RowChange =
                switch random.next(below: 3) {
                case 0: RowChange.update(key, values: ["title": .text("pwned"), "owner": .text(user)], at: stamp)
                case 1: RowChange.insert(key, values: ["title": .text("pwned"), "owner": .text(user)], at: stamp)
                default: RowChange.delete(key, at: stamp)
                }
            let response = try await Self.push(server, SyncHierarchy.version, [change], "token-\(user)")
            #expect(response.refusal != nil, "seed \(seed): \(change) by \(user) was applied")
            if response.refusal != nil { refused += 1 }
            #expect(try await Self.dump(serverStore) == before, "seed \(seed): the \(real) row changed")
        }
        #expect(refused == Self.caseCount)
    }

    /// Drawn: a pull that names another user's device, or a cursor beyond the server's newest,
    /// is refused typed and marks nothing as seen, so the tombstone purge still waits for the
    /// real device, which converges on the delete.
    @Test func forgedDevicesAndCursorsAreRefused() async throws {
        for seed in 0..<Self.caseCount {
            var random = SplitMix64(seed: 2_813, index: seed)
            let serverStore = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "server"))
            let server = try await SyncServerTests.makeServer(serverStore)
            let b1 = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "app"))
            let b2 = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "app"))
            let e1 = try await SyncEngine(store: b1, transport: server.transport(credentials: "token-b"))
            let e2 = try await SyncEngine(store: b2, transport: server.transport(credentials: "token-b"))
            let card = Card(title: "B's", owner: "b")
            try await b1.performAndSave { try $0.insert(card) }
            try await e1.sync()
            try await e2.sync()
            try await b2.performAndSave { try $0.delete(card.id) }
            try await e2.sync()
            let node = try await b1.performQuery { try SyncBookkeeping.node(on: $0.connection) }
            let newest = try await server.pull(
                PullRequest(device: SyncNodeID(), schema: SyncPlanner.version, since: nil, limit: 100),
                credentials: "token-b"
            ).cursor.position
            let beyond = newest + 1 + Int64(random.next(below: 1_000))
            let cursors: [Int64] = [beyond, Int64.max, newest + 1]
            let cursor = random.pick(cursors)
            let forgedDevice = try await server.pull(
                PullRequest(device: node, schema: SyncPlanner.version, since: SyncCursor(cursor), limit: 1),
                credentials: "token-a")
            #expect(forgedDevice.refusal != nil && forgedDevice.changes.isEmpty, "seed \(seed): \(forgedDevice)")
            let forgedCursor = try await server.pull(
                PullRequest(device: SyncNodeID(), schema: SyncPlanner.version, since: SyncCursor(cursor), limit: 1),
                credentials: "token-a")
            #expect(
                forgedCursor.refusal == .cursorAhead(since: SyncCursor(cursor), newest: SyncCursor(newest)),
                "seed \(seed): \(forgedCursor)")
            try await server.purgeTombstones()
            try await e1.sync()
            let s1 = try await SyncSnapshot.read(b1)
            let ss = try await SyncSnapshot.read(serverStore)
            #expect(s1 == ss && ss.rows.isEmpty, "seed \(seed): B's device keeps a row deleted on the server")
        }
    }
}

extension SyncHardeningTests {
    /// Values no attribute of `SyncPlanner`'s Card may hold, by attribute: another kind, null
    /// for a required attribute; and names the model does not have.
    static let hostileValues: [(String, SyncValue)] = [
        ("title", .integer(7)), ("title", .null), ("title", .bytes(Data([0xFF]))), ("title", .uuid(UUID())),
        ("rating", .text("lots")), ("rating", .real(1.5)), ("rating", .null), ("rating", .bool(true)),
        ("done", .text("yes")), ("done", .integer(Int64.max)), ("done", .null),
        ("due", .text("tomorrow")), ("due", .integer(Int64.min)), ("due", .real(.infinity)),
        ("owner", .integer(Int64.min)), ("owner", .decimal("1e400")),
        ("parent", .text("not a UUID")), ("parent", .integer(1)),
        ("ghost", .text("g")), ("id", .uuid(UUID())), ("_entity", .text("Label")),
    ]

    /// Drawn: pushes carrying a hostile value (another kind, null for a required attribute, an
    /// unknown name, an extreme number) among good changes, and pulls with extreme limits and
    /// cursors sent as JSON, are refused typed or served within bounds, never trap, and leave
    /// the server's tables as they were; a device then syncs and reads its store.
    @Test func hostileMessagesAreRefusedTypedAndChangeNothing() async throws {
        for seed in 0..<Self.caseCount * 4 {
            var random = SplitMix64(seed: 2_814, index: seed)
            let serverStore = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "server"))
            let server = try await SyncServer(store: serverStore)
            let phone = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "app"))
            let engine = try await SyncEngine(store: phone, transport: server)
            try await phone.performAndSave { try $0.insert(Card(title: "good", rating: 1)) }
            try await engine.sync()
            let before = try await Self.dump(serverStore)
            let stamp = try Self.stamp()
            let (name, value) = random.pick(Self.hostileValues)
            var values: [String: SyncValue] = [
                "title": .text("t"), "rating": .integer(0), "done": .bool(false), "owner": .text(""),
            ]
            values[name] = value
            let key = RowKey(entity: "Card", id: UUID())
            var changes = [
                random.chance(0.5)
                    ? RowChange.insert(key, values: values, at: stamp)
                    : RowChange.update(key, values: [name: value], at: stamp)
            ]
            if random.chance(0.5) {
                let good: [String: SyncValue] = [
                    "title": .text("also"), "rating": .integer(2), "done": .bool(true), "owner": .text(""),
                ]
                changes.append(RowChange.insert(RowKey(entity: "Card", id: UUID()), values: good, at: stamp))
            }
            let response = try await Self.push(server, SyncPlanner.version, changes, nil)
            switch response.refusal {
            case .malformedMessage?, .changeRefused?: break
            default: Issue.record("seed \(seed): \(name) = \(value) was answered \(response)")
            }
            #expect(try await Self.dump(serverStore) == before, "seed \(seed): a refused push changed the server")
            let limits = [Int.max, Int.max - 1, Int(Int32.max), 0, -1, Int.min]
            let cursors: [Int64?] = [nil, 0, Int64.max, Int64.min, -1]
            let limit = random.pick(limits)
            let cursor = random.pick(cursors)
            let since = cursor.map { ",\"since\":\($0)" } ?? ""
            let body = Data(
                """
                {"pull":{"protocolVersion":1,"device":"\(UUID().uuidString)","schema":{"model":"SyncPlanner","version":1,"checksum":"\(SyncPlanner.version.checksum)"},"limit":\(limit)\(since)}}
                """.utf8)
            let answer = try JSONDecoder().decode(
                SyncHTTPResponse.self, from: await server.handle(body, credentials: nil))
            switch answer {
            case .refusal: break
            case .pull(let pull): #expect(pull.refusal != nil || pull.changes.rows.count <= SyncServer.maximumPullLimit)
            case .push: Issue.record("seed \(seed): a pull was answered as a push")
            }
            try await engine.sync()
            #expect(try await phone.performQuery { try $0.fetch(Card.request()) }.map(\.title) == ["good"])
        }
    }
}

extension SyncHardeningTests {
    /// Drawn: rows the server's store holds without sync (written before the server started, or
    /// by the app's server code later: inserts, updates, deletes) reach every device of their
    /// owner, and only theirs, so each device equals the server's rows of its user.
    @Test func rowsWrittenIntoTheServerStoreReachDevices() async throws {
        for seed in 0..<Self.caseCount {
            var random = SplitMix64(seed: 2_815, index: seed)
            let serverStore = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "server-app"))
            var written: [Card] = []
            func write(_ count: Int, _ random: inout SplitMix64) async throws {
                var batch: [Card] = []
                for index in 0..<count {
                    batch.append(
                        Card(title: "s\(index)", rating: Int64(random.next(below: 9)), owner: random.pick(["a", "b"])))
                }
                let cards = batch
                try await serverStore.performAndSave { context in for card in cards { try context.insert(card) } }
                written += batch
            }
            try await write(random.next(below: 4), &random)
            let server = try await SyncServerTests.makeServer(serverStore)
            var engines: [String: SyncEngine] = [:]
            var stores: [String: Store] = [:]
            for user in ["a", "b"] {
                let store = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "app"))
                stores[user] = store
                engines[user] = try await SyncEngine(
                    store: store, transport: server.transport(credentials: "token-\(user)"))
                try await engines[user]?.sync()
            }
            try await write(random.next(below: 4), &random)
            if let changed = written.first, random.chance(0.5) {
                var card = changed
                card.title = "edited on the server"
                let edited = card
                try await serverStore.performAndSave { try $0.update(edited) }
            }
            if let gone = written.last, random.chance(0.5) {
                try await serverStore.performAndSave { try $0.delete(gone.id) }
            }
            let onServer = try await serverStore.performQuery { try $0.fetch(Card.request()) }
            for user in ["a", "b"] {
                try await engines[user]?.sync()
                let cards = try await #require(stores[user]).performQuery { try $0.fetch(Card.request()) }
                #expect(
                    Set(cards) == Set(onServer.filter { $0.owner == user }),
                    "seed \(seed): \(user)'s device holds \(cards.map(\.title)), the server \(onServer.map(\.title))")
            }
        }
    }
}

extension SyncHardeningTests {
    /// Drawn: the server's store is restored from a copy taken before devices synced some of
    /// their changes; a device whose cursor is beyond the restored server's newest is refused
    /// with ``SyncError/cursorAhead(since:newest:)``, sends everything it knows again and pulls
    /// from the beginning, and every device converges on the server.
    @Test func aServerRestoredFromACopyConverges() async throws {
        for seed in 0..<Self.caseCount / 2 {
            var random = SplitMix64(seed: 2_816, index: seed)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sync-restore-\(UUID())")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let live = folder.appendingPathComponent("server.sqlite")
            let copy = folder.appendingPathComponent("copy.sqlite")
            let x = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "app"))
            let y = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "app"))
            let early = random.next(below: 3)
            let late = 1 + random.next(below: 4)
            do {
                let store = try Store(url: live, schema: SyncPlanner.schema, history: .enabled(author: "server"))
                let server = try await SyncServer(store: store)
                try await x.performAndSave { context in
                    for index in 0..<early { try context.insert(Card(title: "early \(index)")) }
                }
                try await SyncEngine(store: x, transport: server).sync()
            }
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: live.path + suffix) {
                try FileManager.default.copyItem(atPath: live.path + suffix, toPath: copy.path + suffix)
            }
            do {
                let store = try Store(url: live, schema: SyncPlanner.schema, history: .enabled(author: "server"))
                let server = try await SyncServer(store: store)
                try await x.performAndSave { context in
                    for index in 0..<late { try context.insert(Card(title: "late \(index)")) }
                }
                try await SyncEngine(store: x, transport: server).sync()
            }
            let restored = try Store(url: copy, schema: SyncPlanner.schema, history: .enabled(author: "server"))
            let server = try await SyncServer(store: restored)
            let ex = try await SyncEngine(store: x, transport: server)
            let ey = try await SyncEngine(store: y, transport: server)
            try await ex.sync()
            try await ey.sync()
            try await ex.sync()
            let sx = try await SyncSnapshot.read(x)
            let sy = try await SyncSnapshot.read(y)
            let ss = try await SyncSnapshot.read(restored)
            #expect(ss.rows.count == early + late, "seed \(seed): the restored server holds \(ss)")
            #expect(sx == ss && sy == ss, "seed \(seed): x \(sx), y \(sy), server \(ss)")
        }
    }
}

extension SyncHardeningTests {
    /// Drawn: one device deletes a label while another links cards to it; after they sync, the
    /// first undoes the delete (inserts the label again with its ID); every device and the
    /// server then hold the same rows and links, the resurrected label's links included.
    @Test func anUndoneDeleteGetsItsLinksBack() async throws {
        for seed in 0..<Self.caseCount {
            var random = SplitMix64(seed: 2_817, index: seed)
            let serverStore = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "server"))
            let server = try await SyncServer(store: serverStore)
            let p = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "app"))
            let q = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "app"))
            let ep = try await SyncEngine(store: p, transport: server)
            let eq = try await SyncEngine(store: q, transport: server)
            let cards = (0..<(1 + random.next(below: 3))).map { Card(title: "c\($0)") }
            let label = Label(name: "l")
            try await p.performAndSave { context in
                for card in cards { try context.insert(card) }
                try context.insert(label)
            }
            try await ep.sync()
            try await eq.sync()
            try await p.performAndSave { try $0.delete(label.id) }
            let linked = cards.filter { _ in random.chance(0.7) }
            try await q.performAndSave { context in
                for card in linked { try context.link(card.id, to: label.id) { $0.labels } }
            }
            let engines = random.chance(0.5) ? [eq, ep, eq, ep] : [ep, eq, ep, eq]
            for engine in engines { try await engine.sync() }
            try await p.performAndSave { try $0.insert(label) }
            for engine in (random.chance(0.5) ? [ep, eq, ep] : [eq, ep, eq, ep]) { try await engine.sync() }
            let sp = try await SyncSnapshot.read(p)
            let sq = try await SyncSnapshot.read(q)
            let ss = try await SyncSnapshot.read(serverStore)
            #expect(sp == ss && sq == ss, "seed \(seed): p \(sp.links), q \(sq.links), server \(ss.links)")
            #expect(ss.links.count == linked.count, "seed \(seed): the server holds \(ss.links)")
        }
    }
}

extension SyncHardeningTests {
    /// A transport whose pulls all fail: a device that pushes and never hears back from its pull.
    private struct PushOnly: SyncTransport {
        struct PullLost: Error {}
        let server: SyncServer

        func push(_ request: PushRequest) async throws -> PushResponse {
            try await server.push(request)
        }

        func pull(_ request: PullRequest) async throws -> PullResponse {
            throw PullLost()
        }
    }

    /// Drawn: a device pushes rows the server acknowledges after its file was copied, but its pull
    /// fails, so its cursor stays before the copy; the server is then restored from the copy. The
    /// device's next sync sends those rows again (its acknowledged pushes reached beyond where the
    /// restored lineage continues), and a second device receives every row.
    @Test func pushesAcknowledgedAfterTheCopyAreSentAgain() async throws {
        for seed in 0..<Self.caseCount / 2 {
            var random = SplitMix64(seed: 2_907, index: seed)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sync-horizon-\(UUID())")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let live = folder.appendingPathComponent("server.sqlite")
            let copy = folder.appendingPathComponent("copy.sqlite")
            let x = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "app"))
            let y = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "app"))
            let early = 1 + random.next(below: 3)
            let late = 1 + random.next(below: 4)
            var store = try Store(url: live, schema: SyncPlanner.schema, history: .enabled(author: "server"))
            var server = try await SyncServer(store: store)
            try await x.performAndSave { context in
                for index in 0..<early { try context.insert(Card(title: "early \(index)")) }
            }
            try await SyncEngine(store: x, transport: server).sync()
            // Copied while the server runs (between transactions), so its epoch goes on after the copy.
            for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: live.path + suffix) {
                try FileManager.default.copyItem(atPath: live.path + suffix, toPath: copy.path + suffix)
            }
            try await x.performAndSave { context in
                for index in 0..<late { try context.insert(Card(title: "late \(index)")) }
            }
            await #expect(throws: PushOnly.PullLost.self) {
                try await SyncEngine(store: x, transport: PushOnly(server: server)).sync()
            }
            try store.close()
            store = try Store(url: copy, schema: SyncPlanner.schema, history: .enabled(author: "server"))
            server = try await SyncServer(store: store)
            try await SyncEngine(store: x, transport: server).sync()
            try await SyncEngine(store: y, transport: server).sync()
            let sy = try await SyncSnapshot.read(y)
            let ss = try await SyncSnapshot.read(store)
            #expect(ss.rows.count == early + late, "seed \(seed): the restored server holds \(ss)")
            #expect(sy == ss, "seed \(seed): y \(sy), server \(ss)")
            try store.close()
        }
    }
}
