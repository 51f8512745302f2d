import Foundation
import Modelwright
import ModelwrightTestSupport

#if MODELWRIGHT_POSTGRES
    import ModelwrightPostgres
#endif

/// The storage engine a behavioural suite runs on: each parameterised test runs once per engine
/// from one source (`@Test(arguments: TestEngine.available)`). PostgreSQL joins when the package
/// has its engine and the test support could start a cluster; otherwise the reason is printed
/// once and the suites run on SQLite alone.
package enum TestEngine: String, CustomStringConvertible, Sendable {
    case sqlite
    case postgres

    /// The engines of this machine.
    package static let available: [TestEngine] = {
        #if MODELWRIGHT_POSTGRES
            guard PostgresCluster.shared != nil else {
                print(
                    "Behavioural suites run on SQLite only: \(PostgresCluster.unavailableReason ?? "PostgreSQL is not available")"
                )
                return [.sqlite]
            }
            return [.sqlite, .postgres]
        #else
            print("Behavioural suites run on SQLite only: the package was built without its PostgreSQL engine")
            return [.sqlite]
        #endif
    }()

    package var description: String { rawValue }

    /// Runs `body` with a new, empty store of `schema`, then closes the store, whether `body`
    /// returned or threw: a suite holds no connection after its test. The database stays until the
    /// cluster is removed: `DROP DATABASE` waits until every backend of the cluster acknowledges it,
    /// and a test that stops a server process (`SIGSTOP`) would hold it, and every later
    /// `CREATE DATABASE`, until that test ends.
    package func withStore<Result>(
        schema: SchemaDescription, history: HistoryTracking = .disabled, _ body: (Store) async throws -> Result
    ) async throws -> Result {
        let store = try await makeStore(schema: schema, history: history)
        let result: Result
        do {
            result = try await body(store)
        } catch {
            try? store.close()
            throw error
        }
        try store.close()
        return result
    }

    /// A new, empty store of `schema`: in memory on SQLite, a fresh database on PostgreSQL.
    private func makeStore(schema: SchemaDescription, history: HistoryTracking) async throws -> Store {
        switch self {
        case .sqlite:
            return try Store.inMemory(schema: schema, history: history)
        case .postgres:
            #if MODELWRIGHT_POSTGRES
                guard let cluster = PostgresCluster.shared else { throw Unavailable() }
                let name = "mw_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())"
                let admin = try await PostgresConnection(PostgresConfiguration(cluster.connectionString()))
                try await admin.execute("CREATE DATABASE \(name)")
                await admin.close()
                let configuration = PostgresConfiguration(cluster.connectionString(database: name))
                return try Store(postgres: configuration, schema: schema, history: history, readers: 1)
            #else
                throw Unavailable()
            #endif
        }
    }

    /// PostgreSQL was asked for on a machine without it.
    private struct Unavailable: Error, CustomStringConvertible {
        var description: String { "PostgreSQL is not available to this test run" }
    }
}
