import Foundation
import Testing

/// One run of the built `modelwright` executable as a child process, measured as the operating
/// system saw it: through `ResourceProbe`, a small process that spawns the command and reports
/// its own resource usage from `wait4` (peak resident memory, CPU time), so neither what other
/// tests or threads of this process do nor this process's own memory is counted.
struct ChildProcess {
    /// What one run cost and printed.
    struct Run {
        let status: Int32
        /// Wall-clock seconds from spawn to exit.
        let seconds: Double
        /// User and system CPU seconds of the child.
        let cpuSeconds: Double
        /// Peak resident set size of the child, in bytes.
        let peakBytes: Int
        let standardOutput: Data
        let standardError: Data
        /// Whether the run was killed for taking longer than the timeout.
        let timedOut: Bool

        /// One line for a report: `validate 0.21 s (cpu 0.30 s), 31 MB, exit 1`.
        var summary: String {
            String(
                format: "%.2f s (cpu %.2f s), %d MB, exit %d%@", seconds, cpuSeconds, peakBytes / 1_000_000, status,
                timedOut ? " (killed)" : "")
        }
    }

    /// An executable SwiftPM built beside the tests.
    static func built(_ name: String) -> String? {
        let folder = Bundle.main.bundleURL
        return [folder, folder.deletingLastPathComponent()].map { $0.appendingPathComponent(name).path }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The `modelwright` executable SwiftPM built beside the tests.
    static let executable = built("modelwright")

    /// Runs `arguments` with standard output and error captured in files of `scratch`; the probe
    /// kills the command after `timeout` seconds.
    static func run(_ executable: String, _ arguments: [String], scratch: URL, timeout: Double = 60) throws -> Run {
        let probe = try #require(built("ResourceProbe"), "ResourceProbe is built beside the tests")
        let outputPath = scratch.appendingPathComponent("stdout").path
        let errorPath = scratch.appendingPathComponent("stderr").path
        let reportPath = scratch.appendingPathComponent("report").path
        try? FileManager.default.removeItem(atPath: reportPath)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: probe)
        process.arguments = [reportPath, String(timeout), executable] + arguments
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        let error = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        defer {
            try? output.close()
            try? error.close()
        }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = error
        try process.run()
        process.waitUntilExit()
        let report = try String(contentsOfFile: reportPath, encoding: .utf8).split(separator: " ")
        let fields = try #require(report.count == 5 ? report : nil, "the probe's report: \(report)")
        return Run(
            status: Int32(fields[0]) ?? -1, seconds: Double(fields[1]) ?? .infinity,
            cpuSeconds: Double(fields[2]) ?? .infinity, peakBytes: Int(fields[3]) ?? .max,
            standardOutput: (try? Data(contentsOf: URL(fileURLWithPath: outputPath))) ?? Data(),
            standardError: (try? Data(contentsOf: URL(fileURLWithPath: errorPath))) ?? Data(),
            timedOut: fields[4].hasPrefix("1"))
    }
}
