import Foundation
import PackagePlugin

/// Generates a target's model code on every `swift build`: one build command per model folder
/// in the target, whose inputs are every version file, the config file that folder uses (found
/// by `ConfigDiscovery`, as `generate` finds it) and any template override (and the lock file), and whose outputs are named before the generator runs
/// (`<Model>+Records.swift`, `+Queries`, `+Schema`, `+Migrations`), so SwiftPM reruns it only
/// when an input changed.
///
/// A `.model` file it cannot use (a name other than `<Model>.v<N>.model`, or versions of two
/// models in one folder) is an error naming that file, not a folder skipped in silence.
@main
struct ModelwrightPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let tool = try context.tool(named: "ModelwrightCLI")
        let modelFiles = target.sourceFiles.map(\.url).filter { $0.pathExtension == FileNames.versionExtension }
        let folders = Dictionary(grouping: modelFiles) { $0.deletingLastPathComponent().standardizedFileURL }
        return folders.keys.sorted { $0.path < $1.path }.compactMap { folder -> Command? in
            let files = (folders[folder] ?? []).sorted { $0.path < $1.path }
            guard let modelName = VersionFileName.model(of: files, in: folder) else { return nil }
            let output = context.pluginWorkDirectoryURL.appendingPathComponent(modelName)
            var arguments = ["generate", folder.path, "--output", output.path]
            let lock = folder.appendingPathComponent(FileNames.lock)
            let locks = FileManager.default.fileExists(atPath: lock.path) ? [lock] : []
            // The config `generate` would find itself, passed on explicitly and declared as an input.
            // One that is a link is passed on, not read here: `generate` refuses it with an error.
            let config = ConfigDiscovery.configFile(forModelFolder: folder, target: target.directoryURL)
            let isLink = config.map { (try? FileManager.default.destinationOfSymbolicLink(atPath: $0.path)) != nil }
            let templates = config.map { isLink == true ? [] : ConfigTemplates.paths(in: $0) } ?? []
            // Without one, `generate` is told to search no further: by hand it would also look in
            // the folder above the model's, which is outside what this command declares as inputs.
            arguments += config.map { ["--config", $0.path] } ?? ["--no-config"]
            return .buildCommand(
                displayName: "Generating \(modelName) model code",
                executable: tool.url,
                arguments: arguments,
                inputFiles: files + (config.map { [$0] } ?? []) + templates + locks,
                outputFiles: FileNames.outputs(forModel: modelName).map { output.appendingPathComponent($0) }
            )
        }
    }
}

/// The names of version files: `Trips.v3.model` is version 3 of the model `Trips`.
enum VersionFileName {
    /// The model name in a version file's name: `Trips` in `Trips.v3.model`, or `nil` when the name
    /// has another shape.
    static func model(of file: URL) -> String? {
        let base = file.deletingPathExtension().lastPathComponent
        guard let range = base.range(of: ".v", options: .backwards) else { return nil }
        let name = base[..<range.lowerBound]
        let number = base[range.upperBound...]
        guard let first = name.unicodeScalars.first, first == "_" || CharacterSet.letters.contains(first),
            name.unicodeScalars.allSatisfy({ $0 == "_" || CharacterSet.alphanumerics.contains($0) }),
            !number.isEmpty, number.allSatisfy(\.isASCII), number.allSatisfy(\.isNumber), number.first != "0"
        else { return nil }
        return String(name)
    }

    /// The one model whose versions `files` are; each file it cannot use is reported as an error
    /// at that file, and then there is no model.
    static func model(of files: [URL], in folder: URL) -> String? {
        var models: Set<String> = []
        var usable = true
        for file in files {
            guard let model = model(of: file) else {
                Diagnostics.error(
                    "'\(file.path)' is not a version file, so Modelwright cannot generate this folder's model: "
                        + "name it '<Model>.v<N>.model' (such as 'Podcasts.v1.model', version 1 of the model Podcasts), "
                        + "or move it out of the target",
                    file: file.path, line: 1)
                usable = false
                continue
            }
            models.insert(model)
        }
        if models.count > 1 {
            Diagnostics.error(
                "'\(folder.path)' holds versions of several models (\(models.sorted().joined(separator: ", "))): "
                    + "give each model a folder of its own",
                file: files[0].path, line: 1)
            usable = false
        }
        return usable ? models.first : nil
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
