import Foundation
import Modelwright
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing

/// The storage engine a behavioural suite runs on: each parameterised test runs once per engine
/// from one source. PostgreSQL joins when the test support could start a cluster; otherwise the
/// reason is printed once and the suites run on SQLite alone.
enum TestEngine: String, CustomTestStringConvertible, Sendable {
    case sqlite
    case postgres

    /// The engines of this machine.
    static let available: [TestEngine] = {
        guard PostgresCluster.shared != nil else {
            print(
                "TripsTests run on SQLite only: \(PostgresCluster.unavailableReason ?? "PostgreSQL is not available")")
            return [.sqlite]
        }
        return [.sqlite, .postgres]
    }()

    var testDescription: String { rawValue }

    /// A new, empty store of `schema`: in memory on SQLite, a fresh database on PostgreSQL.
    func makeStore(schema: SchemaDescription) async throws -> Store {
        switch self {
        case .sqlite:
            return try Store.inMemory(schema: schema)
        case .postgres:
            let cluster = try #require(PostgresCluster.shared)
            let name = "mw_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())"
            let admin = try await PostgresConnection(PostgresConfiguration(cluster.connectionString()))
            try await admin.execute("CREATE DATABASE \(name)")
            await admin.close()
            let configuration = PostgresConfiguration(cluster.connectionString(database: name))
            return try Store(postgres: configuration, schema: schema, readers: 1)
        }
    }
}
