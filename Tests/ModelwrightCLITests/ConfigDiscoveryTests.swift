import Foundation
import ModelwrightSchema
import ModelwrightTestSupport
import Testing

@testable import ModelwrightGenerator

/// Which config file a model uses has one source, `ConfigDiscovery`, which the CLI and both
/// plugins compile: the build plugin then declares as an input the config that `generate` reads.
@Suite(.heavy)
struct ConfigDiscoveryTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The plugins cannot depend on a library, so they compile the generator's file through
    /// symbolic links: one rule, no copy that can drift.
    @Test func everyToolCompilesTheOneDiscoveryRule() {
        let source = Self.root.appendingPathComponent(
            "Sources/ModelwrightGenerator/Configuration/ConfigDiscovery.swift")
        let plugins = ["ModelwrightPlugin", "GenerateModelCode", "ModelwrightCommand", "ModelwrightVersionsCommand"]
        for folder in plugins.map({ "Plugins/\($0)" }) {
            let link = Self.root.appendingPathComponent(folder).appendingPathComponent("ConfigDiscovery.swift")
            #expect(
                (try? FileManager.default.destinationOfSymbolicLink(atPath: link.path)) != nil,
                "\(folder) links the file")
            #expect(link.resolvingSymlinksInPath().path == source.resolvingSymlinksInPath().path, "\(folder)")
        }
        // The plugins that find a config: the old command plugin, and the file the build plugin and
        // the new command plugins share (linked into each).
        for plugin in ["ModelwrightPlugin/ModelwrightPlugin.swift", "GenerateModelCode/TargetModelFolders.swift"] {
            let text = (try? String(contentsOf: Self.root.appendingPathComponent("Plugins/\(plugin)"), encoding: .utf8))
            #expect(
                text?.contains("ConfigDiscovery.configFile(") == true, "\(plugin) finds the config through the rule")
        }
        for plugin in plugins {
            let folder = Self.root.appendingPathComponent("Plugins/\(plugin)")
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            where name != "ConfigDiscovery.swift" {
                let text = try? String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
                #expect(
                    text?.contains("appendingPathComponent(FileNames.config)") == false,
                    "\(plugin)/\(name) has a rule of its own")
            }
        }
    }

    /// Random layouts: a target folder with the model folder 0 to 3 levels below it, and config
    /// files (some of them links) in random folders from the model folder up to above the target.
    /// The plugins' answer is the nearest config from the model folder up to the target; in the
    /// documented layout (the model folder right below the target, the two folders the CLI alone
    /// searches), `generate` run by hand reads that same file; and `generate` given the plugins'
    /// answer, as the plugins give it, reads it.
    @Test(arguments: 0..<4)
    func everyToolFindsTheSameConfigInGeneratedLayouts(seed: Int) throws {
        var random = SplitMix64(seed: 2602, index: seed)
        for layout in 0..<40 {
            let base = FileManager.default.temporaryDirectory
                .appendingPathComponent("config-discovery-\(UUID().uuidString)").standardizedFileURL
            defer { try? FileManager.default.removeItem(at: base) }
            let target = base.appendingPathComponent("Sources/App")
            let depth = random.next(below: 4)
            let model = (0..<depth).reduce(target) { folder, level in folder.appendingPathComponent("Level\(level)") }
            try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
            // Nearest first: the model folder, the folders between, the target, then the folder above it.
            var folders = [model]
            while folders.last?.path != target.path { folders.append(folders.last!.deletingLastPathComponent()) }
            folders.append(base.appendingPathComponent("Sources"))
            var links: Set<String> = []
            for folder in folders where random.next(below: 3) == 0 {
                let config = folder.appendingPathComponent(FileNames.config)
                if random.next(below: 5) == 0 {
                    try FileManager.default.createSymbolicLink(atPath: config.path, withDestinationPath: "missing.json")
                    links.insert(config.path)
                } else {
                    try Data("{}".utf8).write(to: config)
                }
            }
            let present = folders.dropLast().map { $0.appendingPathComponent(FileNames.config) }.first {
                (try? FileManager.default.attributesOfItem(atPath: $0.path)) != nil
            }

            let plugins = ConfigDiscovery.configFile(forModelFolder: model, target: target)
            #expect(plugins?.path == present?.path, "layout \(layout): depth \(depth)")
            if let plugins, !links.contains(plugins.path) {
                #expect(try GeneratorConfig.load(explicit: plugins.path, near: model.path).path == plugins.path)
            }
            guard depth == 1 else { continue }
            // The CLI by hand: a link is refused with an error, never skipped for a farther file.
            let cli = Result { try GeneratorConfig.load(explicit: nil, near: model.path) }
            switch (cli, present) {
            case (.success(let config), _):
                #expect(config.path == present?.path, "layout \(layout): the CLI reads what the plugins declare")
            case (.failure, let present?):
                #expect(links.contains(present.path), "layout \(layout): only a link is refused")
            case (.failure(let error), nil):
                Issue.record("layout \(layout): \(error)")
            }
        }
    }
}
