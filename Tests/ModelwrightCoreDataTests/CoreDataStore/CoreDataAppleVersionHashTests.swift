import Foundation
import Testing

@testable import Modelwright
@testable import ModelwrightCoreData

/// Our version-hash recipe against the hashes Apple's own model compiler wrote into a compiled
/// `.momd`'s `VersionInfo.plist`, for the `.xcdatamodeld` they were compiled from (see
/// `Fixtures/README.md`).
struct CoreDataAppleVersionHashTests {
    /// Every entity of every version that Apple hashed gets Apple's hash from our recipe, from
    /// what `import-coredata` keeps of the model.
    @Test func everyEntityMatchesApplesHash() throws {
        let plist = CoreDataTestSupport.fixtures.appendingPathComponent("AppBox-VersionInfo.plist")
        let info = try PropertyListSerialization.propertyList(from: Data(contentsOf: plist), format: nil)
        let apple = try #require(
            (info as? [String: Any])?["NSManagedObjectModel_VersionHashes"] as? [String: [String: Data]])
        let bundle = try CoreDataBundle.open(
            path: CoreDataTestSupport.fixtures.appendingPathComponent("AppBox.xcdatamodeld").path)
        var compared = 0
        for (number, version) in bundle.versions.enumerated() {
            let expected = try #require(apple[version.name], "no Apple hashes for \(version.name)")
            let model = try CoreDataReader.read(version)
            let facts = CoreDataStoreFacts.version(
                of: model, named: version.name, number: number + 1, shape: ImportedShape())
            let ours = CoreDataVersionHashes.hashes(of: facts)
            #expect(Set(ours.keys) == Set(expected.keys), "\(version.name)")
            for (entity, hash) in expected {
                #expect(
                    ours[entity] == hash,
                    "\(version.name).\(entity): ours \(ours[entity]?.base64EncodedString() ?? "none"), Apple's \(hash.base64EncodedString())"
                )
                compared += 1
            }
        }
        #expect(Set(bundle.versions.map(\.name)) == Set(apple.keys))
        #expect(compared == 14)
    }
}
