import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One run of the built `modelwright` executable as a child process, measured as the operating
/// system saw it: `wait4` returns the child's own resource usage (peak resident memory, CPU
/// time), so what other tests or threads of this process do is not counted.
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

    /// The `modelwright` executable SwiftPM built beside the tests.
    static let executable: String? = {
        let folder = Bundle.main.bundleURL
        return [folder, folder.deletingLastPathComponent()].map { $0.appendingPathComponent("modelwright").path }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// Runs `arguments` with standard output and error captured in files of `scratch`; kills the
    /// child after `timeout` seconds.
    static func run(_ executable: String, _ arguments: [String], scratch: URL, timeout: Double = 60) throws -> Run {
        let outputPath = scratch.appendingPathComponent("stdout").path
        let errorPath = scratch.appendingPathComponent("stderr").path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid = pid_t()
        let start = Date()
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO) }
        var status: Int32 = 0
        var usage = rusage()
        var timedOut = false
        while true {
            let waited = wait4(pid, &status, WNOHANG, &usage)
            if waited == pid { break }
            if waited < 0 && errno != EINTR { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            if Date().timeIntervalSince(start) > timeout, !timedOut {
                kill(pid, SIGKILL)
                timedOut = true
            }
            usleep(2_000)
        }
        let seconds = Date().timeIntervalSince(start)
        func time(_ value: timeval) -> Double { Double(value.tv_sec) + Double(value.tv_usec) / 1_000_000 }
        #if canImport(Darwin)
            let peakBytes = Int(usage.ru_maxrss)  // bytes on Apple platforms
        #else
            let peakBytes = Int(usage.ru_maxrss) * 1024  // kilobytes on Linux
        #endif
        // The exit status, or 128 + the signal, as a shell shows it.
        let code = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return Run(
            status: code, seconds: seconds, cpuSeconds: time(usage.ru_utime) + time(usage.ru_stime),
            peakBytes: peakBytes,
            standardOutput: (try? Data(contentsOf: URL(fileURLWithPath: outputPath))) ?? Data(),
            standardError: (try? Data(contentsOf: URL(fileURLWithPath: errorPath))) ?? Data(),
            timedOut: timedOut)
    }
}
