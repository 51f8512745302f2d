/// The tool's exit codes, the same for every command.
enum ExitCode: Int32 {
    /// The input is valid and the command did its job.
    case success = 0
    /// The input has problems; diagnostics say which.
    case invalidInput = 1
    /// The command line itself is wrong; usage says how to call it.
    case usage = 2
}
