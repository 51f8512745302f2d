import Foundation
import ModelwrightSchema

/// `modelwright import-coredata`: turns a Core Data model's versions into schema files.
enum ImportCoreDataCommand {
    static let usage = """
        OVERVIEW: Import a Core Data model, with all its versions, as a model folder.

        USAGE: modelwright import-coredata <bundle.xcdatamodeld | model.xcdatamodel> --output <model folder> [--name <Model>] [--all-versions]

        ARGUMENTS:
          <bundle.xcdatamodeld>   A versioned Core Data model; its versions are taken in natural name order
                                  ('Model', 'Model 2', …, 'Model 10'). A bare '.xcdatamodel' is one version.

        OPTIONS:
          --output <folder>       Where to write '<Model>.v<N>.model', one file per version, numbered from 1.
          --name <Model>          The model's name (default: the bundle's name, as a type name).
          --all-versions          Also import the versions after the one '.xccurrentversion' names;
                                  the newest version then becomes current.
          -h, --help              Show this help.

        Progress goes to standard error, one line per version. Everything the schema language cannot
        express is reported as 'path:line:column: warning: …' against the Core Data 'contents' file.
        Files whose contents are unchanged are not rewritten. The imported model is then validated.
        Exit codes: 0 imported, 1 problems in the input, 2 usage error.
        """

    static func run(_ arguments: [String], console: inout some Console) -> ExitCode {
        if arguments.contains("-h") || arguments.contains("--help") {
            console.print(usage)
            return .success
        }
        var options: [String: String] = [:]
        var includesLater = false
        var paths: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if ["--output", "--name"].contains(argument) {
                guard index + 1 < arguments.count else {
                    console.printError("error: '\(argument)' needs a value\n\n\(usage)")
                    return .usage
                }
                options[argument] = arguments[index + 1]
                index += 2
            } else if argument == "--all-versions" {
                includesLater = true
                index += 1
            } else if argument.hasPrefix("-") {
                console.printError("error: unknown option '\(argument)'\n\n\(usage)")
                return .usage
            } else {
                paths.append(argument)
                index += 1
            }
        }
        guard paths.count == 1, let output = options["--output"] else {
            console.printError("error: give one Core Data model and --output\n\n\(usage)")
            return .usage
        }
        let bundle: CoreDataBundle
        do {
            bundle = try CoreDataBundle.open(path: paths[0])
        } catch {
            console.printError(error.description)
            return .invalidInput
        }
        var importOptions = CoreDataImporter.Options(
            modelName: options["--name"], includesVersionsAfterCurrent: includesLater)
        importOptions.folder = output
        let result = CoreDataImporter.importModel(bundle, options: importOptions) { number, count, name in
            console.printError("importing version \(number) of \(count) (\(name))…")
        }
        for diagnostic in result.diagnostics {
            console.printError(diagnostic.description)
        }
        guard !result.hasErrors else { return .invalidInput }
        do {
            let (written, stale) = try CoreDataImporter.write(result, to: output)
            let folder = URL(fileURLWithPath: output)
            for file in result.files {
                let state = written.contains(file.name) ? "wrote" : "unchanged"
                console.print("\(state) \(folder.appendingPathComponent(file.name).path)")
            }
            for name in stale {
                console.printError(
                    "\(folder.appendingPathComponent(name).path): warning: this file is not part of the import; remove it, or the folder will not validate as one model"
                )
            }
        } catch {
            console.printError("\(output): error: cannot write the model: \(error.localizedDescription)")
            return .invalidInput
        }
        // The versions the import compiled are reused where the written file is the same.
        let loaded = ModelLoader.load(path: output, reusing: result.compiled)
        for diagnostic in loaded.diagnostics {
            console.printError(diagnostic.description)
        }
        return loaded.hasErrors ? .invalidInput : .success
    }
}
