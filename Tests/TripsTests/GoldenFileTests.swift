import Foundation
import ModelwrightGenerator
import ModelwrightSchema
import Testing

/// The code generated for Models/Trips is exactly the committed golden files; the build plugin
/// compiles the same generator output into the Trips module these tests use.
///
/// After an intended change to the generator or templates, rewrite the goldens with
/// `MODELWRIGHT_UPDATE_GOLDEN=1 swift test --filter GoldenFileTests` and review the diff.
struct GoldenFileTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    private static let goldenFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Golden")

    private static func generate() throws -> [GeneratedFile] {
        let model = try #require(ModelLoader.load(path: root.appendingPathComponent("Models/Trips").path).model)
        let config = try GeneratorConfig.load(from: root.appendingPathComponent("Models/Trips/modelwright-config.json"))
        return try GeneratorPipeline.generate(model, config: config, templates: TemplateSet.load())
    }

    @Test func generatedCodeMatchesTheGoldenFilesByteForByte() throws {
        let files = try Self.generate()
        #expect(files.map(\.name) == GeneratorPipeline.outputFileNames(forModel: "Trips"))
        if ProcessInfo.processInfo.environment["MODELWRIGHT_UPDATE_GOLDEN"] == "1" {
            try OutputWriter.write(
                files.map { GeneratedFile(name: $0.name + ".golden", contents: $0.contents) }, to: Self.goldenFolder)
        }
        for file in files {
            let golden = try Data(contentsOf: Self.goldenFolder.appendingPathComponent(file.name + ".golden"))
            #expect(Data(file.contents.utf8) == golden, "\(file.name) differs from its golden file")
        }
    }

    @Test func generationIsDeterministic() throws {
        #expect(try Self.generate() == Self.generate())
    }

    @Test func unchangedFilesAreNotRewritten() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("golden-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let files = try Self.generate()
        #expect(
            try OutputWriter.write(files, to: folder).count
                == GeneratorPipeline.outputFileNames(forModel: "Trips").count)
        #expect(try OutputWriter.write(files, to: folder).isEmpty)
    }
}
