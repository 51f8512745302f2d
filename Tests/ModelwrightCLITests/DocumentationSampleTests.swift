import Foundation
import ModelwrightTestSupport
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
@Suite(.heavy)
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

    /// The model files a document shows whole: each fenced block whose first line is
    /// `model <Name> version <N>` is the file `<Name>/<Name>.v<N>.model`, by path.
    static func modelFiles(in text: String) -> [String: String] {
        var files: [String: String] = [:]
        var block: [String]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("```") {
                if let lines = block, let header = lines.first?.split(separator: " "), header.count == 4,
                    header[0] == "model", header[2] == "version"
                {
                    files["\(header[1])/\(header[1]).v\(header[3]).model"] = lines.joined(separator: "\n") + "\n"
                }
                block = block == nil ? [] : nil
            } else {
                block?.append(line)
            }
        }
        return files
    }

    /// Whether the test can run a sample: known commands, and paths that exist in the repository
    /// or in `folder` (where the document's model files are written).
    static func isRunnable(_ sample: [Step], folder: URL?) -> Bool {
        sample.allSatisfy { step in
            if step.command == ["echo", "$?"] { return true }
            guard let arguments = modelwrightArguments(step.command) else { return false }
            return arguments.dropFirst().allSatisfy { argument in
                argument.hasPrefix("-")
                    || FileManager.default.fileExists(atPath: root.appendingPathComponent(argument).path)
                    || folder.map { FileManager.default.fileExists(atPath: $0.appendingPathComponent(argument).path) }
                        == true
            }
        }
    }

    /// Whether the test can run a sample whose paths are all in the repository.
    static func isRunnable(_ sample: [Step]) -> Bool { isRunnable(sample, folder: nil) }

    @Test(arguments: documents)
    func everyRunnableSamplePrintsWhatTheDocumentationShows(_ document: String) throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent(document), encoding: .utf8)
        // The models the document shows whole are written where its samples can name them.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("samples-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        for (path, contents) in Self.modelFiles(in: text) {
            let file = folder.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(contents.utf8).write(to: file)
        }
        for sample in Self.samples(in: text) where Self.isRunnable(sample, folder: folder) {
            var status = ExitCode.success
            for step in sample {
                let printed: String
                if let arguments = Self.modelwrightArguments(step.command) {
                    var console = BufferConsole()
                    let absolute = arguments.enumerated().map { index, argument in
                        guard index != 0, !argument.hasPrefix("-") else { return argument }
                        let inRepository = Self.root.appendingPathComponent(argument).path
                        return FileManager.default.fileExists(atPath: inRepository)
                            ? inRepository : folder.appendingPathComponent(argument).path
                    }
                    status = ModelwrightCommand.run(absolute, console: &console)
                    // Paths print as given; the documentation gives them from the package root, or
                    // from the folder of its own models.
                    printed = (console.output + console.errors).replacingOccurrences(of: Self.root.path + "/", with: "")
                        .replacingOccurrences(of: folder.path + "/", with: "")
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

    /// The Migrations article's error for a change no stage covers is the one `validate` prints
    /// for the models it shows, note for note.
    @Test func theUncoveredChangeSampleOfTheMigrationsArticleIsRun() throws {
        let text = try String(
            contentsOf: Self.root.appendingPathComponent("Sources/Modelwright/Modelwright.docc/Migrations.md"),
            encoding: .utf8)
        let files = Self.modelFiles(in: text)
        #expect(files.keys.sorted() == ["Books/Books.v1.model", "Books/Books.v2.model"])
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("books-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        for (path, contents) in files {
            let file = folder.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(contents.utf8).write(to: file)
        }
        let sample = Self.samples(in: text).first { $0.first?.command == ["modelwright", "validate", "Books"] }
        #expect(sample.map { Self.isRunnable($0, folder: folder) } == true)
        #expect(sample?.first?.output.contains { $0.contains("none covers 'Book.subtitle'") } == true)
    }

    @Test func theValidateSampleOfTheVersionsArticleIsRun() throws {
        let text = try String(
            contentsOf: Self.root.appendingPathComponent("Sources/Modelwright/Modelwright.docc/Versions.md"),
            encoding: .utf8)
        #expect(Self.samples(in: text).contains(where: Self.isRunnable))
    }
}
