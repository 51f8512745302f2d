import Foundation
import ModelwrightTestSupport

@_spi(Generated) @testable import Modelwright

/// A small synced model for the store-backed sync tests: cards with every kind of sync value, a
/// to-one link with no foreign key, and a many-to-many link set to labels.
enum SyncPlanner {
    static let schema = SchemaDescription(
        modelName: "SyncPlanner",
        version: 1,
        entities: [
            EntityDescription(
                name: "Card",
                attributes: [
                    AttributeDescription(name: "title", type: .string),
                    AttributeDescription(name: "rating", type: .int64),
                    AttributeDescription(name: "done", type: .bool),
                    AttributeDescription(name: "due", type: .date, isOptional: true),
                    AttributeDescription(name: "owner", type: .string),
                ],
                relationships: [
                    RelationshipDescription(name: "parent", destination: "Card", cardinality: .toOne),
                    RelationshipDescription(
                        name: "labels", destination: "Label", inverse: "cards", cardinality: .toMany),
                ]
            ),
            EntityDescription(
                name: "Label",
                attributes: [
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "owner", type: .string),
                ],
                relationships: [
                    RelationshipDescription(name: "cards", destination: "Card", inverse: "labels", cardinality: .toMany)
                ]
            ),
        ]
    )

    static var version: SyncSchemaVersion {
        SyncSchemaVersion(model: schema.modelName, version: schema.version, checksum: schema.checksum.hexDigits)
    }
}

struct Card: Record, Hashable {
    typealias ID = RecordID<Card>
    static let entityName = "Card"
    let id: ID
    var title: String
    var rating: Int64
    var done: Bool
    var due: Date?
    var owner: String
    var parentID: Card.ID?

    init(
        id: ID = ID(), title: String, rating: Int64 = 0, done: Bool = false, due: Date? = nil, owner: String = "",
        parentID: Card.ID? = nil
    ) {
        self.id = id
        self.title = title
        self.rating = rating
        self.done = done
        self.due = due
        self.owner = owner
        self.parentID = parentID
    }

    func encode(to row: inout RowEncoder) throws {
        try row.encode(title)
        try row.encode(rating)
        try row.encode(done)
        try row.encode(due)
        try row.encode(owner)
        try row.encode(parentID)
    }

    init(id: ID, row: inout RowDecoder) throws {
        self.id = id
        title = try row.decode()
        rating = try row.decode()
        done = try row.decode()
        due = try row.decode()
        owner = try row.decode()
        parentID = try row.decode()
    }

    struct Fields: RecordFields {
        typealias Target = Card
        let path: FieldPath
        var title: Field<String> { path.field("title") }
        var owner: Field<String> { path.field("owner") }
        var labels: ToMany<Label.Fields> { path.toMany("labels") }
    }
}

struct Label: Record, Hashable {
    typealias ID = RecordID<Label>
    static let entityName = "Label"
    let id: ID
    var name: String
    var owner: String

    init(id: ID = ID(), name: String, owner: String = "") {
        self.id = id
        self.name = name
        self.owner = owner
    }

    func encode(to row: inout RowEncoder) throws {
        try row.encode(name)
        try row.encode(owner)
    }

    init(id: ID, row: inout RowDecoder) throws {
        self.id = id
        name = try row.decode()
        owner = try row.decode()
    }

    struct Fields: RecordFields {
        typealias Target = Label
        let path: FieldPath
        var name: Field<String> { path.field("name") }
        var cards: ToMany<Card.Fields> { path.toMany("cards") }
    }
}

/// Everything a store holds that sync moves: each row's values by entity and ID, and the pairs of
/// the join table. Two stores that converged have equal snapshots.
struct SyncSnapshot: Equatable, CustomStringConvertible {
    var rows: [RowKey: [String: SyncValue]] = [:]
    var links: Set<[UUID]> = []

    static func read(_ store: Store) async throws -> SyncSnapshot {
        try await store.performAndSave(author: "snapshot") { context in
            var snapshot = SyncSnapshot()
            for entity in context.layout.entities.values where !entity.isAbstract {
                let statement = try context.connection.statement("SELECT \"id\" FROM \(quoted(entity.table))")
                var ids: [UUID] = []
                while try statement.step() {
                    if let id = statement.uuid(0) { ids.append(id) }
                }
                statement.reset()
                for id in ids {
                    snapshot.rows[RowKey(entity: entity.name, id: id)] = try context.syncValues(of: id, in: entity)
                }
            }
            if let card = context.layout.entities["Card"], let table = try context.syncLinkTable("labels", of: card) {
                let statement = try context.connection.statement(
                    "SELECT \"source\", \"destination\" FROM \(quoted(table.table))")
                while try statement.step() {
                    if let source = statement.uuid(0), let destination = statement.uuid(1) {
                        snapshot.links.insert([source, destination])
                    }
                }
                statement.reset()
            }
            return snapshot
        }
    }

    var description: String {
        "\(rows.count) rows, \(links.count) links"
    }
}

/// The server, reached through a network a test controls: a device that is offline fails every
/// request; otherwise a request may be lost before the server sees it, its answer may be lost
/// after the server applied it, and it may be delivered twice. Decisions come from a seeded
/// generator, so a run repeats exactly.
final class FlakyNetwork: SyncTransport, Sendable {
    struct Lost: Error {}

    private struct State {
        var random: SplitMix64
        var offline = false
        var lossRate = 0.0
        var dropped = 0
        var duplicated = 0
        var pushes = 0
        var pulls = 0
    }

    private let server: Locked<any SyncTransport>
    private let state: Locked<State>
    private let interleaved = Locked<(@Sendable () async throws -> Void)?>(nil)

    /// Runs `write` before every request until cleared: a local commit made while a sync is
    /// between its steps (after stamping, before pushing, before each pulled page applies).
    func interleave(_ write: (@Sendable () async throws -> Void)?) {
        interleaved.withLock { $0 = write }
    }

    init(server: any SyncTransport, seed: UInt64) {
        self.server = Locked(server)
        state = Locked(State(random: SplitMix64(seed: seed)))
    }

    /// Sends every later request to `server`: the server was replaced (restored from a copy).
    func retarget(to server: any SyncTransport) {
        self.server.withLock { $0 = server }
    }

    func set(offline: Bool, lossRate: Double) {
        state.withLock {
            $0.offline = offline
            $0.lossRate = lossRate
        }
    }

    var counts: (dropped: Int, duplicated: Int, pushes: Int, pulls: Int) {
        state.withLock { ($0.dropped, $0.duplicated, $0.pushes, $0.pulls) }
    }

    /// What happens to one request: lost before, delivered (once or twice), answer lost after.
    private func fate() throws -> (twice: Bool, loseAnswer: Bool) {
        try state.withLock { state in
            if state.offline { throw Lost() }
            if state.random.chance(state.lossRate) {
                state.dropped += 1
                throw Lost()
            }
            let twice = state.random.chance(state.lossRate / 2)
            if twice { state.duplicated += 1 }
            let loseAnswer = state.random.chance(state.lossRate)
            if loseAnswer { state.dropped += 1 }
            return (twice, loseAnswer)
        }
    }

    func push(_ request: PushRequest) async throws -> PushResponse {
        if let write = interleaved.withLock({ $0 }) { try await Task { try await write() }.value }
        let fate = try fate()
        state.withLock { $0.pushes += 1 }
        // Through JSON, as over a wire.
        let sent = try JSONDecoder().decode(PushRequest.self, from: try JSONEncoder().encode(request))
        let server = self.server.withLock { $0 }
        var response = try await server.push(sent)
        if fate.twice { response = try await server.push(sent) }
        if fate.loseAnswer { throw Lost() }
        return try JSONDecoder().decode(PushResponse.self, from: try JSONEncoder().encode(response))
    }

    func pull(_ request: PullRequest) async throws -> PullResponse {
        if let write = interleaved.withLock({ $0 }) { try await Task { try await write() }.value }
        let fate = try fate()
        state.withLock { $0.pulls += 1 }
        let sent = try JSONDecoder().decode(PullRequest.self, from: try JSONEncoder().encode(request))
        let server = self.server.withLock { $0 }
        var response = try await server.pull(sent)
        if fate.twice { response = try await server.pull(sent) }
        if fate.loseAnswer { throw Lost() }
        return try JSONDecoder().decode(PullResponse.self, from: try JSONEncoder().encode(response))
    }
}
