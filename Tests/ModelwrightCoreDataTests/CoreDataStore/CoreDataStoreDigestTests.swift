import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright
@testable import ModelwrightCoreData

/// A store's two summaries of its version hashes, `NSStoreModelVersionHashesDigest` and
/// `NSStoreModelVersionChecksumKey` (`coredata-store-format.md`, §9): the recipes against a store
/// Core Data wrote, and a store whose summary disagrees with its hashes refused as damaged.
@Suite(.heavy, .serialized) struct CoreDataStoreDigestTests {
    /// SHA-512 against coreutils' `sha512sum`, over random messages of every length around the
    /// 128-byte block and its 112-byte padding boundary, and longer ones.
    @Test func sha512AgreesWithCoreutils() throws {
        var random = SplitMix64(seed: 512, index: 0)
        var lengths = Array(0...2) + Array(110...114) + Array(126...130) + Array(238...242)
        for _ in 0..<20 { lengths.append(random.size(in: 0...2_000)) }
        for length in lengths {
            let message = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let file = CoreDataTestSupport.temporaryFolder("sha512").appendingPathExtension("bin")
            try Data(message).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["sha512sum", file.path]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            let ours = Modelwright.SHA512.digest(of: message).map { String(format: "%02x", $0) }.joined()
            #expect(text.hasPrefix(ours + " "), "length \(length)")
        }
    }

    /// Both recipes give the summaries Core Data wrote into a real store (Final Cut Pro's).
    @Test func theRecipesGiveCoreDatasSummaries() throws {
        let fixture = CoreDataTestSupport.fixtures.appendingPathComponent("FinalCutPro-CurrentVersion.fcpevent")
        let connection = try SQLiteConnection(path: fixture.path, readOnly: true)
        defer { connection.close() }
        let statement = try connection.statement("SELECT Z_PLIST FROM Z_METADATA")
        defer { statement.reset() }
        #expect(try statement.step())
        let plist = try PropertyListSerialization.propertyList(from: statement.data(0), format: nil)
        let metadata = try #require(plist as? [String: Any])
        let hashes = try #require(metadata["NSStoreModelVersionHashes"] as? [String: Data])
        #expect(hashes.count == 4)
        #expect(CoreDataVersionHashes.digest(of: hashes) == metadata["NSStoreModelVersionHashesDigest"] as? String)
        #expect(CoreDataVersionHashes.checksum(of: hashes) == metadata["NSStoreModelVersionChecksumKey"] as? String)
    }

    /// A random damage to the metadata: one byte of one hash, one character of a summary, a
    /// summary of another type, or an entity's hash dropped, each leaving the rest as written.
    static func damage(_ hashes: [String: Data], _ random: inout SplitMix64) -> [String: Any] {
        let keys = ["NSStoreModelVersionHashesDigest", "NSStoreModelVersionChecksumKey"]
        let names = hashes.keys.sorted()
        switch random.size(in: 0...3) {
        case 0:
            var changed = hashes
            let name = names[random.size(in: 0...(names.count - 1))]
            var bytes = Array(changed[name] ?? Data())
            bytes[random.size(in: 0...31)] ^= UInt8(random.size(in: 1...255))
            changed[name] = Data(bytes)
            return ["NSStoreModelVersionHashes": changed]
        case 1:
            let key = keys[random.size(in: 0...1)]
            let right =
                key == keys[0] ? CoreDataVersionHashes.digest(of: hashes) : CoreDataVersionHashes.checksum(of: hashes)
            var characters = Array(right)
            let at = random.size(in: 0...(characters.count - 3))
            characters[at] = characters[at] == "A" ? "B" : "A"
            return [key: String(characters)]
        case 2:
            return [keys[random.size(in: 0...1)]: Data(repeating: 7, count: 64)]
        default:
            var changed = hashes
            changed[names[random.size(in: 0...(names.count - 1))]] = nil
            return ["NSStoreModelVersionHashes": changed]
        }
    }

    /// Whatever the damage, the store is refused as damaged (not as another model's), and neither
    /// it nor its folder changes.
    @Test(arguments: 0..<8)
    func aStoreWhoseSummaryDisagreesIsRefusedAsDamaged(seed: Int) throws {
        var random = SplitMix64(seed: 4_404, index: seed)
        let plain = try CoreDataStoreRefusalTests.Case(seed: seed)
        let hashes = CoreDataVersionHashes.hashes(of: plain.prepared.storeModel.versions[0])
        plain.remove()
        let test = try CoreDataStoreRefusalTests.Case(seed: seed, metadataChanges: Self.damage(hashes, &random))
        defer { test.remove() }
        guard case .corruptMetadata(let path, let reason)? = test.refusal() else {
            Issue.record("a store whose metadata contradicts itself was not refused as damaged")
            return
        }
        #expect(path == test.store.path)
        #expect(reason.contains("NSStoreModelVersion"), "\(reason)")
    }

    /// A store of an older framework has neither summary, and imports.
    @Test func aStoreWithoutSummariesImports() throws {
        let test = try CoreDataStoreRefusalTests.Case(
            seed: 5,
            metadataChanges: ["NSStoreModelVersionHashesDigest": NSNull(), "NSStoreModelVersionChecksumKey": NSNull()])
        defer { test.remove() }
        try CoreDataStoreImport.importStore(
            at: test.store, model: test.prepared.storeModel, migrationPlan: test.prepared.plan, to: test.destination)
        #expect(FileManager.default.fileExists(atPath: test.destination.path))
    }
}
