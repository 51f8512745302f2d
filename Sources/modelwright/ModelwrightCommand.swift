import Foundation

/// `modelwright`: the command-line entry point, dispatching to one command per job.
@main
enum ModelwrightCommand {
    /// Each command's synopsis and summary, in the order the help lists them: the commands own
    /// both, so the list cannot leave out an option a command's own help shows.
    static let commands: [(synopsis: String, summary: String)] = [
        (ValidateCommand.synopsis, ValidateCommand.summary),
        (GenerateCommand.synopsis, GenerateCommand.summary),
        (PlanCommand.synopsis, PlanCommand.summary),
        (NewVersionCommand.synopsis, NewVersionCommand.summary),
        (LockCommand.synopsis, LockCommand.summary),
        (ImportCoreDataCommand.synopsis, ImportCoreDataCommand.summary),
        (ExportCoreDataCommand.synopsis, ExportCoreDataCommand.summary),
        (ImportCoreDataStoreCommand.synopsis, ImportCoreDataStoreCommand.summary),
    ]

    /// The commands as the help lists them: a synopsis that fits beside its summary shares its
    /// line; a longer one is followed by the summary on a line of its own, in the same column.
    static var commandList: String {
        let column = 39
        return commands.map { command in
            let synopsis = "  " + command.synopsis
            return synopsis.count < column - 1
                ? synopsis.padding(toLength: column, withPad: " ", startingAt: 0) + command.summary
                : synopsis + "\n" + String(repeating: " ", count: column) + command.summary
        }.joined(separator: "\n")
    }

    static let usage = """
        OVERVIEW: Modelwright checks versioned data models and generates the Swift an app compiles against.

        USAGE: modelwright <command> [options]

        COMMANDS:
        \(commandList)

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
