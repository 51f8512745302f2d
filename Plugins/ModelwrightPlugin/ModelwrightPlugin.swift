import Foundation
import PackagePlugin

/// Generates a target's model code on every `swift build`: one build command per model folder
/// in the target, whose inputs are every version file, the config file that folder uses (found
/// by `ConfigDiscovery`, as `generate` finds it) and any template override (and the lock file), and whose outputs are named before the generator runs
/// (`<Model>+Records.swift`, `+Queries`, `+Schema`, `+Migrations`), so SwiftPM reruns it only
/// when an input changed.
///
/// A `.model` file it cannot use (a name other than `<Model>.v<N>.model`, or versions of two
/// models in one folder) is not a folder skipped in silence: the folder's command still runs, and
/// `generate` reports the file once, at its line and column, with the name it should have. (An
/// error the plugin raised itself came without a location, and SwiftPM printed it twice.) A
/// `.model` file in a subfolder of a model folder is an input of that folder's command, which
/// reports it the same way.
@main
struct ModelwrightPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let tool = try context.tool(named: "ModelwrightCLI")
        let modelFiles = target.sourceFiles.map(\.url).filter { $0.pathExtension == FileNames.versionExtension }
        let byFolder = Dictionary(grouping: modelFiles) { $0.deletingLastPathComponent().standardizedFileURL }
        // A folder inside another model folder is not a model of its own: its files go to the
        // outermost model folder above it, whose `generate` reports each once, at the file. (A
        // command of its own wrote the same outputs again, and SwiftPM reported each of the four
        // duplicates without a location.)
        func outermost(_ folder: URL) -> URL {
            byFolder.keys.filter { $0 != folder && folder.path.hasPrefix($0.path + "/") }
                .min { $0.path.count < $1.path.count } ?? folder
        }
        let folders = Dictionary(grouping: modelFiles) { outermost($0.deletingLastPathComponent().standardizedFileURL) }
        return folders.keys.sorted { $0.path < $1.path }.map { folder -> Command in
            let files = (folders[folder] ?? []).sorted { $0.path < $1.path }
            let modelName = VersionFileName.outputName(of: files, in: folder)
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

    /// The model name the folder's outputs are named after: the one most of `files` name (the
    /// first in order among equals), or the folder's own name when no file is a version file.
    /// A file it cannot use is left to `generate`, which reports it at its line and column.
    static func outputName(of files: [URL], in folder: URL) -> String {
        var counts: [String: Int] = [:]
        var order: [String] = []
        for name in files.compactMap({ model(of: $0) }) {
            if counts[name] == nil { order.append(name) }
            counts[name, default: 0] += 1
        }
        let most = order.max { counts[$0, default: 0] < counts[$1, default: 0] }
        return most ?? folder.lastPathComponent
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
