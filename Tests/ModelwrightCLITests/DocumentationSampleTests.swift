import Foundation
import Testing

@testable import ModelwrightCLI

/// The shell samples of the README and the DocC catalog that show what `modelwright` prints are
/// run and compared, so the documented output cannot drift from the CLI's.
///
/// A sample is a fenced block whose first line starts with `$ `; each `$ ` line is a command and
/// the lines up to the next one are what it prints (standard output, then standard error). A
/// sample is run when every command is `modelwright …` or `swift run modelwright …` (run in
/// process, from the package root) or `echo $?`, and every path it names exists in the
/// repository; the others (a pipe into `sha256sum`, a model written to `/tmp`) are left as prose.
struct DocumentationSampleTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// A command and what the documentation says it prints.
    struct Step: Equatable {
        let command: [String]
        let output: [String]
    }

    /// The README and every article of the catalog, as paths relative to the package root.
    static let documents: [String] = {
        let catalog = "Sources/Modelwright/Modelwright.docc"
        let articles =
            (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(catalog).path)) ?? []
        return ["README.md"] + articles.filter { $0.hasSuffix(".md") }.sorted().map { "\(catalog)/\($0)" }
    }()

    /// The samples of a Markdown text, each as its commands and their output.
    static func samples(in text: String) -> [[Step]] {
        var samples: [[Step]] = []
        var block: [String]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("```") {
                if let lines = block, lines.first?.hasPrefix("$ ") == true {
                    var steps: [Step] = []
                    for line in lines {
                        if line.hasPrefix("$ ") {
                            steps.append(
                                Step(command: line.dropFirst(2).split(separator: " ").map(String.init), output: []))
                        } else if let last = steps.popLast() {
                            steps.append(Step(command: last.command, output: last.output + [line]))
                        }
                    }
                    samples.append(steps)
                }
                block = block == nil ? [] : nil
            } else {
                block?.append(line)
            }
        }
        return samples
    }

    /// The arguments for `modelwright`, when a command runs it.
    static func modelwrightArguments(_ command: [String]) -> [String]? {
        if command.first == "modelwright" { return Array(command.dropFirst()) }
        if command.starts(with: ["swift", "run", "modelwright"]) { return Array(command.dropFirst(3)) }
        return nil
    }

    /// Whether the test can run a sample: known commands, and paths that exist in the repository.
    static func isRunnable(_ sample: [Step]) -> Bool {
        sample.allSatisfy { step in
            if step.command == ["echo", "$?"] { return true }
            guard let arguments = modelwrightArguments(step.command) else { return false }
            return arguments.dropFirst().allSatisfy {
                $0.hasPrefix("-") || FileManager.default.fileExists(atPath: root.appendingPathComponent($0).path)
            }
        }
    }

    @Test(arguments: documents)
    func everyRunnableSamplePrintsWhatTheDocumentationShows(_ document: String) throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent(document), encoding: .utf8)
        for sample in Self.samples(in: text) where Self.isRunnable(sample) {
            var status = ExitCode.success
            for step in sample {
                let printed: String
                if let arguments = Self.modelwrightArguments(step.command) {
                    var console = BufferConsole()
                    let absolute = arguments.enumerated().map { index, argument in
                        index == 0 || argument.hasPrefix("-")
                            ? argument : Self.root.appendingPathComponent(argument).path
                    }
                    status = ModelwrightCommand.run(absolute, console: &console)
                    // Paths print as given; the documentation gives them from the package root.
                    printed = (console.output + console.errors).replacingOccurrences(of: Self.root.path + "/", with: "")
                } else {
                    printed = "\(status.rawValue)\n"
                }
                let shown = step.output.joined(separator: "\n") + "\n"
                #expect(printed == shown, "\(document): `\(step.command.joined(separator: " "))` prints otherwise")
            }
        }
    }

    @Test func samplesAreSplitIntoCommandsAndTheirOutput() {
        let text = "```\n$ modelwright validate Models/Trips\nline 1\nline 2\n$ echo $?\n0\n```\n```\nother\n```\n"
        let samples = Self.samples(in: text)
        #expect(
            samples == [
                [
                    Step(command: ["modelwright", "validate", "Models/Trips"], output: ["line 1", "line 2"]),
                    Step(command: ["echo", "$?"], output: ["0"]),
                ]
            ])
        #expect(samples.allSatisfy(Self.isRunnable))
        #expect(!Self.isRunnable([Step(command: ["modelwright", "validate", "/tmp/no-such-model"], output: [])]))
    }

    @Test func theValidateSampleOfTheVersionsArticleIsRun() throws {
        let text = try String(
            contentsOf: Self.root.appendingPathComponent("Sources/Modelwright/Modelwright.docc/Versions.md"),
            encoding: .utf8)
        #expect(Self.samples(in: text).contains(where: Self.isRunnable))
    }
}
