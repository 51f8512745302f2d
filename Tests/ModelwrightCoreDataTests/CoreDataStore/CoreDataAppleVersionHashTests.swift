import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright
@testable import ModelwrightCoreData

/// Our version-hash recipe against the hashes Apple's own model compiler wrote into a compiled
/// `.momd`'s `VersionInfo.plist`, for the `.xcdatamodeld` they were compiled from (see
/// `Fixtures/README.md`).
@Suite(.heavy)
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

    /// Real stores Core Data wrote, each beside the model that wrote it: the store's hashes are
    /// exactly our hashes of one version of the model, entity for entity.
    @Test(arguments: [
        ("CoreDataPlus-SampleModel_V1.sqlite", "SampleModel.xcdatamodeld", "SampleModel"),
        ("CoreDataPlus-SampleModel_V2.sqlite", "SampleModel.xcdatamodeld", "SampleModel2"),
        ("CoreDataPlus-SampleModel3_V1.sqlite", "SampleModel3.xcdatamodeld", "SampleModel3"),
    ])
    func aRealStoresHashesAreOursForTheVersionThatWroteIt(store: String, model: String, version name: String) throws {
        let url = CoreDataTestSupport.fixtures.appendingPathComponent(store)
        let connection = try SQLiteConnection(path: url.path, readOnly: true)
        defer { connection.close() }
        var plistData = Data()
        do {
            let statement = try connection.statement("SELECT Z_PLIST FROM Z_METADATA")
            defer { statement.reset() }
            #expect(try statement.step())
            plistData = statement.data(0)
        }
        let metadata = try PropertyListSerialization.propertyList(from: plistData, format: nil) as? [String: Any]
        let apple = try #require(metadata?["NSStoreModelVersionHashes"] as? [String: Data])
        let bundle = try CoreDataBundle.open(path: CoreDataTestSupport.fixtures.appendingPathComponent(model).path)
        let index = try #require(bundle.versions.firstIndex { $0.name == name })
        let facts = CoreDataStoreFacts.version(
            of: try CoreDataReader.read(bundle.versions[index]), named: name, number: index + 1,
            shape: ImportedShape())
        let ours = CoreDataVersionHashes.hashes(of: facts)
        #expect(Set(ours.keys) == Set(apple.keys), "\(store)")
        for (entity, hash) in apple.sorted(by: { $0.key < $1.key }) {
            #expect(ours[entity] == hash, "\(store): \(entity)")
        }
    }
}
