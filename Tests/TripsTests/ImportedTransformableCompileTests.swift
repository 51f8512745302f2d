import Foundation
import ModelwrightCoreData
import ModelwrightSchema
import ModelwrightTestSupport
import Testing

/// The shared corpus of real Core Data models beside the package, on the team's machines.
private let corpus = GeneratedCodeTypeChecker.root.deletingLastPathComponent().appendingPathComponent("shared/corpus")

/// Real Core Data models whose Transformables hold `CLLocation`, `NSDictionary` or an app's class
/// compile as imported, with `-warnings-as-errors` on Linux: those attributes import as `Data`.
@Suite(
    .heavy,
    .enabled(
        if: GeneratedCodeTypeChecker.modules != nil, "the built Modelwright module was not found beside the tests"),
    .enabled(
        if: FileManager.default.fileExists(atPath: corpus.path),
        "../shared/corpus is not present beside the package"))
struct ImportedTransformableCompileTests {
    /// Imports the bundle at `path` (in the corpus), lets `edit` change the written files' text,
    /// and type-checks the generated code with `app`.
    private static func typecheck(
        _ path: String, app: String, edit: (String) -> String = { $0 }
    ) throws -> GeneratedCodeTypeChecker.TypeCheck {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imported-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var result = CoreDataImporter.importModel(
            try CoreDataBundle.open(path: corpus.appendingPathComponent(path).path))
        #expect(!result.hasErrors, "\(result.diagnostics)")
        result.files = result.files.map { file in
            var file = file
            file.text = edit(file.text)
            return file
        }
        _ = try CoreDataImporter.write(result, to: folder.path)
        return try GeneratedCodeTypeChecker.typecheck(app: app, model: folder.path)
    }

    @Test func wikipediasModelCompilesAsImported() throws {
        let app = """
            import Foundation
            import Modelwright
            func archived(_ group: WMFContentGroup, _ article: WMFArticle) -> [Data?] {
                [group.location, group.placemark, article.pageViews]
            }
            """
        let result = try Self.typecheck("wikimedia+wikipedia-ios/Wikipedia.xcdatamodeld", app: app)
        #expect(result.status == 0, "\(result.errors.prefix(2000))")

        // What the importer wrote before: `Codable<CLLocation>`, which does not compile here.
        let before = try Self.typecheck("wikimedia+wikipedia-ios/Wikipedia.xcdatamodeld", app: "import Modelwright\n") {
            $0.replacingOccurrences(of: "location: Data?", with: "location: Codable<CLLocation>?")
        }
        #expect(before.status != 0)
        #expect(before.errors.contains("CLLocation"), "\(before.errors.prefix(2000))")
    }

    @Test(arguments: [
        "wikimedia+wikipedia-ios/RemoteNotifications.xcdatamodeld", "alemar11+CoreDataPlus/SampleModel.xcdatamodeld",
    ])
    func modelsWithAppClassesCompileAsImported(path: String) throws {
        let result = try Self.typecheck(path, app: "import Modelwright\n")
        #expect(result.status == 0, "\(result.errors.prefix(2000))")
    }
}
