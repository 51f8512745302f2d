import Foundation
import PackagePlugin

/// `swift package --allow-writing-to-package-directory modelwright-versions <lock | new-version>
/// [--target <name>]… [options]`: the CLI's commands that write into a model folder, run on every
/// model folder of the package's targets (or of the named ones), with paths relative to the
/// package. `lock` freezes the released versions in `modelwright-lock.json` (it passes `--through`
/// on); `new-version` starts the next version as a copy of the current one.
@main
struct ModelwrightVersionsCommand: CommandPlugin {
    private typealias Failure = TargetModelFolders.Failure

    private static let usage =
        "use 'swift package --allow-writing-to-package-directory modelwright-versions <lock | new-version> "
        + "[--target <name>]… [options]'"

    func performCommand(context: PluginContext, arguments: [String]) throws {
        var extractor = ArgumentExtractor(arguments)
        let requested = extractor.extractOption(named: "target")
        var rest = extractor.remainingArguments
        guard let command = rest.first else { throw Failure(description: "missing the command; \(Self.usage)") }
        rest.removeFirst()
        guard ["lock", "new-version"].contains(command) else {
            throw Failure(description: "unknown command '\(command)'; \(Self.usage)")
        }
        let tool = try context.tool(named: "ModelwrightCLI").url
        let package = context.package.directoryURL.standardizedFileURL
        var failed: [String] = []
        var ran = 0
        for target in try TargetModelFolders.targets(of: context.package, requested: requested) {
            for folder in TargetModelFolders.folders(of: target) {
                ran += 1
                let path = TargetModelFolders.relativePath(of: folder, in: package)
                if try TargetModelFolders.run(tool, [command, path] + rest, in: package) != 0 { failed.append(path) }
            }
        }
        if ran == 0 { throw Failure(description: "no target holds .model files") }
        if !failed.isEmpty {
            throw Failure(description: "modelwright \(command) failed for \(failed.joined(separator: ", "))")
        }
    }
}
