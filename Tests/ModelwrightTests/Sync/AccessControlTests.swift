import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright
@testable import ModelwrightSchema

/// Access control between two users (issue 28: "a second user cannot see or change the first
/// user's data"), drawn: user b makes private and shared rows with every kind of link (a to-one
/// with a foreign key, a to-one without inverse, a to-one to an abstract parent, many-to-many),
/// re-points and deletes them; user a pulls, and pushes her own rows, edits of the shared ones and
/// attacks. Every row's scope is `owner == user || owner == "all"`, and a row's owner never changes.
@Suite("SyncAccessControl", .serialized)
struct AccessControlTests {
    static let isLarge = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1"
    static let caseCount = isLarge ? 150 : 6

    static let modelText = """
        model Access version 1
        entity Person {
            @sync
            name: String
            owner: String
            docs: Set<Doc> @inverse(holder) @delete(nullify)
        }
        entity Doc {
            @sync
            title: String
            owner: String
            ref: Doc? @noInverse
            holder: Person?
            tags: Set<Tag>
            item: Item?
            loose: Item? @noInverse
            mainTag: Tag? @noInverse
        }
        entity Tag {
            @sync(unique: merge)
            name: String @unique
            owner: String
            docs: Set<Doc> @inverse(tags)
        }
        abstract entity Item {
            @sync
            label: String
            owner: String
            docs: Set<Doc> @inverse(item) @delete(nullify)
        }
        entity Book: Item {
        }
        entity Disc: Item {
        }
        """

    static let schema: SchemaDescription? =
        FrontEnd.lower(ResolvedFile.compile(SourceFile(path: "Access.v1.model", text: modelText)))?.schema

    static let scopes: [String: SyncServer.Scope] = {
        let owned: SyncServer.Scope = { user, row in
            row.values["owner"] == .text(user) || row.values["owner"] == .text("all")
        }
        return Dictionary(uniqueKeysWithValues: ["Person", "Doc", "Tag", "Item", "Book", "Disc"].map { ($0, owned) })
    }()

    /// The to-ones of a doc and the entities their targets may be.
    static let toOnes: [(name: String, targets: [String])] = [
        ("ref", ["Doc"]), ("holder", ["Person"]), ("item", ["Book", "Disc"]), ("loose", ["Book", "Disc"]),
        ("mainTag", ["Tag"]),
    ]

    // MARK: - Reads

    /// Nothing user a receives (pulled rows, their to-ones and many-to-many links, tombstones'
    /// last values, hidden links, refusals and resolutions) names a row of b's that a may not see,
    /// unless a's own request named it; and a refusal for a target a may not see is the refusal
    /// for an ID the server does not know.
    @Test func aDeviceReceivesNothingThatNamesARowOutsideItsScope() async throws {
        let schema = try #require(Self.schema)
        var counts = Counts()
        for seed in Self.seeds() {
            var random = SplitMix64(seed: 28_028, index: seed)
            let world = try await World(schema: schema)
            for round in 0..<3 {
                try await world.bWrites(&random, round: round, counts: &counts)
                try await world.aEngine.sync()
                try await world.aWrites(&random, round: round, counts: &counts)
                try await world.aProbes(&random, counts: &counts)
                try await world.aEngine.sync()
            }
            let secrets = world.private(of: "b")
            for exchange in world.aTransport.exchanges {
                counts.messages += 1
                let named = secrets.filter { !exchange.request.contains($0) }
                let leaked = named.filter { exchange.response.contains($0) }
                #expect(
                    leaked.isEmpty,
                    "seed \(seed): a's answer names \(leaked.count) of b's private rows: \(exchange.response.prefix(2_000))"
                )
            }
            for (mine, unknown) in world.twins {
                #expect(mine == unknown, "seed \(seed): a refusal tells a hidden row from an unknown ID")
            }
        }
        if Self.isLarge { print("SyncAccessControl reads: \(counts)") }
        #expect(counts.messages > 0 && counts.probes > 0)
    }

    // MARK: - Writes

    /// Every link a push makes or keeps is checked on the rows as the push leaves them: a to-one
    /// (with a foreign key or without, to an abstract parent) or a many-to-many add at a row of b's
    /// or at an unknown ID, and a resurrection of a row whose tombstone smuggled such links are
    /// refused whole, the server unchanged; a's other pushes are accepted, and so is her write of a
    /// link hidden from her (cleared, or re-pointed at a row she may see), which changes that link
    /// alone and no private row of b's.
    @Test func aPushThatMakesOrKeepsALinkOutOfSightIsRefusedWhole() async throws {
        let schema = try #require(Self.schema)
        var counts = Counts()
        var attacks: [String: Int] = [:]
        for seed in Self.seeds() {
            var random = SplitMix64(seed: 28_029, index: seed)
            let world = try await World(schema: schema)
            for round in 0..<2 {
                try await world.bWrites(&random, round: round, counts: &counts)
                try await world.aEngine.sync()
                try await world.aWrites(&random, round: round, counts: &counts)
            }
            let secrets = world.owners.filter { $0.value == "b" }.map(\.key).sorted()
            let aDocs = world.visible(to: "a", ["Doc"]).filter { world.creators[$0] == "a" }
            guard !secrets.isEmpty, !aDocs.isEmpty else { continue }
            for _ in 0..<12 {
                let target = random.chance(0.8) ? random.pick(secrets).id : Self.uuid(&random)
                let toOne = Self.toOnes.randomElement(using: &random)!.name
                let doc = random.pick(aDocs)
                let kind = random.next(below: 5)
                var pushes: [[RowChange]] = []
                switch kind {
                case 0:
                    pushes = [[.update(doc, values: [toOne: .uuid(target)], at: try world.a.stamp())]]
                case 1:
                    let row = world.newRow("Doc", owner: "a", stamp: try world.a.stamp(), &random)
                    pushes = [
                        [row.merged(with: .update(row.key, values: [toOne: .uuid(target)], at: try world.a.stamp()))]
                    ]
                case 2:
                    pushes = [[.link(doc, "tags", to: target, at: try world.a.stamp())]]
                case 3:
                    // A link hidden from a, on a shared doc of b's: cleared, or re-pointed at a row
                    // she may see. Not an attack: it is accepted (below), as her re-link of a link
                    // whose target another user took must be.
                    let truth = try await SyncSnapshot.read(world.serverStore)
                    var hidden: [(RowKey, String)] = []
                    for (key, values) in truth.rows where key.entity == "Doc" && world.owners[key] == "all" {
                        for link in Self.toOnes {
                            guard case .uuid(let id)? = values[link.name],
                                let owner = world.owners.first(where: { $0.key.id == id })?.value, owner == "b"
                            else { continue }
                            hidden.append((key, link.name))
                        }
                    }
                    guard let (shared, name) = hidden.sorted(by: { $0.0 < $1.0 }).randomElement(using: &random) else {
                        continue
                    }
                    // Rows the server holds (a refused push's new rows are in the world's lists too).
                    let targets = world.visible(to: "a", Self.toOnes.first { $0.name == name }!.targets)
                        .filter { truth.rows[$0] != nil }
                    let value: SyncValue =
                        targets.isEmpty || random.chance(0.5) ? .null : .uuid(random.pick(targets).id)
                    let theirs = try await world.privateRecords(of: "b")
                    let before = try await Self.serverState(world.serverStore)
                    let answer = try await world.push(
                        [.update(shared, values: [name: value], at: try world.a.stamp())], by: world.a,
                        counts: &counts, expectAccepted: false)
                    var after = try await Self.serverState(world.serverStore)
                    attacks["3", default: 0] += 1
                    #expect(answer.refusal == nil, "seed \(seed): a's re-link away from a hidden row was refused")
                    #expect(after.rows[shared]?[name] == value, "seed \(seed): the re-link did not apply")
                    #expect(
                        try await world.privateRecords(of: "b") == theirs,
                        "seed \(seed): a's re-link changed a private row of b's")
                    after.rows[shared]?[name] = before.rows[shared]?[name]
                    after.rows[Self.cursorKey] = before.rows[Self.cursorKey]
                    #expect(before == after, "seed \(seed): a's re-link changed more than the link")
                    continue
                default:
                    // A row made and deleted with links to b's rows, then brought back by an insert
                    // that names no attribute: the tombstone's links would come back with it.
                    let row = world.newRow("Doc", owner: "a", stamp: try world.a.stamp(), &random)
                    var smuggled = row.merged(
                        with: .update(row.key, values: [toOne: .uuid(target)], at: try world.a.stamp()))
                    if random.chance(0.5) {
                        smuggled = smuggled.merged(with: .link(row.key, "tags", to: target, at: try world.a.stamp()))
                    }
                    let dead = smuggled.merged(with: .delete(row.key, at: try world.a.stamp()))
                    _ = try await world.push([dead], by: world.a, counts: &counts, expectAccepted: false)
                    pushes = [[RowChange(key: row.key, inserted: try world.a.stamp())]]
                }
                for push in pushes {
                    let before = try await Self.serverState(world.serverStore)
                    let answer = try await world.push(push, by: world.a, counts: &counts, expectAccepted: false)
                    let after = try await Self.serverState(world.serverStore)
                    attacks["\(kind)", default: 0] += 1
                    #expect(answer.refusal != nil, "seed \(seed): attack \(kind) was accepted: \(push)")
                    #expect(before == after, "seed \(seed): a refused push changed the server: \(push)")
                }
            }
        }
        if Self.isLarge {
            print("SyncAccessControl writes: \(counts); attacks by kind \(attacks.sorted { $0.key < $1.key })")
        }
        #expect(attacks.count == 5)
    }

    /// The server's rows, links and latest cursor.
    static func serverState(_ store: Store) async throws -> SyncSnapshot {
        var snapshot = try await SyncSnapshot.read(store)
        let cursor = try await store.performQuery { try SyncBookkeeping.value("cursor", on: $0.connection) }
        snapshot.rows[cursorKey] = ["cursor": .text(cursor ?? "0")]
        return snapshot
    }

    /// Where ``serverState(_:)`` keeps the server's latest cursor.
    static let cursorKey = RowKey(entity: "cursor", id: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))

    // MARK: - Uniqueness merges

    /// A rename by a of a shared tag to the name of one of her private tags merges the shared tag
    /// into hers (`@sync(unique: merge)`), which would move b's private docs' links onto a's
    /// private tag: then a's row is refused instead, and no row of b's a may not see changes.
    @Test func aUniquenessMergeNeverRewritesRowsOutOfSight() async throws {
        let schema = try #require(Self.schema)
        var counts = Counts()
        var outcomes: [String: Int] = [:]
        for seed in Self.seeds() {
            var random = SplitMix64(seed: 28_030, index: seed)
            let world = try await World(schema: schema)
            for round in 0..<2 {
                try await world.bWrites(&random, round: round, counts: &counts)
                try await world.aWrites(&random, round: round, counts: &counts)
            }
            for _ in 0..<4 {
                let shared = world.visible(to: "a", ["Tag"]).filter { world.owners[$0] == "all" }
                guard !shared.isEmpty else { break }
                let mine = world.newRow("Tag", owner: "a", stamp: try world.a.stamp(), &random)
                try await world.push([mine], by: world.a, counts: &counts)
                let theirs = world.owners.filter { $0.value == "b" }.map(\.key).sorted()
                let before = try await Self.records(of: theirs, in: world.serverStore)
                let tag = random.pick(shared)
                let answer = try await world.push(
                    [.update(tag, values: ["name": mine.values["name"]!], at: try world.a.stamp())], by: world.a,
                    counts: &counts)
                let after = try await Self.records(of: theirs, in: world.serverStore)
                for resolution in answer.resolutions {
                    switch resolution {
                    case .merged: outcomes["merged", default: 0] += 1
                    case .refused: outcomes["refused", default: 0] += 1
                    case .rejected: outcomes["rejected", default: 0] += 1
                    }
                }
                // Merged away or refused: the shared tag is deleted either way.
                world.deleted.insert(tag)
                for key in theirs where before[key] != after[key] {
                    Issue.record(
                        "seed \(seed): a's merge changed b's private \(key): \(after[key].map { "\($0)" } ?? "-")")
                }
            }
        }
        if Self.isLarge {
            print("SyncAccessControl merges: \(counts); outcomes \(outcomes.sorted { $0.key < $1.key })")
        }
        #expect(outcomes["merged", default: 0] > 0 && outcomes["refused", default: 0] > 0, "\(outcomes)")
    }

    /// The server's sync records of `keys`.
    static func records(of keys: [RowKey], in store: Store) async throws -> [RowKey: RowChange] {
        try await store.performQuery { context in
            var records: [RowKey: RowChange] = [:]
            for key in keys { records[key] = try SyncBookkeeping.change(of: key, on: context.connection) }
            return records
        }
    }

    /// A device of a makes a row under the ID of one of b's private rows (live or deleted), as
    /// its own entity or a sibling in its hierarchy, owned by a, by b or shared, on a device that never synced (its
    /// first pull names the rows it holds) or on one that did. Its push is refused
    /// (``SyncError/outOfScope(row:)``), which its sync reports (``SyncEngine/Report/refused``),
    /// the server is unchanged, and the device gives the attempt up: it holds no row under that
    /// ID any more (never b's values) and its next sync refuses nothing. A device's own new row
    /// never makes the server tell it to drop what the server has under that ID in silence.
    @Test func aDeviceMakingARowUnderAnotherUsersIDIsRefusedAndGivenUp() async throws {
        let schema = try #require(Self.schema)
        var attempts = 0
        for seed in Self.seeds() {
            var random = SplitMix64(seed: 28_040, index: seed)
            let world = try await World(schema: schema)
            var counts = Counts()
            for round in 0..<2 { try await world.bWrites(&random, round: round, counts: &counts) }
            try await world.aEngine.sync()
            let secrets = world.owners.filter { $0.value == "b" }.map(\.key).sorted()
            try #require(!secrets.isEmpty)
            for _ in 0..<4 {
                let secret = random.pick(secrets)
                // Its own entity or a sibling (an ID names one row across a hierarchy; in an
                // unrelated entity it names a row of its own, which is a's to make).
                let entity = ["Book", "Disc"].contains(secret.entity) ? random.pick(["Book", "Disc"]) : secret.entity
                var values: [String: SyncValue] = ["owner": .text(random.pick(["a", "b", "all"]))]
                switch entity {
                case "Person": values["name"] = .text("p")
                case "Doc": values["title"] = .text("hijacked")
                case "Tag": values["name"] = .text("hijack\(attempts)")
                default: values["label"] = .text("i")
                }
                let fresh = random.chance(0.5)
                let (store, engine): (Store, SyncEngine)
                if fresh {
                    store = try Store.inMemory(schema: schema, history: .enabled(author: "app"))
                    engine = try await SyncEngine(store: store, transport: world.server.transport(credentials: "a"))
                } else {
                    (store, engine) = (world.aStore, world.aEngine)
                }
                let before = try await SyncSnapshot.read(world.serverStore)
                let row = RowChange.insert(
                    RowKey(entity: entity, id: secret.id), values: values, at: try world.a.stamp())
                try await store.performAndSave(author: "app") { try $0.materialize(row) }
                let report = try await engine.sync()
                #expect(
                    report.refused == [RowKey(entity: entity, id: secret.id)],
                    "seed \(seed): \(entity) over b's \(secret) (fresh device: \(fresh)): \(report)")
                #expect(try await engine.sync().refused.isEmpty, "seed \(seed): refused again")
                let after = try await SyncSnapshot.read(world.serverStore)
                #expect(before == after, "seed \(seed): the server changed under a's row with b's ID \(secret)")
                let held = try await SyncSnapshot.read(store)
                #expect(
                    !held.rows.keys.contains { $0.id == secret.id },
                    "seed \(seed): a's device still holds a row under b's ID \(secret)")
                attempts += 1
            }
        }
        #expect(attempts == 4 * Self.seeds().count)
    }

    // MARK: - Devices under the same user

    /// Red team C1, drawn: b's two devices sync docs, one deletes some; a third connection with b's
    /// credentials pulls under the first device's node ID from the newest cursor, one to three
    /// times; the purge must not pass what the real device pulled from, so it converges on the
    /// deletes. And the purge still goes on: once every device pulled past the deletes and a
    /// period has gone by since their older pulls, the tombstones go.
    @Test func anImpostorUnderADevicesIDCannotHurryThePurge() async throws {
        let schema = try #require(Self.schema)
        var purgedAfterAPeriod = 0
        for seed in Self.seeds() {
            var random = SplitMix64(seed: 28_031, index: seed)
            let clock = WallClock()
            let serverStore = try Store.inMemory(schema: schema, history: .enabled(author: "server"))
            let server = try await SyncServer(
                store: serverStore, authenticate: { $0 }, scopes: Self.scopes, wallClock: { clock.now })
            var devices: [(Store, SyncEngine)] = []
            for _ in 0..<2 {
                let store = try Store.inMemory(schema: schema, history: .enabled(author: "app"))
                devices.append(
                    (store, try await SyncEngine(store: store, transport: server.transport(credentials: "b"))))
            }
            var docs: [RowKey] = []
            for _ in 0..<(2 + random.next(below: 4)) {
                let key = RowKey(entity: "Doc", id: Self.uuid(&random))
                docs.append(key)
                let change = RowChange.insert(
                    key, values: ["title": .text("d"), "owner": .text("b")],
                    at: try Hand("b", version: server.schemaVersion).stamp())
                try await devices[0].0.performAndSave(author: "app") { try $0.materialize(change) }
            }
            try await devices[0].1.sync()
            try await devices[1].1.sync()
            let node = try await devices[0].0.performQuery { try SyncBookkeeping.node(on: $0.connection) }
            for key in docs where random.chance(0.6) {
                let change = RowChange.delete(key, at: try Hand("b", version: server.schemaVersion).stamp())
                try await devices[1].0.performAndSave(author: "app") { try $0.materialize(change) }
            }
            try await devices[1].1.sync()
            try await devices[1].1.sync()
            // The newest cursor, as the second device holds it after pulling its own deletes.
            let newest = try await devices[1].0.performQuery {
                Int64(try SyncBookkeeping.value("cursor", on: $0.connection) ?? "0") ?? 0
            }
            for _ in 0..<(1 + random.next(below: 3)) {
                _ = try await server.pull(
                    PullRequest(device: node, schema: server.schemaVersion, since: SyncCursor(newest), limit: 1_000),
                    credentials: "b")
            }
            try await server.purgeTombstones()
            for (store, engine) in devices {
                try await engine.sync()
                try await engine.sync()
                let held = try await SyncSnapshot.read(store)
                let truth = try await SyncSnapshot.read(serverStore)
                #expect(held == truth, "seed \(seed): a device of b diverged after the purge: \(held) vs \(truth)")
            }
            // A period later, every device having pulled past the deletes, the tombstones go.
            clock.advance(by: 91 * 24 * 3600 * 1000)
            for (_, engine) in devices { try await engine.sync() }
            purgedAfterAPeriod += try await server.purgeTombstones()
        }
        #expect(purgedAfterAPeriod > 0)
    }

    /// A wall clock a test moves.
    final class WallClock: @unchecked Sendable {
        private let lock = NSLock()
        private var offset: UInt64 = 0
        var now: UInt64 { lock.withLock { HybridLogicalClock.wallMilliseconds() + offset } }
        func advance(by milliseconds: UInt64) { lock.withLock { offset += milliseconds } }
    }

    // MARK: - Support

    /// A drawn ID, so a seed names the same rows in every run.
    static func uuid(_ random: inout SplitMix64) -> UUID {
        let high = random.next()
        let low = random.next()
        var bytes = (0..<8).map { UInt8(truncatingIfNeeded: high >> ($0 * 8)) }
        bytes += (0..<8).map { UInt8(truncatingIfNeeded: low >> ($0 * 8)) }
        bytes[6] = 0x70 | (bytes[6] & 0x0F)
        bytes[8] = 0x80 | (bytes[8] & 0x3F)
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }

    static func seeds() -> [Int] {
        let only = ProcessInfo.processInfo.environment["MODELWRIGHT_SEED"].flatMap { Int($0) }
        return only.map { [$0] } ?? Array(0..<caseCount)
    }

    /// What a run did, for the large run's report.
    struct Counts: CustomStringConvertible {
        var writes = 0
        var probes = 0
        var refused = 0
        var messages = 0
        var description: String {
            "\(caseCount) runs, \(writes) writes, \(probes) probes (\(refused) refused), \(messages) messages scanned"
        }
    }

    /// A device driven by hand: its own node, clock and history tokens.
    final class Hand: @unchecked Sendable {
        let user: String
        let node = SyncNodeID()
        var clock: HybridLogicalClock
        var token: Int64 = 0
        let version: SyncSchemaVersion
        init(_ user: String, version: SyncSchemaVersion) {
            self.user = user
            self.version = version
            clock = HybridLogicalClock(node: node, maximumDriftMilliseconds: HybridLogicalClock.unbounded)
        }
        func stamp() throws -> HybridTimestamp {
            try clock.tick(wallMilliseconds: HybridLogicalClock.wallMilliseconds())
        }
        func push(_ changes: [RowChange], to transport: any SyncTransport) async throws -> PushResponse {
            token += 1
            return try await transport.push(
                PushRequest(
                    device: node, schema: version, after: token > 1 ? HistoryToken(token - 1) : nil,
                    through: HistoryToken(token), changes: ChangeSet(changes)))
        }
    }

    /// Two users' rows on one server: b's hand device, a's engine and a's hand device (both through
    /// a transport that keeps every request and answer as JSON).
    final class World: @unchecked Sendable {
        let serverStore: Store
        let server: SyncServer
        let aStore: Store
        let aEngine: SyncEngine
        let aTransport: Recording
        let a: Hand
        let b: Hand
        let bTransport: any SyncTransport
        /// Every row made, with its owner, entity and whether it is alive.
        var owners: [RowKey: String] = [:]
        /// The user who made each row.
        var creators: [RowKey: String] = [:]
        var deleted: Set<RowKey> = []
        /// The refusals of pushes naming a hidden row and of the same pushes naming an unknown ID.
        var twins: [(String, String)] = []
        var tagCount = 0

        init(schema: SchemaDescription) async throws {
            serverStore = try Store.inMemory(schema: schema, history: .enabled(author: "server"))
            server = try await SyncServer(store: serverStore, authenticate: { $0 }, scopes: AccessControlTests.scopes)
            aTransport = Recording(server.transport(credentials: "a"))
            aStore = try Store.inMemory(schema: schema, history: .enabled(author: "app"))
            aEngine = try await SyncEngine(store: aStore, transport: aTransport)
            a = Hand("a", version: server.schemaVersion)
            b = Hand("b", version: server.schemaVersion)
            bTransport = server.transport(credentials: "b")
        }

        /// The IDs, as lowercased text, of `user`'s private rows.
        func `private`(of user: String) -> [String] {
            owners.filter { $0.value == user }.map { $0.key.id.uuidString.lowercased() }.sorted()
        }

        /// The live rows `user` may see, of the given entities.
        /// What the server keeps of `user`'s private rows: their sync records.
        func privateRecords(of user: String) async throws -> [RowKey: RowChange] {
            let keys = owners.filter { $0.value == user }.map(\.key)
            return try await serverStore.performQuery { context in
                var records: [RowKey: RowChange] = [:]
                for key in keys { records[key] = try SyncBookkeeping.change(of: key, on: context.connection) }
                return records
            }
        }

        func visible(to user: String, _ entities: [String]) -> [RowKey] {
            owners.filter { ($0.value == user || $0.value == "all") && entities.contains($0.key.entity) }
                .map(\.key).filter { !deleted.contains($0) }.sorted()
        }

        func newRow(_ entity: String, owner: String, stamp: HybridTimestamp, _ random: inout SplitMix64)
            -> RowChange
        {
            let key = RowKey(entity: entity, id: AccessControlTests.uuid(&random))
            owners[key] = owner
            creators[key] = stamp.node == a.node ? "a" : "b"
            var values: [String: SyncValue] = ["owner": .text(owner)]
            switch entity {
            case "Person": values["name"] = .text("p")
            case "Doc": values["title"] = .text("d")
            case "Tag":
                tagCount += 1
                values["name"] = .text("tag\(tagCount)")
            default: values["label"] = .text("i")
            }
            return .insert(key, values: values, at: stamp)
        }

        /// Random to-one targets and tag links for `doc`, among the rows `user` may see.
        func links(
            of doc: RowKey, for user: String, stamp: HybridTimestamp, _ random: inout SplitMix64
        ) -> RowChange {
            var values: [String: SyncValue] = [:]
            for toOne in AccessControlTests.toOnes where random.chance(0.6) {
                let targets = visible(to: user, toOne.targets)
                values[toOne.name] = targets.isEmpty || random.chance(0.15) ? .null : .uuid(random.pick(targets).id)
            }
            var change = RowChange.update(doc, values: values, at: stamp)
            for tag in visible(to: user, ["Tag"]) where random.chance(0.3) {
                change = change.merged(
                    with: random.chance(0.8)
                        ? .link(doc, "tags", to: tag.id, at: stamp) : .unlink(doc, "tags", from: tag.id, at: stamp))
            }
            return change
        }

        /// User b makes private and shared rows, links her docs every way, and deletes some of
        /// her shared rows (their tombstones keep their last values); every push is accepted but
        /// a delete that reaches one of a's private rows: one that holds a to-many link to the
        /// row is always refused, one whose to-one's delete rule would change it too, each
        /// naming the deleted row.
        func bWrites(_ random: inout SplitMix64, round: Int, counts: inout Counts) async throws {
            var changes: [RowChange] = []
            for entity in ["Person", "Tag", "Book", "Disc", "Doc", "Doc"] {
                for _ in 0..<(1 + random.next(below: 2)) {
                    let owner = random.chance(0.5) ? "b" : "all"
                    changes.append(newRow(entity, owner: owner, stamp: try b.stamp(), &random))
                }
            }
            try await push(changes, by: b, counts: &counts)
            var edits: [RowChange] = []
            for doc in visible(to: "b", ["Doc"]) where creators[doc] == "b" && random.chance(0.7) {
                edits.append(links(of: doc, for: "b", stamp: try b.stamp(), &random))
            }
            try await push(edits, by: b, counts: &counts)
            if round > 0 {
                let shared = visible(to: "b", ["Doc", "Person", "Tag", "Book", "Disc"]).filter {
                    owners[$0] == "all" && creators[$0] == "b"
                }
                for key in shared where random.chance(0.25) {
                    // What of a's private rows names the row: a to-many link (which the delete
                    // would clear: refused) or a to-one (refused when its delete rule would
                    // clear or delete a's row).
                    let (linked, referred) = try await serverStore.performQuery { context in
                        let rows = try SyncBookkeeping.rows(mentioning: key.id, on: context.connection).filter {
                            $0.isAlive && $0.values["owner"] == .text("a")
                        }
                        return (
                            rows.contains { $0.links.contains { $0.key.target == key.id && $0.value.isPresent } },
                            rows.contains { $0.values.values.contains(.uuid(key.id)) }
                        )
                    }
                    let answer = try await push(
                        [.delete(key, at: try b.stamp())], by: b, counts: &counts, expectAccepted: false)
                    if let refusal = answer.refusal {
                        #expect(
                            refusal == .outOfScope(row: key) && (linked || referred),
                            "b's delete of \(key) refused with \(refusal), a's rows linking \(linked), referring \(referred)"
                        )
                    } else {
                        #expect(!linked, "b's delete of \(key) cleared a to-many link of a's private row")
                        deleted.insert(key)
                    }
                }
            }
        }

        /// User a makes private and shared rows of her own and links them to what she may see.
        func aWrites(_ random: inout SplitMix64, round: Int, counts: inout Counts) async throws {
            var changes: [RowChange] = []
            for entity in ["Person", "Tag", "Book", "Doc"] where random.chance(0.7) {
                changes.append(newRow(entity, owner: random.chance(0.5) ? "a" : "all", stamp: try a.stamp(), &random))
            }
            try await push(changes, by: a, counts: &counts)
            for doc in visible(to: "a", ["Doc"]) where creators[doc] == "a" && random.chance(0.4) {
                try await push([links(of: doc, for: "a", stamp: try a.stamp(), &random)], by: a, counts: &counts)
            }
        }

        /// User a pushes what she may not: links to b's private rows (and, as its twin, the same
        /// push with an ID the server does not know), writes of links hidden from her, updates
        /// naming b's rows by another entity. Only the refusals are looked at here.
        func aProbes(_ random: inout SplitMix64, counts: inout Counts) async throws {
            let secrets = owners.filter { $0.value == "b" }.map(\.key).sorted()
            guard !secrets.isEmpty else { return }
            let aDocs = visible(to: "a", ["Doc"]).filter { owners[$0] == "a" }
            for _ in 0..<4 {
                let secret = random.pick(secrets)
                let unknown = AccessControlTests.uuid(&random)
                let stamp = try a.stamp()
                let probe: (UUID) -> RowChange
                switch random.next(below: 3) {
                case 0 where !aDocs.isEmpty:
                    // A to-one of a's own doc at b's row.
                    let doc = random.pick(aDocs)
                    let name = AccessControlTests.toOnes.randomElement(using: &random)!.name
                    probe = { .update(doc, values: [name: .uuid($0)], at: stamp) }
                case 1:
                    // b's row named by another entity than its own, or by its own. (A write that
                    // would take the row into a's scope tells a row of that ID exists: an ID
                    // collision, which needs the ID; see Sync.md.)
                    let entity = random.pick(["Person", "Doc", "Tag", "Book", "Disc"])
                    probe = { .update(RowKey(entity: entity, id: $0), values: ["owner": .text("b")], at: stamp) }
                default:
                    // A many-to-many link from a's doc to b's row.
                    guard let doc = aDocs.randomElement(using: &random) else { continue }
                    probe = { .link(doc, "tags", to: $0, at: stamp) }
                }
                counts.probes += 2
                let mine = try await push([probe(secret.id)], by: a, counts: &counts, expectAccepted: false)
                let theirs = try await push([probe(unknown)], by: a, counts: &counts, expectAccepted: false)
                twins.append(
                    (
                        "\(mine.refusal.map { "\($0)" } ?? "accepted")".replacingOccurrences(
                            of: secret.id.uuidString, with: "ID"),
                        "\(theirs.refusal.map { "\($0)" } ?? "accepted")".replacingOccurrences(
                            of: unknown.uuidString, with: "ID")
                    ))
            }
            // Writes of every to-one of the shared docs a may see, some of them hidden from her.
            let shared = visible(to: "a", ["Doc"]).filter { owners[$0] == "all" }
            for doc in shared where random.chance(0.5) {
                let toOne = AccessControlTests.toOnes.randomElement(using: &random)!
                // Shared targets only: a link to a's private row would hide it from b, who then may
                // not write it (refused, rightly), which this run does not model.
                let targets = visible(to: "a", toOne.targets).filter { owners[$0] == "all" }
                let value: SyncValue = targets.isEmpty || random.chance(0.3) ? .null : .uuid(random.pick(targets).id)
                counts.probes += 1
                _ = try await push(
                    [.update(doc, values: [toOne.name: value], at: try a.stamp())], by: a, counts: &counts,
                    expectAccepted: false)
            }
        }

        /// Pushes `changes` by `hand`; with `expectAccepted`, records an issue when refused.
        @discardableResult
        func push(_ changes: [RowChange], by hand: Hand, counts: inout Counts, expectAccepted: Bool = true)
            async throws -> PushResponse
        {
            guard !changes.isEmpty else { return PushResponse(acknowledged: nil, cursor: SyncCursor(0)) }
            counts.writes += changes.count
            let answer = try await hand.push(changes, to: hand.user == "a" ? aTransport : bTransport)
            if let refusal = answer.refusal {
                counts.refused += 1
                if expectAccepted {
                    // What the server holds of the refused row, to tell a broken run from a wrong rule.
                    var record = ""
                    if case .outOfScope(let key) = refusal {
                        let held = try await serverStore.performQuery {
                            try SyncBookkeeping.change(of: key, on: $0.connection)
                        }
                        record = "server \(held.map { "\($0.values) \($0.links.keys)" } ?? "-")"
                        record +=
                            ", pushed \(changes.first { $0.key == key }.map { "\($0.values) \($0.links)" } ?? "-")"
                    }
                    Issue.record("\(hand.user)'s own push was refused: \(refusal): \(record)")
                }
            }
            return answer
        }
    }

    /// A transport that keeps every request and answer as lowercased JSON.
    final class Recording: SyncTransport, @unchecked Sendable {
        private let base: any SyncTransport
        private let lock = NSLock()
        private var kept: [(request: String, response: String)] = []
        init(_ base: some SyncTransport) { self.base = base }
        var exchanges: [(request: String, response: String)] { lock.withLock { kept } }

        static func text(_ message: some Encodable) -> String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            let json = (try? encoder.encode(message)).map { String(decoding: $0, as: UTF8.self) } ?? "?"
            return (json + "\n\(message)").lowercased()
        }

        func push(_ request: PushRequest) async throws -> PushResponse {
            let answer = try await base.push(request)
            lock.withLock { kept.append((Self.text(request), Self.text(answer))) }
            return answer
        }

        func pull(_ request: PullRequest) async throws -> PullResponse {
            let answer = try await base.pull(request)
            lock.withLock { kept.append((Self.text(request), Self.text(answer))) }
            return answer
        }
    }
}
