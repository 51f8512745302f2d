import Foundation
import PackagePlugin

/// `swift package modelwright <validate | plan | check> [--target <name>]… [options]`: the CLI's
/// commands that only read, run on every model folder of the package's targets (or of the named
/// ones), with paths relative to the package. It asks for no permission:
///
/// - `validate` checks every version of each model; `plan` shows each migration step, and passes
///   its options on (`--json`, `--from`, `--to`);
/// - `check` fails when a committed-code target's generated code is out of date (what
///   `generate-model-code --check` does, without the permission to write that plugin needs).
///
/// `lock` and `new-version` write into the model folder: `swift package
/// --allow-writing-to-package-directory modelwright-versions <lock | new-version>`.
@main
struct ModelwrightCommand: CommandPlugin {
    private typealias Failure = TargetModelFolders.Failure

    private static let usage =
        "use 'swift package modelwright <validate | plan | check> [--target <name>]… [options]'; "
        + "lock and new-version write, through 'swift package --allow-writing-to-package-directory modelwright-versions'"

    func performCommand(context: PluginContext, arguments: [String]) throws {
        var extractor = ArgumentExtractor(arguments)
        let requested = extractor.extractOption(named: "target")
        var rest = extractor.remainingArguments
        guard let command = rest.first else { throw Failure(description: "missing the command; \(Self.usage)") }
        rest.removeFirst()
        guard ["validate", "plan", "check"].contains(command) else {
            throw Failure(description: "unknown command '\(command)'; \(Self.usage)")
        }
        if command == "check", let unknown = rest.first {
            throw Failure(description: "unknown argument '\(unknown)' for check; \(Self.usage)")
        }
        let tool = try context.tool(named: "ModelwrightCLI").url
        let package = context.package.directoryURL.standardizedFileURL
        var failed: [String] = []
        var ran = 0
        for target in try TargetModelFolders.targets(of: context.package, requested: requested) {
            // `check` compares committed code; the build plugin's targets have none.
            if command == "check" && TargetModelFolders.usesBuildPlugin(target) { continue }
            for folder in TargetModelFolders.folders(of: target) {
                ran += 1
                let arguments =
                    command == "check"
                    ? TargetModelFolders.generateArguments(
                        folder: folder, target: target, package: package, check: true)
                    : [command, TargetModelFolders.relativePath(of: folder, in: package)] + rest
                if try TargetModelFolders.run(tool, arguments, in: package) != 0 {
                    failed.append(TargetModelFolders.relativePath(of: folder, in: package))
                }
            }
        }
        if ran == 0 {
            throw Failure(
                description: command == "check"
                    ? "no target commits generated code (its .model files excluded from its sources)"
                    : "no target holds .model files")
        }
        if !failed.isEmpty {
            let advice =
                command == "check"
                ? ": the committed generated code is out of date; run 'swift package "
                    + "--allow-writing-to-package-directory generate-model-code'" : ""
            throw Failure(description: "modelwright \(command) failed for \(failed.joined(separator: ", "))\(advice)")
        }
    }
}
