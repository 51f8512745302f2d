import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright
@testable import ModelwrightCoreData

/// Stores Core Data itself wrote (see `Fixtures/README.md`), imported end to end by the CLI in a
/// real process: the model bundle through `import-coredata`, then the store through
/// `import-coredata-store`, which must match the version that wrote it, read every object, and
/// migrate the new store to the model's current version.
@Suite(.heavy, .serialized) struct CoreDataRealStoreImportTests {
    @Test(arguments: [
        ("CoreDataPlus-SampleModel_V1.sqlite", "SampleModel.xcdatamodeld", "SampleModel"),
        ("CoreDataPlus-SampleModel_V2.sqlite", "SampleModel.xcdatamodeld", "SampleModel2"),
        ("CoreDataPlus-SampleModel3_V1.sqlite", "SampleModel3.xcdatamodeld", "SampleModel3"),
    ])
    func aStoreCoreDataWroteImports(store: String, model: String, version: String) throws {
        let folder = CoreDataTestSupport.temporaryFolder("real-store")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let fixtures = CoreDataTestSupport.fixtures
        let models = folder.appendingPathComponent("Models")
        let imported = try #require(
            try CoreDataStoreKillTests.runCLI([
                "import-coredata", fixtures.appendingPathComponent(model).path, "--output", models.path,
                "--all-versions",
            ]))
        #expect(imported.status == 0, "\(imported.output)")
        // A copy: the import only reads, but the fixture stays as it came.
        let copy = folder.appendingPathComponent("Store.sqlite")
        try FileManager.default.copyItem(at: fixtures.appendingPathComponent(store), to: copy)
        let output = folder.appendingPathComponent("Store.store")
        let run = try #require(
            try CoreDataStoreKillTests.runCLI([
                "import-coredata-store", copy.path, "--model", models.path, "--output", output.path,
            ]))
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("matched Core Data version '\(version)'"), "\(run.output)")
        // Every object of the store: the rows of its entity tables (not bookkeeping, not joins).
        let connection = try SQLiteConnection(path: copy.path, readOnly: true)
        var objects = 0
        do {
            let tables = try connection.statement(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z%' "
                    + "AND name NOT LIKE 'Z\\_%' ESCAPE '\\'")
            defer { tables.reset() }
            var names: [String] = []
            while try tables.step() { names.append(tables.string(0)) }
            for name in names {
                let count = try connection.statement("SELECT COUNT(*) FROM \(quoted(name))")
                #expect(try count.step())
                objects += Int(count.int64(0))
                count.reset()
            }
        }
        connection.close()
        #expect(objects > 0)
        #expect(run.output.contains(" \(objects) objects"), "\(objects) objects: \(run.output)")
        #expect(FileManager.default.fileExists(atPath: output.path))
    }
}
