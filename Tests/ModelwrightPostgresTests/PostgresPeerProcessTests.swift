import Foundation
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing

/// Two server processes on one database at an older version, started together: the migration runs
/// once between them, and each one's commits wake the other's `observe` and results controller
/// through `LISTEN`/`NOTIFY` with exactly the other's rows, and reach its persistent history.
@Suite(.ownThread, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresPeerProcessTests {
    /// The users each process commits after both are observing.
    private static let count = 5

    @Test(.timeLimit(.minutes(2)))
    func twoServerProcessesMigrateOnceAndObserveEachOthersCommits() async throws {
        let database = try await PostgresMigrationTests.populatedVersion1()
        let start = Date().timeIntervalSince1970 + 2
        let peers = [("east", "west"), ("west", "east")]
        let outputs = try await withThrowingTaskGroup(of: (String, String).self) { group in
            for (me, other) in peers {
                group.addTask {
                    let process = Process()
                    process.executableURL = URL(fileURLWithPath: builtExecutable(named: "PostgresRaceProbe"))
                    process.arguments = [
                        "peer", database.configuration.connectionString, me, other, String(Self.count), String(start),
                    ]
                    let output = Pipe()
                    process.standardOutput = output
                    process.standardError = output
                    let data = try await runToEnd(process, output: output)
                    let status = process.terminationStatus == 0 ? "" : "failed \(process.terminationStatus)"
                    return (me, String(decoding: data, as: UTF8.self) + status)
                }
            }
            return try await group.reduce(into: [String: String]()) { $0[$1.0] = $1.1 }
        }
        let committed = outputs.values.flatMap { $0.split(separator: "\n").filter { $0.hasPrefix("committed") } }
        #expect(committed.sorted() == ["committed 2", "committed 3"], "\(outputs)")
        for (me, other) in peers {
            let lines = (outputs[me] ?? "").split(separator: "\n").map(String.init)
            let theirs = (["\(other)-ready"] + (0..<Self.count).map { "\(other)-\($0)" }).sorted()
            #expect(lines.last == "done", "\(me): \(outputs[me] ?? "")")
            #expect(lines.contains("observed " + theirs.joined(separator: " ")), "\(me): \(lines)")
            #expect(lines.contains("controller " + theirs.joined(separator: " ")), "\(me): \(lines)")
            #expect(lines.contains("history \(other) \(Self.count + 1)"), "\(me): \(lines)")
        }
    }
}
