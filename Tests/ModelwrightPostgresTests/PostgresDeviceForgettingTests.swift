import Foundation
import Modelwright
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing
import Trips

/// Forgetting devices on a server over PostgreSQL: the state it deletes and the mark it leaves
/// are read and written there as on SQLite, and forgotten devices come back whole.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresDeviceForgettingTests {
    /// A transport to the server that counts the pulls it refused as expired.
    final class Counting: SyncTransport {
        let server: SyncServer
        private let expired = LockedValue(0)

        init(_ server: SyncServer) {
            self.server = server
        }

        var expiredPulls: Int { expired.get() }

        func push(_ request: PushRequest) async throws -> PushResponse {
            try await server.push(request)
        }

        func pull(_ request: PullRequest) async throws -> PullResponse {
            let response = try await server.pull(request)
            if case .cursorExpired? = response.refusal { expired.set(expired.get() + 1) }
            return response
        }
    }

    @Test func forgottenDevicesResyncFromAServerOnPostgres() async throws {
        let configuration = try await makeDatabase()
        let serverStore = try Store(postgres: configuration, schema: Trips.schema, history: .enabled(author: "server"))
        defer { try? serverStore.close() }
        let server = try await SyncServer(store: serverStore)
        var devices: [(Store, SyncEngine, Counting)] = []
        for _ in 0..<2 {
            let store = try Store.inMemory(schema: Trips.schema, history: .enabled(author: "app"))
            let transport = Counting(server)
            devices.append((store, try await SyncEngine(store: store, transport: transport, pullLimit: 3), transport))
        }
        for (index, (store, engine, _)) in devices.enumerated() {
            try await store.performAndSave { context in
                for order in 0..<5 { try context.insert(Group(order: Int16(order), label: "device \(index) \(order)")) }
            }
            try await engine.sync()
        }
        try await Task.sleep(for: .milliseconds(5))
        let forgotten = try await server.forgetDevices(unseenFor: .zero)
        #expect(forgotten.count == 2)
        #expect(try await server.forgetDevices(unseenFor: .zero).isEmpty, "a forgotten device is not seen")
        // Written while the devices are forgotten, then pulled by them from the beginning.
        let (first, firstEngine, _) = devices[0]
        let groups = try await first.performQuery { try $0.fetch(Group.request()) }
        try await first.performAndSave { context in
            try context.delete(groups[0].id)
            try context.insert(Group(order: 9, label: "after"))
        }
        try await firstEngine.sync()
        for (_, engine, _) in devices { try await engine.sync() }
        for (_, engine, _) in devices { try await engine.sync() }
        let expected = Set(try await serverStore.performQuery { try $0.fetch(Group.request()) })
        #expect(expected.count == 10)
        for (store, _, transport) in devices {
            #expect(transport.expiredPulls == 1, "each device was told once to pull from the beginning")
            #expect(Set(try await store.performQuery { try $0.fetch(Group.request()) }) == expected)
        }
    }
}
