import Foundation
import ModelwrightTestSupport
import Testing

@testable import ModelwrightSchema

/// A step that changes only the Swift type inside an attribute's `Codable<…>` keeps the checksum
/// (which leaves that type out, so released stores keep matching) but is no "same structure":
/// stores record their version number, so the step runs, and its custom stage is accepted.
struct CodableRetypeStageTests {
    /// Pairs of archived spellings, each step drawn with the attribute optional or not.
    private static let spellings = [
        ("[String]", "[String: Int]"), ("[Int]", "Set<Int>"), ("[String: String]", "[String: [String]]"),
        ("[Double]", "[String]"),
    ]

    @Test func aCodableRetypeWithACustomStageIsAccepted() throws {
        for (old, new) in Self.spellings {
            for optional in ["", "?"] {
                let v1 =
                    "model Shelf version 1\nentity Book {\n    title: String\n    tags: Codable<\(old)>\(optional)\n}\n"
                let v2 =
                    "model Shelf version 2\nentity Book {\n    title: String\n    tags: Codable<\(new)>\(optional)\n}\n"
                    + "migration from 1 {\n    custom convertTags \"Convert\"\n}\n"
                let folder = try temporaryModelFolder(
                    named: "Shelf", files: ["Shelf.v1.model": v1, "Shelf.v2.model": v2])
                defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
                let result = FrontEnd.run(modelAt: folder.path)
                let errors = result.diagnostics.filter { $0.severity == .error }.map(\.description)
                #expect(errors.isEmpty, "\(old) → \(new)\(optional): \(errors)")
                let model = try #require(result.model, "\(old) → \(new)\(optional)")
                #expect(model.versions[0].schema.checksum == model.versions[1].schema.checksum)
                #expect(model.steps.first?.customStages.map(\.name) == ["convertTags"])
            }
        }
    }
}
