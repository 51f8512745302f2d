import Foundation
import ModelwrightGenerator
import ModelwrightSchema

/// `modelwright generate`: validates a model and writes its Swift files.
enum GenerateCommand {
    /// How the command is called, after `modelwright`: its help and the tool's list of commands both show it.
    static let synopsis =
        "generate <model folder> --output <dir> [--config <file> | --no-config] [--templates <dir>] [--check]"

    /// What the command does, in one line, for the tool's list of commands.
    static let summary = "Write the model's records, queries, schema and migrations as Swift."

    static let usage = """
        OVERVIEW: Generate the Swift an app compiles against from a model folder.

        USAGE: modelwright \(synopsis)

        ARGUMENTS:
          <model folder>       A folder of '<Model>.v<N>.model' files; the newest version is current.

        OPTIONS:
          --output <dir>       Where to write \(FileNames.outputs(forModel: "<Model>").joined(separator: ", ")).
          --config <file>      A modelwright-config.json (access level, template overrides).
                               Without it, one in the model folder or its parent is used if present.
          --no-config          Use the defaults and look for no config file (the plugins pass it when
                               the target holds none, so nothing undeclared above the target is read).
          --templates <dir>    A folder of <Name>.mustache files that replace the defaults.
          --check              Write nothing; list the files in --output that differ from what would be
                               written, and exit 1 if any does (for CI, over committed generated code).
          -h, --help           Show this help.

        Files whose contents are unchanged are not rewritten. Nothing is written when the model has errors.
        Exit codes: 0 generated (or up to date, with --check), 1 problems in the input (or stale files,
        with --check), 2 usage error.
        """

    static func run(_ arguments: [String], console: inout some Console) -> ExitCode {
        if arguments.contains("-h") || arguments.contains("--help") {
            console.print(usage)
            return .success
        }
        guard
            let parsed = CommandArguments.parse(
                arguments, flags: ["--check", "--no-config"], options: ["--output", "--config", "--templates"],
                usage: usage, console: &console)
        else { return .usage }
        let (options, paths) = (parsed.options, parsed.paths)
        let check = parsed.flags.contains("--check")
        let noConfig = parsed.flags.contains("--no-config")
        guard paths.count == 1, let output = options["--output"] else {
            console.printError("error: give one model folder and --output\n\n\(usage)")
            return .usage
        }
        if noConfig && options["--config"] != nil {
            console.printError("error: give either --config or --no-config\n\n\(usage)")
            return .usage
        }
        if ModelFolder.refusesFile(paths[0], command: "generate", console: &console) { return .usage }
        let request = Pipeline.Request(
            modelPath: paths[0], goal: check ? .render : .write(to: output), configPath: options["--config"],
            config: noConfig ? GeneratorConfig() : nil, templatesFolder: options["--templates"])
        guard let result = ModelFolder.run(request, console: &console), !result.hasErrors else { return .invalidInput }
        if check { return Self.check(result.files, in: output, console: &console) }
        for file in result.files {
            let state = result.written.contains(file.name) ? "wrote" : "unchanged"
            console.print(
                "\(state) \(DiagnosticText.escapedPath(URL(fileURLWithPath: output).appendingPathComponent(file.name).path))"
            )
        }
        return .success
    }

    /// Compares `files` with what `output` holds: each file that differs or is missing is listed.
    private static func check(_ files: [RenderedFile], in output: String, console: inout some Console) -> ExitCode {
        let folder = URL(fileURLWithPath: output)
        // Committed files are read as generate writes them: inside the folder, never through a link,
        // and the folder itself by the rule of writing (a linked output folder is refused).
        let confined: ConfinedFolder?
        do {
            confined = try ConfinedFolder.open(output, for: .checkingOutput)
        } catch {
            // Missing: every file is missing. Anything else there (a link, a file) is refused.
            let normalised = ConfinedFolder.lexicallyNormalised(output)
            let manager = FileManager.default
            if manager.fileExists(atPath: normalised)
                || (try? manager.destinationOfSymbolicLink(atPath: normalised)) != nil
            {
                console.printError(error.description)
                return .invalidInput
            }
            confined = nil
        }
        var stale = 0
        for file in files {
            let url = folder.appendingPathComponent(file.name)
            let existing: [UInt8]
            do throws(BoundedFile.Failure) {
                guard let confined else { throw .cannotOpen }
                existing = try confined.read(file.name, limit: max(SourceFile.maximumSize, file.contents.utf8.count))
            } catch {
                let shown = DiagnosticText.escapedPath(url.path)
                console.print(error == .cannotOpen ? "missing \(shown)" : "stale \(shown) (\(error.reason))")
                stale += 1
                continue
            }
            if existing != Array(file.contents.utf8) {
                console.print("stale \(DiagnosticText.escapedPath(url.path))")
                stale += 1
            }
        }
        guard stale > 0 else {
            console.print("up to date: \(files.count) files in \(DiagnosticText.escapedPath(output))")
            return .success
        }
        console.printError(
            "error: \(stale) generated file\(stale == 1 ? " is" : "s are") out of date; run modelwright generate")
        return .invalidInput
    }
}
