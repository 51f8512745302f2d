import Foundation
import Modelwright
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing
import Trips

/// The sync server over PostgreSQL, as in production: devices on SQLite push and pull through it
/// and end with the server's rows.
@Suite(.enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
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
}
