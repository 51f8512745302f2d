import Foundation

/// `modelwright`: the command-line entry point, dispatching to one command per job.
@main
enum ModelwrightCommand {
    static let usage = """
        OVERVIEW: Modelwright checks versioned data models and generates the Swift an app compiles against.

        USAGE: modelwright <command> [options]

        COMMANDS:
          validate <model folder or file>...   Check every version of each model and print its checksums.
          generate <model folder> --output <dir>
                                               Write the model's records, queries, schema and migrations as Swift.
          plan <model folder> [--json]         Show how each version step migrates, and what it costs.
          new-version <model folder>           Start the next version as a copy of the current one.
          lock <model folder> [--through <N>]  Freeze released versions in the model's lock file.
          import-coredata <bundle.xcdatamodeld> --output <model folder>
                                               Import every version of a Core Data model as schema files.
          export-coredata <model folder> --output <Name.xcdatamodeld>
                                               Write every version of a model as a Core Data model bundle.
          import-coredata-store <store.sqlite> --model <model folder> --output <file> [--dry-run]
                                               Import an app's Core Data store into a new store.

        OPTIONS:
          -h, --help      Show this help, or a command's help with 'modelwright <command> --help'.
          --version       Show the version.

        Exit codes: 0 valid, 1 problems in the input, 2 usage error.
        """

    static let version = "0.1.0"

    static func main() {
        // A write past the file-size limit (`ulimit -f`) would kill the process by SIGXFSZ, with
        // no message and its temporary files left; ignored, the write fails with EFBIG instead,
        // and the command reports it and cleans up like any other failed write.
        signal(SIGXFSZ, SIG_IGN)
        var console = StandardConsole()
        let code = run(Array(CommandLine.arguments.dropFirst()), console: &console)
        exit(code.rawValue)
    }

    /// Runs the tool with the arguments after the program name.
    static func run(_ arguments: [String], console: inout some Console) -> ExitCode {
        guard let command = arguments.first else {
            console.printError(usage)
            return .usage
        }
        let rest = Array(arguments.dropFirst())
        switch command {
        case "-h", "--help", "help":
            console.print(usage)
            return .success
        case "--version":
            console.print("modelwright \(version)")
            return .success
        case "validate":
            return ValidateCommand.run(rest, console: &console)
        case "generate":
            return GenerateCommand.run(rest, console: &console)
        case "plan":
            return PlanCommand.run(rest, console: &console)
        case "new-version":
            return NewVersionCommand.run(rest, console: &console)
        case "lock":
            return LockCommand.run(rest, console: &console)
        case "import-coredata":
            return ImportCoreDataCommand.run(rest, console: &console)
        case "export-coredata":
            return ExportCoreDataCommand.run(rest, console: &console)
        case "import-coredata-store":
            return ImportCoreDataStoreCommand.run(rest, console: &console)
        default:
            console.printError("error: unknown command '\(command)'")
            console.printError("")
            console.printError(usage)
            return .usage
        }
    }
}
