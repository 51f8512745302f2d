import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright
@testable import ModelwrightCoreData

/// Binary data with external storage reads the same whether SQLite holds the marker and bytes as
/// a BLOB or as TEXT: the marker says inline (1) or a file in `_EXTERNAL_DATA` (2), and the bytes
/// are taken as stored, valid UTF-8 or not.
@Suite(.heavy) struct CoreDataBinaryValueTests {
    static let cases = 64

    @Test(arguments: 0..<cases)
    func anExternalStorageMarkerReadsAlikeAsBlobAndAsText(seed: Int) throws {
        var random = SplitMix64(seed: 3_003, index: seed)
        let folder = CoreDataTestSupport.temporaryFolder("marker")
        let external = folder.appendingPathComponent(".Shop_SUPPORT/_EXTERNAL_DATA")
        try FileManager.default.createDirectory(at: external, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let payload = Data((0..<random.size(in: 0...64)).map { _ in UInt8(random.size(in: 1...255)) })
        let stored: Data
        if random.chance(0.5) {
            stored = Data([1]) + payload
        } else {
            let name = UUID().uuidString
            try payload.write(to: external.appendingPathComponent(name))
            stored = Data([2]) + Data(name.utf8) + Data([0])
        }
        let connection = try SQLiteConnection(path: ":memory:")
        defer { connection.close() }
        let attribute = CoreDataStoreModel.Attribute(
            name: "photo", schemaName: "photo", typeCode: 1000, isOptional: true, allowsExternalStorage: true)
        let data = CoreDataExternalData(storeFolder: folder.path, components: [".Shop_SUPPORT", "_EXTERNAL_DATA"])
        for sql in ["SELECT ?1", "SELECT CAST(?1 AS TEXT)"] {
            let statement = try connection.prepare(sql)
            statement.bind(stored, 1)
            #expect(try statement.step())
            #expect(statement.storageClass(0) == (sql.contains("TEXT") ? .text : .blob))
            let value = try CoreDataValues.value(statement, 0, attribute: attribute, type: .data, externalData: data)
            #expect(value == .blob(payload), "\(sql), marker \(stored.first ?? 0)")
            statement.reset()
        }
    }
}
