import Foundation
import Modelwright
import ModelwrightTestSupport
import Testing

@testable import ModelwrightSchema

/// `@sync` and the checks of synced entities: what would keep devices from converging is an error
/// at the line of the cause, and a model that follows the rules has none.
struct SyncRulesTests {
    /// Models drawn per run: a few in CI, many with `MODELWRIGHT_LARGE=1`.
    static let caseCount = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 5_000 : 300

    /// The sync errors of a schema text, each as `line:column: message`.
    private func syncErrors(_ text: String) -> [String] {
        diagnose(text).filter { $0.contains("sync") }
    }

    @Test func aModelThatFollowsTheRulesIsValid() throws {
        let graph = try graph(
            """
            model Trips version 1
            entity User {
                @sync(unique: merge)
                username: String @unique
                preferences: Codable<[String: String]>?
                trips: Set<Trip> @inverse(owner) @delete(cascade)
                tags: Set<Tag>
            }
            entity Trip { @sync; title: String; owner: User; stops: Set<Stop> @delete(cascade) }
            entity Stop: Trip { name: String; trip: Trip? @inverse(stops) }
            entity Tag { @sync; label: String; users: Set<User> @inverse(tags) }
            entity Draft { text: String; user: User? @noInverse }
            """)
        #expect(graph.entity(named: "User")?.sync?.unique == .merge)
        #expect(graph.entity(named: "Trip")?.sync != nil && graph.entity(named: "Trip")?.sync?.unique == nil)
        #expect(graph.entity(named: "Draft")?.sync == nil)
    }

    /// Drawn hierarchies (a root and maybe a subentity, a uniqueness constraint on either, both
    /// or neither) marked `@sync`, `@sync(unique: merge)` or `@sync(unique: reject)`: the lowered
    /// description carries the rule on the root and only there, and a rule on a hierarchy without
    /// any uniqueness constraint is an error at its `@sync`, which names the fix.
    @Test func uniqueRulesAreLoweredOrALocatedError() throws {
        var lowered = 0
        var refused = 0
        for index in 0..<Self.caseCount {
            var random = SplitMix64(seed: 2_905, index: index)
            var lines = ["model M version 1"]
            var rules: [String: SyncUniqueness] = [:]
            var expected: [String] = []
            for root in 0..<(1 + random.next(below: 3)) {
                let rule = [nil, SyncUniqueness.merge, .reject][random.next(below: 3)]
                let rootUnique = random.chance(0.4)
                let sub = random.chance(0.5)
                let subUnique = sub && random.chance(0.5)
                let marking = rule.map { "@sync(unique: \($0.rawValue))" } ?? "@sync"
                let line = "entity R\(root) { \(marking); name: String\(rootUnique ? " @unique" : "") }"
                lines.append(line)
                if let rule {
                    rules["R\(root)"] = rule
                    if !rootUnique && !subUnique {
                        expected.append(
                            "\(lines.count):\(line.distance(from: line.startIndex, to: try #require(line.range(of: "@sync")).lowerBound) + 1): error: '@sync(unique: \(rule.rawValue))' on 'R\(root)' says how the server resolves rows that break a uniqueness constraint, and neither 'R\(root)' nor its subentities has one: write '@sync', or mark the attribute the rows are unique by '@unique'"
                        )
                    }
                }
                if sub { lines.append("entity S\(root): R\(root) { code: String\(subUnique ? " @unique" : "") }") }
            }
            let text = lines.joined(separator: "\n") + "\n"
            let errors = diagnose(text).filter { $0.contains("error") }
            let withoutRuleErrors = errors.filter { !$0.contains("needs a rule") }
            #expect(withoutRuleErrors == expected, "\(text)")
            guard errors.isEmpty else {
                refused += expected.count
                continue
            }
            let schema = try #require(FrontEnd.lower(ResolvedFile.compile(SourceFile(path: "M.v1.model", text: text))))
                .schema
            for entity in schema.entities {
                #expect(entity.syncUniqueness == rules[entity.name], "\(entity.name) in \(text)")
            }
            lowered += rules.count
        }
        print("SyncRulesTests.uniqueRules: \(Self.caseCount) models, \(lowered) rules lowered, \(refused) refused")
        #expect(lowered > 0 && refused > 0)
    }

    @Test func eachRuleIsAnErrorAtItsCauseWithTheFix() {
        let text = """
            model M version 1
            entity User {
                @sync
                name: String @unique
                notes: [Note]
                team: Team?
                trips: Set<Trip> @inverse(owner) @delete(deny)
            }
            entity Team { title: String }
            entity Trip { @sync; owner: User; label: Label @noInverse }
            entity Note { @sync; text: String; user: User? @inverse(notes) }
            entity Label { @sync; text: String }
            entity Child: Label { more: String
                @sync(bogus: 1)
            }
            """
        #expect(
            syncErrors(text) == [
                "2:1: error: 'User' is synced and unique by (name): two devices offline can each insert a row with the same values, and the server needs a rule to resolve them; write '@sync(unique: merge)' to merge such rows into one, or '@sync(unique: reject)' to keep the first to reach the server",
                "5:5: error: 'User.notes' is ordered, and the order of a synced relationship cannot be merged between devices: write 'Set<Note>' and keep the order in an attribute of 'Note'",
                "6:5: error: 'User.team' links a synced entity to 'Team', which is not synced: other devices would receive links to rows they never get; write '@sync' on 'Team' (or on its root entity)",
                "7:5: error: 'User.trips' has '@delete(deny)', which a synced store cannot enforce: a device offline can link a row while another deletes it; write '@delete(nullify)' or '@delete(cascade)'",
                "10:22: error: 'Trip.owner' is required, and in a synced store a device can delete its target while another links to it (the delete wins): give 'User.trips' '@delete(cascade)' so the row goes with its target, or make 'Trip.owner' optional ('User?')",
                "10:35: error: 'Trip.label' is required, and in a synced store a device can delete its target while another links to it (the delete wins): make it optional ('Label?'), or give it an inverse on 'Label' with '@delete(cascade)' so the row goes with its target",
                "14:5: error: '@sync' goes on the root of the hierarchy: 'Child' shares its rows' table with 'Label'; write '@sync' on its root entity, which syncs every subentity",
                "14:11: error: '@sync' takes one argument, 'unique:' with 'merge' or 'reject', as in '@sync(unique: merge)'",
            ])
    }

    /// A model without `@sync` is checked as before: the rules apply to synced entities only.
    /// A one-to-one cannot converge: each side's link merges on its own row (red team, issue 28).
    @Test func aSyncedOneToOneIsAnError() {
        for text in [
            "entity Person { @sync; name: String; desk: Desk? @inverse(occupant) }\nentity Desk { @sync; label: String; occupant: Person? }",
            "entity Person { @sync; name: String; badge: Badge? @delete(cascade) }\nentity Badge { @sync; code: String; holder: Person @inverse(badge) }",
            "entity Person { @sync; name: String; spouse: Person? @inverse(spouse) }",
        ] {
            let errors = syncErrors("model M version 1\n" + text)
            #expect(!errors.isEmpty && errors.allSatisfy { $0.contains("are a one-to-one") }, "\(text): \(errors)")
        }
    }

    @Test func unsyncedModelsAreUntouched() throws {
        _ = try graph(
            """
            model M version 1
            entity User { name: String @unique; notes: [Note] @delete(deny); team: Team }
            entity Team { members: Set<User> @inverse(team) }
            entity Note { user: User? @inverse(notes) }
            """)
    }

    /// Random models of synced and unsynced entities, constraints and relationships of every shape:
    /// the errors reported are exactly those the rules, read independently, expect, each on the
    /// line of its cause.
    @Test func generatedModelsReportExactlyTheBrokenRules() {
        var reported = 0
        for index in 0..<Self.caseCount {
            var random = SplitMix64(seed: 2_828, index: index)
            let model = SyncModel(random: &random)
            let found = Set(syncErrors(model.text).compactMap(SyncModel.Expected.init(diagnostic:)))
            #expect(found == model.expected, "case \(index):\n\(model.text)")
            reported += found.count
        }
        print("SyncRulesTests: \(Self.caseCount) models, \(reported) sync errors")
    }
}

/// A random model: entities `E0`… each synced or not and maybe unique by a code, joined by pairs of
/// relationships (to-one and to-many, optional or required, ordered or not, every delete rule) and
/// one-way to-ones; with the errors the rules expect.
private struct SyncModel {
    struct Expected: Hashable {
        enum Rule: Hashable { case unique, notSynced, ordered, deny, required, oneToOne }
        var line: Int
        var rule: Rule

        init(line: Int, rule: Rule) {
            self.line = line
            self.rule = rule
        }

        /// The rule and line of a diagnostic `line:column: error: message`.
        init?(diagnostic: String) {
            guard let line = Int(diagnostic.prefix { $0 != ":" }) else { return nil }
            self.line = line
            if diagnostic.contains("are a one-to-one") {
                rule = .oneToOne
            } else if diagnostic.contains("is synced and unique by") {
                rule = .unique
            } else if diagnostic.contains("which is not synced") {
                rule = .notSynced
            } else if diagnostic.contains("is ordered") {
                rule = .ordered
            } else if diagnostic.contains("@delete(deny)") {
                rule = .deny
            } else if diagnostic.contains("is required") {
                rule = .required
            } else {
                return nil
            }
        }
    }

    var text = ""
    var expected: Set<Expected> = []

    init(random: inout SplitMix64) {
        let count = 2 + random.next(below: 4)
        let synced = (0..<count).map { _ in random.chance(0.6) }
        let unique = (0..<count).map { _ in random.chance(0.3) }
        let resolved = (0..<count).map { _ in random.chance(0.5) }
        // Members per entity, as (line text, rule checks) filled in below.
        var members: [[(text: String, expects: [Expected.Rule])]] = Array(repeating: [], count: count)
        let rules = ["nullify", "cascade", "deny", "noAction"]
        for pair in 0..<random.next(below: 6) {
            let a = random.next(below: count)
            let b = random.next(below: count)
            let forward = "f\(pair)"
            let backward = "b\(pair)"
            let ruleA = random.pick(rules)
            let ruleB = random.pick(rules)
            func problems(from source: Int, to target: Int, rule: String, ordered: Bool) -> [Expected.Rule] {
                guard synced[source] else { return [] }
                guard synced[target] else { return [.notSynced] }
                return (ordered ? [.ordered] : []) + (rule == "deny" ? [.deny] : [])
            }
            switch random.next(below: 5) {
            case 4:
                // A one-to-one: both sides keep one link, which devices cannot merge.
                var forwardProblems = problems(from: a, to: b, rule: ruleA, ordered: false)
                var backwardProblems = problems(from: b, to: a, rule: ruleB, ordered: false)
                if synced[a], synced[b] {
                    forwardProblems.append(.oneToOne)
                    backwardProblems.append(.oneToOne)
                }
                members[a].append(("\(forward): E\(b)? @inverse(\(backward)) @delete(\(ruleA))", forwardProblems))
                members[b].append(("\(backward): E\(a)? @delete(\(ruleB))", backwardProblems))
            case 0, 1:
                // A to-one and its to-many inverse.
                let required = random.chance(0.5)
                let ordered = random.chance(0.3)
                var forwardProblems = problems(from: a, to: b, rule: ruleA, ordered: false)
                if required, synced[a], synced[b], ruleB != "cascade" { forwardProblems.append(.required) }
                members[a].append(
                    ("\(forward): E\(b)\(required ? "" : "?") @inverse(\(backward)) @delete(\(ruleA))", forwardProblems)
                )
                let type = ordered ? "[E\(a)]" : "Set<E\(a)>"
                members[b].append(
                    ("\(backward): \(type) @delete(\(ruleB))", problems(from: b, to: a, rule: ruleB, ordered: ordered)))
            case 2:
                // Two to-manys.
                members[a].append(
                    (
                        "\(forward): Set<E\(b)> @inverse(\(backward)) @delete(\(ruleA))",
                        problems(from: a, to: b, rule: ruleA, ordered: false)
                    ))
                members[b].append(
                    ("\(backward): Set<E\(a)> @delete(\(ruleB))", problems(from: b, to: a, rule: ruleB, ordered: false))
                )
            default:
                // A one-way to-one.
                let required = random.chance(0.5)
                var forwardProblems = problems(from: a, to: b, rule: ruleA, ordered: false)
                if required, synced[a], synced[b] { forwardProblems.append(.required) }
                members[a].append(
                    ("\(forward): E\(b)\(required ? "" : "?") @noInverse @delete(\(ruleA))", forwardProblems))
            }
        }
        var lines = ["model M version 1"]
        for entity in 0..<count {
            lines.append("entity E\(entity) {")
            if synced[entity], unique[entity], !resolved[entity] {
                expected.insert(Expected(line: lines.count, rule: .unique))
            }
            if synced[entity] {
                lines.append(unique[entity] && resolved[entity] ? "    @sync(unique: reject)" : "    @sync")
            }
            lines.append("    name: String")
            if unique[entity] { lines.append("    code: String @unique") }
            for member in members[entity] {
                lines.append("    " + member.text)
                for rule in member.expects { expected.insert(Expected(line: lines.count, rule: rule)) }
            }
            lines.append("}")
        }
        text = lines.joined(separator: "\n") + "\n"
    }
}
