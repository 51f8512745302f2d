import Foundation
import PackagePlugin

/// Generates a target's model code on every `swift build`: one build command per model folder
/// in the target, whose inputs are every version file, the config file and any template
/// override (and the lock file), and whose outputs are named before the generator runs
/// (`<Model>+Records.swift`, `+Queries`, `+Schema`, `+Migrations`), so SwiftPM reruns it only
/// when an input changed.
@main
struct ModelwrightPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let tool = try context.tool(named: "ModelwrightCLI")
        let modelFiles = target.sourceFiles.map(\.url).filter { $0.pathExtension == "model" }
        let folders = Dictionary(grouping: modelFiles) { $0.deletingLastPathComponent().standardizedFileURL }
        let config = target.directoryURL.appendingPathComponent("modelwright-config.json")
        let hasConfig = FileManager.default.fileExists(atPath: config.path)
        let templates = hasConfig ? ConfigTemplates.paths(in: config) : []
        return folders.keys.sorted { $0.path < $1.path }.compactMap { folder -> Command? in
            let files = (folders[folder] ?? []).sorted { $0.path < $1.path }
            guard let modelName = ModelFileName.model(of: files[0]) else { return nil }
            let output = context.pluginWorkDirectoryURL.appendingPathComponent(modelName)
            var arguments = ["generate", folder.path, "--output", output.path]
            let lock = folder.appendingPathComponent("modelwright-lock.json")
            let locks = FileManager.default.fileExists(atPath: lock.path) ? [lock] : []
            if hasConfig { arguments += ["--config", config.path] }
            return .buildCommand(
                displayName: "Generating \(modelName) model code",
                executable: tool.url,
                arguments: arguments,
                inputFiles: files + (hasConfig ? [config] : []) + templates + locks,
                outputFiles: ["Records", "Queries", "Schema", "Migrations"].map {
                    output.appendingPathComponent("\(modelName)+\($0).swift")
                }
            )
        }
    }
}

/// The model name in a version file's name: `Trips` in `Trips.v3.model`.
enum ModelFileName {
    static func model(of file: URL) -> String? {
        let base = file.deletingPathExtension().lastPathComponent
        guard let range = base.range(of: ".v", options: .backwards) else { return nil }
        return String(base[..<range.lowerBound])
    }
}

/// The template overrides a config file names, declared as inputs so editing one regenerates.
enum ConfigTemplates {
    static func paths(in config: URL) -> [URL] {
        guard let data = FileManager.default.contents(atPath: config.path),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let templates = object["templates"] as? [String: String]
        else { return [] }
        return templates.values.sorted().map { path in
            path.hasPrefix("/")
                ? URL(fileURLWithPath: path) : config.deletingLastPathComponent().appendingPathComponent(path)
        }
    }
}
