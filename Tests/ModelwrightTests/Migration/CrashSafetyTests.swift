import Foundation
import ModelwrightTestSupport
import Testing

/// A process killed with SIGKILL in the middle of a migration leaves a store that opens at the
/// old or the new version, passes `PRAGMA integrity_check`, and finishes migrating with nothing lost.
/// The migrating process is `MigrationCrashProbe`, which kills itself at the chosen point.
@Suite(.heavy, .serialized)
struct CrashSafetyTests {
    private static let probe = builtExecutable(named: "MigrationCrashProbe")

    private static func run(_ arguments: [String]) throws -> (status: Int32, signal: Bool, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: probe)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, process.terminationReason == .uncaughtSignal,
            String(decoding: output, as: UTF8.self)
        )
    }

    @Test(
        "killed at a point, the store is at the expected version, intact, and finishes migrating",
        arguments: [
            ("1:started", 1), ("1:copied", 1), ("1:committed", 2), ("2:started", 2), ("2:hook", 2), ("2:copied", 2),
        ])
    func killedMidMigration(point: String, expectedVersion: Int) throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.probe), "build the MigrationCrashProbe target")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Crash.sqlite").path
        #expect(try Self.run(["create", store, "2000"]).status == 0)

        let killed = try Self.run(["migrate", store, point])
        #expect(killed.signal && killed.status == SIGKILL, "the probe was meant to die by SIGKILL at \(point)")

        let check = try Self.run(["check", store])
        #expect(check.status == 0)
        #expect(check.output == "version=\(expectedVersion) integrity=ok\nrows=2000 filled=2000\n")
    }
}
