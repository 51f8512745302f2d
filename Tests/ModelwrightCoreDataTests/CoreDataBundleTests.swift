import Foundation
import ModelwrightTestSupport
import Testing

@testable import ModelwrightCoreData
@testable import ModelwrightSchema

/// Versions come in natural name order, and `.xccurrentversion` decides which are imported.
@Suite(.heavy)
struct CoreDataBundleTests {
    private static let user = CoreDataTestSupport.contents(
        #"    <entity name="User" representedClassName="User" syncable="YES"><attribute name="name" attributeType="String"/></entity>"#
    )

    @Test func versionNamesSortNaturally() {
        let names = ["Model 10", "Model 2", "Model", "Model 117", "Model 1", "Model 9"]
        #expect(
            names.sorted(by: NaturalOrder.precedes) == [
                "Model", "Model 1", "Model 2", "Model 9", "Model 10", "Model 117",
            ])
        let dotted = ["Advanced.EvolutionDemo.V2", "Advanced.EvolutionDemo", "Advanced.EvolutionDemo.V10"]
        #expect(
            dotted.sorted(by: NaturalOrder.precedes) == [
                "Advanced.EvolutionDemo", "Advanced.EvolutionDemo.V2", "Advanced.EvolutionDemo.V10",
            ])
        #expect(
            ["SampleModel3_v3", "SampleModel3", "SampleModel3_v2"].sorted(by: NaturalOrder.precedes) == [
                "SampleModel3", "SampleModel3_v2", "SampleModel3_v3",
            ])
    }

    @Test func aMissingCurrentVersionFileMakesTheNewestCurrent() throws {
        let bundle = try CoreDataTestSupport.makeBundle(versions: [
            "Test": Self.user, "Test 2": Self.user, "Test 10": Self.user,
        ])
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let opened = try CoreDataBundle.open(path: bundle.path)
        #expect(opened.versions.map(\.name) == ["Test", "Test 2", "Test 10"])
        #expect(opened.currentIndex == 2)
        #expect(
            opened.notes.map(\.message) == [
                "the bundle has no .xccurrentversion; the newest version, 'Test 10', is current"
            ])
    }

    @Test func anEmptyCurrentVersionFileMakesTheNewestCurrent() throws {
        let bundle = try CoreDataTestSupport.makeBundle(
            versions: ["Test": Self.user, "Test 2": Self.user],
            currentVersionFile: CoreDataTestSupport.currentVersion(nil))
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let opened = try CoreDataBundle.open(path: bundle.path)
        #expect(opened.currentIndex == 1)
        #expect(
            opened.notes.map(\.message) == [
                ".xccurrentversion names no version; the newest version, 'Test 2', is current"
            ])
        let imported = try CoreDataTestSupport.importModel(bundle.path)
        defer { try? FileManager.default.removeItem(at: imported.folder) }
        #expect(imported.result.files.map(\.name) == ["Test.v1.model", "Test.v2.model"])
    }

    @Test func versionsAfterTheCurrentOneAreReportedAndLeftOut() throws {
        let bundle = try CoreDataTestSupport.makeBundle(
            versions: ["Test": Self.user, "Test 2": Self.user, "Test 3": Self.user],
            currentVersionFile: CoreDataTestSupport.currentVersion("Test 2"))
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let imported = try CoreDataTestSupport.importModel(bundle.path)
        defer { try? FileManager.default.removeItem(at: imported.folder) }
        #expect(imported.result.files.map(\.versionName) == ["Test", "Test 2"])
        #expect(
            imported.warnings == [
                "Test 3.xcdatamodel/contents:-: version 'Test 3' comes after the current version 'Test 2' and is not imported; pass --all-versions to import it (the newest version then becomes current)"
            ])
        #expect(imported.loaded.model?.current?.number == 2)

        let all = try CoreDataTestSupport.importModel(bundle.path, options: .init(includesVersionsAfterCurrent: true))
        defer { try? FileManager.default.removeItem(at: all.folder) }
        #expect(all.result.files.map(\.versionName) == ["Test", "Test 2", "Test 3"])
        #expect(all.warnings.count == 1)
        #expect(all.warnings.first?.contains("the newest, 'Test 3', is current in Modelwright") == true)
    }

    @Test func theFixtureWhoseCurrentVersionIsTheFirstImportsOneVersion() throws {
        let path = CoreDataTestSupport.fixtures.appendingPathComponent("SampleModel.xcdatamodeld").path
        let imported = try CoreDataTestSupport.importModel(path)
        defer { try? FileManager.default.removeItem(at: imported.folder) }
        #expect(imported.result.files.map(\.versionName) == ["SampleModel"])
        #expect(imported.warnings.filter { $0.contains("comes after the current version 'SampleModel'") }.count == 2)
        #expect(!imported.loaded.hasErrors)
    }

    @Test func aBareModelIsOneVersionNamedAfterItsFolder() throws {
        let path = CoreDataTestSupport.fixtures.appendingPathComponent("test.xcdatamodel").path
        let imported = try CoreDataTestSupport.importModel(path)
        defer { try? FileManager.default.removeItem(at: imported.folder) }
        #expect(imported.result.modelName == "Test")
        #expect(imported.result.files.map(\.name) == ["Test.v1.model"])
        #expect(imported.loaded.model?.versions.count == 1)
        #expect(!imported.loaded.hasErrors)
    }

    @Test func anUnreadableBundleIsAFailureNotACrash() throws {
        #expect(throws: CoreDataBundle.Failure.self) { try CoreDataBundle.open(path: "/nonexistent/X.xcdatamodeld") }
        let bundle = try CoreDataTestSupport.makeBundle(versions: ["Test": "<model><entity name=\"A\"></model>"])
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let result = CoreDataImporter.importModel(try CoreDataBundle.open(path: bundle.path))
        #expect(result.hasErrors)
        #expect(result.files.isEmpty)
        let error = try #require(result.diagnostics.first { $0.severity == .error })
        #expect(error.path.hasSuffix("Test.xcdatamodel/contents"))
        #expect(error.location?.line == 1)
        #expect(error.message == "</model> does not close <entity>")
    }
}
