import Foundation
import ModelwrightGenerator
import ModelwrightSchema
import ModelwrightTestSupport
import Testing

@testable import ModelwrightCLI

/// `modelwright generate` writes the model's Swift files, rewrites only what changed, and writes
/// nothing for a model with errors.
@Suite(.heavy)
struct GenerateCommandTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    private static func run(_ arguments: [String]) -> (ExitCode, BufferConsole) {
        var console = BufferConsole()
        let code = ModelwrightCommand.run(arguments, console: &console)
        return (code, console)
    }

    private static func temporaryFolder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("generate-\(UUID().uuidString)")
    }

    @Test func helpNamesExactlyTheFilesGenerateWrites() throws {
        let output = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: output) }
        let (code, _) = Self.run([
            "generate", Self.root.appendingPathComponent("Models/Trips").path, "--output", output.path,
        ])
        #expect(code == .success)
        let written = try FileManager.default.contentsOfDirectory(atPath: output.path)
            .filter { $0.hasSuffix(".swift") }.map { $0.replacingOccurrences(of: "Trips+", with: "<Model>+") }.sorted()
        let (_, help) = Self.run(["generate", "--help"])
        let named = help.output.matches(of: /<Model>\+[A-Za-z]+\.swift/).map { String($0.output) }
        #expect(Set(named).sorted() == written)
    }

    /// `--no-config` reads no config file, not even one beside the model folder, which is what the
    /// plugins pass when the target holds none: a config above the target is then never read
    /// without being declared as an input of the build. It and `--config` exclude each other.
    @Test func noConfigReadsNoConfigFile() throws {
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = folder.appendingPathComponent("Trips")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(
            atPath: Self.root.appendingPathComponent("Models/Trips").path) where name.hasSuffix(".model")
        {
            try FileManager.default.copyItem(
                at: Self.root.appendingPathComponent("Models/Trips/\(name)"), to: model.appendingPathComponent(name))
        }
        try Data(#"{ "accessLevel": "public" }"#.utf8).write(to: folder.appendingPathComponent(FileNames.config))
        for (options, isPublic) in [([String](), true), (["--no-config"], false)] {
            let output = folder.appendingPathComponent("out\(options.count)")
            let (code, console) = Self.run(["generate", model.path, "--output", output.path] + options)
            #expect(code == .success, "\(console.errors)")
            let records = try String(contentsOf: output.appendingPathComponent("Trips+Records.swift"), encoding: .utf8)
            #expect(records.contains("public struct User: Record") == isPublic, "\(options)")
        }
        let (code, _) = Self.run([
            "generate", model.path, "--output", folder.appendingPathComponent("x").path, "--no-config", "--config",
            folder.appendingPathComponent(FileNames.config).path,
        ])
        #expect(code == .usage)
    }

    /// The plugins cannot depend on a library, so they compile the front end's `FileNames.swift`
    /// through symbolic links, as the generator and the CLI do: one file names every file.
    @Test func everyToolCompilesTheOneListOfFileNames() throws {
        let source = Self.root.appendingPathComponent("Sources/ModelwrightSchema/FileNames.swift")
        for folder in [
            "Plugins/ModelwrightPlugin", "Plugins/GenerateModelCode", "Plugins/ModelwrightCommand",
            "Plugins/ModelwrightVersionsCommand", "Sources/ModelwrightGenerator", "Sources/modelwright",
        ] {
            let link = Self.root.appendingPathComponent(folder).appendingPathComponent("FileNames.swift")
            #expect(link.resolvingSymlinksInPath().path == source.resolvingSymlinksInPath().path, "\(folder)")
        }
    }

    /// No plugin spells a file name itself: each takes them from `FileNames`.
    @Test func thePluginsSpellNoFileName() throws {
        for plugin in [
            "ModelwrightPlugin/ModelwrightPlugin.swift", "GenerateModelCode/GenerateModelCode.swift",
            "GenerateModelCode/TargetModelFolders.swift", "ModelwrightCommand/ModelwrightCommand.swift",
            "ModelwrightVersionsCommand/ModelwrightVersionsCommand.swift",
        ] {
            let source = try String(
                contentsOf: Self.root.appendingPathComponent("Plugins").appendingPathComponent(plugin), encoding: .utf8)
            let literals = source.matches(of: /"[^"\n]*"/).map { String($0.output) }
            let spelled = literals.filter {
                $0 == "\"model\"" || $0.contains(/modelwright-[a-z]+\.json|\+[A-Z][a-z]+\.swift/)
            }
            #expect(spelled.isEmpty, "\(plugin) spells \(spelled)")
            // The command plugins generate through `TargetModelFolders.generateArguments`.
            let generates = source.contains("ConfigDiscovery.configFile(") || source.contains(".generateArguments(")
            #expect(generates || plugin.contains("Versions"), "\(plugin) passes the config file on")
        }
        // The command plugins share one way to find model folders and run the CLI.
        for plugin in ["ModelwrightCommand", "ModelwrightVersionsCommand"] {
            let link = Self.root.appendingPathComponent("Plugins/\(plugin)/TargetModelFolders.swift")
            #expect(
                link.resolvingSymlinksInPath().path
                    == Self.root.appendingPathComponent("Plugins/GenerateModelCode/TargetModelFolders.swift").path)
        }
    }

    /// A document that names generated files names all of them, as `generate` writes them.
    @Test func theDocsNameEveryGeneratedFile() throws {
        let documents =
            ["README.md", "Templates/README.md"]
            + (try FileManager.default.contentsOfDirectory(
                atPath: Self.root.appendingPathComponent("Sources/Modelwright/Modelwright.docc").path
            ).filter { $0.hasSuffix(".md") }.map { "Sources/Modelwright/Modelwright.docc/\($0)" })
        var listing = 0
        for document in documents {
            let text = try String(contentsOf: Self.root.appendingPathComponent(document), encoding: .utf8)
            // Other `+Name.swift` files (an app's own extensions, say) are not generated ones.
            let named = Set(text.matches(of: /\+([A-Z][a-z]+)\.swift/).map { String($0.output.1) })
                .intersection(TemplateSet.names)
            guard named.count > 1 else { continue }
            listing += 1
            #expect(named == Set(TemplateSet.names), "\(document) names \(named.sorted())")
        }
        #expect(listing >= 3, "README, Templates/README and GeneratingCode each list the generated files")
    }

    @Test func checkListsStaleAndMissingFilesAndWritesNothing() throws {
        let output = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: output) }
        let model = Self.root.appendingPathComponent("Models/Trips").path
        let (missing, missingConsole) = Self.run(["generate", model, "--output", output.path, "--check"])
        #expect(missing == .invalidInput)
        #expect(missingConsole.output.split(separator: "\n").allSatisfy { $0.hasPrefix("missing ") })
        #expect(!FileManager.default.fileExists(atPath: output.path), "--check writes nothing")

        _ = Self.run(["generate", model, "--output", output.path])
        let (fresh, freshConsole) = Self.run(["generate", model, "--output", output.path, "--check"])
        #expect(fresh == .success)
        #expect(freshConsole.output.hasPrefix("up to date: 4 files"))

        let queries = output.appendingPathComponent("Trips+Queries.swift")
        let edited = try String(contentsOf: queries, encoding: .utf8) + "// edited by hand\n"
        try edited.write(to: queries, atomically: true, encoding: .utf8)
        let (stale, staleConsole) = Self.run(["generate", model, "--output", output.path, "--check"])
        #expect(stale == .invalidInput)
        #expect(staleConsole.output == "stale \(queries.path)\n")
        #expect(try String(contentsOf: queries, encoding: .utf8) == edited, "--check leaves the file as it is")
    }

    @Test func writesEveryFileThenLeavesThemUnchanged() throws {
        let output = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: output) }
        let model = Self.root.appendingPathComponent("Models/Trips").path
        let (code, console) = Self.run(["generate", model, "--output", output.path])
        #expect(code == .success)
        #expect(console.output.split(separator: "\n").map { $0.hasPrefix("wrote ") } == [true, true, true, true])
        let records = try String(contentsOf: output.appendingPathComponent("Trips+Records.swift"), encoding: .utf8)
        #expect(records.hasPrefix("// Generated by modelwright from Trips.v3.model. Do not edit.\n"))
        #expect(records.contains("public struct User: Record"), "the model's config file makes declarations public")
        let (again, secondConsole) = Self.run(["generate", model, "--output", output.path])
        #expect(again == .success)
        #expect(
            secondConsole.output.split(separator: "\n").map { $0.hasPrefix("unchanged ") } == [true, true, true, true])
    }

    @Test func anExplicitConfigChangesTheAccessLevel() throws {
        let output = Self.temporaryFolder()
        let config = Self.temporaryFolder().appendingPathExtension("json")
        defer {
            try? FileManager.default.removeItem(at: output)
            try? FileManager.default.removeItem(at: config)
        }
        try Data(#"{ "accessLevel": "internal" }"#.utf8).write(to: config)
        let model = Self.root.appendingPathComponent("Models/Trips").path
        #expect(Self.run(["generate", model, "--output", output.path, "--config", config.path]).0 == .success)
        let records = try String(contentsOf: output.appendingPathComponent("Trips+Records.swift"), encoding: .utf8)
        #expect(records.contains("\nstruct User: Record"))
    }

    @Test func aBrokenModelOrConfigWritesNothing() throws {
        let output = Self.temporaryFolder()
        let model = Self.temporaryFolder().appendingPathComponent("Broken")
        defer {
            try? FileManager.default.removeItem(at: output)
            try? FileManager.default.removeItem(at: model.deletingLastPathComponent())
        }
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        try Data("model Broken version 1\nentity A { b: Strin }\n".utf8).write(
            to: model.appendingPathComponent("Broken.v1.model"))
        let (code, console) = Self.run(["generate", model.path, "--output", output.path])
        #expect(code == .invalidInput)
        #expect(console.errors.contains("Broken.v1.model:2:15: error: unknown type 'Strin'"))
        #expect(!FileManager.default.fileExists(atPath: output.path))

        let config = model.deletingLastPathComponent().appendingPathComponent("bad.json")
        try Data(#"{ "accesLevel": "public" }"#.utf8).write(to: config)
        let trips = Self.root.appendingPathComponent("Models/Trips").path
        let (configCode, configConsole) = Self.run([
            "generate", trips, "--output", output.path, "--config", config.path,
        ])
        #expect(configCode == .invalidInput)
        #expect(configConsole.errors.contains("unknown key 'accesLevel'"))
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    @Test func templateOverridesReplaceADefault() throws {
        let output = Self.temporaryFolder()
        let templates = Self.temporaryFolder()
        defer {
            try? FileManager.default.removeItem(at: output)
            try? FileManager.default.removeItem(at: templates)
        }
        try FileManager.default.createDirectory(at: templates, withIntermediateDirectories: true)
        try Data("// {{modelName}} has {{#entities}}{{name}} {{/entities}}\n".utf8)
            .write(to: templates.appendingPathComponent("Queries.mustache"))
        let model = Self.root.appendingPathComponent("Models/Trips").path
        #expect(Self.run(["generate", model, "--output", output.path, "--templates", templates.path]).0 == .success)
        let queries = try String(contentsOf: output.appendingPathComponent("Trips+Queries.swift"), encoding: .utf8)
        #expect(queries == "// Trips has User Organization Trip Stop Group Item Note \n")
    }

    /// A `--templates` folder that is missing, or holds no template under a name the generator
    /// knows, is a mistake in its path or file names: it is refused, and nothing is written.
    @Test func aTemplatesFolderThatOverridesNothingIsRefused() throws {
        let output = Self.temporaryFolder()
        let templates = Self.temporaryFolder()
        defer {
            try? FileManager.default.removeItem(at: output)
            try? FileManager.default.removeItem(at: templates)
        }
        try FileManager.default.createDirectory(at: templates, withIntermediateDirectories: true)
        try Data("{{modelName}}\n".utf8).write(to: templates.appendingPathComponent("Query.mustache"))
        let model = Self.root.appendingPathComponent("Models/Trips").path
        for (folder, message) in [
            (templates.appendingPathComponent("missing").path, "cannot be opened"),
            (templates.path, "holds none of the templates; name them Records.mustache"),
        ] {
            let (code, console) = Self.run(["generate", model, "--output", output.path, "--templates", folder])
            #expect(code == .invalidInput)
            #expect(console.errors.contains(message), "\(console.errors)")
            #expect(!FileManager.default.fileExists(atPath: output.path))
        }
    }

    @Test func usageErrors() {
        #expect(Self.run(["generate"]).0 == .usage)
        #expect(Self.run(["generate", "Models/Trips"]).0 == .usage)
        #expect(Self.run(["generate", "Models/Trips", "--output"]).0 == .usage)
        #expect(
            Self.run(["generate", "--help"]).1.output.contains(
                "USAGE: modelwright generate <model folder> --output <dir>"))
    }
}
