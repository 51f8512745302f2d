import ModelwrightSchema

/// A command's arguments read by the rule the commands with named options share: a flag stands
/// alone, an option takes the argument after it as its value, any other argument that starts with
/// `-` is refused, and the rest are paths, in order.
struct CommandArguments {
    /// The value of each option given, by its spelling (`--output`); a later one replaces an earlier.
    var options: [String: String] = [:]
    /// The flags given (`--check`).
    var flags: Set<String> = []
    /// The arguments that are neither options, their values nor flags.
    var paths: [String] = []

    /// Reads `arguments`, or prints what is wrong, then `usage`, and returns `nil` (the command
    /// exits with ``ExitCode/usage``).
    static func parse(
        _ arguments: [String], flags: Set<String> = [], options: Set<String>, usage: String,
        console: inout some Console
    ) -> CommandArguments? {
        var parsed = CommandArguments()
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if flags.contains(argument) {
                parsed.flags.insert(argument)
                index += 1
            } else if options.contains(argument) {
                guard index + 1 < arguments.count else {
                    console.printError("error: '\(argument)' needs a value\n\n\(usage)")
                    return nil
                }
                parsed.options[argument] = arguments[index + 1]
                index += 2
            } else if argument.hasPrefix("-") {
                console.printError("error: unknown option '\(DiagnosticText.escaped(argument))'\n\n\(usage)")
                return nil
            } else {
                parsed.paths.append(argument)
                index += 1
            }
        }
        return parsed
    }
}
