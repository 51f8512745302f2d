import Foundation
import Modelwright
import ModelwrightSchema

/// `modelwright plan`: shows how each version step migrates.
enum PlanCommand {
    static let usage = """
        OVERVIEW: Show the migration plan between every pair of adjacent versions: each change,
        how it migrates, and what it costs in the store.

        USAGE: modelwright plan <model folder> [--json]

        Each change is one of:
          lightweight            inferred; nothing is lost
          needs a default        a required attribute without a value for existing rows
          lossy                  stored data is dropped ('lossy Entity.property' accepts it)
          needs a custom stage   only the app's code can convert the data
        Each step ends with what SQLite does: constant-time ALTER TABLEs, or table rebuilds
        and row updates that take time in proportion to the rows.

        OPTIONS:
          --json       Print the plan as JSON, for tools.
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
        let paths = arguments.filter { $0 != "--json" }
        guard paths.count == 1, let folder = paths.first, !folder.hasPrefix("-") else {
            console.printError("error: expected one model folder\n\n\(usage)")
            return .usage
        }
        if ModelFolder.refusesFile(folder, command: "plan", console: &console) { return .usage }
        guard let model = ModelFolder.plan(folder, console: &console) else { return .invalidInput }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let plan = PlanJSON(model: model.name, steps: model.steps.map(PlanJSON.Step.init))
            let json = String(decoding: (try? encoder.encode(plan)) ?? Data(), as: UTF8.self)
            console.print(DiagnosticText.escapedJSON(json))
        } else {
            console.print(text(model))
        }
        return .success
    }

    static func text(_ model: PlannedModel) -> String {
        var lines = ["\(model.name): \(model.versions.count) versions, \(model.steps.count) steps"]
        for step in model.steps {
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
