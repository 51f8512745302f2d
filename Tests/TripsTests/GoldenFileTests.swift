import Foundation
import ModelwrightGenerator
import ModelwrightSchema
import ModelwrightTestSupport
import Testing

/// The code generated for Models/Trips is exactly the committed golden files; the build plugin
/// compiles the same generator output into the Trips module these tests use.
///
/// After an intended change to the generator or templates, rewrite the goldens with
/// `MODELWRIGHT_UPDATE_GOLDEN=1 swift test --filter GoldenFileTests` and review the diff.
@Suite(.heavy)
struct GoldenFileTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    private static let goldenFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Golden")

    /// The files `generate` writes for Trips, as the README and the plugins name them.
    private static let fileNames = [
        "Trips+Records.swift", "Trips+Queries.swift", "Trips+Schema.swift", "Trips+Migrations.swift",
    ]

    private static func generate() throws -> [RenderedFile] {
        let result = try Pipeline.run(
            modelAt: root.appendingPathComponent("Models/Trips").path, through: .render,
            configPath: root.appendingPathComponent("Models/Trips/modelwright-config.json").path)
        #expect(!result.hasErrors)
        return result.files
    }

    @Test func generatedCodeMatchesTheGoldenFilesByteForByte() throws {
        let files = try Self.generate()
        #expect(files.map(\.name) == Self.fileNames)
        if ProcessInfo.processInfo.environment["MODELWRIGHT_UPDATE_GOLDEN"] == "1" {
            try RenderedFile.write(
                files.map { RenderedFile(name: $0.name + ".golden", contents: $0.contents) }, to: Self.goldenFolder.path
            )
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
            try RenderedFile.write(files, to: folder.path).count
                == Self.fileNames.count)
        #expect(try RenderedFile.write(files, to: folder.path).isEmpty)
    }
}
