import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright
@testable import ModelwrightSchema

/// What a push sets off beyond the rows it names stays in the pusher's scope (issue 28, red team
/// rtsync3), drawn: three users make private and shared folders, boxes and files, linked every
/// way (to-ones whose inverse cascades, nullifies, denies or does nothing, a to-one without
/// inverse, one to an abstract parent, many-to-many, a folder tree that cascades); then each in
/// turn deletes a shared row, renames a shared folder to the name of another's private folder (the
/// resolution refuses and deletes it) or to one of her own (the resolution merges). Every row's
/// scope is `owner == user || owner == "all"`.
@Suite("SyncPushEffectScope", .serialized)
struct PushEffectScopeTests {
    static let isLarge = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1"
    static let caseCount = isLarge ? 200 : 8
    static let users = ["a", "b", "c"]

    static let modelText = """
        model Effects version 1
        entity Folder {
            @sync(unique: merge)
            name: String @unique
            owner: String
            parent: Folder?
            children: Set<Folder> @inverse(parent) @delete(cascade)
            files: Set<File> @inverse(folder) @delete(cascade)
            notes: Set<File> @inverse(note) @delete(nullify)
            pins: Set<File> @inverse(pin) @delete(nullify)
            refs: Set<File> @inverse(ref) @delete(noAction)
            tagged: Set<File> @inverse(tags)
        }
        entity File {
            @sync
            name: String
            owner: String
            folder: Folder?
            note: Folder?
            pin: Folder?
            ref: Folder?
            loose: Folder? @noInverse
            item: Item?
            tags: Set<Folder>
        }
        abstract entity Item {
            @sync
            label: String
            owner: String
            files: Set<File> @inverse(item) @delete(cascade)
        }
        entity Box: Item {
        }
        """

    /// The model, with `Folder.pins` denying: `validate` refuses `@delete(deny)` on a synced entity
    /// (a device offline may link a row another deletes), so it is lowered as `nullify` and set
    /// here; a server whose store has one still runs it, and so its effects are checked too.
    static let schema: SchemaDescription? = {
        guard
            var schema = FrontEnd.lower(ResolvedFile.compile(SourceFile(path: "Effects.v1.model", text: modelText)))?
                .schema
        else { return nil }
        for entity in schema.entities.indices where schema.entities[entity].name == "Folder" {
            for relationship in schema.entities[entity].relationships.indices
            where schema.entities[entity].relationships[relationship].name == "pins" {
                schema.entities[entity].relationships[relationship].deleteRule = .deny
            }
        }
        return schema
    }()

    static let scopes: [String: SyncServer.Scope] = {
        let owned: SyncServer.Scope = { user, row in
            row.values["owner"] == .text(user) || row.values["owner"] == .text("all")
        }
        return Dictionary(uniqueKeysWithValues: ["Folder", "File", "Item", "Box"].map { ($0, owned) })
    }()

    /// The to-ones of a file and of a folder, and the entities their targets are.
    static let fileToOnes: [(name: String, target: String)] = [
        ("folder", "Folder"), ("note", "Folder"), ("pin", "Folder"), ("ref", "Folder"), ("loose", "Folder"),
        ("item", "Box"),
    ]

    // MARK: - Delete rules

    /// A delete of a shared row (by a user's push, or by a uniqueness resolution that refuses the
    /// user's rename) whose delete rules would clear, delete or bring back a row another user
    /// keeps private is refused whole, naming only a row the pusher may see, and the server is
    /// unchanged; an accepted one leaves every other user's private rows as they were.
    @Test func aPushNeverSetsOffAWriteOutsideThePushersScope() async throws {
        let schema = try #require(Self.schema)
        var outcomes: [String: Int] = [:]
        for seed in Self.seeds() {
            var random = SplitMix64(seed: 28_040, index: seed)
            let world = try await World(schema: schema)
            try await world.populate(&random)
            for _ in 0..<10 {
                let user = random.pick(Self.users)
                guard let (kind, push) = try await world.drawEffect(by: user, &random) else { continue }
                let before = try await AccessControlTests.serverState(world.serverStore)
                let theirs = try await world.privateRows(ofAllBut: user)
                let recordsBefore = try await AccessControlTests.records(of: theirs, in: world.serverStore)
                let answer: PushResponse
                do {
                    answer = try await world.hands[user]!.push(push, to: world.transports[user]!)
                } catch {
                    Issue.record("seed \(seed): \(user)'s \(kind) failed on the server: \(error): \(push)")
                    continue
                }
                let after = try await AccessControlTests.serverState(world.serverStore)
                if let refusal = answer.refusal {
                    outcomes["\(kind) refused", default: 0] += 1
                    #expect(before == after, "seed \(seed): a refused push changed the server: \(push)")
                    if case .outOfScope(let key) = refusal {
                        let owner = before.rows[key]?["owner"]
                        #expect(
                            owner == .text(user) || owner == .text("all") || push.contains { $0.key.id == key.id },
                            "seed \(seed): the refusal names a row \(user) may not see: \(refusal)")
                    }
                    continue
                }
                outcomes["\(kind) accepted", default: 0] += 1
                let recordsAfter = try await AccessControlTests.records(of: theirs, in: world.serverStore)
                for key in theirs where recordsBefore[key] != recordsAfter[key] {
                    Issue.record(
                        "seed \(seed): \(user)'s \(kind) changed \(before.rows[key]?["owner"].map { "\($0)" } ?? "?")'s private \(key): \(before.rows[key] ?? [:]) -> \(after.rows[key].map { "\($0)" } ?? "deleted")"
                    )
                }
            }
        }
        if Self.isLarge { print("SyncPushEffectScope delete rules: \(outcomes.sorted { $0.key < $1.key })") }
        #expect(
            outcomes.keys.contains { $0.hasSuffix("accepted") } && outcomes.keys.contains { $0.hasSuffix("refused") })
    }

    // MARK: - Uniqueness merges

    /// A uniqueness merge set off by one user (a new folder, or a rename, holding the name of a
    /// shared folder, or a shared folder renamed to her private folder's name) never takes a row
    /// out of another user's scope: every row another user may see before the push and that is
    /// alive after it is one that user may still see, and no private row of another changes.
    @Test func aUniquenessMergeNeverTakesARowOutOfAnotherUsersScope() async throws {
        let schema = try #require(Self.schema)
        var outcomes: [String: Int] = [:]
        for seed in Self.seeds() {
            var random = SplitMix64(seed: 28_041, index: seed)
            let world = try await World(schema: schema)
            try await world.populate(&random)
            for _ in 0..<10 {
                let user = random.pick(Self.users)
                let rows = try await world.live()
                let shared = rows.filter { $0.key.entity == "Folder" && $0.value["owner"] == .text("all") }
                    .sorted { $0.key < $1.key }
                let mine = rows.filter { $0.key.entity == "Folder" && $0.value["owner"] == .text(user) }
                    .sorted { $0.key < $1.key }
                guard let target = shared.randomElement(using: &random) else { continue }
                let stamp = try world.hands[user]!.stamp()
                let kind: String
                let push: [RowChange]
                switch random.next(below: 3) {
                case 0:
                    kind = "new folder"
                    // Stamped after the insert, so the shared folder's name is the row's.
                    let row = try world.newRow("Folder", owner: random.chance(0.7) ? user : "all", by: user, &random)
                    let named = try world.hands[user]!.stamp()
                    push = [row.merged(with: .update(row.key, values: ["name": target.value["name"]!], at: named))]
                case 1:
                    guard let own = mine.randomElement(using: &random) else { continue }
                    kind = "private renamed"
                    push = [.update(own.key, values: ["name": target.value["name"]!], at: stamp)]
                default:
                    guard let own = mine.randomElement(using: &random) else { continue }
                    kind = "shared renamed"
                    push = [.update(target.key, values: ["name": own.value["name"]!], at: stamp)]
                }
                let theirs = try await world.privateRows(ofAllBut: user)
                let recordsBefore = try await AccessControlTests.records(of: theirs, in: world.serverStore)
                let answer: PushResponse
                do {
                    answer = try await world.hands[user]!.push(push, to: world.transports[user]!)
                } catch {
                    Issue.record("seed \(seed): \(user)'s \(kind) failed on the server: \(error): \(push)")
                    continue
                }
                let after = try await world.live()
                for resolution in answer.resolutions {
                    switch resolution {
                    case .merged: outcomes["\(kind) merged", default: 0] += 1
                    case .refused: outcomes["\(kind) refused", default: 0] += 1
                    case .rejected: outcomes["\(kind) rejected", default: 0] += 1
                    }
                }
                if answer.refusal != nil { outcomes["\(kind) push refused", default: 0] += 1 }
                for other in Self.users where other != user {
                    for (key, values) in rows where values["owner"] == .text(other) || values["owner"] == .text("all") {
                        guard let now = after[key], now["owner"] != .text(other), now["owner"] != .text("all") else {
                            continue
                        }
                        Issue.record(
                            "seed \(seed): \(user)'s \(kind) took \(key) out of \(other)'s scope: \(values) -> \(now)")
                    }
                }
                let recordsAfter = try await AccessControlTests.records(of: theirs, in: world.serverStore)
                for key in theirs where recordsBefore[key] != recordsAfter[key] {
                    Issue.record("seed \(seed): \(user)'s \(kind) changed another's private \(key)")
                }
            }
        }
        if Self.isLarge { print("SyncPushEffectScope merges: \(outcomes.sorted { $0.key < $1.key })") }
        #expect(
            outcomes.keys.contains { $0.hasSuffix(" merged") } && outcomes.keys.contains { $0.hasSuffix(" refused") })
    }

    // MARK: - Taking shared rows

    /// A user takes a shared folder or box (its owner becomes hers), with a rename or without,
    /// or lets go of links to shared rows first. The push is refused whole, the server unchanged,
    /// exactly when a row another user may still see (theirs or a shared one) links to the taken
    /// row through a to-one: the link would be hidden from them, and the rows that need it
    /// dropped from their devices with their edits (red team rtsync4 W20, W21, W26, A4).
    @Test func aUserTakesNoSharedRowAnotherUsersRowsLinkTo() async throws {
        let schema = try #require(Self.schema)
        var outcomes: [String: Int] = [:]
        for seed in Self.seeds() {
            var random = SplitMix64(seed: 28_042, index: seed)
            let world = try await World(schema: schema)
            try await world.populate(&random)
            for step in 0..<12 {
                let user = random.pick(Self.users)
                let rows = try await world.live()
                let shared = rows.filter {
                    ["Folder", "Box"].contains($0.key.entity) && $0.value["owner"] == .text("all")
                }
                .map(\.key).sorted()
                guard let target = shared.randomElement(using: &random) else { continue }
                let linking = rows.filter { key, values in
                    key != target && values["owner"] != .text(user) && values.values.contains(.uuid(target.id))
                }.map(\.key).sorted()
                if !linking.isEmpty, random.chance(0.3) {
                    // The users whose rows link to it let go of it first (those they may change).
                    for key in linking {
                        guard case .text(let owner)? = rows[key]?["owner"] else { continue }
                        let changer = owner == "all" ? user : owner
                        let toOnes = rows[key]!.filter { $0.value == .uuid(target.id) }.map(\.key)
                        let stamp = try world.hands[changer]!.stamp()
                        try await world.expectAccepted(
                            [
                                .update(
                                    key, values: Dictionary(uniqueKeysWithValues: toOnes.map { ($0, .null) }), at: stamp
                                )
                            ],
                            by: changer)
                    }
                    outcomes["let go first", default: 0] += 1
                }
                let now = try await world.live()
                let stillLinking = now.filter { key, values in
                    key != target && values["owner"] != .text(user) && values.values.contains(.uuid(target.id))
                }
                var values: [String: SyncValue] = ["owner": .text(user)]
                if random.chance(0.3) { values[target.entity == "Folder" ? "name" : "label"] = .text("taken\(step)") }
                let before = try await AccessControlTests.serverState(world.serverStore)
                let answer = try await world.hands[user]!.push(
                    [.update(target, values: values, at: try world.hands[user]!.stamp())], to: world.transports[user]!)
                let after = try await AccessControlTests.serverState(world.serverStore)
                if let refusal = answer.refusal {
                    outcomes["refused", default: 0] += 1
                    #expect(!stillLinking.isEmpty, "seed \(seed): \(user) taking \(target) was refused: \(refusal)")
                    #expect(before == after, "seed \(seed): a refused take changed the server")
                    guard case .outOfScope(target)? = answer.refusal else {
                        Issue.record("seed \(seed): the refusal is not outOfScope(\(target)): \(refusal)")
                        continue
                    }
                } else {
                    outcomes["accepted", default: 0] += 1
                    #expect(
                        stillLinking.isEmpty,
                        "seed \(seed): \(user) took \(target) while \(stillLinking.keys.sorted()) link to it")
                }
            }
        }
        if Self.isLarge { print("SyncPushEffectScope takes: \(outcomes.sorted { $0.key < $1.key })") }
        #expect(outcomes["refused", default: 0] > 0 && outcomes["accepted", default: 0] > 0)
    }

    // MARK: - Support

    static func seeds() -> [Int] {
        let only = ProcessInfo.processInfo.environment["MODELWRIGHT_SEED"].flatMap { Int($0) }
        return only.map { [$0] } ?? Array(0..<caseCount)
    }

    /// Three users' rows on one server, each user pushing by hand.
    final class World: @unchecked Sendable {
        let serverStore: Store
        let server: SyncServer
        var hands: [String: AccessControlTests.Hand] = [:]
        var transports: [String: any SyncTransport] = [:]
        var folderCount = 0

        init(
            schema: SchemaDescription,
            wallClock: @escaping @Sendable () -> UInt64 = { HybridLogicalClock.wallMilliseconds() }
        ) async throws {
            serverStore = try Store.inMemory(schema: schema, history: .enabled(author: "server"))
            server = try await SyncServer(
                store: serverStore, authenticate: { $0 }, scopes: PushEffectScopeTests.scopes, wallClock: wallClock)
            for user in PushEffectScopeTests.users {
                hands[user] = AccessControlTests.Hand(user, version: server.schemaVersion)
                transports[user] = server.transport(credentials: user)
            }
        }

        /// The server's newest cursor.
        func serverCursor() async throws -> Int {
            try await serverStore.performQuery {
                Int(try SyncBookkeeping.value("cursor", on: $0.connection) ?? "0") ?? 0
            }
        }

        /// The server's live rows and their values.
        func live() async throws -> [RowKey: [String: SyncValue]] {
            try await SyncSnapshot.read(serverStore).rows
        }

        /// The live rows `user` may see, of `entity`.
        func visible(to user: String, _ entity: String) async throws -> [RowKey] {
            try await live().filter { key, values in
                key.entity == entity && (values["owner"] == .text(user) || values["owner"] == .text("all"))
            }.map(\.key).sorted()
        }

        /// The rows, live or deleted, whose owner is a user other than `user`.
        func privateRows(ofAllBut user: String) async throws -> [RowKey] {
            try await serverStore.performQuery { context in
                let statement = try context.connection.statement(
                    "SELECT \"entity\", \"id\" FROM \(quoted(SyncBookkeeping.rows))")
                var all: [RowKey] = []
                while try statement.step() {
                    if let id = UUID(uuidString: statement.string(1)) {
                        all.append(RowKey(entity: statement.string(0), id: id))
                    }
                }
                statement.reset()
                var keys: [RowKey] = []
                for key in all {
                    guard let record = try SyncBookkeeping.change(of: key, on: context.connection),
                        case .text(let owner)? = record.values["owner"], owner != user, owner != "all"
                    else { continue }
                    keys.append(key)
                }
                return keys.sorted()
            }
        }

        func newRow(_ entity: String, owner: String, by user: String, _ random: inout SplitMix64) throws -> RowChange {
            let key = RowKey(entity: entity, id: AccessControlTests.uuid(&random))
            var values: [String: SyncValue] = ["owner": .text(owner)]
            switch entity {
            case "Folder":
                folderCount += 1
                values["name"] = .text("folder\(folderCount)")
            case "File": values["name"] = .text("f")
            default: values["label"] = .text("box")
            }
            return .insert(key, values: values, at: try hands[user]!.stamp())
        }

        /// Each user makes private and shared rows, then links her own files and folders to rows
        /// she may see (other users' shared rows included); every push is accepted.
        func populate(_ random: inout SplitMix64) async throws {
            for round in 0..<2 {
                for user in PushEffectScopeTests.users {
                    var rows: [RowChange] = []
                    for entity in ["Folder", "Folder", "Box", "File", "File", "File"] where random.chance(0.8) {
                        rows.append(
                            try newRow(entity, owner: random.chance(0.5) ? user : "all", by: user, &random))
                    }
                    try await expectAccepted(rows, by: user)
                    let folders = try await visible(to: user, "Folder")
                    let boxes = try await visible(to: user, "Box")
                    var edits: [RowChange] = []
                    for row in rows where row.key.entity != "Box" {
                        let stamp = try hands[user]!.stamp()
                        var values: [String: SyncValue] = [:]
                        if row.key.entity == "Folder" {
                            // A tree only downwards from older folders, so no cycle.
                            let older = folders.filter { $0 != row.key }
                            if round > 0 || random.chance(0.5), !older.isEmpty, random.chance(0.6) {
                                values["parent"] = .uuid(random.pick(older).id)
                            }
                            if !values.isEmpty { edits.append(.update(row.key, values: values, at: stamp)) }
                            continue
                        }
                        for toOne in PushEffectScopeTests.fileToOnes where random.chance(0.5) {
                            let targets = toOne.target == "Box" ? boxes : folders
                            guard !targets.isEmpty else { continue }
                            values[toOne.name] = .uuid(random.pick(targets).id)
                        }
                        var edit = RowChange.update(row.key, values: values, at: stamp)
                        for folder in folders where random.chance(0.3) {
                            edit = edit.merged(with: .link(row.key, "tags", to: folder.id, at: stamp))
                        }
                        edits.append(edit)
                    }
                    try await expectAccepted(edits, by: user)
                }
            }
        }

        /// One drawn push by `user` that deletes a shared row, directly or through a uniqueness
        /// resolution, and its kind; `nil` when there is nothing of the kind to try.
        func drawEffect(by user: String, _ random: inout SplitMix64) async throws -> (String, [RowChange])? {
            let rows = try await live()
            let shared = rows.filter { $0.value["owner"] == .text("all") }.map(\.key).sorted()
            let sharedFolders = shared.filter { $0.entity == "Folder" }
            let stamp = try hands[user]!.stamp()
            switch random.next(below: 3) {
            case 0:
                guard !shared.isEmpty else { return nil }
                let key = random.pick(shared)
                return ("delete \(key.entity)", [.delete(key, at: stamp)])
            case 1:
                // The name of a folder another user keeps private: the rename is refused, and the
                // shared folder deleted.
                let hidden = rows.filter { key, values in
                    key.entity == "Folder" && values["owner"] != .text(user) && values["owner"] != .text("all")
                }.sorted { $0.key < $1.key }
                guard !sharedFolders.isEmpty, let other = hidden.randomElement(using: &random) else { return nil }
                return (
                    "refused rename",
                    [.update(random.pick(sharedFolders), values: ["name": other.value["name"]!], at: stamp)]
                )
            default:
                // The name of one of the user's own private folders: merged into it.
                let mine = rows.filter { key, values in key.entity == "Folder" && values["owner"] == .text(user) }
                    .sorted { $0.key < $1.key }
                guard !sharedFolders.isEmpty, let own = mine.randomElement(using: &random) else { return nil }
                return (
                    "merging rename",
                    [.update(random.pick(sharedFolders), values: ["name": own.value["name"]!], at: stamp)]
                )
            }
        }

        func expectAccepted(_ changes: [RowChange], by user: String) async throws {
            guard !changes.isEmpty else { return }
            let answer = try await hands[user]!.push(changes, to: transports[user]!)
            if let refusal = answer.refusal { Issue.record("\(user)'s own push was refused: \(refusal)") }
        }
    }
}
