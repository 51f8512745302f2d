import Foundation
import PackagePlugin

/// `swift package generate-model-code [--target <name>]…`: writes each model's generated code into
/// `<target>/Generated/`, for teams that commit generated code or want IDE navigation. Use it
/// instead of the build plugin on a target, not beside it: the same declarations twice do not compile.
@main
struct GenerateModelCode: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) throws {
        var extractor = ArgumentExtractor(arguments)
        let requested = Set(extractor.extractOption(named: "target"))
        let tool = try context.tool(named: "ModelwrightCLI")
        for target in context.package.targets.compactMap({ $0 as? SourceModuleTarget }) {
            guard requested.isEmpty || requested.contains(target.name) else { continue }
            let modelFiles = target.sourceFiles.map(\.url).filter { $0.pathExtension == "model" }
            let folders = Set(modelFiles.map { $0.deletingLastPathComponent().standardizedFileURL })
            for folder in folders.sorted(by: { $0.path < $1.path }) {
                var arguments = [
                    "generate", folder.path, "--output", target.directoryURL.appendingPathComponent("Generated").path,
                ]
                let config = target.directoryURL.appendingPathComponent("modelwright-config.json")
                if FileManager.default.fileExists(atPath: config.path) { arguments += ["--config", config.path] }
                let process = try Process.run(tool.url, arguments: arguments)
                process.waitUntilExit()
                guard process.terminationStatus == 0 else {
                    Diagnostics.error(
                        "modelwright generate failed for \(folder.path) (exit \(process.terminationStatus))")
                    return
                }
            }
        }
    }
}
