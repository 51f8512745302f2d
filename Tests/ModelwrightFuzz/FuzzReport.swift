import Foundation

/// What a campaign found: counts of inputs and verdicts, every failure, and the failures
/// grouped into classes.
struct FuzzReport: Sendable {
    /// The campaign.
    let campaign: FuzzCampaign
    /// Its limits.
    let limits: FuzzSupervisor.Limits
    /// How many inputs finished, by verdict.
    private(set) var verdicts: [String: Int] = [:]
    /// Every failure, in input order.
    private(set) var failures: [FuzzFailure] = []
    /// How many child processes ran.
    var spawns = 0
    /// How long the campaign took.
    var seconds = 0.0
    /// Whether each failure is printed to standard error as it is recorded.
    var echoesFailures = false

    /// Creates an empty report.
    init(campaign: FuzzCampaign, limits: FuzzSupervisor.Limits) {
        self.campaign = campaign
        self.limits = limits
    }

    /// How many inputs finished or failed.
    var inputs: Int { verdicts.values.reduce(0, +) + failures.filter { $0.kind == .crash || $0.kind == .hang }.count }

    /// Counts an input that finished.
    mutating func count(_ verdict: FuzzExecutor.Verdict) {
        verdicts[verdict.rawValue, default: 0] += 1
    }

    /// Adds a failure.
    mutating func record(_ failure: FuzzFailure) {
        failures.append(failure)
        if echoesFailures {
            let line = failure.line(
                seed: campaign.seed, schemaCount: campaign.schemaCount, executable: "ModelwrightFuzz")
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
    }

    /// How many failures of a kind.
    func count(of kind: FuzzFailure.Kind) -> Int {
        failures.filter { $0.kind == kind }.count
    }

    /// A line of progress.
    var progressLine: String {
        "fuzz: \(inputs) of \(campaign.count) inputs, "
            + FuzzFailure.Kind.allCases.map { "\(count(of: $0)) \($0.rawValue)" }.joined(separator: ", ")
    }

    /// The report as text: counts, classes with examples, then every failure.
    func text(executable: String) -> String {
        let schemaFailures = failures.filter { $0.name.hasPrefix("s") }.count
        var lines = [
            "modelwright fuzz: seed \(campaign.seed), \(campaign.schemaCount) schema and \(campaign.xmlCount) XML inputs, "
                + "\(spawns) processes, \(String(format: "%.1f", seconds)) s "
                + "(hang limit \(limits.hangSeconds) s, slow limit \(limits.slowSeconds) s)",
            "inputs run: \(inputs); accepted \(verdicts["accepted", default: 0]), "
                + "rejected with located errors \(verdicts["rejected", default: 0])",
            "failures: \(failures.count) (\(schemaFailures) schema, \(failures.count - schemaFailures) XML): "
                + FuzzFailure.Kind.allCases.map { "\(count(of: $0)) \($0.rawValue)" }.joined(separator: ", "),
        ]
        let crashes = Dictionary(grouping: failures.filter { $0.kind == .crash }) {
            $0.signal.map(FuzzFailure.signalName) ?? "exit"
        }
        if !crashes.isEmpty {
            lines.append(
                "crashes by signal: "
                    + crashes.keys.sorted().map { "\($0) \(crashes[$0, default: []].count)" }.joined(separator: ", "))
        }
        let classes = Dictionary(grouping: failures, by: \.classKey)
        if !classes.isEmpty {
            lines.append("")
            lines.append("\(classes.count) failure classes (kind, signal, command, cause), most frequent first:")
        }
        for (key, members) in classes.sorted(by: { ($0.value.count, $1.key) > ($1.value.count, $0.key) }) {
            let examples = members.sorted {
                ($0.input.mutations.count, $0.seconds) < ($1.input.mutations.count, $1.seconds)
            }
            lines.append("- [\(members.count)] \(key)")
            let kinds = Dictionary(grouping: members.flatMap(\.mutationKinds)) { $0 }.mapValues(\.count)
            lines.append(
                "    mutations seen: "
                    + kinds.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(6).map { "\($0.key) \($0.value)" }
                    .joined(separator: ", "))
            lines.append("    examples: " + examples.prefix(3).map(\.name).joined(separator: ", "))
        }
        if !failures.isEmpty {
            lines.append("")
            lines.append("every failure (input order):")
        }
        for failure in failures.prefix(500) {
            lines.append(failure.line(seed: campaign.seed, schemaCount: campaign.schemaCount, executable: executable))
        }
        if failures.count > 500 { lines.append("… and \(failures.count - 500) more") }
        return lines.joined(separator: "\n")
    }
}
