import Foundation
import ModelwrightSchema

/// `modelwright new-version`: starts the next version as a copy of the current one.
enum NewVersionCommand {
    /// How the command is called, after `modelwright`: its help and the tool's list of commands both show it.
    static let synopsis = "new-version <model folder>"

    /// What the command does, in one line, for the tool's list of commands.
    static let summary = "Start the next version as a copy of the current one."

    static let usage = """
        OVERVIEW: Start the next version of a model as a copy of the current one.

        USAGE: modelwright \(synopsis)

        Writes '<Model>.v<N+1>.model' beside the others: the current version with its header
        raised to N+1, and without the '@renamed(from:)' annotations and 'migration from' block
        that described the step into version N. Edit the new file; 'modelwright plan' shows
        what the step will do.

        OPTIONS:
          -h, --help   Show this help.

        Exit codes: 0 written, 1 problems in the input, 2 usage error.
        """

    static func run(_ arguments: [String], console: inout some Console) -> ExitCode {
        if arguments.contains("-h") || arguments.contains("--help") {
            console.print(usage)
            return .success
        }
        guard arguments.count == 1, let folder = arguments.first, !folder.hasPrefix("-") else {
            console.printError("error: expected exactly one model folder\n\n\(usage)")
            return .usage
        }
        if ModelFolder.refusesFile(folder, command: "new-version", console: &console) { return .usage }
        guard let model = ModelFolder.plan(folder, console: &console), let current = model.current else {
            return .invalidInput
        }
        let name = FileNames.version(current.number + 1, of: model.name)
        let path = ModelSources.path(of: name, in: folder)
        do {
            let output = try ConfinedFolder.open(folder, for: .reading)
            guard output.kind(of: name) == .missing else {
                console.printError(
                    "\(DiagnosticText.escapedPath(path)): error: the file already exists; it was left untouched")
                return .invalidInput
            }
            try output.write([ConfinedFolder.OutputFile(path: name, text: try NewVersion.text(after: current))])
        } catch let error as ConfinedFolder.Failure {
            console.printError(error.description)
            return .invalidInput
        } catch {
            console.printError(
                "\(DiagnosticText.escapedPath(path)): error: cannot write the new version: \(error.localizedDescription)"
            )
            return .invalidInput
        }
        console.print(
            "wrote \(DiagnosticText.escapedPath(path)): version \(current.number + 1) of \(model.name), a copy of version \(current.number)"
        )
        return .success
    }
}
