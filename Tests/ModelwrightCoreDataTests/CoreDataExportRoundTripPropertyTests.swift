import Foundation
import Modelwright
import ModelwrightTestSupport
import Testing

@testable import ModelwrightCoreData
@testable import ModelwrightSchema

/// A Modelwright model exported to Core Data and imported again has every version's checksum,
/// doc comments, default sort and `@sync` back: what Core Data cannot hold travels in `userInfo`.
/// Drawn over random models of built-in types, and over random histories with enums and custom
/// stages (composites, `Int` and `Day` have no Core Data form yet and are left out).
@Suite(.heavy)
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
            // `@sync` in each form: none, plain, and with a resolution for a unique key.
            switch Int.random(in: 0..<4, using: &random) {
            case 1: text += "    @sync\n"
            case 2: text += "    key: String @unique\n    @sync(unique: merge)\n"
            case 3: text += "    key: String @unique\n    @sync(unique: reject)\n"
            default: break
            }
            text += "}\n"
        }
        return text
    }

    @Test func exportThenImportKeepsChecksumsDocCommentsSortsAndSync() throws {
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
                #expect(
                    other?.sync.map { "\($0.unique?.rawValue ?? "plain")" }
                        == entity.sync.map { "\($0.unique?.rawValue ?? "plain")" },
                    "model \(number), \(entity.name) @sync")
                for attribute in entity.attributes {
                    let otherAttribute = other?.attributes.first { $0.name == attribute.name }
                    #expect(
                        otherAttribute?.doc == attribute.doc, "model \(number), \(entity.name).\(attribute.name) doc")
                }
            }
        }
    }

    /// A model of several versions with enums (`String` and `Int`, explicit raw values, enum
    /// defaults) and migration blocks with custom stages: `(version file name, text)` pairs.
    private static func randomHistory(using random: inout SplitMix64) -> [(String, String)] {
        var enums: [(name: String, isString: Bool, cases: [String])] = []
        var enumText = ""
        for index in 0..<Int.random(in: 1...3, using: &random) {
            let isString = Bool.random(using: &random)
            let cases = (0..<Int.random(in: 1...4, using: &random)).map { "c\($0)" }
            enums.append(("K\(index)", isString, cases))
            if Bool.random(using: &random) { enumText += "/// Enum \(index).\n" }
            let written = cases.enumerated().map { offset, name in
                guard Int.random(in: 0..<3, using: &random) == 0 else { return name }
                return name + (isString ? " = \"raw \(name)\"" : " = \(offset * 10 + 5)")
            }
            enumText += "enum K\(index): \(isString ? "String" : "Int") { \(written.joined(separator: ", ")) }\n\n"
        }
        var entities = ""
        for index in 0..<Int.random(in: 1...3, using: &random) {
            entities += "entity E\(index) {\n    a: String?\n"
            for attribute in 0..<Int.random(in: 1...3, using: &random) {
                guard let kind = enums.randomElement(using: &random) else { continue }
                let optional = Bool.random(using: &random)
                var line = "    k\(attribute): \(kind.name)\(optional ? "?" : "")"
                if let name = kind.cases.randomElement(using: &random), Bool.random(using: &random) {
                    line += " = .\(name)"
                }
                entities += line + "\n"
            }
            entities += "}\n\n"
        }
        var files: [(String, String)] = []
        for number in 1...Int.random(in: 1...3, using: &random) {
            var text = "model Gen version \(number)\n\n" + enumText + entities
            if number > 1, Bool.random(using: &random) {
                text += "migration from \(number - 1) {\n"
                for stage in 0..<Int.random(in: 1...2, using: &random) {
                    text +=
                        "    /// Stage \(stage).\n    custom step\(number)x\(stage) \"Step \(stage) to \(number)\"\n"
                }
                text += "}\n"
            }
            files.append(("Gen.v\(number).model", text))
        }
        return files
    }

    /// Exports the model in `folder` and imports the bundle again: the imported folder.
    private static func roundTrip(_ folder: URL) throws -> (model: PlannedModel, imported: URL) {
        let loaded = FrontEnd.run(modelAt: folder.path)
        let model = try #require(loaded.model, "\(loaded.diagnostics.map(\.description))")
        let exported = CoreDataExporter.export(model, bundleName: "Gen")
        // One bundle name every time: the imported header names it.
        let bundleFolder = CoreDataTestSupport.temporaryFolder("roundtrip-bundle")
        let bundle = bundleFolder.appendingPathComponent("Gen.xcdatamodeld")
        try FileManager.default.createDirectory(at: bundleFolder, withIntermediateDirectories: true)
        _ = try CoreDataExporter.write(exported, to: bundle.path)
        defer { try? FileManager.default.removeItem(at: bundleFolder) }
        let imported = try CoreDataTestSupport.importModel(bundle.path, options: .init(modelName: "Gen"))
        return (model, imported.folder)
    }

    @Test func enumsAndCustomStagesSurviveExportAndImport() throws {
        var random = SplitMix64(seed: 31)
        let count = 30
        for number in 0..<count {
            let files = Self.randomHistory(using: &random)
            let root = CoreDataTestSupport.temporaryFolder("roundtrip-enums")
            defer { try? FileManager.default.removeItem(at: root) }
            let folder = root.appendingPathComponent("Gen")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for (name, text) in files { try Data(text.utf8).write(to: folder.appendingPathComponent(name)) }
            let described = files.map { "\($0.0):\n\($0.1)" }.joined(separator: "\n")
            let first = try Self.roundTrip(folder)
            defer { try? FileManager.default.removeItem(at: first.imported) }
            let second = try Self.roundTrip(first.imported)
            defer { try? FileManager.default.removeItem(at: second.imported) }
            let back = try #require(FrontEnd.run(modelAt: first.imported.path).model, "model \(number)\n\(described)")
            #expect(
                back.versions.map(\.checksum) == first.model.versions.map(\.checksum), "model \(number)\n\(described)")
            for (original, again) in zip(first.model.versions, back.versions) {
                #expect(
                    again.graph.enumerations.map(\.schemaDescription)
                        == original.graph.enumerations.map(\.schemaDescription),
                    "model \(number) v\(original.number) enums\n\(described)")
                #expect(
                    again.graph.migration?.customStages.map(\.name)
                        == original.graph.migration?.customStages.map(\.name),
                    "model \(number) v\(original.number) stages\n\(described)")
                for entity in original.graph.entities {
                    let other = again.graph.entities.first { $0.name == entity.name }
                    #expect(
                        other?.attributes.map { "\($0.name) \($0.type) \(String(describing: $0.defaultValue))" }
                            == entity.attributes.map { "\($0.name) \($0.type) \(String(describing: $0.defaultValue))" },
                        "model \(number) v\(original.number) \(entity.name)\n\(described)")
                }
            }
            // A second round trip gives the imported schema text back byte for byte.
            for (name, _) in files {
                let once = try String(contentsOf: first.imported.appendingPathComponent(name), encoding: .utf8)
                let twice = try String(contentsOf: second.imported.appendingPathComponent(name), encoding: .utf8)
                #expect(once == twice, "model \(number) \(name)\n\(described)")
            }
        }
    }
}
