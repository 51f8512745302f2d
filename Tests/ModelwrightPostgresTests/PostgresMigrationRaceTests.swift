import Foundation
import Modelwright
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing
import Trips

/// Several server processes start on one database at an older version at the same moment: the
/// migration runs once (each stage committed by one process, under the model's advisory lock), all
/// of them open the store, and the data reads back migrated once.
@Suite(.ownThread, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresMigrationRaceTests {
    /// Processes that open a populated version 1 database at the same moment: every one opens it,
    /// each stage is committed by exactly one of them (the others find the version it recorded),
    /// and the data reads back migrated once (a second run of the splitting stage would fail or
    /// split again).
    @Test(.timeLimit(.minutes(3)), arguments: [2, 4])
    func processesOpeningAnOlderDatabaseTogetherMigrateItOnce(processes: Int) async throws {
        let database = try await PostgresMigrationTests.populatedVersion1()
        let start = Date().timeIntervalSince1970 + 2
        let outputs = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<processes {
                group.addTask {
                    let process = Process()
                    process.executableURL = URL(fileURLWithPath: builtExecutable(named: "PostgresRaceProbe"))
                    process.arguments = ["migrate", database.configuration.connectionString, String(start)]
                    let output = Pipe()
                    process.standardOutput = output
                    process.standardError = output
                    let data = try await runToEnd(process, output: output)
                    return String(decoding: data, as: UTF8.self) + (process.terminationStatus == 0 ? "" : "failed")
                }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(outputs.allSatisfy { $0.hasSuffix("opened\n") }, "\(outputs)")
        let committed = outputs.flatMap { $0.split(separator: "\n").filter { $0.hasPrefix("committed") } }
        #expect(committed.sorted() == ["committed 2", "committed 3"], "\(outputs)")
        try await PostgresMigrationTests.expectMigrated(database)
    }

}
