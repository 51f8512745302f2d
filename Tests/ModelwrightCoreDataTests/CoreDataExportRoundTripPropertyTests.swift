import Foundation
import Modelwright
import ModelwrightTestSupport
import Testing

@testable import ModelwrightCoreData
@testable import ModelwrightSchema

/// A Modelwright model exported to Core Data and imported again has every version's checksum,
/// doc comments and default sort back: what Core Data cannot hold travels in `userInfo`.
/// Drawn over random models of the types Core Data round-trips (enums, composites, `Int` and
/// `Day` have no Core Data form yet and are left out).
struct CoreDataExportRoundTripPropertyTests {
    private static let types = ["Bool", "Int16", "Int32", "Int64", "Double", "String", "Date", "Data", "UUID", "URL"]

    private static func randomModel(using random: inout SplitMix64) -> String {
        var text = "/// A generated model.\nmodel Gen version 1\n"
        for index in 0..<Int.random(in: 1...4, using: &random) {
            text += "\n"
            if Bool.random(using: &random) {
                text += "/// Entity \(index): \"quoted\", tabbed\there.\n/// Second line.\n"
            }
            text += "entity E\(index) {\n"
            var sortable: [String] = []
            for attribute in 0..<Int.random(in: 1...5, using: &random) {
                let type = types.randomElement(using: &random) ?? "String"
                let optional = Bool.random(using: &random)
                if Int.random(in: 0..<3, using: &random) == 0 {
                    text += "    /// Attribute \(attribute) of E\(index).\n"
                }
                var line = "    a\(attribute): \(type)\(optional ? "?" : "")"
                if type == "Date", Bool.random(using: &random) { line += " = now" }
                if type == "Int16", Bool.random(using: &random) { line += " = 7" }
                text += line + "\n"
                if type != "Data" { sortable.append("a\(attribute)") }
            }
            if !sortable.isEmpty, Bool.random(using: &random) {
                let keys = sortable.shuffled(using: &random).prefix(Int.random(in: 1...sortable.count, using: &random))
                let sort = keys.map { $0 + (Bool.random(using: &random) ? " descending" : "") }
                text += "    @sort(\(sort.joined(separator: ", ")))\n"
            }
            text += "}\n"
        }
        return text
    }

    @Test func exportThenImportKeepsChecksumsDocCommentsAndSorts() throws {
        var random = SplitMix64(seed: 8)
        let count = 40
        for number in 0..<count {
            let text = Self.randomModel(using: &random)
            let folder = CoreDataTestSupport.temporaryFolder("roundtrip").appendingPathComponent("Gen")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
            try Data(text.utf8).write(to: folder.appendingPathComponent("Gen.v1.model"))
            let loaded = FrontEnd.run(modelAt: folder.path)
            let model = try #require(loaded.model, "model \(number): \(loaded.diagnostics.map(\.description))\n\(text)")
            let exported = CoreDataExporter.export(model, bundleName: "Gen")
            let bundle = folder.deletingLastPathComponent().appendingPathComponent("Gen.xcdatamodeld")
            _ = try CoreDataExporter.write(exported, to: bundle.path)
            let imported = try CoreDataTestSupport.importModel(bundle.path, options: .init(modelName: "Gen"))
            defer { try? FileManager.default.removeItem(at: imported.folder) }
            let back = try #require(imported.loaded.model, "model \(number): \(imported.loaded.diagnostics)")
            let original = try #require(model.versions.first)
            let again = try #require(back.versions.first)
            #expect(again.checksum == original.checksum, "model \(number):\n\(text)")
            for entity in original.graph.entities {
                let other = again.graph.entities.first { $0.name == entity.name }
                #expect(other?.doc == entity.doc, "model \(number), \(entity.name) doc")
                #expect(
                    other?.defaultSort.map { "\($0.attribute) \($0.ascending)" }
                        == entity.defaultSort.map { "\($0.attribute) \($0.ascending)" },
                    "model \(number), \(entity.name) sort")
                for attribute in entity.attributes {
                    let otherAttribute = other?.attributes.first { $0.name == attribute.name }
                    #expect(
                        otherAttribute?.doc == attribute.doc, "model \(number), \(entity.name).\(attribute.name) doc")
                }
            }
        }
    }
}
