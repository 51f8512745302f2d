import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs a campaign in child processes of this executable and watches them: a child that dies by
/// a signal or stops making progress is the input it had started, which is recorded before a new
/// child carries on from the next input. One spawn per failure, not per input.
struct FuzzSupervisor {
    /// How the supervisor is tuned.
    struct Limits: Sendable {
        /// An input still running after this long is killed and counted as a hang.
        var hangSeconds: Double = 10
        /// An input that finished but took this much processor time in one command is counted as slow.
        var slowSeconds: Double = 3
        /// The address-space limit of a child, so a runaway allocation ends it rather than the machine.
        var memoryMegabytes: Int = 4096
    }

    /// The campaign to run.
    let campaign: FuzzCampaign
    /// Its limits.
    let limits: Limits
    /// The arguments a child needs to make the same inputs (seed, counts, corpus).
    let childArguments: [String]
    /// Whether to print a line every few hundred inputs.
    let showsProgress: Bool

    /// Runs inputs `range` and returns what happened.
    func run(_ range: Range<Int>) throws -> FuzzReport {
        var report = FuzzReport(campaign: campaign, limits: limits)
        report.echoesFailures = showsProgress
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("modelwright-fuzz-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        var next = range.lowerBound
        var fruitlessSpawns = 0
        let started = DispatchTime.now().uptimeNanoseconds
        while next < range.upperBound {
            let before = next
            try spawn(from: next, to: range.upperBound, scratch: scratch, report: &report, next: &next)
            report.spawns += 1
            fruitlessSpawns = next == before ? fruitlessSpawns + 1 : 0
            if fruitlessSpawns >= 3 {
                throw FuzzError("the runner made no progress in three spawns at input \(campaign.name(at: next))")
            }
        }
        report.seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        return report
    }

    /// What the supervisor knows of the input a child is running.
    private struct Current {
        var ordinal: Int
        var command = ""
        var started = DispatchTime.now().uptimeNanoseconds
    }

    private func spawn(from first: Int, to end: Int, scratch: URL, report: inout FuzzReport, next: inout Int) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
        if !FileManager.default.isExecutableFile(atPath: process.executableURL?.path ?? "") {
            process.executableURL = Bundle.main.executableURL
        }
        process.arguments =
            ["run"] + childArguments + [
                "--from", String(first), "--to", String(end), "--memory-mb", String(limits.memoryMegabytes),
            ]
        process.currentDirectoryURL = scratch
        var environment = ProcessInfo.processInfo.environment
        // A short backtrace of the crashed thread names the function at fault, which tells crash
        // classes apart; without registers, images or other threads it takes well under a second.
        environment["SWIFT_BACKTRACE"] =
            "enable=yes,interactive=no,color=no,threads=crashed,registers=none,images=none,sanitize=no,"
            + "limit=24,top=8,output-to=stderr"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        let errorPath = scratch.appendingPathComponent("stderr.txt")
        _ = FileManager.default.createFile(atPath: errorPath.path, contents: nil)
        let errorHandle = try FileHandle(forWritingTo: errorPath)
        process.standardError = errorHandle
        try process.run()
        try? errorHandle.close()

        let descriptor = output.fileHandleForReading.fileDescriptor
        var pending: [UInt8] = []
        var current: Current?
        var killed = false
        var lastOutput = DispatchTime.now().uptimeNanoseconds
        var chunk = [UInt8](repeating: 0, count: 65_536)
        reading: while true {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 200)
            if ready > 0 {
                let count = read(descriptor, &chunk, chunk.count)
                if count <= 0 { break reading }
                lastOutput = DispatchTime.now().uptimeNanoseconds
                pending += chunk[0..<count]
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[..<newline], as: UTF8.self)
                    pending.removeSubrange(...newline)
                    handle(line, current: &current, report: &report, next: &next)
                }
            } else if ready < 0, errno != EINTR {
                break reading
            }
            if killed { continue }
            // Read after the lines were handled: an input they started began after any earlier reading.
            let now = DispatchTime.now().uptimeNanoseconds
            if let running = current, Double(now - running.started) / 1e9 > limits.hangSeconds {
                kill(process.processIdentifier, SIGKILL)
                killed = true
                report.record(
                    FuzzFailure(
                        input: campaign.input(at: running.ordinal), name: campaign.name(at: running.ordinal),
                        kind: .hang, signal: nil, command: running.command,
                        seconds: Double(now - running.started) / 1e9,
                        detail: "killed after \(limits.hangSeconds) s without finishing"))
                next = running.ordinal + 1
            } else if current == nil, Double(now - lastOutput) / 1e9 > limits.hangSeconds {
                kill(process.processIdentifier, SIGKILL)
                killed = true
            }
        }
        process.waitUntilExit()
        guard !killed, let running = current else { return }
        // The child stopped in the middle of an input without being killed: a crash.
        let signal = process.terminationReason == .uncaughtSignal ? process.terminationStatus : nil
        let errors = (try? String(contentsOf: errorPath, encoding: .utf8)) ?? ""
        report.record(
            FuzzFailure(
                input: campaign.input(at: running.ordinal), name: campaign.name(at: running.ordinal), kind: .crash,
                signal: signal, command: running.command,
                seconds: Double(DispatchTime.now().uptimeNanoseconds - running.started) / 1e9,
                detail: Self.crashSummary(errors, status: process.terminationStatus, signal: signal)))
        next = running.ordinal + 1
    }

    /// Follows the child's protocol: `start`, `step` and `done` lines (see ``FuzzRunner``).
    private func handle(_ line: String, current: inout Current?, report: inout FuzzReport, next: inout Int) {
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        guard fields.count >= 2, let ordinal = Int(fields[1]) else { return }
        switch fields[0] {
        case "start":
            current = Current(ordinal: ordinal)
        case "step" where fields.count >= 3:
            current?.command = fields[2]
        case "done" where fields.count >= 7:
            current = nil
            next = ordinal + 1
            let milliseconds = Int(fields[2]) ?? 0
            let verdict = FuzzExecutor.Verdict(rawValue: fields[3]) ?? .silent
            report.count(verdict)
            if showsProgress, report.inputs % 250 == 0 {
                FileHandle.standardError.write(Data("\(report.progressLine)\n".utf8))
            }
            if verdict.isFailure {
                report.record(
                    FuzzFailure(
                        input: campaign.input(at: ordinal), name: campaign.name(at: ordinal),
                        kind: FuzzFailure.Kind(verdict), signal: nil, command: fields[5],
                        seconds: Double(milliseconds) / 1000, detail: fields[6]))
            } else if Double(milliseconds) / 1000 > limits.slowSeconds {
                report.record(
                    FuzzFailure(
                        input: campaign.input(at: ordinal), name: campaign.name(at: ordinal), kind: .slow,
                        signal: nil, command: fields[4], seconds: Double(milliseconds) / 1000,
                        detail: "took \(milliseconds) ms (limit \(Int(limits.slowSeconds * 1000)) ms)"))
            }
        default:
            break
        }
    }

    /// Why a child crashed, from its standard error: Swift's `Fatal error` or runtime failure
    /// message, and the first frames of the crashed thread that are not the Swift runtime's.
    static func crashSummary(_ errors: String, status: Int32, signal: Int32?) -> String {
        let lines = errors.split(whereSeparator: \.isNewline).map(String.init)
        let reason =
            lines.first { $0.contains("Fatal error") || $0.contains("runtime failure") }
            ?? lines.first { $0.hasPrefix("***") && !$0.contains("Backtracing") } ?? ""
        let frames = lines.compactMap(frame).filter { !$0.hasPrefix("swift_") && !$0.contains(" in libswiftCore") }
        let cause = signal.map { "signal \($0) (\(FuzzFailure.signalName($0)))" } ?? "exit status \(status)"
        var summary = cause
        if !reason.isEmpty { summary += ": " + reason.trimmingCharacters(in: CharacterSet(charactersIn: "* ")) }
        if !frames.isEmpty { summary += " at " + frames.prefix(3).joined(separator: " < ") }
        // Addresses differ from run to run and would split one crash into many classes.
        return String(
            summary.replacingOccurrences(of: "0x[0-9a-fA-F]+", with: "0x…", options: .regularExpression).prefix(600))
    }

    /// The function, module and source line of a backtrace line such as
    /// `1  0x00005… CoreDataReader.parse(_:) + 86 in ModelwrightSchema at /path/CoreDataReader.swift:12:5`.
    private static func frame(_ line: String) -> String? {
        guard let address = line.range(of: " 0x"), line.prefix(8).contains(where: \.isNumber),
            let symbolStart = line[address.upperBound...].firstIndex(of: " ")
        else { return nil }
        let rest = line[symbolStart...].trimmingCharacters(in: .whitespaces)
        guard let plus = rest.range(of: " + ") else { return nil }
        let symbol = rest[..<plus.lowerBound]
        let module = rest.range(of: " in ").map { rest[$0.upperBound...].prefix { $0 != " " } } ?? ""
        let place = rest.range(of: " at ").map { rest[$0.upperBound...].split(separator: "/").last ?? "" } ?? ""
        return "\(symbol) in \(module)" + (place.isEmpty ? "" : " (\(place))")
    }
}

/// A problem with the harness itself, not with an input.
struct FuzzError: Error, CustomStringConvertible {
    /// What went wrong.
    let description: String

    /// Creates an error saying `description`.
    init(_ description: String) {
        self.description = description
    }
}
