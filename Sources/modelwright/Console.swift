import Foundation
import ModelwrightSchema

/// Where the command-line tool prints: the terminal, or a buffer in tests. Whatever a command
/// prints is escaped here, by ``DiagnosticText``, so no schema text, path or error description
/// reaches a terminal raw: standard output keeps its lines whole, standard error is escaped and
/// capped as diagnostics are.
protocol Console {
    /// Prints a line of results to standard output.
    mutating func print(_ line: String)
    /// Prints a line of diagnostics or usage to standard error.
    mutating func printError(_ line: String)
}

/// The process's standard output and standard error.
struct StandardConsole: Console {
    mutating func print(_ line: String) {
        FileHandle.standardOutput.write(Data((DiagnosticText.escapedLines(line) + "\n").utf8))
    }

    mutating func printError(_ line: String) {
        FileHandle.standardError.write(Data((terminalSafe(line) + "\n").utf8))
    }
}

/// Collects what a command prints, so tests can compare it.
struct BufferConsole: Console {
    private(set) var output = ""
    private(set) var errors = ""

    mutating func print(_ line: String) {
        output += DiagnosticText.escapedLines(line) + "\n"
    }

    mutating func printError(_ line: String) {
        errors += terminalSafe(line) + "\n"
    }
}

/// Text for standard error with every line escaped as diagnostics are: messages the tool writes
/// itself (usage errors naming an argument, I/O errors naming a path) echo input too.
private func terminalSafe(_ text: String) -> String {
    text.split(separator: "\n", omittingEmptySubsequences: false).map { DiagnosticText.escaped(String($0)) }
        .joined(separator: "\n")
}
