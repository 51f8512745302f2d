import Foundation
import ModelwrightGenerator
import ModelwrightSchema
import ModelwrightTestSupport
import Testing

/// Generated migration code passes `swift format lint --strict` whatever the shape of its lists:
/// CI lints only the Trips model's code, whose lists all hold several elements, and a trailing
/// comma that swift-format wants only in lists of more than one once slipped through. Each model
/// here has a step or an obligation list of exactly one element (and one of each other length).
@Suite(.heavy)
struct GeneratedMigrationsLintTests {
    /// `swift format`, when the toolchain has it.
    static let swiftFormat: Bool = {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift", "format", "--version"]
        process.standardOutput = Pipe()
        process.standardError = Pipe()
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }()

    /// Version 2 of a one-entity model, with the body `v2` and a migration block `migration`.
    private struct Shape {
        let name: String
        let v1: String
        let v2: String
        let migration: String
    }

    /// One step and one obligation of each kind a stage can owe, then two of them, then two
    /// stages, and a lightweight step alone.
    private static let shapes: [Shape] = [
        Shape(
            name: "value", v1: "title: String", v2: "title: String; subtitle: String",
            migration: "custom fill \"Fill subtitle\""),
        Shape(
            name: "onlyMissing", v1: "title: String?", v2: "title: String",
            migration: "custom fill \"Fill missing titles\""),
        Shape(
            name: "codable", v1: "tags: Codable<[String]>",
            v2: "tags: Codable<[String: Int]> @coreData(versionHashModifier: \"2\")",
            migration: "custom count \"Count tags\""),
        Shape(
            name: "enumeration", v1: "title: String", v2: "title: String; kind: Kind",
            migration: "custom classify \"Classify\""),
        Shape(
            name: "hook", v1: "home: Place?", v2: "home: Place",
            migration: "custom place \"Give every book a place\""),
        Shape(
            name: "two", v1: "title: String", v2: "title: String; a: Int; b: Codable<[Int]>",
            migration: "custom fill \"Fill a and b\""),
        Shape(
            name: "twoStages", v1: "title: String", v2: "title: String; a: Int; b: Int",
            migration: "custom fillA \"Fill a\" covers Book.a\n    custom fillB \"Fill b\" covers Book.b"),
        Shape(name: "lightweight", v1: "title: String", v2: "title: String; a: Int = 0", migration: ""),
    ]

    @Test(.enabled(if: swiftFormat, "swift format is not in the toolchain"))
    func generatedCodeOfOneStepOneObligationModelsPassesStrictLint() throws {
        let root = GeneratedCodeTypeChecker.root
        let strict = try String(contentsOf: root.appendingPathComponent(".swift-format"), encoding: .utf8)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lint-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var migrations: [String] = []
        var files: [String] = []
        for shape in Self.shapes {
            for access in ["internal", "public"] {
                // The folder names the shape and the access, so a lint error's path says which.
                let model = folder.appendingPathComponent("\(shape.name)-\(access)/Shelf")
                try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
                let declarations = "enum Kind: String { novel, essay }\ncomposite Place { shelf: String }\n"
                try Data("model Shelf version 1\n\(declarations)entity Book { \(shape.v1) }\n".utf8)
                    .write(to: model.appendingPathComponent("Shelf.v1.model"))
                let migration = shape.migration.isEmpty ? "" : "migration from 1 {\n    \(shape.migration)\n}\n"
                try Data("model Shelf version 2\n\(declarations)entity Book { \(shape.v2) }\n\(migration)".utf8)
                    .write(to: model.appendingPathComponent("Shelf.v2.model"))
                try Data("{ \"accessLevel\": \"\(access)\" }".utf8)
                    .write(to: model.appendingPathComponent("modelwright-config.json"))
                let result = try Pipeline.run(Pipeline.Request(modelPath: model.path, goal: .render))
                #expect(result.model != nil, "\(shape.name): \(result.diagnostics)")
                let output = model.deletingLastPathComponent().appendingPathComponent("out")
                try RenderedFile.write(result.files, to: output.path)
                let paths = result.files.map { output.appendingPathComponent($0.name).path }
                files += paths
                migrations += paths.filter { $0.hasSuffix("+Migrations.swift") }
            }
        }
        #expect(migrations.count == Self.shapes.count * 2)
        // The strict configuration for the migrations files; every file as CI lints generated code
        // (every public declaration documented is asked of the templates' migrations only).
        let relaxed = folder.appendingPathComponent("relaxed.swift-format")
        try Data(
            strict.replacingOccurrences(
                of: "\"AllPublicDeclarationsHaveDocumentation\": true",
                with: "\"AllPublicDeclarationsHaveDocumentation\": false"
            ).utf8
        ).write(to: relaxed)
        for (configuration, paths) in [
            (root.appendingPathComponent(".swift-format").path, migrations), (relaxed.path, files),
        ] {
            let lint = try GeneratedCodeTypeChecker.launch(
                URL(fileURLWithPath: "/usr/bin/env"),
                ["swift", "format", "lint", "--strict", "--configuration", configuration] + paths)
            #expect(lint.status == 0 && lint.errors.isEmpty, "\(lint.errors)")
        }
    }
}
