import Foundation
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing

/// Several processes start on one database at the same moment: the schema is created by
/// exactly one of them (under `pg_advisory_xact_lock`), every one of them finds it, and no
/// increment any of them makes under the lock is lost.
@Suite(.ownThread, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresProcessRaceTests {
    @Test(arguments: [2, 5])
    func creationRunsOnceAndNoWriteIsLost(processes: Int) async throws {
        let configuration = try await makeDatabase()
        let increments = 20
        let outputs = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<processes {
                group.addTask {
                    let process = Process()
                    process.executableURL = URL(fileURLWithPath: builtExecutable(named: "PostgresRaceProbe"))
                    process.arguments = [configuration.connectionString, String(increments)]
                    let output = Pipe()
                    process.standardOutput = output
                    process.standardError = output
                    let data = try await runToEnd(process, output: output)
                    return String(decoding: data, as: UTF8.self) + (process.terminationStatus == 0 ? "" : "failed")
                }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(outputs.filter { $0 == "created\n" }.count == 1, "\(outputs)")
        #expect(outputs.filter { $0 == "found\n" }.count == processes - 1, "\(outputs)")
        let connection = try await PostgresConnection(configuration)
        let counter = try await connection.query("SELECT value FROM \"Counter\"")
        #expect(counter.count == 1)
        #expect(counter[0, 0] == .int64(Int64(processes * increments)))
    }

    /// Processes that open `Store(postgres:)` on one empty database at the same moment: every one
    /// succeeds (a second creation would fail on the tables the first made), and the metadata is
    /// written by one transaction only (its rows carry one creating transaction).
    @Test(.timeLimit(.minutes(2)), arguments: [2, 4])
    func storesOpeningTogetherCreateTheSchemaOnce(processes: Int) async throws {
        let configuration = try await makeDatabase()
        let start = Date().timeIntervalSince1970 + 1.5
        let outputs = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<processes {
                group.addTask {
                    let process = Process()
                    process.executableURL = URL(fileURLWithPath: builtExecutable(named: "PostgresRaceProbe"))
                    process.arguments = ["open", configuration.connectionString, String(start)]
                    let output = Pipe()
                    process.standardOutput = output
                    process.standardError = output
                    let data = try await runToEnd(process, output: output)
                    return String(decoding: data, as: UTF8.self) + (process.terminationStatus == 0 ? "" : "failed")
                }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(outputs == Array(repeating: "opened\n", count: processes), "\(outputs)")
        let connection = try await PostgresConnection(configuration)
        let creators = try await connection.query(
            "SELECT count(DISTINCT xmin::text) FROM _modelwright_metadata")
        #expect(creators[0, 0] == .int64(1))
        let users = try await connection.query("SELECT count(*) FROM \"User\"")
        #expect(users[0, 0] == .int64(Int64(processes)))
        await connection.close()
    }
}
