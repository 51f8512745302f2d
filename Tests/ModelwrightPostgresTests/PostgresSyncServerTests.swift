import Foundation
import Modelwright
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing
import Trips

/// The sync server over PostgreSQL, as in production: devices on SQLite push and pull through it
/// and end with the server's rows.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresSyncServerTests {
    @Test func devicesOnSQLiteConvergeThroughAServerOnPostgres() async throws {
        let configuration = try await makeDatabase()
        let serverStore = try Store(postgres: configuration, schema: Trips.schema, history: .enabled(author: "server"))
        defer { try? serverStore.close() }
        let server = try await SyncServer(store: serverStore)
        var devices: [(Store, SyncEngine)] = []
        for _ in 0..<3 {
            let store = try Store.inMemory(schema: Trips.schema, history: .enabled(author: "app"))
            devices.append((store, try await SyncEngine(store: store, transport: server, pullLimit: 5)))
        }
        var random = SplitMix64(seed: 2_888)
        var writes = 0
        for _ in 0..<60 {
            let (store, engine) = random.pick(devices)
            let groups = try await store.performQuery { try $0.fetch(Group.request()) }.sorted {
                $0.id.uuid.uuidString < $1.id.uuid.uuidString
            }
            switch random.next(below: 6) {
            case 0, 1:
                let group = Group(order: Int16(random.next(below: 100)), label: "group \(random.next(below: 100))")
                let organization = Organization(
                    name: "org \(random.next(below: 100))", logo: random.chance(0.5) ? Data([1, 2, 3]) : nil)
                try await store.performAndSave { context in
                    try context.insert(group)
                    try context.insert(organization)
                }
                writes += 2
            case 2...3 where !groups.isEmpty:
                let group = random.pick(groups).with(label: "renamed \(random.next(below: 100))")
                try await store.performAndSave { try $0.update(group) }
                writes += 1
            case 4 where !groups.isEmpty:
                let group = random.pick(groups)
                try await store.performAndSave { try $0.delete(group.id) }
                writes += 1
            default:
                try await engine.sync()
            }
        }
        for _ in 0..<2 {
            for (_, engine) in devices { try await engine.sync() }
        }
        let expectedGroups = Set(try await serverStore.performQuery { try $0.fetch(Group.request()) })
        let expectedOrganizations = Set(try await serverStore.performQuery { try $0.fetch(Organization.request()) })
        #expect(!expectedGroups.isEmpty)
        for (store, _) in devices {
            #expect(Set(try await store.performQuery { try $0.fetch(Group.request()) }) == expectedGroups)
            #expect(Set(try await store.performQuery { try $0.fetch(Organization.request()) }) == expectedOrganizations)
        }
        print(
            "PostgresSyncServerTests: 3 devices, \(writes) writes, \(expectedGroups.count) groups and "
                + "\(expectedOrganizations.count) organizations on the PostgreSQL server")
    }

    /// Drawn: the server's PostgreSQL database is copied (`CREATE DATABASE … TEMPLATE`, while the
    /// server is stopped) and the server goes on; later it is replaced by one over the copy, as an
    /// operator restores a backup. Devices hold cursors the restored server gives out again to
    /// other rows; after syncing they still hold the server's rows, and no group a device inserted
    /// and nobody deleted is lost.
    @Test func devicesConvergeThroughAServerRestoredFromACopy() async throws {
        let cluster = try #require(PostgresCluster.shared)
        for seed in 0..<2 {
            var random = SplitMix64(seed: 2_906, index: seed)
            let live = "mw_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())"
            let backup = live + "_copy"
            let admin = try await PostgresConnection(PostgresConfiguration(cluster.connectionString()))
            try await admin.execute("CREATE DATABASE \(live)")
            var serverStore = try Store(
                postgres: PostgresConfiguration(cluster.connectionString(database: live)), schema: Trips.schema,
                history: .enabled(author: "server"))
            let relay = Relay(try await SyncServer(store: serverStore))
            var devices: [(Store, SyncEngine)] = []
            for _ in 0..<3 {
                let store = try Store.inMemory(schema: Trips.schema, history: .enabled(author: "app"))
                devices.append((store, try await SyncEngine(store: store, transport: relay, pullLimit: 3)))
            }
            var inserted: Set<Group.ID> = []
            var deleted: Set<Group.ID> = []
            let copyStep = 4 + random.next(below: 12)
            let restoreStep = copyStep + 4 + random.next(below: 12)
            for step in 0..<48 {
                if step == copyStep {
                    try serverStore.close()
                    try await admin.execute("CREATE DATABASE \(backup) TEMPLATE \(live)")
                    serverStore = try Store(
                        postgres: PostgresConfiguration(cluster.connectionString(database: live)),
                        schema: Trips.schema, history: .enabled(author: "server"))
                    relay.server = try await SyncServer(store: serverStore)
                }
                if step == restoreStep {
                    try serverStore.close()
                    serverStore = try Store(
                        postgres: PostgresConfiguration(cluster.connectionString(database: backup)),
                        schema: Trips.schema, history: .enabled(author: "server"))
                    relay.server = try await SyncServer(store: serverStore)
                }
                let (store, engine) = random.pick(devices)
                let groups = try await store.performQuery { try $0.fetch(Group.request()) }.sorted {
                    $0.id.uuid.uuidString < $1.id.uuid.uuidString
                }
                switch random.next(below: 5) {
                case 0, 1:
                    let group = Group(order: Int16(random.next(below: 100)), label: "group \(random.next(below: 100))")
                    try await store.performAndSave { try $0.insert(group) }
                    inserted.insert(group.id)
                case 2 where !groups.isEmpty:
                    let group = random.pick(groups)
                    try await store.performAndSave { try $0.delete(group.id) }
                    deleted.insert(group.id)
                default:
                    try await engine.sync()
                }
            }
            for _ in 0..<3 {
                for (_, engine) in devices { try await engine.sync() }
            }
            let expected = Set(try await serverStore.performQuery { try $0.fetch(Group.request()) })
            #expect(Set(expected.map(\.id)) == inserted.subtracting(deleted), "seed \(seed)")
            for (store, _) in devices {
                #expect(Set(try await store.performQuery { try $0.fetch(Group.request()) }) == expected, "seed \(seed)")
            }
            try serverStore.close()
            await admin.close()
        }
    }
}

/// The in-process server, replaceable between requests (a server restored from a backup).
private final class Relay: SyncTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var current: SyncServer

    init(_ server: SyncServer) {
        current = server
    }

    var server: SyncServer {
        get { lock.withLock { current } }
        set { lock.withLock { current = newValue } }
    }

    func push(_ request: PushRequest) async throws -> PushResponse {
        try await server.push(request)
    }

    func pull(_ request: PullRequest) async throws -> PullResponse {
        try await server.pull(request)
    }
}
