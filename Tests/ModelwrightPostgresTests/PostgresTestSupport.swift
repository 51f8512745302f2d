import Foundation
import Modelwright
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing

/// Whether the suites can run: the cluster started (its reason is printed once when it did not).
let postgresIsAvailable = PostgresCluster.shared != nil

/// The server's name of the database `configuration` connects to, as ``PostgresStatementLog`` knows it.
func databaseName(_ configuration: PostgresConfiguration) async throws -> String {
    let connection = try await PostgresConnection(configuration)
    let rows = try await connection.query("SELECT current_database()", format: .text)
    await connection.close()
    guard case .text(let name) = rows[0, 0] else { return "" }
    return name
}

/// A fresh database on the shared cluster, so suites running in parallel never meet; its
/// configuration connects over TCP with the password.
func makeDatabase() async throws -> PostgresConfiguration {
    let cluster = try #require(PostgresCluster.shared)
    let name = "mw_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())"
    let admin = try await PostgresConnection(PostgresConfiguration(cluster.connectionString()))
    try await admin.execute("CREATE DATABASE \(name)")
    await admin.close()
    return PostgresConfiguration(cluster.connectionString(database: name))
}

/// A connection to a fresh database.
func makeConnection() async throws -> PostgresConnection {
    try await PostgresConnection(makeDatabase())
}

/// What `plan --engine postgres` prints for `stage` (``MigrationStage/postgresStatements(on:)``),
/// run on a fresh database of its own.
func printedStatements(of stage: MigrationStage) async throws -> [String] {
    let connection = try PostgresConnection(connectingNow: try await makeDatabase())
    defer { connection.close() }
    return try stage.postgresStatements(on: connection)
}
