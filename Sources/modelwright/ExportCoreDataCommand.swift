import Foundation
import ModelwrightCoreData
import ModelwrightGenerator
import ModelwrightSchema

/// `modelwright export-coredata`: writes a model folder as a Core Data model bundle.
enum ExportCoreDataCommand {
    /// How the command is called, after `modelwright`: its help and the tool's list of commands both show it.
    static let synopsis = "export-coredata <model folder> --output <Name.xcdatamodeld>"

    /// What the command does, in one line, for the tool's list of commands.
    static let summary = "Write every version of a model as a Core Data model bundle."

    static let usage = """
        OVERVIEW: Export every version of a model as a Core Data model bundle.

        USAGE: modelwright \(synopsis)

        ARGUMENTS:
          <model folder>            A folder of '<Model>.v<N>.model' files; the newest version is current.

        OPTIONS:
          --output <Name.xcdatamodeld>
                                    The bundle to write: '<Name> <N>.xcdatamodel/contents' per version and
                                    '.xccurrentversion' naming the newest.
          -h, --help                Show this help.

        Renames become renaming identifiers ('elementID'). What Core Data cannot hold (enums, composites,
        'now' defaults, default sorts, custom stages) is reported as 'path:line:column: warning: …'.
        Files whose contents are unchanged are not rewritten. Nothing is written when the model has errors.
        Exit codes: 0 exported, 1 problems in the input, 2 usage error.
        """

    static func run(_ arguments: [String], console: inout some Console) -> ExitCode {
        if arguments.contains("-h") || arguments.contains("--help") {
            console.print(usage)
            return .success
        }
        guard let parsed = CommandArguments.parse(arguments, options: ["--output"], usage: usage, console: &console)
        else { return .usage }
        let paths = parsed.paths
        guard paths.count == 1, let output = parsed.options["--output"] else {
            console.printError("error: give one model folder and --output\n\n\(usage)")
            return .usage
        }
        if ModelFolder.refusesFile(paths[0], command: "export-coredata", console: &console) { return .usage }
        let bundleURL = URL(fileURLWithPath: output.hasSuffix("/") ? String(output.dropLast()) : output)
        guard bundleURL.pathExtension == "xcdatamodeld", !bundleURL.deletingPathExtension().lastPathComponent.isEmpty
        else {
            console.printError(
                "error: --output must name an '.xcdatamodeld' bundle, such as 'Trips.xcdatamodeld'\n\n\(usage)")
            return .usage
        }
        guard let model = ModelFolder.plan(paths[0], console: &console) else { return .invalidInput }
        let result = CoreDataExporter.export(model, bundleName: bundleURL.deletingPathExtension().lastPathComponent)
        for diagnostic in result.diagnostics {
            console.printError(diagnostic.description)
        }
        // A value the XML cannot carry leaves the bundle unwritten rather than half written.
        guard !result.diagnostics.contains(where: { $0.severity == .error }) else { return .invalidInput }
        do {
            let (written, stale) = try CoreDataExporter.write(result, to: bundleURL.path)
            for file in result.files {
                let state = written.contains(file.path) ? "wrote" : "unchanged"
                console.print(
                    "\(state) \(DiagnosticText.escapedPath(bundleURL.appendingPathComponent(file.path).path))")
            }
            for name in stale {
                console.printError(
                    "\(bundleURL.appendingPathComponent(name).path): warning: this version is not part of the export; remove it, or Xcode will show it as a version of the model"
                )
            }
        } catch {
            console.printError(error.description)
            return .invalidInput
        }
        return .success
    }
}
