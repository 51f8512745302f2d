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

    /// Runs `body` with a new, empty store of `schema`, then closes the store (and on PostgreSQL
    /// drops its database), whether `body` returned or threw: a suite holds no connection after
    /// its test.
    package func withStore<Result>(
        schema: SchemaDescription, history: HistoryTracking = .disabled, _ body: (Store) async throws -> Result
    ) async throws -> Result {
        let (store, database) = try await makeStoreAndDatabase(schema: schema, history: history)
        let result: Result
        do {
            result = try await body(store)
        } catch {
            try? store.close()
            await Self.drop(database)
            throw error
        }
        try store.close()
        await Self.drop(database)
        return result
    }

    /// The store and, on PostgreSQL, the name of the database made for it.
    private func makeStoreAndDatabase(
        schema: SchemaDescription, history: HistoryTracking
    ) async throws -> (store: Store, database: String?) {
        switch self {
        case .sqlite:
            return (try Store.inMemory(schema: schema, history: history), nil)
        case .postgres:
            #if MODELWRIGHT_POSTGRES
                guard let cluster = PostgresCluster.shared else { throw Unavailable() }
                let name = "mw_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())"
                let admin = try await PostgresConnection(PostgresConfiguration(cluster.connectionString()))
                try await admin.execute("CREATE DATABASE \(name)")
                await admin.close()
                let configuration = PostgresConfiguration(cluster.connectionString(database: name))
                return (try Store(postgres: configuration, schema: schema, history: history, readers: 1), name)
            #else
                throw Unavailable()
            #endif
        }
    }

    /// Drops a test database, ending what still holds it (a listener that has not yet hung up).
    private static func drop(_ database: String?) async {
        #if MODELWRIGHT_POSTGRES
            guard let database, let cluster = PostgresCluster.shared,
                let admin = try? await PostgresConnection(PostgresConfiguration(cluster.connectionString()))
            else { return }
            _ = try? await admin.execute("DROP DATABASE IF EXISTS \(database) WITH (FORCE)")
            await admin.close()
        #endif
    }

    /// PostgreSQL was asked for on a machine without it.
    private struct Unavailable: Error, CustomStringConvertible {
        var description: String { "PostgreSQL is not available to this test run" }
    }
}
