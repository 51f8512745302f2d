import Foundation
import ModelwrightGenerator
import ModelwrightSchema
import Testing

/// A custom stage the schema declares is a protocol requirement: an app that does not implement
/// it does not compile. Proved by type-checking the generated Trips code with a small app file,
/// with and without the implementation, against the Modelwright module this build produced.
struct MissingStageCompileTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    /// Where SwiftPM put the built modules: beside the tests on Linux, around the bundle elsewhere.
    private static let modules = [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
        .map { $0.appendingPathComponent("Modules") }
        .first { FileManager.default.fileExists(atPath: $0.appendingPathComponent("Modelwright.swiftmodule").path) }

    private static func typecheck(app: String) throws -> (status: Int32, errors: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stage-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = try #require(ModelLoader.load(path: root.appendingPathComponent("Models/Trips").path).model)
        let files = try GeneratorPipeline.generate(model, config: GeneratorConfig(), templates: TemplateSet.load())
        try OutputWriter.write(files + [GeneratedFile(name: "App.swift", contents: app)], to: folder)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            [
                "swiftc", "-typecheck", "-swift-version", "6", "-module-name", "TripsApp",
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

    @Test(.enabled(if: modules != nil, "the built Modelwright module was not found beside the tests"))
    func anAppWithoutTheStageDoesNotCompile() throws {
        let missing = try Self.typecheck(
            app: """
                import Modelwright
                struct AppMigrations: TripsMigrations {}
                let plan = Trips.migrationPlan(AppMigrations())
                """)
        #expect(missing.status != 0)
        #expect(missing.errors.contains("type 'AppMigrations' does not conform to protocol 'TripsMigrations'"))
        #expect(missing.errors.contains("splitNameDidMigrate"))

        let implemented = try Self.typecheck(
            app: """
                import Modelwright
                struct AppMigrations: TripsMigrations {
                    func splitNameDidMigrate(_ context: MigrationContext) throws {}
                }
                let plan = Trips.migrationPlan(AppMigrations())
                """)
        #expect(implemented.status == 0, "\(implemented.errors)")
    }
}
