import Foundation
import Modelwright
import ModelwrightTestSupport
import Testing

@testable import ModelwrightCoreData
@testable import ModelwrightSchema

/// Import → export → import gives the same schemas and checksums, and export is deterministic.
@Suite(.heavy)
struct CoreDataRoundTripTests {
    /// The schemas of an import of `path`, and those of importing its export again.
    static func roundTrip(
        _ path: String, sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) throws -> (first: [SchemaDescription], second: [SchemaDescription], export: CoreDataExporter.ExportedBundle) {
        let first = try CoreDataTestSupport.importModel(path, sourceLocation: sourceLocation)
        defer { try? FileManager.default.removeItem(at: first.folder) }
        let model = try #require(first.loaded.model, "\(first.loaded.diagnostics)", sourceLocation: sourceLocation)
        let exported = CoreDataExporter.export(model, bundleName: first.result.modelName)
        let bundle = CoreDataTestSupport.temporaryFolder("export").appendingPathComponent(
            "\(first.result.modelName).xcdatamodeld")
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        _ = try CoreDataExporter.write(exported, to: bundle.path)
        let second = try CoreDataTestSupport.importModel(
            bundle.path, options: .init(modelName: first.result.modelName), sourceLocation: sourceLocation)
        defer { try? FileManager.default.removeItem(at: second.folder) }
        let secondModel = try #require(second.loaded.model, sourceLocation: sourceLocation)
        return (model.versions.map(\.schema), secondModel.versions.map(\.schema), exported)
    }

    @Test func theInlineShopModelRoundTrips() throws {
        let bundle = try CoreDataTestSupport.makeBundle(
            "Shop",
            versions: [
                "Shop": CoreDataImportTests.version1, "Shop 2": CoreDataImportTests.version2,
                "Shop 3": CoreDataImportTests.version2,
            ])
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let (first, second, export) = try Self.roundTrip(bundle.path)
        #expect(first.count == 3)
        #expect(first == second)
        #expect(first.map(\.checksum) == second.map(\.checksum))
        let version2 = try #require(export.files.first { $0.path == "Shop 2.xcdatamodel/contents" })
        let xml = String(decoding: version2.data, as: UTF8.self)
        #expect(
            xml.contains(
                #"<entity name="Client" representedClassName="ShopClient" elementID="Customer" versionHashModifier="2" syncable="YES">"#
            ))
        #expect(
            xml.contains(#"<attribute name="fullName" attributeType="String" defaultValueString="" elementID="name"/>"#)
        )
        #expect(
            xml.contains(
                #"<attribute name="id" attributeType="Integer 64" defaultValueString="0" usesScalarValueType="YES"/>"#))
        #expect(
            xml.contains(
                #"<relationship name="customer" optional="YES" maxCount="1" deletionRule="No Action" destinationEntity="Client" inverseName="orders" inverseEntity="Client"/>"#
            ))
        #expect(
            xml.contains(
                #"<attribute name="tags" optional="YES" attributeType="Transformable" valueTransformerName="TagsTransformer" customClassName="[String]"/>"#
            ))
        #expect(xml.contains(#"<entry key="source.api" value="v3 &quot;shop&quot;"/>"#))
        #expect(
            xml.contains(#"<fetchRequest name="bigOrders" entity="Order" predicateString="number &gt;= $minimum"/>"#))
        // Version 3 carries the identifiers forward, so Core Data still matches it with version 2.
        let version3 = try #require(export.files.first { $0.path == "Shop 3.xcdatamodel/contents" })
        #expect(String(decoding: version3.data, as: UTF8.self).contains(#"elementID="Customer""#))
        #expect(
            String(decoding: try #require(export.files.last).data, as: UTF8.self).contains(
                "<string>Shop 3.xcdatamodel</string>"))
    }

    @Test func exportIsDeterministicAndRewritesNothingUnchanged() throws {
        let path = CoreDataTestSupport.fixtures.appendingPathComponent("test.xcdatamodel").path
        let imported = try CoreDataTestSupport.importModel(path)
        defer { try? FileManager.default.removeItem(at: imported.folder) }
        let model = try #require(imported.loaded.model)
        let first = CoreDataExporter.export(model, bundleName: "Test")
        let second = CoreDataExporter.export(model, bundleName: "Test")
        #expect(first.files == second.files)
        let bundle = CoreDataTestSupport.temporaryFolder("export").appendingPathComponent("Test.xcdatamodeld")
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        #expect(
            try CoreDataExporter.write(first, to: bundle.path).written == [
                "Test 1.xcdatamodel/contents", ".xccurrentversion",
            ])
        #expect(try CoreDataExporter.write(second, to: bundle.path).written.isEmpty)
    }

    @Test func theFixturesRoundTrip() throws {
        for name in ["SampleModel.xcdatamodeld", "test.xcdatamodel"] {
            let (first, second, _) = try Self.roundTrip(CoreDataTestSupport.fixtures.appendingPathComponent(name).path)
            #expect(!first.isEmpty)
            #expect(first == second, "\(name)")
        }
    }

    @Test func fetchRequestTemplatesRoundTripAsNamedRequests() throws {
        let path = CoreDataTestSupport.fixtures.appendingPathComponent("test.xcdatamodel")
        let original = try String(contentsOf: path.appendingPathComponent("contents"), encoding: .utf8)
        let templates = original.split(separator: "\n").filter { $0.contains("<fetchRequest name=") }
        #expect(templates.count == 5)

        let imported = try CoreDataTestSupport.importModel(path.path)
        defer { try? FileManager.default.removeItem(at: imported.folder) }
        let model = try #require(imported.loaded.model)
        #expect(
            model.versions[0].graph.requests.map { "\($0.name): \($0.entity) \($0.parameters.map(\.name))" } == [
                "allHumans: Human []", "byHumanName: Human [\"humanName\"]", "byParent: Child [\"parent\"]",
                "byParentName: Child [\"parentName\"]", "oneByHumanName: Human [\"humanName\"]",
            ])
        // Exported as Xcode wrote them, line for line.
        let exported = CoreDataExporter.export(model, bundleName: "Test")
        let xml = String(decoding: try #require(exported.files.first).data, as: UTF8.self)
        #expect(xml.split(separator: "\n").filter { $0.contains("<fetchRequest name=") } == templates)
    }
}

/// Export reports a warning that every version repeats once, naming the other versions, as import
/// does: a long history with an enum attribute gave one identical warning per version.
@Suite(.heavy)
struct CoreDataExportWarningTests {
    @Test func aWarningEveryVersionRepeatsIsReportedOnceNamingTheOthers() throws {
        let folder = CoreDataTestSupport.temporaryFolder("export-warnings").appendingPathComponent("Shop")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let versions = 4
        for number in 1...versions {
            // Version 3 drops the enum, so its warning recurs in versions 1–2 and 4.
            let kind = number == 3 ? "" : "    kind: Kind = .book\n"
            let extra = number >= 2 ? "    note: String?\n" : ""
            let block = number == 3 ? "\nmigration from 2 {\n    lossy Item.kind \"kinds are gone\"\n}\n" : ""
            let text =
                "model Shop version \(number)\n\nenum Kind: String { book, film }\n\nentity Item {\n    title: String\n"
                + kind + extra + "}\n" + block
            try Data(text.utf8).write(to: folder.appendingPathComponent("Shop.v\(number).model"))
        }
        let loaded = FrontEnd.run(modelAt: folder.path)
        let model = try #require(loaded.model, "\(loaded.diagnostics.map(\.description))")
        let warnings = CoreDataExporter.export(model, bundleName: "Shop").diagnostics.filter {
            $0.message.contains("enum attribute 'Item.kind'")
        }
        #expect(warnings.count == 1, "\(warnings.map(\.description))")
        #expect(
            warnings.first?.message.hasSuffix("(also in versions 'Shop.v2.model', 'Shop.v4.model')") == true,
            "\(warnings.map(\.description))")
        #expect(warnings.first?.path.hasSuffix("Shop.v1.model") == true)
    }
}
