import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright

/// Scopes keep users apart through uniqueness resolution, many-to-many links and to-ones without
/// inverse: a row leaving a user's scope never blocks that user's device, and a uniqueness
/// conflict with a row outside the pusher's scope refuses that row alone, naming nothing of the
/// other row (issue 28).
@Suite(.serialized) struct ScopeIsolationTests {
    static func stamp() throws -> HybridTimestamp {
        var clock = HybridLogicalClock(node: SyncNodeID(), maximumDriftMilliseconds: HybridLogicalClock.unbounded)
        return try clock.tick(wallMilliseconds: HybridLogicalClock.wallMilliseconds())
    }
    static func set(_ store: Store, _ entity: String, _ id: UUID, _ values: [String: SyncValue], author: String = "app")
        async throws
    {
        let change = RowChange.insert(RowKey(entity: entity, id: id), values: values, at: try stamp())
        try await store.performAndSave(author: author) { try $0.materialize(change) }
    }
    static func device(_ schema: SchemaDescription, _ transport: some SyncTransport) async throws -> (Store, SyncEngine)
    {
        let store = try Store.inMemory(schema: schema, history: .enabled(author: "app"))
        return (store, try await SyncEngine(store: store, transport: transport))
    }
    static let ownerScope: SyncServer.Scope = { user, row in
        row.values["owner"] == .text(user) || row.values["owner"] == .text("all")
    }

    /// With `@sync(unique: merge)`, bob's row holding the unique value of alice's private row is
    /// refused alone: alice's row keeps its values and stays hers, and bob learns nothing of it.
    @Test func uniqueMergeNeverTakesOverAnotherUsersRow() async throws {
        let scope: SyncServer.Scope = { user, row in row.values["color"] == .text(user) }
        let serverStore = try Store.inMemory(schema: UniqueSyncModel.schema, history: .enabled(author: "server"))
        let server = try await SyncServer(store: serverStore, authenticate: { $0 }, scopes: ["UTag": scope])
        let (alice, aliceEngine) = try await Self.device(UniqueSyncModel.schema, server.transport(credentials: "alice"))
        let bobsTransport = RecordingTransport(server.transport(credentials: "bob"))
        let (bob, bobEngine) = try await Self.device(UniqueSyncModel.schema, bobsTransport)
        let secret = UUID()
        try await Self.set(alice, "UTag", secret, ["name": .text("secret"), "color": .text("alice")])
        try await aliceEngine.sync()
        let bobsRow = UUID()
        let bobsOther = UUID()
        try await Self.set(bob, "UTag", bobsRow, ["name": .text("secret"), "color": .text("bob")])
        try await Self.set(bob, "UTag", bobsOther, ["name": .text("other"), "color": .text("bob")])
        try await bobEngine.sync()
        let answers = bobsTransport.answers
        #expect(answers.allSatisfy { $0.refusal == nil }, "\(answers)")
        #expect(answers.flatMap(\.resolutions) == [.refused(entity: "UTag", constraint: ["name"], row: bobsRow)])
        #expect(!"\(answers)".contains(secret.uuidString), "an answer names alice's row: \(answers)")
        try await bobEngine.sync()
        try await aliceEngine.sync()
        let truth = try await SyncSnapshot.read(serverStore)
        #expect(truth.rows[RowKey(entity: "UTag", id: secret)]?["color"] == .text("alice"), "server: \(truth.rows)")
        #expect(truth.rows[RowKey(entity: "UTag", id: bobsRow)] == nil, "bob's colliding row was kept")
        #expect(truth.rows[RowKey(entity: "UTag", id: bobsOther)] != nil, "the rest of bob's push was lost")
        let bobs = try await SyncSnapshot.read(bob)
        #expect(bobs.rows[RowKey(entity: "UTag", id: secret)] == nil, "bob holds alice's row")
        #expect(bobs.rows[RowKey(entity: "UTag", id: bobsRow)] == nil, "bob's device kept its refused row")
        #expect(
            try await SyncSnapshot.read(alice).rows[RowKey(entity: "UTag", id: secret)] != nil, "alice lost her row")
    }

    /// With `@sync(unique: reject)`, bob's row holding the unique value of a row only alice may see
    /// is refused alone (not his whole push), and his device goes on syncing. The scope is by row
    /// ID, so bob's colliding row is in his own scope.
    @Test func uniqueRejectAcrossUsersRefusesTheRowAlone() async throws {
        let alicesRow = UUID()
        let scope: SyncServer.Scope = { user, row in (user == "alice") == (row.key.id == alicesRow) }
        let serverStore = try Store.inMemory(schema: UniqueSyncModel.schema, history: .enabled(author: "server"))
        let server = try await SyncServer(store: serverStore, authenticate: { $0 }, scopes: ["UCode": scope])
        let (alice, aliceEngine) = try await Self.device(UniqueSyncModel.schema, server.transport(credentials: "alice"))
        let bobsTransport = RecordingTransport(server.transport(credentials: "bob"))
        let (bob, bobEngine) = try await Self.device(UniqueSyncModel.schema, bobsTransport)
        try await Self.set(alice, "UCode", alicesRow, ["value": .text("taken")])
        try await aliceEngine.sync()
        let bobsRow = UUID()
        try await Self.set(bob, "UCode", bobsRow, ["value": .text("taken")])
        try await bobEngine.sync()
        let later = UUID()
        try await Self.set(bob, "UCode", later, ["value": .text("bob-later")])
        for _ in 0..<2 { try await bobEngine.sync() }
        let answers = bobsTransport.answers
        #expect(answers.allSatisfy { $0.refusal == nil }, "\(answers)")
        #expect(answers.flatMap(\.resolutions) == [.refused(entity: "UCode", constraint: ["value"], row: bobsRow)])
        #expect(!"\(answers)".contains(alicesRow.uuidString), "an answer names alice's row: \(answers)")
        let truth = try await SyncSnapshot.read(serverStore)
        #expect(truth.rows[RowKey(entity: "UCode", id: later)] != nil, "bob's later row never arrives")
        #expect(truth.rows[RowKey(entity: "UCode", id: alicesRow)]?["value"] == .text("taken"))
        #expect(truth.rows[RowKey(entity: "UCode", id: bobsRow)] == nil)
        #expect(try await SyncSnapshot.read(bob).rows[RowKey(entity: "UCode", id: bobsRow)] == nil)
    }

    /// Bob's card is linked (many-to-many) to a label that then leaves his scope and is dropped on
    /// his device; his later edits of the card and other rows still push (the server keeps the link).
    @Test func manyToManyTargetLeavingTheScopeDoesNotBlockTheDevice() async throws {
        let serverStore = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "server"))
        let server = try await SyncServer(
            store: serverStore, authenticate: { $0 }, scopes: ["Card": Self.ownerScope, "Label": Self.ownerScope])
        let (alice, aliceEngine) = try await Self.device(SyncPlanner.schema, server.transport(credentials: "alice"))
        let (bob, bobEngine) = try await Self.device(SyncPlanner.schema, server.transport(credentials: "bob"))
        var label = Label(name: "L", owner: "all")
        var card = Card(title: "C", owner: "bob")
        try await alice.performAndSave { [label] in try $0.insert(label) }
        try await aliceEngine.sync()
        try await bobEngine.sync()
        try await bob.performAndSave { [label, card] context in
            try context.insert(card)
            try context.link(card.id, to: label.id) { $0.labels }
        }
        try await bobEngine.sync()
        label.owner = "alice"  // leaves bob's scope
        try await alice.performAndSave { [label] in try $0.update(label) }
        try await aliceEngine.sync()
        try await bobEngine.sync()  // drops the label on bob's device
        card.title = "C-edited"
        let unrelated = Card(title: "unrelated", owner: "bob")
        try await bob.performAndSave { [card] context in
            try context.update(card)
            try context.insert(unrelated)
        }
        var errors: [String] = []
        for _ in 0..<3 { do { try await bobEngine.sync() } catch { errors.append("\(error)") } }
        let truth = try await SyncSnapshot.read(serverStore)
        #expect(errors.isEmpty, "\(errors)")
        #expect(truth.rows[RowKey(entity: "Card", id: card.id.uuid)]?["title"] == .text("C-edited"))
        #expect(truth.rows[RowKey(entity: "Card", id: unrelated.id.uuid)] != nil)
    }

    /// An optional to-one without inverse (`Card.parent`) to a row that leaves the scope is hidden on
    /// the device, as a to-one with an inverse is.
    @Test func toOneWithoutInverseToARowThatLeftIsHidden() async throws {
        let serverStore = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "server"))
        let server = try await SyncServer(
            store: serverStore, authenticate: { $0 }, scopes: ["Card": Self.ownerScope, "Label": Self.ownerScope])
        let (alice, aliceEngine) = try await Self.device(SyncPlanner.schema, server.transport(credentials: "alice"))
        let (bob, bobEngine) = try await Self.device(SyncPlanner.schema, server.transport(credentials: "bob"))
        var parent = Card(title: "parent", owner: "all")
        try await alice.performAndSave { [parent] in try $0.insert(parent) }
        try await aliceEngine.sync()
        try await bobEngine.sync()
        let child = Card(title: "child", owner: "bob", parentID: parent.id)
        try await bob.performAndSave { try $0.insert(child) }
        try await bobEngine.sync()
        parent.owner = "alice"  // leaves bob's scope
        try await alice.performAndSave { [parent] in try $0.update(parent) }
        try await aliceEngine.sync()
        try await bobEngine.sync()
        let held = try await SyncSnapshot.read(bob)
        #expect(held.rows[RowKey(entity: "Card", id: parent.id.uuid)] == nil)
        #expect(held.rows[RowKey(entity: "Card", id: child.id.uuid)]?["parent"] == .null, "bob: \(held.rows)")
    }
}

/// A transport that keeps every push answer, to read what the server told the device.
private final class RecordingTransport<Base: SyncTransport>: SyncTransport, @unchecked Sendable {
    private let base: Base
    private let lock = NSLock()
    private var kept: [PushResponse] = []
    init(_ base: Base) { self.base = base }
    var answers: [PushResponse] { lock.withLock { kept } }
    func push(_ request: PushRequest) async throws -> PushResponse {
        let answer = try await base.push(request)
        lock.withLock { kept.append(answer) }
        return answer
    }
    func pull(_ request: PullRequest) async throws -> PullResponse { try await base.pull(request) }
}
