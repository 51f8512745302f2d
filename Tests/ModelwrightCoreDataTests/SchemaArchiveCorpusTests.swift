import Foundation
import Modelwright
import ModelwrightTestSupport
import Testing

@testable import ModelwrightCoreData
@testable import ModelwrightSchema

/// Every version of every real model in `../shared/corpus`, later versions included, archives and
/// decodes back to an equal schema with the same checksum: what generated code relies on for
/// each historical version.
@Suite(
    .heavy, .enabled(if: CoreDataTestSupport.corpusIsAvailable, "../shared/corpus is not present beside the package"))
struct SchemaArchiveCorpusTests {
    @Test(arguments: CoreDataTestSupport.corpusModels)
    func everyVersionDecodesToAnEqualSchema(path: String) throws {
        let imported = try CoreDataTestSupport.importModel(path, options: .init(includesVersionsAfterCurrent: true))
        defer { try? FileManager.default.removeItem(at: imported.folder) }
        let versions = try #require(imported.loaded.model?.versions)
        #expect(!versions.isEmpty)
        for version in versions {
            let text = version.schema.archive
            let decoded = try SchemaDescription(archive: text)
            #expect(decoded == version.schema, "\(path) version \(version.number)")
            #expect(decoded.checksum == version.checksum)
            #expect(decoded.archive == text)
        }
    }
}
