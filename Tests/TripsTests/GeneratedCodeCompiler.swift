import Foundation
import ModelwrightGenerator
import ModelwrightSchema
import Testing

/// Type-checks the code generated for a model folder, plus an app file, against the Modelwright
/// module this build produced: what an app's compiler would say about the generated code.
enum GeneratedCodeCompiler {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    /// Where SwiftPM put the built modules: beside the tests on Linux, around the bundle elsewhere.
    static let modules = [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
        .map { $0.appendingPathComponent("Modules") }
        .first { FileManager.default.fileExists(atPath: $0.appendingPathComponent("Modelwright.swiftmodule").path) }

    /// Enables a test only where the built module can be found.
    static let enabled = ConditionTrait.enabled(
        if: modules != nil, "the built Modelwright module was not found beside the tests")

    static func typecheck(model path: String, app: String) throws -> (status: Int32, errors: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("typecheck-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let loaded = ModelLoader.load(path: path)
        let model = try #require(loaded.model, "\(loaded.diagnostics)")
        let files = try GeneratorPipeline.generate(model, config: GeneratorConfig(), templates: TemplateSet.load())
        try OutputWriter.write(files + [GeneratedFile(name: "App.swift", contents: app)], to: folder)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            [
                "swiftc", "-typecheck", "-swift-version", "6", "-module-name", "App",
                "-I", try #require(modules).path, "-I", root.appendingPathComponent("Sources/CSQLite").path,
            ] + (files.map(\.name) + ["App.swift"]).map { folder.appendingPathComponent($0).path }
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = Pipe()
        try process.run()
        let output = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}
