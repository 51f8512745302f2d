import Foundation
import PackagePlugin

/// `swift package generate-model-code [--target <name>]… [--check]`: writes each model's generated
/// code into `<target>/Generated/`, for teams that commit generated code or want IDE navigation.
///
/// It writes only to targets whose model files are excluded from their sources (`exclude:`), which
/// is what a committed-code target needs; a target whose model files are among its sources is left
/// to the build plugin (the same declarations twice do not compile), and the plugin says it skipped
/// it. `--check` writes nothing and fails when the committed code differs from what the models
/// generate, for CI.
@main
struct GenerateModelCode: CommandPlugin {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    func performCommand(context: PluginContext, arguments: [String]) throws {
        var extractor = ArgumentExtractor(arguments)
        let requested = extractor.extractOption(named: "target")
        let check = extractor.extractFlag(named: "check") > 0
        if let unknown = extractor.remainingArguments.first {
            throw Failure(description: "unknown argument '\(unknown)'; use --target <name> (repeatable) and --check")
        }
        let targets = context.package.targets.compactMap { $0 as? SourceModuleTarget }
        let names = targets.map(\.name)
        if let typo = requested.first(where: { !names.contains($0) }) {
            throw Failure(
                description:
                    "the package has no target '\(typo)'; its targets are \(names.sorted().joined(separator: ", "))")
        }
        let tool = try context.tool(named: "ModelwrightCLI")
        var stale: [String] = []
        for target in targets where requested.isEmpty || requested.contains(target.name) {
            let folders = try modelFolders(of: target, explicitlyRequested: requested.contains(target.name))
            // The output folder is given relative to the package, and the tool runs there: it then
            // opens every folder of the path inside the package without following a link, so a
            // checkout whose `Generated` (or a folder above it) is a link cannot send the files
            // elsewhere; `generate` confines everything inside the folder.
            let package = context.package.directoryURL.standardizedFileURL
            let output = Self.relativePath(
                of: target.directoryURL.appendingPathComponent("Generated").standardizedFileURL, in: package)
            for folder in folders {
                var arguments = ["generate", folder.path, "--output", output]
                // The same config the build plugin would use, and none beyond the target.
                arguments +=
                    ConfigDiscovery.configFile(forModelFolder: folder, target: target.directoryURL)
                    .map { ["--config", $0.path] } ?? ["--no-config"]
                if check { arguments.append("--check") }
                let process = Process()
                process.executableURL = tool.url
                process.arguments = arguments
                process.currentDirectoryURL = package
                try process.run()
                process.waitUntilExit()
                if check && process.terminationStatus == 1 {
                    stale.append(target.name)
                } else if process.terminationStatus != 0 {
                    throw Failure(
                        description:
                            "modelwright generate failed for \(folder.path) (exit \(process.terminationStatus))")
                }
            }
        }
        if !stale.isEmpty {
            throw Failure(
                description:
                    "the committed generated code of \(stale.joined(separator: ", ")) is out of date: run 'swift package generate-model-code'"
            )
        }
    }

    /// The model folders of a committed-code target: the folders of its `.model` files on disk,
    /// which its manifest excludes from its sources. A target whose model files are sources uses
    /// the build plugin and is skipped (an error when it was asked for by name).
    private func modelFolders(of target: SourceModuleTarget, explicitlyRequested: Bool) throws -> [URL] {
        if target.sourceFiles.contains(where: { $0.url.pathExtension == FileNames.versionExtension }) {
            let message =
                "skipped target '\(target.name)': its .model files are among its sources, so the build plugin "
                + "generates its code; to commit generated code instead, remove the plugin from the target and add "
                + "exclude: [<the model folder>]"
            if explicitlyRequested { throw Failure(description: message) }
            print(message)
            return []
        }
        let files = Self.modelFiles(under: target.directoryURL)
        if files.isEmpty && explicitlyRequested {
            throw Failure(description: "target '\(target.name)' has no .model files")
        }
        return Set(files.map { $0.deletingLastPathComponent().standardizedFileURL }).sorted { $0.path < $1.path }
    }

    /// `url`'s path relative to `folder` when it is inside it, else its full path.
    static func relativePath(of url: URL, in folder: URL) -> String {
        let base = folder.path.hasSuffix("/") ? folder.path : folder.path + "/"
        return url.path.hasPrefix(base) ? String(url.path.dropFirst(base.count)) : url.path
    }

    /// Every `.model` file under `folder`, hidden folders and `Generated/` left out.
    static func modelFiles(under folder: URL) -> [URL] {
        guard
            let walker = FileManager.default.enumerator(
                at: folder, includingPropertiesForKeys: nil, options: [.skipsHiddenFiles])
        else { return [] }
        var files: [URL] = []
        while let url = walker.nextObject() as? URL {
            if url.lastPathComponent == "Generated" {
                walker.skipDescendants()
            } else if url.pathExtension == FileNames.versionExtension {
                files.append(url)
            }
        }
        return files
    }
}
