import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The fuzz campaign of issue 13: seeded, deterministic mutations of `Models/Trips/*.model` and
/// of the Core Data corpus (`../shared/corpus`), run through what `validate`, `plan`, `generate`
/// and `import-coredata` call, asserting no signal, no hang, and a located error for every refusal.
///
/// The CI-sized campaign is `FuzzCampaignTests` (`swift test --filter FuzzCampaignTests`). The
/// large campaign, which issue 13 asks to report (20,000 schema and 10,000 XML inputs):
///
///     swift build -c release --product ModelwrightFuzz
///     .build/release/ModelwrightFuzz supervise --seed 1 --schema 20000 --xml 10000 --progress
///
/// Commands:
///
///     supervise [options]          run the campaign in child processes; exit 1 if anything failed
///       --seed N --schema N --xml N  the campaign (defaults: 1, 300, 150)
///       --from I --to J              a part of it, by ordinal (schema inputs first)
///       --hang-seconds S             kill an input after S seconds (default 10)
///       --slow-seconds S             count a command over S seconds as slow (default 3)
///       --memory-mb N                address-space limit of a child (default 4096)
///       --corpus DIR                 the Core Data corpus (default ../shared/corpus)
///       --report FILE                also write the report to FILE
///       --progress                   print progress to standard error
///     run [--seed …] --only NAME   run one input (s12 or x4) here and print its verdict
///     run [--seed …] --only NAME --dump DIR
///                                  write the input's files to DIR and print how to reproduce it
///                                  with the CLI; the campaign's --schema count is not needed
///     list [--seed …] [--from I --to J]
///                                  print each input's name, size and mutations without running it
///     run [--seed …] --from I --to J
///                                  the child protocol: "start\tI", "step\tI\tcommand", then
///                                  "done\tI\tms\tverdict\tslowest command\tfailed command\tdetail"
@main
struct ModelwrightFuzz {
    static func main() {
        var arguments = Array(CommandLine.arguments.dropFirst())
        guard let mode = arguments.first else {
            print(
                "usage: ModelwrightFuzz supervise|run [options] (see the comment at the top of ModelwrightFuzz.swift)")
            exit(2)
        }
        arguments.removeFirst()
        do {
            let options = try Options(arguments)
            switch mode {
            case "supervise": exit(try supervise(options))
            case "run": exit(try run(options))
            case "list": exit(try list(options))
            default: throw FuzzError("unknown mode '\(mode)'")
            }
        } catch {
            FileHandle.standardError.write(Data("ModelwrightFuzz: error: \(error)\n".utf8))
            exit(2)
        }
    }

    /// The command line, parsed.
    struct Options {
        /// Every `--name value` pair, and `--name` alone mapped to an empty value.
        var values: [String: String] = [:]

        /// Parses `arguments`.
        init(_ arguments: [String]) throws {
            var index = 0
            let flags: Set<String> = ["--progress"]
            while index < arguments.count {
                let name = arguments[index]
                guard name.hasPrefix("--") else { throw FuzzError("unexpected argument '\(name)'") }
                if flags.contains(name) {
                    values[name] = ""
                    index += 1
                } else {
                    guard index + 1 < arguments.count else { throw FuzzError("'\(name)' needs a value") }
                    values[name] = arguments[index + 1]
                    index += 2
                }
            }
        }

        /// An integer option, or `fallback`.
        func integer(_ name: String, _ fallback: Int) throws -> Int {
            guard let text = values[name] else { return fallback }
            guard let value = Int(text.replacingOccurrences(of: "_", with: "")) else {
                throw FuzzError("'\(name)' needs a number, not '\(text)'")
            }
            return value
        }

        /// A number option, or `fallback`.
        func number(_ name: String, _ fallback: Double) throws -> Double {
            guard let text = values[name] else { return fallback }
            guard let value = Double(text) else { throw FuzzError("'\(name)' needs a number, not '\(text)'") }
            return value
        }

        /// The campaign the options describe.
        func campaign() throws -> FuzzCampaign {
            FuzzCampaign(
                seed: UInt64(truncatingIfNeeded: try integer("--seed", 1)), schemaCount: try integer("--schema", 300),
                xmlCount: try integer("--xml", 150), seeds: try FuzzSeeds.load(corpus: values["--corpus"]))
        }
    }

    private static func supervise(_ options: Options) throws -> Int32 {
        let campaign = try options.campaign()
        var limits = FuzzSupervisor.Limits()
        limits.hangSeconds = try options.number("--hang-seconds", limits.hangSeconds)
        limits.slowSeconds = try options.number("--slow-seconds", limits.slowSeconds)
        limits.memoryMegabytes = try options.integer("--memory-mb", limits.memoryMegabytes)
        var childArguments = [
            "--seed", String(campaign.seed), "--schema", String(campaign.schemaCount), "--xml",
            String(campaign.xmlCount),
        ]
        if let corpus = options.values["--corpus"] { childArguments += ["--corpus", corpus] }
        let supervisor = FuzzSupervisor(
            campaign: campaign, limits: limits, childArguments: childArguments,
            showsProgress: options.values["--progress"] != nil)
        let first = try options.integer("--from", 0)
        let end = min(try options.integer("--to", campaign.count), campaign.count)
        let report = try supervisor.run(first..<max(first, end))
        let text = report.text(executable: CommandLine.arguments[0])
        print(text)
        if let path = options.values["--report"] {
            try Data((text + "\n").utf8).write(to: URL(fileURLWithPath: path))
        }
        return report.failures.isEmpty ? 0 : 1
    }

    private static func run(_ options: Options) throws -> Int32 {
        var campaign = try options.campaign()
        if let megabytes = options.values["--memory-mb"].flatMap(Int.init) {
            limitMemory(megabytes: megabytes)
        }
        let range: Range<Int>
        if let name = options.values["--only"] {
            // An input's name is enough to make it; the counts only place it in the ordinal range.
            let number = Int(name.dropFirst()) ?? 0
            if name.hasPrefix("s") {
                campaign = FuzzCampaign(
                    seed: campaign.seed, schemaCount: max(campaign.schemaCount, number + 1), xmlCount: 0,
                    seeds: campaign.seeds)
            } else if name.hasPrefix("x") {
                campaign = FuzzCampaign(
                    seed: campaign.seed, schemaCount: 0, xmlCount: number + 1, seeds: campaign.seeds)
            }
            guard let ordinal = campaign.ordinal(named: name), ordinal < campaign.count else {
                throw FuzzError("no input '\(name)'; name one as s<N> or x<N>")
            }
            if let folder = options.values["--dump"] {
                return try dump(campaign.input(at: ordinal), name: name, to: folder)
            }
            range = ordinal..<(ordinal + 1)
        } else {
            let first = try options.integer("--from", 0)
            range = first..<max(first, min(try options.integer("--to", campaign.count), campaign.count))
        }
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("modelwright-fuzz-run-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        // The canary a hostile default would create lands in the working folder, which is ours.
        _ = FileManager.default.changeCurrentDirectoryPath(scratch.path)
        for ordinal in range {
            emit("start\t\(ordinal)")
            let input = campaign.input(at: ordinal)
            let executor = FuzzExecutor(folder: scratch.appendingPathComponent("input")) { command in
                emit("step\t\(ordinal)\t\(command)")
            }
            let outcome = executor.run(input)
            let detail = outcome.detail.replacingOccurrences(of: "\t", with: " ")
                .replacingOccurrences(of: "\n", with: " ⏎ ").replacingOccurrences(of: "\r", with: "\\r")
            emit(
                "done\t\(ordinal)\t\(outcome.slowestMilliseconds)\t\(outcome.verdict.rawValue)\t\(outcome.slowestCommand)\t\(outcome.failedCommand)\t\(detail)"
            )
            if options.values["--only"] != nil {
                print("mutations: \(input.mutations.joined(separator: "; "))")
            }
        }
        return 0
    }

    /// Prints each input's name, kind, size and mutations without running it.
    private static func list(_ options: Options) throws -> Int32 {
        let campaign = try options.campaign()
        let first = try options.integer("--from", 0)
        for ordinal in first..<max(first, min(try options.integer("--to", campaign.count), campaign.count)) {
            let input = campaign.input(at: ordinal)
            let size = input.files.reduce(0) { $0 + $1.bytes.count }
            print("\(campaign.name(at: ordinal))\t\(size)\t\(input.mutations.joined(separator: "; "))")
        }
        return 0
    }

    /// Writes one input's files and says which CLI commands reproduce it.
    private static func dump(_ input: FuzzInput, name: String, to folder: String) throws -> Int32 {
        let root = URL(fileURLWithPath: folder)
        for file in input.files {
            let url = root.appendingPathComponent(file.path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(file.bytes).write(to: url)
        }
        print("input \(name) written to \(root.path)")
        print("mutations: \(input.mutations.joined(separator: "; "))")
        print("reproduce with the CLI (from \(root.path)):")
        for command in input.commands {
            print("  modelwright \(command)")
        }
        return 0
    }

    /// Writes a protocol line and flushes it at once, so the supervisor sees it even if the next
    /// input kills the process.
    private static func emit(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// Caps this process's address space, so an input that allocates without bound ends the
    /// child (a crash the supervisor records) instead of exhausting a shared machine.
    private static func limitMemory(megabytes: Int) {
        var limit = rlimit()
        limit.rlim_cur = rlim_t(megabytes) * 1_048_576
        limit.rlim_max = rlim_t(megabytes) * 1_048_576
        #if canImport(Glibc)
            setrlimit(Int32(RLIMIT_AS.rawValue), &limit)
        #else
            setrlimit(RLIMIT_AS, &limit)
        #endif
    }
}
