import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright

/// Access control around to-one links: drawn users, people and trips, where each trip's owner is
/// a person of its creator (or none) and the trip is shared with a drawn user. A push may not make
/// or leave a to-one link to a row outside the pusher's scope; a pull shows such a link as absent;
/// a device's later writes of the row keep the hidden link on the server; a re-link of a link hidden
/// from the pusher (to nothing, or to her own person) is accepted.
@Suite("SyncScopeLinks")
struct ScopeLinkTests {
    static let caseCount = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 120 : 12
    static let users = ["alice", "bob", "carol"]

    static let schema = SchemaDescription(
        modelName: "Shares", version: 1,
        entities: [
            EntityDescription(
                name: "Person", attributes: [AttributeDescription(name: "name", type: .string)],
                relationships: [
                    RelationshipDescription(name: "trips", destination: "Trip", inverse: "owner", cardinality: .toMany)
                ]),
            EntityDescription(
                name: "Trip",
                attributes: [
                    AttributeDescription(name: "title", type: .string),
                    AttributeDescription(name: "creator", type: .string),
                    AttributeDescription(name: "sharedWith", type: .string),
                ],
                relationships: [
                    RelationshipDescription(name: "owner", destination: "Person", inverse: "trips", cardinality: .toOne)
                ]),
        ])

    static let scopes: [String: SyncServer.Scope] = [
        "Person": { user, row in row.values["name"] == .text(user) },
        "Trip": { user, row in row.values["creator"] == .text(user) || row.values["sharedWith"] == .text(user) },
    ]

    /// Writes `change` into a device's store as the app would (its history records it): an
    /// update is written as an insert of the changed values, which `materialize` applies to the
    /// existing row (a change without an insert stamp would be a delete).
    static func write(_ store: Store, _ change: RowChange) async throws {
        try await store.performAndSave(author: "app") { try $0.materialize(change) }
    }

    /// What `user` may see of the server's rows: her people, the trips she made or was shared,
    /// each trip's owner hidden (null) unless it is hers.
    static func view(of server: SyncSnapshot, for user: String) -> [RowKey: [String: SyncValue]] {
        var result: [RowKey: [String: SyncValue]] = [:]
        for (key, values) in server.rows {
            switch key.entity {
            case "Person" where values["name"] == .text(user):
                result[key] = values
            case "Trip" where values["creator"] == .text(user) || values["sharedWith"] == .text(user):
                var shown = values
                if case .uuid(let owner)? = values["owner"],
                    server.rows[RowKey(entity: "Person", id: owner)]?["name"] != .text(user)
                {
                    shown["owner"] = .null
                }
                result[key] = shown
            default: continue
            }
        }
        return result
    }

    @Test func toOneLinksOutsideTheScopeAreRefusedAndHidden() async throws {
        var refusals = 0
        var hiddenLinks = 0
        var relinks = 0
        for seed in 0..<Self.caseCount {
            var random = SplitMix64(seed: 28_061, index: seed)
            let serverStore = try Store.inMemory(schema: Self.schema, history: .enabled(author: "server"))
            let server = try await SyncServer(store: serverStore, authenticate: { $0 }, scopes: Self.scopes)
            var stores: [String: Store] = [:]
            var engines: [String: SyncEngine] = [:]
            var people: [String: [UUID]] = [:]
            for user in Self.users {
                let store = try Store.inMemory(schema: Self.schema, history: .enabled(author: "app"))
                stores[user] = store
                engines[user] = try await SyncEngine(store: store, transport: server.transport(credentials: user))
                people[user] = (0..<(1 + random.next(below: 2))).map { _ in UUID() }
                for id in people[user] ?? [] {
                    try await Self.write(
                        store,
                        .insert(RowKey(entity: "Person", id: id), values: ["name": .text(user)], at: try Self.stamp()))
                }
            }
            // Trips: each owned by one of its creator's people, or by none; shared with anyone.
            var owners: [UUID: UUID?] = [:]
            for user in Self.users {
                for index in 0..<(1 + random.next(below: 3)) {
                    let id = UUID()
                    let owner: UUID? = random.chance(0.75) ? random.pick(people[user] ?? []) : nil
                    owners[id] = owner
                    try await Self.write(
                        stores[user]!,
                        .insert(
                            RowKey(entity: "Trip", id: id),
                            values: [
                                "title": .text("\(user) \(index)"), "creator": .text(user),
                                "sharedWith": .text(random.pick(Self.users)),
                                "owner": owner.map(SyncValue.uuid) ?? .null,
                            ], at: try Self.stamp()))
                }
            }
            for _ in 0..<2 { for user in Self.users { try await engines[user]!.sync() } }
            let synced = try await SyncSnapshot.read(serverStore)
            #expect(
                synced.rows.count == owners.count + people.values.joined().count,
                "seed \(seed): the server holds \(synced.rows.keys.sorted())")

            // Forged pushes: a trip linked to another user's person, and a re-link of one's own trip
            // to it. An unlink or re-link of a shared trip whose owner one may not see is no forgery:
            // it is accepted (the link it leaves is not checked), and changes only that link.
            let version = engines["alice"]!.schemaVersion
            for user in Self.users {
                let before = try await SyncSnapshot.read(serverStore)
                let other = random.pick(Self.users.filter { $0 != user })
                let foreign = random.pick(people[other] ?? [])
                let visible = Self.view(of: before, for: user)
                let sharedHidden = before.rows.keys.sorted().filter {
                    $0.entity == "Trip" && visible[$0] != nil && visible[$0]?["owner"] == .null
                        && before.rows[$0]?["owner"] != .null
                }
                let own = before.rows.keys.sorted().filter {
                    $0.entity == "Trip" && before.rows[$0]?["creator"] == .text(user)
                }
                var forged: [RowChange] = [
                    .insert(
                        RowKey(entity: "Trip", id: UUID()),
                        values: [
                            "title": .text("forged"), "creator": .text(user), "sharedWith": .text(user),
                            "owner": .uuid(foreign),
                        ], at: try Self.stamp())
                ]
                if let trip = own.randomElement(using: &random) {
                    forged.append(.update(trip, values: ["owner": .uuid(foreign)], at: try Self.stamp()))
                }
                for change in forged {
                    let response = try await server.push(
                        PushRequest(
                            device: SyncNodeID(), schema: version, after: nil, through: HistoryToken(1),
                            changes: ChangeSet([change])),
                        credentials: user)
                    guard case .outOfScope = response.refusal else {
                        Issue.record("seed \(seed): \(user)'s forged \(change) was not refused: \(response)")
                        continue
                    }
                    refusals += 1
                }
                #expect(try await SyncSnapshot.read(serverStore) == before, "seed \(seed): a refused push changed rows")
                if let trip = sharedHidden.randomElement(using: &random) {
                    let mine = random.pick(people[user] ?? [])
                    let owner = random.chance(0.5) ? nil : mine
                    let response = try await server.push(
                        PushRequest(
                            device: SyncNodeID(), schema: version, after: nil, through: HistoryToken(1),
                            changes: ChangeSet([
                                .update(
                                    trip, values: ["owner": owner.map(SyncValue.uuid) ?? .null], at: try Self.stamp())
                            ])),
                        credentials: user)
                    #expect(
                        response.refusal == nil, "seed \(seed): \(user)'s re-link away from a hidden owner was refused")
                    var after = try await SyncSnapshot.read(serverStore)
                    after.rows[trip]?["owner"] = before.rows[trip]?["owner"]
                    #expect(after == before, "seed \(seed): a re-link changed more than the link")
                    owners[trip.id] = owner
                    relinks += 1
                }
            }

            // Each user retitles every trip she sees, her devices' own writes of shared trips too.
            for user in Self.users {
                let snapshot = try await SyncSnapshot.read(stores[user]!)
                for key in snapshot.rows.keys where key.entity == "Trip" {
                    try await Self.write(
                        stores[user]!, .insert(key, values: ["title": .text("\(user) was here")], at: try Self.stamp()))
                }
            }
            for _ in 0..<2 { for user in Self.users { try await engines[user]!.sync() } }

            let truth = try await SyncSnapshot.read(serverStore)
            for (trip, owner) in owners {
                #expect(
                    truth.rows[RowKey(entity: "Trip", id: trip)]?["owner"] == (owner.map(SyncValue.uuid) ?? .null),
                    "seed \(seed): trip \(trip)'s owner changed on the server")
            }
            for user in Self.users {
                let device = try await SyncSnapshot.read(stores[user]!)
                let expected = Self.view(of: truth, for: user)
                #expect(device.rows == expected, "seed \(seed): \(user)'s device differs from her view")
                hiddenLinks += expected.values.filter { $0["owner"] == .null }.count
            }
        }
        #expect(refusals >= Self.caseCount * Self.users.count * 2)
        #expect(hiddenLinks > 0 && relinks > 0)
    }

    static func stamp() throws -> HybridTimestamp {
        var clock = HybridLogicalClock(node: SyncNodeID(), maximumDriftMilliseconds: HybridLogicalClock.unbounded)
        return try clock.tick(wallMilliseconds: HybridLogicalClock.wallMilliseconds())
    }
}
