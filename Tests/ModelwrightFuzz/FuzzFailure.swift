#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One input that broke a promise: how, in which command, and how to make it again.
struct FuzzFailure: Sendable {
    /// What went wrong.
    enum Kind: String, Sendable, CaseIterable {
        /// The process died by a signal.
        case crash
        /// The input ran past the hang limit and was killed.
        case hang
        /// The input finished, but one command took longer than the slow limit.
        case slow
        /// An error without a usable line and column.
        case unlocated
        /// A refusal without any error.
        case silent
        /// A diagnostic echoed raw control or bidi characters.
        case rawEcho
        /// Validation passed but generating failed.
        case generateFailed
        /// SQL or Swift from the input escaped its literal or comment.
        case injection
        /// Generated code holds text copied wrongly from the input, short of an injection.
        case wrongOutput

        /// The failure kind for a verdict of the executor.
        init(_ verdict: FuzzExecutor.Verdict) {
            switch verdict {
            case .unlocated: self = .unlocated
            case .rawEcho: self = .rawEcho
            case .generateFailed: self = .generateFailed
            case .injection: self = .injection
            case .wrongOutput: self = .wrongOutput
            default: self = .silent
            }
        }
    }

    /// The input.
    let input: FuzzInput
    /// Its name in the campaign, `s<N>` or `x<N>`.
    let name: String
    /// What went wrong.
    let kind: Kind
    /// The signal that ended the process, for a crash.
    let signal: Int32?
    /// The command running when it went wrong, as the CLI spells it.
    let command: String
    /// How long the command ran.
    let seconds: Double
    /// The error, the crash message or the time taken.
    let detail: String

    /// The class this failure belongs to, for counting distinct problems: the kind, the signal,
    /// the command's verb and the detail with numbers, names and quoted text blurred.
    var classKey: String {
        let verb = command.split(separator: " ").first.map(String.init) ?? ""
        let head = "\(kind.rawValue)\(signal.map { " " + Self.signalName($0) } ?? "") \(verb)"
        switch kind {
        case .slow, .hang:
            // Time depends on the size of the input: the mutation that grows it is the cause.
            let heavy = mutationKinds.filter(Self.heavyMutations.contains)
            return head + " " + (heavy.isEmpty ? mutationKinds : heavy).joined(separator: "+")
        case .rawEcho:
            // One escaping bug shows in every message that quotes input: the character is the class.
            return head + " " + (detail.components(separatedBy: " printed raw").first ?? "")
        default:
            return head + " " + Self.blur(detail)
        }
    }

    /// Mutations that make an input large or deep, and so slow when a check is not linear.
    static let heavyMutations: Set<String> = [
        "deepNesting", "deepPredicate", "deepInheritance", "hugeName", "hugeVersionNumber", "unknownTypeAmongMany",
        "duplicateToken", "duplicateRange", "duplicateElement", "edgeNumber", "insertDoctype",
    ]

    /// The names of the mutations that made the input, without their arguments, seeds or layouts.
    var mutationKinds: [String] {
        let names = input.mutations.filter { !$0.hasPrefix("seed ") && !$0.hasPrefix("layout ") }
            .map { String($0.prefix { $0 != "(" }) }
        return Array(Set(names)).sorted()
    }

    /// The detail with what varies from input to input replaced, so one bug is one class.
    static func blur(_ text: String) -> String {
        var result = ""
        var quote: Character?
        for character in text.prefix(400) {
            if let open = quote {
                if character == open { quote = nil }
                continue
            }
            if character == "'" || character == "`" {
                quote = character
                result += "…"
            } else if character.isNumber {
                if result.last != "#" { result += "#" }
            } else {
                result.append(character)
            }
        }
        // Paths differ by input; keep what follows the last "error:".
        if let range = result.range(of: "error: ", options: .backwards) { result = String(result[range.upperBound...]) }
        return String(result.prefix(120))
    }

    /// The conventional name of a signal, such as `SIGSEGV`.
    static func signalName(_ signal: Int32) -> String {
        switch signal {
        case SIGSEGV: "SIGSEGV"
        case SIGILL: "SIGILL"
        case SIGTRAP: "SIGTRAP"
        case SIGABRT: "SIGABRT"
        case SIGBUS: "SIGBUS"
        case SIGKILL: "SIGKILL"
        case SIGFPE: "SIGFPE"
        default: "signal \(signal)"
        }
    }

    /// The failure on one line, with the command that makes its input again.
    func line(seed: UInt64, schemaCount: Int, executable: String) -> String {
        let cause = signal.map { Self.signalName($0) + " " } ?? ""
        return """
            FAIL \(kind.rawValue) \(cause)seed=\(seed) input=\(name) command='\(command)' \
            time=\(String(format: "%.2f", seconds))s
              mutations: \(input.mutations.joined(separator: "; "))
              detail: \(detail.prefix(400))
              again: \(executable) run --seed \(seed) --schema \(schemaCount) --only \(name) --dump /tmp/fuzz-\(name)
            """
    }
}
