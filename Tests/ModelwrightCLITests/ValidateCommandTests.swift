import Foundation
import ModelwrightTestSupport
import Testing

@testable import ModelwrightCLI

/// `modelwright validate` prints diagnostics and summaries and exits 0, 1 or 2.
@Suite(.heavy)
struct ValidateCommandTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    private static func run(_ arguments: [String]) -> (ExitCode, BufferConsole) {
        var console = BufferConsole()
        let code = ModelwrightCommand.run(arguments, console: &console)
        return (code, console)
    }

    @Test func validModelPrintsOneLinePerVersionAndExitsZero() {
        let (code, console) = Self.run(["validate", Self.root.appendingPathComponent("Models/Trips").path])
        #expect(code == .success)
        #expect(console.errors.isEmpty)
        let lines = console.output.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.map { $0.prefix(9) } == ["Trips v1 ", "Trips v2 ", "Trips v3 "])
        #expect(lines[2].contains("7 entities, 30 attributes, 8 relationships, checksum "))
        let checksum = lines[2].split(separator: " ").last.map(String.init) ?? ""
        #expect(checksum.count == 64)
    }

    @Test func brokenModelPrintsDiagnosticsAndExitsOne() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cli-\(UUID().uuidString)/Broken")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let file = folder.appendingPathComponent("Broken.v1.model")
        try Data("model Broken version 1\nentity A {\n    b: Strin\n}\n".utf8).write(to: file)
        let (code, console) = Self.run(["validate", folder.path])
        #expect(code == .invalidInput)
        #expect(console.output.isEmpty)
        #expect(
            console.errors == """
                \(file.path):3:8: error: unknown type 'Strin'
                \(file.path):3:8: note: did you mean 'String'?

                """
        )
    }

    @Test func everyPathIsCheckedAndAnyFailureFailsTheRun() {
        let (code, console) = Self.run([
            "validate", "/nonexistent/Model", Self.root.appendingPathComponent("Models/Trips").path,
        ])
        #expect(code == .invalidInput)
        #expect(console.errors == "/nonexistent/Model: error: no such file or folder\n")
        #expect(console.output.split(separator: "\n").count == 3)
    }

    @Test func usageErrorsExitTwo() {
        #expect(Self.run([]).0 == .usage)
        #expect(Self.run(["frobnicate"]).0 == .usage)
        #expect(Self.run(["frobnicate"]).1.errors.hasPrefix("error: unknown command 'frobnicate'"))
        #expect(Self.run(["validate"]).0 == .usage)
        #expect(Self.run(["validate", "--strict", "Models/Trips"]).0 == .usage)
        #expect(Self.run(["validate", "--strict"]).1.errors.hasPrefix("error: unknown option '--strict'"))
    }

    @Test func doubleDashEndsOptions() {
        let (code, console) = Self.run(["validate", "--", "-odd-name"])
        #expect(code == .invalidInput)
        #expect(console.errors == "-odd-name: error: no such file or folder\n")
    }

    @Test func helpExplainsUsage() {
        let (code, console) = Self.run(["--help"])
        #expect(code == .success)
        #expect(console.output.contains("USAGE: modelwright <command> [options]"))
        #expect(console.output.contains("validate <model folder or file>"))
        let (validateCode, validateConsole) = Self.run(["validate", "--help"])
        #expect(validateCode == .success)
        #expect(validateConsole.output.contains("USAGE: modelwright validate <model folder or file>..."))
        #expect(Self.run(["--version"]).1.output == "modelwright \(ModelwrightCommand.version)\n")
    }

    /// The tool's list of commands shows each command as the command's own help does: the list
    /// once said `plan <model folder> [--json]`, without `plan`'s `--engine` and `--postgres`.
    @Test func theCommandListShowsEveryCommandAsItsOwnHelpDoes() throws {
        let help = Self.run(["--help"]).1.output
        let commands = [
            "validate", "generate", "plan", "new-version", "lock", "import-coredata", "export-coredata",
            "import-coredata-store",
        ]
        for command in commands {
            let own = Self.run([command, "--help"]).1.output
            let usage = try #require(
                own.split(separator: "\n").first { $0.hasPrefix("USAGE: modelwright ") }, "\(command) has no USAGE line"
            )
            let synopsis = usage.dropFirst("USAGE: modelwright ".count)
            #expect(
                help.split(separator: "\n").contains { $0.trimmingCharacters(in: .whitespaces).hasPrefix(synopsis) },
                "the command list lacks '\(synopsis)':\n\(help)")
        }
        #expect(help.contains("plan <model folder> [--json] [--engine sqlite|postgres] [--postgres <url>]"))
    }

    @Test func theBuiltExecutableExitsWithTheDocumentedCodes() throws {
        // The test runner lives in the build folder, next to the products `swift build` made.
        let buildFolder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let executable = try #require(
            [buildFolder, buildFolder.deletingLastPathComponent()].map { $0.appendingPathComponent("modelwright") }
                .first { FileManager.default.isExecutableFile(atPath: $0.path) },
            "the modelwright executable is built next to the tests (in \(buildFolder.path))"
        )
        func exitCode(_ arguments: [String]) throws -> Int32 {
            let process = Process()
            process.executableURL = executable
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }
        #expect(try exitCode(["validate", Self.root.appendingPathComponent("Models/Trips").path]) == 0)
        #expect(try exitCode(["validate", "/nonexistent"]) == 1)
        #expect(try exitCode(["validate"]) == 2)
    }

    @Test func nothingFromTheInputReachesTheTerminalRaw() throws {
        // A path, an option and a file's content holding an escape sequence, a bidi override and
        // a bell: every message shows them escaped.
        let hostile = "x\u{1B}[31m\u{202E}\u{07}"
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cli-\(UUID().uuidString)/\(hostile)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        try Data("model M version 1\nentity A {\n    b: Strin\(hostile)g\n}\n".utf8)
            .write(to: folder.appendingPathComponent("M.v1.model"))
        for arguments in [
            ["validate", folder.path], ["validate", "--\(hostile)"], ["plan", folder.path + "/missing"],
        ] {
            let (code, console) = Self.run(arguments)
            #expect(code != .success)
            #expect(!console.errors.isEmpty)
            #expect(!console.errors.unicodeScalars.contains { ["\u{1B}", "\u{202E}", "\u{07}"].contains($0) })
        }
    }
}
