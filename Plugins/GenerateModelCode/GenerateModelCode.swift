import Foundation
import PackagePlugin

/// `swift package generate-model-code [--target <name>]… [--check]`: writes each model's generated
/// code into `<target>/Generated/`, for teams that commit generated code or want IDE navigation.
///
/// It writes only to targets whose model files are excluded from their sources (`exclude:`), which
/// is what a committed-code target needs; a target whose model files are among its sources is left
/// to the build plugin (the same declarations twice do not compile), and the plugin says it skipped
/// it. `--check` writes nothing and fails when the committed code differs from what the models
/// generate, for CI; `swift package modelwright check` does the same without asking for the
/// permission to write.
@main
struct GenerateModelCode: CommandPlugin {
    private typealias Failure = TargetModelFolders.Failure

    func performCommand(context: PluginContext, arguments: [String]) throws {
        var extractor = ArgumentExtractor(arguments)
        let requested = extractor.extractOption(named: "target")
        let check = extractor.extractFlag(named: "check") > 0
        if let unknown = extractor.remainingArguments.first {
            throw Failure(description: "unknown argument '\(unknown)'; use --target <name> (repeatable) and --check")
        }
        let targets = try TargetModelFolders.targets(of: context.package, requested: requested)
        let tool = try context.tool(named: "ModelwrightCLI")
        let package = context.package.directoryURL.standardizedFileURL
        var stale: [String] = []
        for target in targets {
            for folder in try modelFolders(of: target, explicitlyRequested: requested.contains(target.name)) {
                let status = try TargetModelFolders.run(
                    tool.url,
                    TargetModelFolders.generateArguments(
                        folder: folder, target: target, package: package, check: check),
                    in: package)
                if check && status == 1 {
                    stale.append(target.name)
                } else if status != 0 {
                    throw Failure(description: "modelwright generate failed for \(folder.path) (exit \(status))")
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
        if TargetModelFolders.usesBuildPlugin(target) {
            let message =
                "skipped target '\(target.name)': its .model files are among its sources, so the build plugin "
                + "generates its code; to commit generated code instead, remove the plugin from the target and add "
                + "exclude: [<the model folder>]"
            if explicitlyRequested { throw Failure(description: message) }
            print(message)
            return []
        }
        let folders = TargetModelFolders.folders(of: target)
        if folders.isEmpty && explicitlyRequested {
            throw Failure(description: "target '\(target.name)' has no .model files")
        }
        return folders
    }
}
