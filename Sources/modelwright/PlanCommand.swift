import Foundation
import Modelwright
import ModelwrightSchema

#if MODELWRIGHT_POSTGRES
    import ModelwrightPostgres
#endif

/// `modelwright plan`: shows how each version step migrates.
enum PlanCommand {
    /// How the command is called, after `modelwright`: its help and the tool's list of commands both show it.
    static let synopsis = "plan <model folder> [--json] [--engine sqlite|postgres] [--postgres <url>]"

    /// What the command does, in one line, for the tool's list of commands.
    static let summary = "Show how each version step migrates, and what it costs."

    static let usage = """
        OVERVIEW: Show the migration plan between every pair of adjacent versions: each change,
        how it migrates, and what it costs in the store.

        USAGE: modelwright \(synopsis)

        Each change is one of:
          lightweight            inferred; nothing is lost
          needs a default        a required attribute without a value for existing rows
          lossy                  stored data is dropped ('lossy Entity.property' accepts it)
          needs a custom stage   only the app's code can convert the data
        Each step ends with what SQLite does: constant-time ALTER TABLEs, or table rebuilds
        and row updates that take time in proportion to the rows.

        OPTIONS:
          --json       Print the plan as JSON, for tools.
          --engine postgres
                       Also print each step's PostgreSQL statements, in its one transaction:
                       the statements the migrator sends, recorded while it runs the step
                       on a real server (on a fresh store of the step's older version, in a
                       scratch schema, in a transaction that is rolled back: nothing stays).
                       Row updates, which depend on the rows, are comments where they run;
                       a custom stage's own code is not run (its values are stubs).
          --postgres <url>
                       The server to run the steps on (a libpq URL or key=value string; the
                       role needs to create a schema in the database). Without it, plan
                       starts a throwaway cluster of its own (PostgreSQL's server programs:
                       initdb on PATH, in /usr/lib/postgresql/<n>/bin or MODELWRIGHT_PG_BIN).
          -h, --help   Show this help.

        Exit codes: 0 planned, 1 problems in the input (every step that cannot be migrated
        is reported with its file, line and column), 2 usage error.
        """

    static func run(_ arguments: [String], console: inout some Console) -> ExitCode {
        if arguments.contains("-h") || arguments.contains("--help") {
            console.print(usage)
            return .success
        }
        let json = arguments.contains("--json")
        var paths = arguments.filter { $0 != "--json" }
        var postgres = false
        if let index = paths.firstIndex(of: "--engine") {
            guard index + 1 < paths.count, ["sqlite", "postgres"].contains(paths[index + 1]) else {
                console.printError("error: --engine takes 'sqlite' or 'postgres'\n\n\(usage)")
                return .usage
            }
            postgres = paths[index + 1] == "postgres"
            paths.removeSubrange(index...(index + 1))
        }
        var server: String?
        if let index = paths.firstIndex(of: "--postgres") {
            guard index + 1 < paths.count, postgres else {
                console.printError("error: --postgres takes a server's URL, with --engine postgres\n\n\(usage)")
                return .usage
            }
            server = paths[index + 1]
            paths.removeSubrange(index...(index + 1))
        }
        guard paths.count == 1, let folder = paths.first, !folder.hasPrefix("-") else {
            console.printError("error: expected one model folder\n\n\(usage)")
            return .usage
        }
        if ModelFolder.refusesFile(folder, command: "plan", console: &console) { return .usage }
        guard let model = ModelFolder.plan(folder, console: &console) else { return .invalidInput }
        var statements: [[String]]?
        if postgres {
            guard let printed = postgresStatements(model, server: server, console: &console) else {
                return .invalidInput
            }
            statements = printed
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            var plan = PlanJSON(model: model.name, steps: model.steps.map(PlanJSON.Step.init))
            if let statements {
                for index in plan.steps.indices { plan.steps[index].postgres = statements[index] }
            }
            let json = String(decoding: (try? encoder.encode(plan)) ?? Data(), as: UTF8.self)
            console.print(DiagnosticText.escapedJSON(json))
        } else {
            console.print(text(model, postgres: statements))
        }
        return .success
    }

    /// Each step's PostgreSQL statements, as the migrator sends them on `server` (a throwaway
    /// cluster when `nil`): `MigrationStage.postgresStatements(on:)`, the one source. `nil` after
    /// printing, located at the model's files, why no server could run them, or which step failed.
    private static func postgresStatements(
        _ model: PlannedModel, server: String?, console: inout some Console
    ) -> [[String]]? {
        guard let first = model.steps.first else { return [] }
        #if MODELWRIGHT_POSTGRES
            var cluster: ThrowawayCluster?
            defer { cluster?.remove() }
            let connection: PostgresConnection
            do {
                if let server {
                    connection = try PostgresConnection(connectingNow: PostgresConfiguration(server))
                } else {
                    let started = try ThrowawayCluster()
                    cluster = started
                    connection = try PostgresConnection(
                        connectingNow: PostgresConfiguration(started.connectionString()))
                }
            } catch {
                console.printError(
                    "\(first.to.path): error: no PostgreSQL server to run the steps on: \(error)\n"
                        + "  note: pass --postgres <url> to name a server, or install PostgreSQL's server programs "
                        + "(Debian: apt-get install postgresql) so plan can start a throwaway one")
                return nil
            }
            defer { connection.close() }
            var result: [[String]] = []
            for step in model.steps {
                do {
                    result.append(try step.shadowStage.postgresStatements(on: connection))
                } catch {
                    // Located at the newer version's declaration (its first line), which the step
                    // belongs to, as the planner's errors are located.
                    console.printError(
                        "\(step.to.path):1:1: error: the step from version \(step.from.number) to \(step.to.number) "
                            + "fails on PostgreSQL: \(error)")
                    return nil
                }
            }
            return result
        #else
            console.printError(
                "\(first.to.path): error: this modelwright was built without the PostgreSQL engine, so it cannot "
                    + "run the steps on PostgreSQL\n  note: install libpq's header (Debian: apt-get install libpq-dev) "
                    + "and build modelwright again; the server programs or --postgres <url> are needed too")
            return nil
        #endif
    }

    static func text(_ model: PlannedModel, postgres: [[String]]? = nil) -> String {
        var lines = ["\(model.name): \(model.versions.count) versions, \(model.steps.count) steps"]
        for (number, step) in model.steps.enumerated() {
            var kind = step.classification
            if !step.cautions.isEmpty {
                kind += " with \(step.cautions.count) caution\(step.cautions.count == 1 ? "" : "s")"
            }
            let cost =
                step.rewrittenTables.isEmpty ? "in place" : "rewrites " + step.rewrittenTables.joined(separator: ", ")
            lines.append("")
            lines.append(
                "Version \(step.from.number) → \(step.to.number) (\(step.from.checksum.hexDigits.prefix(12)) → \(step.to.checksum.hexDigits.prefix(12))): \(kind), \(cost)"
            )
            if step.changes.isEmpty { lines.append("  no structural change") }
            for change in step.changes {
                var line =
                    "  " + change.kind.rawValue.padding(toLength: 21, withPad: " ", startingAt: 0) + change.summary
                if let resolution = change.resolution { line += " [\(resolution)]" }
                if !step.rewrittenTables.contains(change.table) {
                    line += " (in place)"
                } else {
                    line += " (\(change.table): proportional to rows)"
                }
                lines.append(line)
                if let caution = change.caution { lines.append("    caution: \(caution)") }
            }
            if !step.operations.isEmpty {
                lines.append("  SQLite: " + step.operations.map(\.description).joined(separator: "; "))
            }
            if let postgres, number < postgres.count {
                lines.append("  PostgreSQL (one transaction):")
                lines += postgres[number].map { "    " + $0 + ($0.hasPrefix("--") ? "" : ";") }
            }
        }
        return lines.joined(separator: "\n")
    }
}

/// The plan as `--json` prints it.
private struct PlanJSON: Encodable {
    struct Step: Encodable {
        var from: Int
        var to: Int
        var fromChecksum: String
        var toChecksum: String
        var isLightweight: Bool
        var customStages: [String]
        var changes: [Change]
        var operations: [Operation]
        var rewrittenTables: [String]
        var cautions: [String]
        /// The step's PostgreSQL statements, with `--engine postgres`.
        var postgres: [String]?

        init(_ step: PlannedStep) {
            from = step.from.number
            to = step.to.number
            fromChecksum = step.from.checksum.hexDigits
            toChecksum = step.to.checksum.hexDigits
            isLightweight = step.isLightweight
            customStages = step.customStages.map(\.name)
            changes = step.changes.map {
                Change(
                    summary: $0.summary, kind: $0.kind.rawValue, entity: $0.entity, table: $0.table,
                    resolution: $0.resolution, caution: $0.caution)
            }
            operations = step.operations.map {
                Operation(description: $0.description, isConstantTime: $0.isConstantTime)
            }
            rewrittenTables = step.rewrittenTables
            cautions = step.cautions
        }
    }

    struct Change: Encodable {
        var summary: String
        var kind: String
        var entity: String
        var table: String
        var resolution: String?
        var caution: String?
    }

    struct Operation: Encodable {
        var description: String
        var isConstantTime: Bool
    }

    var model: String
    var steps: [Step]
}
