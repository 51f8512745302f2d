import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright

/// The server forgets a device it has not seen for a while (``SyncServer/forgetDevices(unseenFor:)``)
/// or one the app removed (``SyncServer/forgetDevice(_:)``): what the device was shown under scopes
/// goes, and a forgotten device that comes back pulls everything again and ends holding exactly
/// its user's view of the server, its offline edits kept, nothing lost or doubled.
struct DeviceForgettingTests {
    static let isLarge = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1"
    static let caseCount = isLarge ? 300 : 24
    static let day: UInt64 = 24 * 3600 * 1000

    /// Each device of user `a` sees the rows `a` owns; user `b` likewise.
    static let scopes: [String: SyncServer.Scope] = [
        "Card": { user, row in row.values["owner"] == .text(user) },
        "Label": { user, row in row.values["owner"] == .text(user) },
    ]

    /// A transport that keeps every refusal the server answered a pull with.
    final class Recording: SyncTransport {
        let inner: any SyncTransport
        let refusals = Locked<[SyncError]>([])

        init(_ inner: any SyncTransport) {
            self.inner = inner
        }

        func push(_ request: PushRequest) async throws -> PushResponse {
            try await inner.push(request)
        }

        func pull(_ request: PullRequest) async throws -> PullResponse {
            let response = try await inner.pull(request)
            if let refusal = response.refusal { refusals.withLock { $0.append(refusal) } }
            return response
        }
    }

    struct Counts {
        var forgotten = 0
        var shownForgotten = 0
        var left = 0
        var leftLater = 0
        var entered = 0
        var offlineEdits = 0
        var rows = 0
    }

    /// Drawn: user a's phone syncs, then goes quiet while the server's own code moves a's cards to
    /// b and b's to a, a's laptop edits, inserts and deletes, and the phone edits offline; the
    /// server forgets the phone by time (or the app removes it). The phone comes back, is told to
    /// pull from the beginning, and then holds exactly a's rows as the server holds them (none of
    /// the cards that left a's scope, every card that entered it), its offline edits to rows still
    /// in a's scope on the server; the laptop, seen lately, keeps its records.
    @Test func aForgottenDeviceThatComesBackResyncsWhole() async throws {
        var counts = Counts()
        for seed in 0..<Self.caseCount {
            try await run(seed: seed, counts: &counts)
        }
        print(
            "DeviceForgettingTests: \(Self.caseCount) runs, \(counts.forgotten) devices forgotten "
                + "(\(counts.shownForgotten) records of what they were shown), \(counts.left) cards left "
                + "and \(counts.entered) entered the user's scope while away, \(counts.leftLater) left it later, \(counts.offlineEdits) offline edits; "
                + "\(counts.rows) rows on the returning devices")
        #expect(counts.left > 0 && counts.entered > 0 && counts.leftLater > 0 && counts.offlineEdits > 0)
    }

    private func run(seed: Int, counts: inout Counts) async throws {
        var random = SplitMix64(seed: 2_829, index: seed)
        let now = Locked(HybridLogicalClock.wallMilliseconds())
        let serverStore = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "admin"))
        let server = try await SyncServer(
            store: serverStore, authenticate: { $0 }, scopes: Self.scopes, wallClock: { now.withLock { $0 } })
        func device(_ user: String) async throws -> (Store, SyncEngine, Recording) {
            let store = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "app"))
            let transport = Recording(server.transport(credentials: user))
            return (store, try await SyncEngine(store: store, transport: transport, pullLimit: 4), transport)
        }
        let (phone, phoneEngine, phoneTransport) = try await device("a")
        let (laptop, laptopEngine, _) = try await device("a")
        let (other, otherEngine, _) = try await device("b")
        let context = "seed \(seed)"

        // Both users make cards and labels, link them, and everyone syncs.
        for (store, user) in [(phone, "a"), (laptop, "a"), (other, "b")] {
            let count = 2 + random.next(below: 5)
            try await store.performAndSave { context in
                let label = Label(name: "\(user) label", owner: user)
                try context.insert(label)
                for index in 0..<count {
                    let card = Card(title: "\(user) \(index)", rating: Int64(index), owner: user)
                    try context.insert(card)
                    try context.link(card.id, to: label.id) { $0.labels }
                }
            }
        }
        for engine in [phoneEngine, laptopEngine, otherEngine, phoneEngine, laptopEngine] {
            try await engine.sync()
        }

        // The phone goes quiet. The server's own code moves cards between the users.
        let cards = try await serverStore.performQuery { try $0.fetch(Card.request()) }.sorted {
            $0.id.uuid.uuidString < $1.id.uuid.uuidString
        }
        let movedCards = cards.filter { _ in random.chance(0.4) }.map { card in
            var card = card
            card.owner = card.owner == "a" ? "b" : "a"
            return card
        }
        counts.left += movedCards.filter { $0.owner == "b" }.count
        counts.entered += movedCards.filter { $0.owner == "a" }.count
        try await serverStore.performAndSave { context in
            for card in movedCards { try context.update(card) }
        }
        // The laptop edits, inserts and deletes a's cards.
        let laptopCards = try await laptop.performQuery { try $0.fetch(Card.request()) }.sorted {
            $0.id.uuid.uuidString < $1.id.uuid.uuidString
        }
        var deletes: [Card.ID] = []
        var updates: [Card] = []
        for var card in laptopCards {
            switch random.next(below: 4) {
            case 0: deletes.append(card.id)
            case 1:
                card.title = "laptop \(random.next(below: 1_000))"
                updates.append(card)
            default: break
            }
        }
        try await laptop.performAndSave { [deletes, updates] context in
            for id in deletes { try context.delete(id) }
            for card in updates { try context.update(card) }
            try context.insert(Card(title: "laptop new", owner: "a"))
        }
        // The phone edits offline (its own rating field, so no edit races the laptop's titles).
        let phoneCards = try await phone.performQuery { try $0.fetch(Card.request()) }.sorted {
            $0.id.uuid.uuidString < $1.id.uuid.uuidString
        }
        var phoneEdits: [UUID: Int64] = [:]
        var edited: [Card] = []
        for var card in phoneCards where random.chance(0.5) {
            card.rating = Int64(1_000 + random.next(below: 1_000))
            phoneEdits[card.id.uuid] = card.rating
            edited.append(card)
        }
        try await phone.performAndSave { [edited] context in
            for card in edited { try context.update(card) }
            try context.insert(Card(title: "phone new", owner: "a"))
        }
        counts.offlineEdits += phoneEdits.count + 1

        // Time passes; the laptop and b's device are seen, the phone is not.
        now.withLock { $0 += 40 * Self.day }
        try await laptopEngine.sync()
        try await otherEngine.sync()
        let phoneID = try await phone.performQuery { try SyncBookkeeping.node(on: $0.connection) }
        let laptopID = try await laptop.performQuery { try SyncBookkeeping.node(on: $0.connection) }
        let shownBefore = try await Self.shownCount(of: phoneID, on: serverStore)
        #expect(shownBefore > 0, "\(context): the phone was shown nothing")
        let laptopShown = try await Self.shownCount(of: laptopID, on: serverStore)
        if random.chance(0.5) {
            let forgotten = try await server.forgetDevices(unseenFor: .seconds(30 * 24 * 3600))
            #expect(forgotten == [phoneID], "\(context): forgot \(forgotten), not the phone alone")
        } else {
            try await server.forgetDevice(phoneID)
        }
        counts.forgotten += 1
        counts.shownForgotten += shownBefore
        #expect(try await Self.shownCount(of: phoneID, on: serverStore) == 0)
        #expect(try await Self.shownCount(of: laptopID, on: serverStore) == laptopShown)

        // The phone comes back: told its cursor expired, it pulls everything again.
        try await phoneEngine.sync()
        let refusals = phoneTransport.refusals.withLock { $0 }
        #expect(
            refusals.contains {
                if case .cursorExpired = $0 { return true }
                return false
            }, "\(context): the returning phone was not told to pull from the beginning (\(refusals))")
        try await laptopEngine.sync()
        try await phoneEngine.sync()

        try await Self.expectView(of: "a", on: phone, as: serverStore, context: "\(context), back")
        // Cards the phone was shown before it was forgotten, untouched since, leave a's scope
        // later: the phone was told of them again when it came back, so it drops them now.
        let later = try await serverStore.performQuery { try $0.fetch(Card.request()) }.sorted {
            $0.id.uuid.uuidString < $1.id.uuid.uuidString
        }.filter { $0.owner == "a" && random.chance(0.5) }.map { card in
            var card = card
            card.owner = "b"
            return card
        }
        counts.leftLater += later.count
        try await serverStore.performAndSave { context in
            for card in later { try context.update(card) }
        }
        try await phoneEngine.sync()
        try await Self.expectView(of: "a", on: phone, as: serverStore, context: "\(context), later")

        let held = try await SyncSnapshot.read(serverStore)
        // The offline edits of rows still in a's scope reached the server, once.
        for (id, rating) in phoneEdits {
            let key = RowKey(entity: "Card", id: id)
            guard let values = held.rows[key], values["owner"] == .text("a") else { continue }
            #expect(values["rating"] == .integer(rating), "\(context): the phone's offline edit of \(key) was lost")
        }
        let phoneNew = held.rows.values.filter { $0["title"] == .text("phone new") }
        #expect(phoneNew.count == 1, "\(context): the phone's offline card is on the server \(phoneNew.count) times")
        // Having pulled everything, the phone is an ordinary device again: it was told once to
        // pull from the beginning, and its mark (which no pull clears) no longer refuses it.
        let expired = phoneTransport.refusals.withLock { $0 }.filter {
            if case .cursorExpired = $0 { return true }
            return false
        }
        #expect(expired.count == 1, "\(context): the phone was told \(expired.count) times to pull from the beginning")
        counts.rows += try await SyncSnapshot.read(phone).rows.count
    }

    /// Expects `store` to hold exactly `user`'s rows as the server's store holds them, and the
    /// links between them.
    static func expectView(of user: String, on store: Store, as serverStore: Store, context: String) async throws {
        let held = try await SyncSnapshot.read(serverStore)
        let found = try await SyncSnapshot.read(store)
        let expected = held.rows.filter { $0.value["owner"] == .text(user) }
        #expect(
            found.rows == expected,
            "\(context): the device holds \(found.rows.count) rows, \(user)'s view \(expected.count)")
        for key in found.rows.keys where expected[key] == nil {
            Issue.record("\(context): the device still holds \(key), which left \(user)'s scope")
        }
        for key in expected.keys where found.rows[key] == nil {
            Issue.record("\(context): the device lacks \(key), which is in \(user)'s scope")
        }
        let links = held.links.filter {
            expected[RowKey(entity: "Card", id: $0[0])] != nil && expected[RowKey(entity: "Label", id: $0[1])] != nil
        }
        #expect(
            found.links == links,
            "\(context): the device holds \(found.links.count) links, \(user)'s view \(links.count)")
    }

    /// How many records of what `device` was shown the server keeps.
    static func shownCount(of device: SyncNodeID, on store: Store) async throws -> Int {
        try await store.performQuery { context in
            let statement = try context.connection.statement(
                "SELECT COUNT(*) FROM \(quoted(SyncBookkeeping.state)) WHERE \"key\" LIKE '\(SyncServer.shownPrefix(device))%'"
            )
            defer { statement.reset() }
            _ = try statement.step()
            return Int(statement.int64(0))
        }
    }
}
