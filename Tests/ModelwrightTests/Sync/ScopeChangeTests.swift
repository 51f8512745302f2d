import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright

/// Scopes that change over time: people, trips and stops, each seen by its creator and by the one
/// user it is shared with; a trip's owner (an optional to-one) is hidden from a user who may not
/// see the person, and a stop (whose trip is a required to-one) is withheld from a user who may
/// not see its trip. Drawn runs interleave re-sharing (rows entering and leaving scopes) with
/// inserts, edits, re-links and deletes on several devices of several users, syncing at drawn
/// moments. Some changes are refused (a re-share or a delete that would take a trip from a user
/// who holds a stop of it): the device gives them up and syncs on. Afterwards each device holds
/// exactly what its user may see of the server's rows, links shown or hidden as they are now.
@Suite("SyncScopeChanges")
struct ScopeChangeTests {
    static let isLarge = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1"
    static let caseCount = isLarge ? 200 : 8
    static let stepCount = isLarge ? 80 : 40
    static let users = ["alice", "bob", "carol"]

    static let schema = SchemaDescription(
        modelName: "SharedTrips", version: 1,
        entities: [
            EntityDescription(
                name: "Person",
                attributes: [
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "creator", type: .string),
                    AttributeDescription(name: "sharedWith", type: .string),
                ],
                relationships: [
                    RelationshipDescription(name: "trips", destination: "Trip", inverse: "owner", cardinality: .toMany)
                ]),
            EntityDescription(
                name: "Trip",
                attributes: [
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "creator", type: .string),
                    AttributeDescription(name: "sharedWith", type: .string),
                ],
                relationships: [
                    RelationshipDescription(
                        name: "owner", destination: "Person", inverse: "trips", cardinality: .toOne),
                    RelationshipDescription(
                        name: "stops", destination: "Stop", inverse: "trip", cardinality: .toMany, deleteRule: .cascade),
                ]),
            EntityDescription(
                name: "Stop",
                attributes: [
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "creator", type: .string),
                    AttributeDescription(name: "sharedWith", type: .string),
                ],
                relationships: [
                    RelationshipDescription(
                        name: "trip", destination: "Trip", inverse: "stops", cardinality: .toOne, isOptional: false)
                ]),
        ])

    /// Every entity's scope: rows the user made or that were shared with her.
    static let scopes: [String: SyncServer.Scope] = {
        let mine: SyncServer.Scope = { user, row in
            row.values["creator"] == .text(user) || row.values["sharedWith"] == .text(user)
        }
        return ["Person": mine, "Trip": mine, "Stop": mine]
    }()

    static func inScope(_ values: [String: SyncValue], of user: String) -> Bool {
        values["creator"] == .text(user) || values["sharedWith"] == .text(user)
    }

    /// What `user` may see of the server's rows, worked out from the rows alone: her rows and those
    /// shared with her, a trip's owner `nil` unless she may see the person, a stop only with its trip.
    static func view(of server: SyncSnapshot, for user: String) -> [RowKey: [String: SyncValue]] {
        func visible(_ key: RowKey) -> Bool {
            guard let values = server.rows[key], inScope(values, of: user) else { return false }
            guard key.entity == "Stop" else { return true }
            guard case .uuid(let trip)? = values["trip"] else { return false }
            return visible(RowKey(entity: "Trip", id: trip))
        }
        var result: [RowKey: [String: SyncValue]] = [:]
        for (key, values) in server.rows where visible(key) {
            var shown = values
            if key.entity == "Trip", case .uuid(let owner)? = values["owner"],
                !visible(RowKey(entity: "Person", id: owner))
            {
                shown["owner"] = .null
            }
            result[key] = shown
        }
        return result
    }

    /// Writes `change` into a device's store as the app would (its history records it).
    static func write(_ store: Store, _ change: RowChange) async throws {
        try await store.performAndSave(author: "app") { context in
            // A delete as the app makes one, with its rules (a trip's stops go with it).
            if change.deleted != nil {
                try context.delete(change.key.id, of: change.key.entity)
            } else {
                try context.materialize(change)
            }
        }
    }

    static func stamp() throws -> HybridTimestamp {
        var clock = HybridLogicalClock(node: SyncNodeID(), maximumDriftMilliseconds: HybridLogicalClock.unbounded)
        return try clock.tick(wallMilliseconds: HybridLogicalClock.wallMilliseconds())
    }

    /// The counts a run reports.
    struct Counts {
        var writes = 0
        var reshares = 0
        var syncs = 0
        var refusedRows = 0
        var deletes = 0
        var hiddenLinks = 0
        var withheldStops = 0
        var rows = 0
    }

    @Test func devicesHoldExactlyWhatTheirUserMaySeeAsScopesChange() async throws {
        var counts = Counts()
        let only = ProcessInfo.processInfo.environment["MODELWRIGHT_SEED"].flatMap { Int($0) }
        for seed in only.map({ [$0] }) ?? Array(0..<Self.caseCount) {
            try await run(seed: seed, counts: &counts)
        }
        if Self.isLarge {
            print(
                "SyncScopeChanges: \(Self.caseCount) runs, \(counts.writes) writes (\(counts.reshares) re-shares, "
                    + "\(counts.deletes) deletes of trips and people), \(counts.syncs) syncs "
                    + "(\(counts.refusedRows) rows refused and given up), "
                    + "\(counts.rows) rows, "
                    + "\(counts.hiddenLinks) hidden links, \(counts.withheldStops) withheld stops at the end")
        }
        #expect(counts.reshares > 0)
        #expect(counts.hiddenLinks > 0)
        #expect(counts.withheldStops > 0)
        #expect(counts.refusedRows > 0)
    }

    private func run(seed: Int, counts: inout Counts) async throws {
        var random = SplitMix64(seed: 28_071, index: seed)
        let serverStore = try Store.inMemory(schema: Self.schema, history: .enabled(author: "server"))
        let server = try await SyncServer(store: serverStore, authenticate: { $0 }, scopes: Self.scopes)
        var devices: [(user: String, store: Store, engine: SyncEngine)] = []
        for user in Self.users {
            for _ in 0..<(1 + random.next(below: 2)) {
                let store = try Store.inMemory(schema: Self.schema, history: .enabled(author: "app"))
                let engine = try await SyncEngine(store: store, transport: server.transport(credentials: user))
                devices.append((user, store, engine))
            }
        }
        for step in 0..<Self.stepCount {
            let device = random.pick(devices)
            let user = device.user
            let local = try await SyncSnapshot.read(device.store)
            let keys = local.rows.keys.sorted()
            let own = keys.filter { local.rows[$0]?["creator"] == .text(user) }
            let ownPeople = own.filter { $0.entity == "Person" }
            let trips = keys.filter { $0.entity == "Trip" }
            var change: RowChange?
            switch random.next(below: 10) {
            case 0:
                change = .insert(
                    RowKey(entity: "Person", id: UUID()),
                    values: [
                        "name": .text("p\(step)"), "creator": .text(user), "sharedWith": .text(random.pick(Self.users)),
                    ], at: try Self.stamp())
            case 1:
                let owner: SyncValue =
                    ownPeople.isEmpty || random.chance(0.3) ? .null : .uuid(random.pick(ownPeople).id)
                change = .insert(
                    RowKey(entity: "Trip", id: UUID()),
                    values: [
                        "name": .text("t\(step)"), "creator": .text(user), "sharedWith": .text(random.pick(Self.users)),
                        "owner": owner,
                    ], at: try Self.stamp())
            case 2 where !trips.isEmpty:
                change = .insert(
                    RowKey(entity: "Stop", id: UUID()),
                    values: [
                        "name": .text("s\(step)"), "creator": .text(user), "sharedWith": .text(random.pick(Self.users)),
                        "trip": .uuid(random.pick(trips).id),
                    ], at: try Self.stamp())
            case 3 where !own.isEmpty, 4 where !own.isEmpty:
                counts.reshares += 1
                change = .insert(
                    random.pick(own), values: ["sharedWith": .text(random.pick(Self.users))], at: try Self.stamp())
            case 5 where !keys.isEmpty:
                change = .insert(random.pick(keys), values: ["name": .text("n\(step)")], at: try Self.stamp())
            case 6:
                let ownTrips = own.filter { $0.entity == "Trip" }
                guard let trip = ownTrips.randomElement(using: &random) else { break }
                let owner: SyncValue =
                    ownPeople.isEmpty || random.chance(0.3) ? .null : .uuid(random.pick(ownPeople).id)
                change = .insert(trip, values: ["owner": owner], at: try Self.stamp())
            case 7:
                let ownStops = own.filter { $0.entity == "Stop" }
                guard let stop = ownStops.randomElement(using: &random) else { break }
                change = .delete(stop, at: try Self.stamp())
            case 8 where random.chance(0.5):
                // A trip (its stops cascade) or a person (its trips' owner is cleared) the user
                // sees: refused when that reaches a row of another user's she may not see.
                let deletable = keys.filter { $0.entity != "Stop" }
                guard let key = deletable.randomElement(using: &random) else { break }
                counts.deletes += 1
                change = .delete(key, at: try Self.stamp())
            default:
                let syncing = random.chance(0.5) ? device : random.pick(devices)
                counts.syncs += 1
                let report = try await syncing.engine.sync()
                if ProcessInfo.processInfo.environment["MODELWRIGHT_TRACE"] != nil, !report.refused.isEmpty {
                    print("  refused: \(report.refused)")
                }
                counts.refusedRows += report.refused.count
            }
            if ProcessInfo.processInfo.environment["MODELWRIGHT_TRACE"] != nil {
                print(
                    "step \(step) \(user)@\(devices.firstIndex { $0.store === device.store } ?? -1): \(change.map { "\($0)" } ?? "sync")"
                )
            }
            if let change {
                counts.writes += 1
                try await Self.write(device.store, change)
            }
        }
        for _ in 0..<3 {
            for device in devices {
                counts.syncs += 1
                do {
                    counts.refusedRows += try await device.engine.sync().refused.count
                } catch {
                    let pending = try await device.store.performQuery { try SyncBookkeeping.pending(on: $0.connection) }
                    Issue.record(
                        "seed \(seed): a device of \(device.user) failed to sync after the edits: \(error); pending \(pending)"
                    )
                    return
                }
            }
        }
        let truth = try await SyncSnapshot.read(serverStore)
        counts.rows += truth.rows.count
        for (index, device) in devices.enumerated() {
            let held = try await SyncSnapshot.read(device.store)
            let expected = Self.view(of: truth, for: device.user)
            #expect(
                held.rows == expected,
                "seed \(seed): device \(index) of \(device.user) holds \(Self.difference(held.rows, expected))")
            counts.hiddenLinks +=
                expected.filter {
                    $0.key.entity == "Trip" && $0.value["owner"] == .null && truth.rows[$0.key]?["owner"] != .null
                }.count
            counts.withheldStops +=
                truth.rows.filter {
                    $0.key.entity == "Stop" && Self.inScope($0.value, of: device.user) && expected[$0.key] == nil
                }.count
        }
    }

    /// What differs between a device's rows and the expected ones, for a failure's message.
    static func difference(
        _ held: [RowKey: [String: SyncValue]], _ expected: [RowKey: [String: SyncValue]]
    ) -> String {
        var lines: [String] = []
        for key in Set(held.keys).union(expected.keys).sorted() where held[key] != expected[key] {
            lines.append(
                "\(key): held \(held[key].map { "\($0)" } ?? "nothing"), expected \(expected[key].map { "\($0)" } ?? "nothing")"
            )
        }
        return lines.joined(separator: "; ")
    }
}
