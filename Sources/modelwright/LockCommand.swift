import Foundation
import ModelwrightSchema

/// `modelwright lock`: freezes released versions in the model's lock file.
enum LockCommand {
    /// How the command is called, after `modelwright`: its help and the tool's list of commands both show it.
    static let synopsis = "lock <model folder> [--through <version>]"

    /// What the command does, in one line, for the tool's list of commands.
    static let summary = "Freeze released versions in the model's lock file."

    static let usage = """
        OVERVIEW: Freeze released versions: record their checksums in the model folder's
        modelwright-lock.json, so that editing one later is an error.

        USAGE: modelwright \(synopsis)

        ARGUMENTS:
          <model folder>         A folder holding one '<Model>.v<N>.model' file per version.

        OPTIONS:
          --through <version>    Freeze versions 1 through this one (default: every version).
          -h, --help             Show this help.

        Run it when you release the app; commit the lock file with the model.
        Exit codes: 0 locked, 1 problems in the input, 2 usage error.
        """

    static func run(_ arguments: [String], console: inout some Console) -> ExitCode {
        if arguments.contains("-h") || arguments.contains("--help") {
            console.print(usage)
            return .success
        }
        var folder: String?
        var through: Int?
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            if argument == "--through" {
                guard let value = rest.popFirst().flatMap({ Int($0) }), value >= 1 else {
                    console.printError("error: '--through' needs a version number\n\n\(usage)")
                    return .usage
                }
                through = value
            } else if argument.hasPrefix("-") || folder != nil {
                console.printError("error: unexpected argument '\(argument)'\n\n\(usage)")
                return .usage
            } else {
                folder = argument
            }
        }
        guard let folder else {
            console.printError("error: missing the model folder\n\n\(usage)")
            return .usage
        }
        if ModelFolder.refusesFile(folder, command: "lock", console: &console) { return .usage }
        // The versions being locked are released now: a rule newer than them is a warning, as
        // it will be once the lock file records them.
        guard let model = ModelFolder.plan(folder, releasing: through ?? Int.max, console: &console) else {
            return .invalidInput
        }
        let last = model.versions.last?.number ?? 0
        guard (through ?? last) <= last else {
            console.printError("error: '\(model.name)' has no version \(through ?? last); its newest is \(last)")
            return .invalidInput
        }
        let lock = LockFile.freezing(model, through: through ?? last)
        let path = ModelSources.path(of: LockFile.fileName, in: folder)
        do {
            let written = try ConfinedFolder.open(folder, for: .reading).write([
                ConfinedFolder.OutputFile(path: LockFile.fileName, data: try lock.encoded())
            ])
            console.print(
                "\(written.isEmpty ? "unchanged" : "wrote") \(DiagnosticText.escapedPath(path)): versions 1–\(through ?? last) of \(model.name) are frozen"
            )
            return .success
        } catch let error as ConfinedFolder.Failure {
            console.printError(error.description)
            return .invalidInput
        } catch {
            console.printError(
                "\(DiagnosticText.escapedPath(path)): error: cannot write the lock file: \(error.localizedDescription)")
            return .invalidInput
        }
    }
}
