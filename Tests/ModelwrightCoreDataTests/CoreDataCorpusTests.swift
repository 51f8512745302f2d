import Foundation
import Modelwright
import ModelwrightGenerator
import ModelwrightTestSupport
import Testing

@testable import ModelwrightCoreData
@testable import ModelwrightSchema

/// Every real model in `../shared/corpus` imports into a model that validates, and round-trips.
/// The corpus sits beside the package on the team's machines, not in a user's clone: these tests
/// are skipped when it is absent, and the fixture tests cover the importer there.
@Suite(
    .heavy, .enabled(if: CoreDataTestSupport.corpusIsAvailable, "../shared/corpus is not present beside the package"))
struct CoreDataCorpusTests {
    @Test func theCorpusHoldsTheExpectedModels() {
        // Guards against the corpus moving or the model search finding nothing, which would make
        // the tests below pass vacuously.
        #expect(CoreDataTestSupport.corpusModels.count == 12)
    }

    @Test(arguments: CoreDataTestSupport.corpusModels)
    func everyCorpusModelImportsAndValidates(path: String) throws {
        for includesLater in [false, true] {
            let imported = try CoreDataTestSupport.importModel(
                path, options: .init(includesVersionsAfterCurrent: includesLater))
            defer { try? FileManager.default.removeItem(at: imported.folder) }
            let errors = imported.loaded.diagnostics.filter { $0.severity == .error }
            #expect(errors.isEmpty, "\(errors.prefix(5))")
            #expect(imported.loaded.model?.versions.count == imported.result.files.count)
            #expect(!imported.result.files.isEmpty)
            // Every warning points into a Core Data file (or the bundle itself).
            for diagnostic in imported.result.diagnostics {
                #expect(diagnostic.path.hasPrefix(path), "\(diagnostic)")
            }
        }
    }

    /// Ordering by evidence changes nothing for a real history: every corpus bundle is one name
    /// family, opens in natural name order as before, and gains no warning; and every version
    /// records the build that saved it, which the ordering would read.
    @Test(arguments: CoreDataTestSupport.corpusModels)
    func everyCorpusModelKeepsItsNaturalOrderAndGainsNoWarning(path: String) throws {
        let opened = try CoreDataBundle.open(path: path)
        let folders =
            path.hasSuffix(".xcdatamodeld")
            ? try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".xcdatamodel") }
                .map { String($0.dropLast(".xcdatamodel".count)) } : [opened.name]
        #expect(opened.versions.map(\.name) == NaturalOrder.sorted(folders))
        #expect(opened.order.basis == .names)
        #expect(opened.order.names == opened.order.nameOrder)
        #expect(opened.notes.allSatisfy { $0.severity == .note }, "\(opened.notes)")
        for version in opened.versions {
            #expect(CoreDataBundle.savedToolsVersion(version) != nil, "\(version.name)")
        }
    }

    @Test(arguments: CoreDataTestSupport.corpusModels)
    func everyCorpusModelRoundTrips(path: String) throws {
        let (first, second, _) = try CoreDataRoundTripTests.roundTrip(path)
        #expect(!first.isEmpty)
        #expect(first == second)
        #expect(first.map(\.checksum) == second.map(\.checksum))
    }

    @Test func allWooCommerceVersionsImportInOrder() throws {
        let path = CoreDataTestSupport.corpus.appendingPathComponent(
            "woocommerce+woocommerce-ios/WooCommerce.xcdatamodeld"
        ).path
        var progress: [String] = []
        let result = CoreDataImporter.importModel(try CoreDataBundle.open(path: path)) { number, count, name in
            progress.append("\(number)/\(count) \(name)")
        }
        #expect(progress.count == 117)
        #expect(progress.first == "1/117 Model")
        #expect(progress[1] == "2/117 Model 2")
        #expect(progress[9] == "10/117 Model 10")
        #expect(progress.last == "117/117 Model 117")
        #expect(result.files.map(\.name) == (1...117).map { "WooCommerce.v\($0).model" })
        let folder = CoreDataTestSupport.temporaryFolder("woo")
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = try CoreDataImporter.write(result, to: folder.path)
        let loaded = FrontEnd.run(modelAt: folder.path)
        #expect(!loaded.hasErrors, "\(loaded.diagnostics.filter { $0.severity == .error }.prefix(5))")
        let model = try #require(loaded.model)
        #expect(model.versions.map(\.number) == Array(1...117))
        let newest = try #require(model.current?.schema)
        #expect(newest.entities.count == 88)
        // `MetaData` was `OrderMetaData` until Model 115 renamed it by elementID.
        #expect(model.versions[114].schema.entity(named: "MetaData")?.renamedFrom == "OrderMetaData")
        #expect(model.versions[115].schema.entity(named: "MetaData")?.renamedFrom == nil)
        let denies = newest.entities.flatMap(\.relationships).filter { $0.deleteRule == .deny }
        #expect(!denies.isEmpty)
    }
}
