import Foundation
import ModelwrightCoreData
import ModelwrightGenerator
import ModelwrightSchema

/// `modelwright import-coredata`: turns a Core Data model's versions into schema files.
enum ImportCoreDataCommand {
    /// How the command is called, after `modelwright`: its help and the tool's list of commands both show it.
    static let synopsis =
        "import-coredata <bundle.xcdatamodeld | model.xcdatamodel> --output <model folder> [--name <Model>] [--all-versions] [--version-order <names> | @<file>] [--skip-version <name>]…"

    /// What the command does, in one line, for the tool's list of commands.
    static let summary = "Import every version of a Core Data model as schema files."

    static let usage = """
        OVERVIEW: Import a Core Data model, with all its versions, as a model folder.

        USAGE: modelwright \(synopsis)

        ARGUMENTS:
          <bundle.xcdatamodeld>   A versioned Core Data model; its versions are taken in natural name order
                                  ('Model', 'Model 2', …, 'Model 10'). When the names differ before their
                                  numbers ('AppName 5', 'NewName v1.4'), the groups are ordered by the Xcode
                                  build that saved them (lastSavedToolsVersion), or the import stops and asks
                                  for --version-order. A bare '.xcdatamodel' is one version.

        OPTIONS:
          --output <folder>       Where to write '<Model>.v<N>.model', one file per version, numbered from 1.
          --name <Model>          The model's name (default: the bundle's name, as a type name).
          --all-versions          Also import the versions after the one '.xccurrentversion' names;
                                  the newest version then becomes current.
          --version-order <names> The versions' names, oldest first, separated by commas
                                  ('AppName, AppName 2, NewName v1.4'), or @<file> naming a file with one
                                  name per line. Every version not skipped must be named once.
          --skip-version <name>   Leave a version out, with a warning, such as one Xcode 3 saved as a binary
                                  'elements' archive; the others are numbered 1…N. Repeat for several.
          -h, --help              Show this help.

        Progress goes to standard error: the version order and why, then one line per version. Everything the schema language cannot
        express is reported as 'path:line:column: warning: …' against the Core Data 'contents' file.
        Files whose contents are unchanged are not rewritten. The imported model is then validated.
        Exit codes: 0 imported, 1 problems in the input, 2 usage error.
        """

    /// The options given on the command line.
    private struct Arguments {
        var path: String
        var output: String
        var name: String?
        var includesLater = false
        var versionOrder: [String]?
        var skipped: [String] = []
    }

    static func run(_ arguments: [String], console: inout some Console) -> ExitCode {
        if arguments.contains("-h") || arguments.contains("--help") {
            console.print(usage)
            return .success
        }
        let parsed: Arguments
        switch parse(arguments) {
        case .success(let arguments): parsed = arguments
        case .failure(let problem):
            console.printError("error: \(problem.message)\n\n\(usage)")
            return .usage
        }
        let bundle: CoreDataBundle
        do {
            bundle = try CoreDataBundle.open(
                path: parsed.path, versionOrder: parsed.versionOrder, skipping: parsed.skipped)
        } catch {
            console.printError(error.description)
            return error.isUsageError ? .usage : .invalidInput
        }
        // Version names are folder names, which may hold any byte.
        console.printError(DiagnosticText.escaped(bundle.order.summary))
        return importModel(bundle, parsed, console: &console)
    }

    /// Why the command line cannot be used.
    private struct UsageProblem: Error {
        var message: String
    }

    private static func parse(_ arguments: [String]) -> Result<Arguments, UsageProblem> {
        var options: [String: String] = [:]
        var includesLater = false
        var skipped: [String] = []
        var paths: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if ["--output", "--name", "--version-order", "--skip-version"].contains(argument) {
                guard index + 1 < arguments.count else {
                    return .failure(.init(message: "'\(argument)' needs a value"))
                }
                if argument == "--skip-version" {
                    skipped.append(arguments[index + 1])
                } else {
                    options[argument] = arguments[index + 1]
                }
                index += 2
            } else if argument == "--all-versions" {
                includesLater = true
                index += 1
            } else if argument.hasPrefix("-") {
                return .failure(.init(message: "unknown option '\(argument)'"))
            } else {
                paths.append(argument)
                index += 1
            }
        }
        guard paths.count == 1, let output = options["--output"] else {
            return .failure(.init(message: "give one Core Data model and --output"))
        }
        var parsed = Arguments(path: paths[0], output: output, name: options["--name"], includesLater: includesLater)
        parsed.skipped = skipped
        if let order = options["--version-order"] {
            switch versionOrder(order) {
            case .success(let names): parsed.versionOrder = names
            case .failure(let problem): return .failure(problem)
            }
        }
        return .success(parsed)
    }

    /// The names `--version-order` gives: comma-separated, or one per line in the file `@path`
    /// names (blank lines and lines starting with `#` ignored), each trimmed of surrounding spaces.
    private static func versionOrder(_ value: String) -> Result<[String], UsageProblem> {
        var names: [String]
        if value.hasPrefix("@") {
            let file = String(value.dropFirst())
            // Read as every named file is: never through a link, a hard link refused, and the
            // content never echoed (only its size or kind of problem).
            let text: String
            do {
                let bytes = try ConfinedFolder.readFile(atPath: file, limit: 1024 * 1024)
                guard let decoded = String(validating: bytes, as: UTF8.self) else {
                    return .failure(
                        .init(
                            message:
                                "--version-order: the file '\(DiagnosticText.escaped(file))' is not UTF-8 text"))
                }
                text = decoded
            } catch {
                return .failure(
                    .init(
                        message:
                            "--version-order: cannot read the file '\(DiagnosticText.escaped(file))' (\(error.reason)); give a regular file with one version name per line"
                    ))
            }
            names = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            names.removeAll { $0.hasPrefix("#") }
        } else {
            names = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        names.removeAll(where: \.isEmpty)
        guard !names.isEmpty else { return .failure(.init(message: "--version-order names no version")) }
        return .success(names)
    }

    private static func importModel(
        _ bundle: CoreDataBundle, _ parsed: Arguments, console: inout some Console
    ) -> ExitCode {
        // The folder the writer opens (`.` and `..` resolved in the text) is the one read back.
        let output = ConfinedFolder.lexicallyNormalised(parsed.output)
        var importOptions = CoreDataImporter.Options(
            modelName: parsed.name, includesVersionsAfterCurrent: parsed.includesLater)
        importOptions.folder = output
        let result = CoreDataImporter.importModel(bundle, options: importOptions) { number, count, name in
            console.printError("importing version \(number) of \(count) (\(DiagnosticText.escaped(name)))…")
        }
        for diagnostic in result.diagnostics {
            console.printError(diagnostic.description)
        }
        guard !result.hasErrors else { return .invalidInput }
        // Everything the folder is read for after the write is checked before it: a file the
        // import does not replace (a lock file, another version) that cannot be read stops the
        // import with nothing written, rather than after the files are in place.
        let replaced = Set(result.files.map { ModelSources.path(of: $0.name, in: output) })
        if FileManager.default.fileExists(atPath: output) {
            let unreadable = ModelSources.read(output).problems.filter {
                // A warning (a backup beside a version) does not stop the import.
                $0.severity == .error && $0.path != output && !replaced.contains($0.path)
            }
            for problem in unreadable { console.printError(problem.description) }
            guard unreadable.isEmpty else { return .invalidInput }
        }
        do {
            let (written, stale) = try CoreDataImporter.write(result, to: output)
            let folder = URL(fileURLWithPath: output)
            for file in result.files {
                let state = written.contains(file.name) ? "wrote" : "unchanged"
                console.print("\(state) \(DiagnosticText.escapedPath(folder.appendingPathComponent(file.name).path))")
            }
            for name in stale {
                console.printError(
                    "\(folder.appendingPathComponent(name).path): warning: this file is not part of the import; remove it, or the folder will not validate as one model"
                )
            }
        } catch {
            console.printError(error.description)
            return .invalidInput
        }
        // The import ran the front end on the folder as written (`Options.folder`).
        guard let checked = result.checked else { return .invalidInput }
        for diagnostic in checked.diagnostics {
            console.printError(diagnostic.description)
        }
        return checked.hasErrors ? .invalidInput : .success
    }
}
