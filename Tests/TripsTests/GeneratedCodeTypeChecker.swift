import Foundation
import ModelwrightGenerator
import ModelwrightSchema

/// Type-checks the code generated for a model (Models/Trips unless told) together with a small app
/// file, against the Modelwright module this build produced: how tests prove that something does or
/// does not compile.
enum GeneratedCodeTypeChecker {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    /// Where SwiftPM put the built modules: beside the tests on Linux, around the bundle elsewhere.
    static let modules = [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
        .map { $0.appendingPathComponent("Modules") }
        .first { FileManager.default.fileExists(atPath: $0.appendingPathComponent("Modelwright.swiftmodule").path) }

    struct Result {
        let status: Int32
        let errors: String
    }

    struct ModulesNotFound: Error {}

    /// Generates the model in the folder `model` (Trips by default) with `config` and type-checks it
    /// with `app` as one more file of the module.
    static func typecheck(app: String, model path: String? = nil, config: GeneratorConfig = GeneratorConfig()) throws
        -> Result
    {
        guard let modules else { throw ModulesNotFound() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("typecheck-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = path ?? root.appendingPathComponent("Models/Trips").path
        guard let model = ModelLoader.load(path: path).model else {
            throw GeneratorError.noModel(path)
        }
        let files = try GeneratorPipeline.generate(model, config: config, templates: TemplateSet.load())
        try OutputWriter.write(files + [GeneratedFile(name: "App.swift", contents: app)], to: folder)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            [
                "swiftc", "-typecheck", "-swift-version", "6", "-warnings-as-errors", "-module-name", "TripsApp",
                "-I", modules.path, "-I", root.appendingPathComponent("Sources/CSQLite").path,
            ] + (files.map(\.name) + ["App.swift"]).map { folder.appendingPathComponent($0).path }
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = Pipe()
        try process.run()
        let output = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, errors: String(decoding: output, as: UTF8.self))
    }
}
