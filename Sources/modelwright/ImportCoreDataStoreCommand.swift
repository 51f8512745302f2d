import Foundation
import Modelwright
import ModelwrightSchema

/// `modelwright import-coredata-store`: an app's Core Data store into a new Modelwright store, by
/// the runtime's importer, for tests and support.
enum ImportCoreDataStoreCommand {
    /// How the command is called, after `modelwright`: its help and the tool's list of commands both show it.
    static let synopsis = "import-coredata-store <store.sqlite> --model <model folder> --output <file> [--dry-run]"

    /// What the command does, in one line, for the tool's list of commands.
    static let summary = "Import an app's Core Data store into a new store."

    static let usage = """
        OVERVIEW: Import an app's Core Data SQLite store into a new Modelwright store.

        USAGE: modelwright \(synopsis)

        ARGUMENTS:
          <store.sqlite>          The Core Data store; its -wal and -shm are read beside it, and external
                                  binary data from '.<Name>_SUPPORT/_EXTERNAL_DATA'. It is only read.

        OPTIONS:
          --model <folder>        The model folder 'import-coredata' wrote, with its versions and
                                  '<Model>.coredata-store.json'.
          --output <file>         Where to write the new store; nothing may be there yet.
          --dry-run               Find the version and read every object and link, but write nothing.
          -h, --help              Show this help.

        Prints the Core Data version whose entity hashes the store has, the schema version it
        became, and the objects read per entity. A step with a custom stage needs the app's code:
        import such a store in the app (CoreDataStoreImport), or with --dry-run here.
        The store is copied into the system's temporary folder, and the new store is written in
        '.<output>.import-<pid>-XXXXXX' beside --output; a killed run leaves both, and the next
        run (to any output in that folder) removes them: only folders holding the importer's
        marker and nothing but its own files. --output may not be one of the store's files
        (-wal, -shm, -journal) or inside its _SUPPORT folder.
        Exit codes: 0 imported, 1 the store or model cannot be imported, 2 usage error.
        """

    static func run(_ arguments: [String], console: inout some Console) -> ExitCode {
        if arguments.contains("-h") || arguments.contains("--help") {
            console.print(usage)
            return .success
        }
        guard
            let parsed = CommandArguments.parse(
                arguments, flags: ["--dry-run"], options: ["--model", "--output"], usage: usage, console: &console)
        else { return .usage }
        let (options, paths) = (parsed.options, parsed.paths)
        let dryRun = parsed.flags.contains("--dry-run")
        guard paths.count == 1, let modelPath = options["--model"], dryRun || options["--output"] != nil else {
            console.printError("error: give one Core Data store, --model and --output (or --dry-run)\n\n\(usage)")
            return .usage
        }
        guard let planned = ModelFolder.plan(modelPath, console: &console), let current = planned.current else {
            return .invalidInput
        }
        let storeModel: CoreDataStoreModel
        let name = FileNames.coreDataStoreModel(of: planned.name)
        do {
            let folder = try ConfinedFolder.open(modelPath, for: .reading)
            let bytes = try folder.read(name, limit: 256 * 1024 * 1024)
            storeModel = try JSONDecoder().decode(CoreDataStoreModel.self, from: Data(bytes))
        } catch {
            console.printError(
                "error: \(DiagnosticText.escapedPath(modelPath))/\(name) cannot be read (\(error)); run 'modelwright import-coredata' on the app's .xcdatamodeld into this folder first"
            )
            return .invalidInput
        }
        let plan = migrationPlan(planned, current: current.schema)
        let store = URL(fileURLWithPath: paths[0])
        let output = URL(fileURLWithPath: options["--output"] ?? paths[0] + ".modelwright")
        do {
            let found = try CoreDataStoreImport.importStore(
                at: store, model: storeModel, migrationPlan: plan, to: output, dryRun: true)
            printSummary(found, console: &console)
            if dryRun { return .success }
            let custom = planned.steps.filter { $0.from.number >= found.schemaVersion && !$0.customStages.isEmpty }
            if let step = custom.first {
                console.printError(
                    "error: the step from version \(step.from.number) to \(step.to.number) runs the custom stage \(step.customStages.map(\.name).joined(separator: ", ")), which is the app's code; import this store in the app with CoreDataStoreImport"
                )
                return .invalidInput
            }
            let written = try CoreDataStoreImport.importStore(
                at: store, model: storeModel, migrationPlan: plan, to: output)
            console.print(
                "wrote \(DiagnosticText.escapedPath(output.path)) at version \(current.number) (\(written.totalRows) objects, \(written.links) to-many links)"
            )
            return .success
        } catch let error as CoreDataStoreImportError {
            console.printError("error: \(DiagnosticText.escaped(error.description))")
            return .invalidInput
        } catch {
            console.printError("error: \(DiagnosticText.escaped(String(describing: error)))")
            return .invalidInput
        }
    }

    private static func printSummary(_ summary: CoreDataStoreImport.Summary, console: inout some Console) {
        console.print(
            "matched Core Data version '\(DiagnosticText.escaped(summary.coreDataVersion))' (schema version \(summary.schemaVersion)), store \(DiagnosticText.escaped(summary.storeUUID))"
        )
        for (entity, count) in summary.rows.sorted(by: { $0.key < $1.key }) {
            console.print("  \(DiagnosticText.escaped(entity)): \(count)")
        }
        console.print("  \(summary.totalRows) objects, \(summary.links) to-many links")
    }

    /// The model's plan as the runtime runs it: lightweight steps as they are; a custom stage's
    /// steps refuse to run, since only the app has their code (the command checks before).
    private static func migrationPlan(_ planned: PlannedModel, current: SchemaDescription) -> MigrationPlan {
        let stages = planned.steps.map { step -> MigrationStage in
            guard !step.customStages.isEmpty else {
                return .lightweight(from: step.from.schema, to: step.to.schema)
            }
            let steps = step.customStages.map { stage in
                MigrationStage.CustomStep(name: stage.name, label: stage.label) { _ in
                    throw CoreDataStoreImportError.verificationFailed(problems: [
                        "the custom stage '\(stage.name)' is the app's code"
                    ])
                }
            }
            return .custom(from: step.from.schema, to: step.to.schema, steps: steps)
        }
        return MigrationPlan(current: current, stages: stages)
    }
}
