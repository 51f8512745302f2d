import Foundation
import ModelwrightGenerator
import ModelwrightSchema
import ModelwrightTestSupport
import Testing

@testable import Modelwright
@testable import ModelwrightCoreData

/// A Core Data history that adds an attribute in one release and removes it in the next (a large
/// messaging app's `UserClient.legacyPushToken`) imports, validates and plans: versions 1 and 3
/// share a checksum, and stores tell them apart by the version number they record.
@Suite(.heavy)
struct CoreDataRepeatedStructureTests {
    private static func entity(withToken: Bool) -> String {
        CoreDataTestSupport.contents(
            """
            <entity name="UserClient" representedClassName="UserClient" syncable="YES">
                <attribute name="label" optional="YES" attributeType="String"/>
            \(withToken ? #"    <attribute name="legacyPushToken" optional="YES" attributeType="String"/>"# : "")
            </entity>
            """)
    }

    @Test func aPropertyAddedAndRemovedAgainImportsAndPlans() throws {
        let bundle = try CoreDataTestSupport.makeBundle(
            "Wire",
            versions: [
                "Wire": Self.entity(withToken: false), "Wire 2": Self.entity(withToken: true),
                "Wire 3": Self.entity(withToken: false),
            ],
            currentVersionFile: CoreDataTestSupport.currentVersion("Wire 3"))
        let root = bundle.deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: root) }
        let imported = CoreDataImporter.importModel(try CoreDataBundle.open(path: bundle.path))
        #expect(imported.diagnostics.filter { $0.severity == .error }.isEmpty, "\(imported.diagnostics)")
        let folder = root.appendingPathComponent("model")
        _ = try CoreDataImporter.write(imported, to: folder.path)
        let result = FrontEnd.run(modelAt: folder.path)
        #expect(result.diagnostics.filter { $0.severity == .error }.isEmpty, "\(result.diagnostics)")
        let model = try #require(result.model)
        #expect(model.versions.count == 3)
        #expect(model.versions[0].checksum == model.versions[2].checksum)
        #expect(model.versions[0].checksum != model.versions[1].checksum)
    }
}
