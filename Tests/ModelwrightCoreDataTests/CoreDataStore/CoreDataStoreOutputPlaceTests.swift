import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright
@testable import ModelwrightCoreData

/// An output that names one of the Core Data store's own files or a place inside its support
/// folder (issue 29), however it is spelt, is refused before anything is written: Core Data would
/// roll a `-journal` back into the store, delete an `-shm`, or read the support folder as its own.
@Suite(.heavy, .serialized) struct CoreDataStoreOutputPlaceTests {
    /// 24 outputs, each a random spelling (as written, another case, through `..`, through a link to
    /// the store's folder or to the support folder) of a sibling file or a path in the support
    /// folder: each is refused naming the output, the store's files stay byte-identical, and
    /// nothing is added beside the store.
    @Test(arguments: 0..<24)
    func anOutputAmongTheStoresFilesIsRefused(seed: Int) throws {
        let test = try CoreDataStoreRefusalTests.Case(seed: seed % 3)
        defer { test.remove() }
        var random = SplitMix64(seed: 2_929_008, index: seed)
        let manager = FileManager.default
        let support = test.folder.appendingPathComponent(".Shop_SUPPORT/_EXTERNAL_DATA")
        try manager.createDirectory(at: support, withIntermediateDirectories: true)
        let outside = CoreDataTestSupport.temporaryFolder("outside")
        try manager.createDirectory(at: outside, withIntermediateDirectories: true)
        defer { try? manager.removeItem(at: outside) }
        try manager.createSymbolicLink(
            atPath: outside.path + "/store-folder", withDestinationPath: test.folder.path)
        try manager.createSymbolicLink(
            atPath: outside.path + "/support", withDestinationPath: support.path)
        let folders = [
            test.folder.path, test.folder.path + "/../" + test.folder.lastPathComponent,
            outside.path + "/store-folder",
        ]
        let folder = folders[random.next(below: folders.count)]
        let targets: [String] = [
            "\(folder)/Shop.sqlite-journal", "\(folder)/Shop.sqlite-shm", "\(folder)/Shop.sqlite-wal",
            "\(folder)/SHOP.SQLITE-journal", "\(folder)/.Shop_SUPPORT/_EXTERNAL_DATA/new.store",
            "\(folder)/.Shop_SUPPORT/new/deeper.store", "\(folder)/.shop_support/x.store",
            "\(outside.path)/support/new.store",
        ]
        let target = targets[(seed + random.next(below: 2)) % targets.count]
        let before = CoreDataStoreImportTests.snapshot(test.store)
        let listing = try manager.contentsOfDirectory(atPath: test.folder.path).sorted()
        let supportListing = try manager.contentsOfDirectory(atPath: support.path)
        var caught: Error?
        do {
            try CoreDataStoreImport.importStore(
                at: test.store, model: test.prepared.storeModel, migrationPlan: test.prepared.plan,
                to: URL(fileURLWithPath: target))
        } catch {
            caught = error
        }
        guard case .destinationInsideStore(let path, _) = caught as? CoreDataStoreImportError else {
            Issue.record("\(target) was not refused: \(String(describing: caught))")
            return
        }
        #expect(path == URL(fileURLWithPath: target).path)
        #expect(CoreDataStoreImportTests.snapshot(test.store) == before, "the store changed")
        #expect(try manager.contentsOfDirectory(atPath: test.folder.path).sorted() == listing)
        #expect(try manager.contentsOfDirectory(atPath: support.path) == supportListing)
    }

    /// An output beside the store under any other name is written.
    @Test func anOutputBesideTheStoreIsWritten() throws {
        let test = try CoreDataStoreRefusalTests.Case(seed: 1)
        defer { test.remove() }
        for name in ["Shop.sqlite-journal.store", "Shop-shm", "Shop_SUPPORT.store"] {
            try CoreDataStoreImport.importStore(
                at: test.store, model: test.prepared.storeModel, migrationPlan: test.prepared.plan,
                to: test.folder.appendingPathComponent(name))
            #expect(FileManager.default.fileExists(atPath: test.folder.appendingPathComponent(name).path))
        }
    }
}
