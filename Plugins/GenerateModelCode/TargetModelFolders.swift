import Foundation
import PackagePlugin

/// The model folders of a package's targets, as the command plugins find them: every folder under
/// a target that holds `.model` files, whether the files are the target's sources (the build plugin
/// generates its code) or excluded from them (the target commits generated code). The command
/// plugins compile this one file through symbolic links.
enum TargetModelFolders {
    /// Why a command plugin stopped, as SwiftPM prints it.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The source targets named in `requested` (every source target when it is empty); an unknown
    /// name is an error that lists the package's targets.
    static func targets(of package: Package, requested: [String]) throws -> [SourceModuleTarget] {
        let targets = package.targets.compactMap { $0 as? SourceModuleTarget }
        let names = targets.map(\.name)
        if let typo = requested.first(where: { !names.contains($0) }) {
            throw Failure(
                description:
                    "the package has no target '\(typo)'; its targets are \(names.sorted().joined(separator: ", "))")
        }
        return targets.filter { requested.isEmpty || requested.contains($0.name) }
    }

    /// The folders of a target's `.model` files, in order.
    static func folders(of target: SourceModuleTarget) -> [URL] {
        Set(modelFiles(under: target.directoryURL).map { $0.deletingLastPathComponent().standardizedFileURL })
            .sorted { $0.path < $1.path }
    }

    /// Whether the build plugin generates the target's code: its `.model` files are among its sources.
    static func usesBuildPlugin(_ target: SourceModuleTarget) -> Bool {
        target.sourceFiles.contains { $0.url.pathExtension == FileNames.versionExtension }
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

    /// The `generate` arguments that write (or, with `check`, compare) a committed-code target's
    /// code for the model in `folder`, with paths relative to the package, where the tool runs: it
    /// then opens every folder of the path inside the package without following a link, so a
    /// checkout whose `Generated` (or a folder above it) is a link cannot send the files elsewhere.
    static func generateArguments(
        folder: URL, target: SourceModuleTarget, package: URL, check: Bool
    ) -> [String] {
        let output = relativePath(
            of: target.directoryURL.appendingPathComponent("Generated").standardizedFileURL, in: package)
        var arguments = ["generate", folder.path, "--output", output]
        // The same config the build plugin would use, and none beyond the target.
        arguments +=
            ConfigDiscovery.configFile(forModelFolder: folder, target: target.directoryURL)
            .map { ["--config", $0.path] } ?? ["--no-config"]
        if check { arguments.append("--check") }
        return arguments
    }

    /// Runs the CLI with `arguments` in the package's folder, its output going to the plugin's own,
    /// and returns its exit status.
    static func run(_ tool: URL, _ arguments: [String], in package: URL) throws -> Int32 {
        let process = Process()
        process.executableURL = tool
        process.arguments = arguments
        process.currentDirectoryURL = package
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
