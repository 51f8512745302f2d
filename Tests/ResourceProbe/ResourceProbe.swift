import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs a command and writes what it cost, as the operating system measured it, for tests that
/// bound a command's time and memory (`BoundedInputTests`).
///
/// `ResourceProbe <report file> <timeout seconds> <executable> <arguments>…` spawns the command
/// with this process's standard streams, kills it after the timeout, and writes
/// `<exit status> <wall seconds> <cpu seconds> <peak bytes> <timed out 0|1>` to the report file.
///
/// It exists because Linux counts, in a child's peak memory, the memory of the process that
/// spawned it (`exec` keeps the old address space's high-water mark): spawned straight from a
/// test process holding hundreds of megabytes, every command would seem to use that much. This
/// probe is small, so what it reports is the command's own.
@main
enum ResourceProbe {
    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count >= 4, let timeout = Double(arguments[2]) else {
            FileHandle.standardError.write(
                Data("usage: ResourceProbe <report> <timeout> <executable> <arguments>…\n".utf8))
            exit(2)
        }
        let argv = arguments[3...].map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid = pid_t()
        let start = Date()
        let spawned = posix_spawn(&pid, arguments[3], nil, nil, argv, environ)
        guard spawned == 0 else {
            FileHandle.standardError.write(Data("ResourceProbe: cannot run \(arguments[3]): \(spawned)\n".utf8))
            exit(3)
        }
        var status: Int32 = 0
        var usage = rusage()
        var timedOut = false
        while true {
            let waited = wait4(pid, &status, WNOHANG, &usage)
            if waited == pid { break }
            if waited < 0 && errno != EINTR { exit(4) }
            if !timedOut, Date().timeIntervalSince(start) > timeout {
                kill(pid, SIGKILL)
                timedOut = true
            }
            usleep(1_000)
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
        let cpu = time(usage.ru_utime) + time(usage.ru_stime)
        let report = "\(code) \(seconds) \(cpu) \(peakBytes) \(timedOut ? 1 : 0)\n"
        guard FileManager.default.createFile(atPath: arguments[1], contents: Data(report.utf8)) else { exit(5) }
        exit(0)
    }
}
