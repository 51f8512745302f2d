import Foundation
import Notes

/// Devices that sync with the example server over HTTP, through ``URLSessionSyncTransport``:
///
/// ```
/// SyncDevices check   --url URL --token TOKEN --other-token TOKEN [--seed N] [--rounds N]
/// SyncDevices burst   --url URL --token TOKEN [--changes 10000] [--devices 3] [--pull-limit 5000]
/// SyncDevices trickle --url URL --token TOKEN [--seconds 60] [--devices 3] [--on-commit true|false]
/// ```
///
/// `check` is what CI runs: three devices of one user edit at random, sync, and must converge row
/// for row and link for link; a second user must see none of the first's rows and be refused
/// when changing them. `burst` and `trickle` are the benchmarks of BENCHMARKS.md.
@main
struct SyncDevices {
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        guard !arguments.isEmpty else { fail(usage) }
        let command = arguments.removeFirst()
        do {
            let options = try Options(arguments)
            switch command {
            case "check": try await Check(options: options).run()
            case "burst": try await Burst(options: options).run()
            case "trickle": try await Trickle(options: options).run()
            default: fail("unknown command \(command)\n\(usage)")
            }
        } catch {
            fail("\(command): \(error)")
        }
    }

    static let usage = """
        usage: SyncDevices check|burst|trickle --url http://127.0.0.1:PORT/sync --token TOKEN [options]
        """

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("SyncDevices: \(message)\n".utf8))
        exit(1)
    }
}

/// `--name value` options; each command reads those it knows.
struct Options {
    private var values: [String: String] = [:]

    init(_ arguments: [String]) throws {
        var remaining = arguments[...]
        while let flag = remaining.popFirst() {
            guard flag.hasPrefix("--"), let value = remaining.popFirst() else {
                throw Failure("options are `--name value` pairs; `\(flag)` has no value")
            }
            values[String(flag.dropFirst(2))] = value
        }
    }

    func string(_ name: String) throws -> String {
        guard let value = values[name] else { throw Failure("--\(name) is required") }
        return value
    }

    func string(_ name: String, default fallback: String) -> String { values[name] ?? fallback }

    func int(_ name: String, default fallback: Int) throws -> Int {
        guard let text = values[name] else { return fallback }
        guard let value = Int(text), value >= 0 else { throw Failure("--\(name) takes a whole number, not `\(text)`") }
        return value
    }

    func url() throws -> URL {
        let text = try string("url")
        guard let url = URL(string: text), url.scheme != nil else {
            throw Failure("--url `\(text)` is not a URL such as http://127.0.0.1:8080/sync")
        }
        return url
    }
}

/// Why a run failed, in words.
struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A small seeded generator (SplitMix64), so a run's random edits repeat from its seed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
