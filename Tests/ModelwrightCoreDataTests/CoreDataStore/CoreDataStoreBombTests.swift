import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright
@testable import ModelwrightCoreData

/// Metadata whose binary property list shares objects so that it expands far beyond its bytes
/// (issue 29): the import refuses it quickly, names the store, and leaves no copy behind, instead
/// of Foundation expanding it until the process aborts.
@Suite(.heavy, .serialized) struct CoreDataStoreBombTests {
    /// One object of a hand-written binary property list.
    enum Object {
        case string(String)
        case integer(UInt8)
        case data([UInt8])
        case array([Int])
        case dictionary([(key: Int, value: Int)])
    }

    /// The bytes of a binary property list of `objects` (references of 2 bytes, offsets of 4).
    static func binaryPlist(_ objects: [Object], top: Int) -> Data {
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        func marker(_ kind: UInt8, _ count: Int) {
            if count < 15 {
                bytes.append(kind << 4 | UInt8(count))
            } else {
                bytes += [kind << 4 | 0x0F, 0x11, UInt8(count >> 8), UInt8(count & 0xFF)]
            }
        }
        func reference(_ index: Int) { bytes += [UInt8(index >> 8), UInt8(index & 0xFF)] }
        for object in objects {
            offsets.append(bytes.count)
            switch object {
            case .string(let text):
                marker(0x5, text.utf8.count)
                bytes += Array(text.utf8)
            case .integer(let value): bytes += [0x10, value]
            case .data(let data):
                marker(0x4, data.count)
                bytes += data
            case .array(let children):
                marker(0xA, children.count)
                children.forEach(reference)
            case .dictionary(let pairs):
                marker(0xD, pairs.count)
                for pair in pairs { reference(pair.key) }
                for pair in pairs { reference(pair.value) }
            }
        }
        let table = bytes.count
        for offset in offsets { bytes += (0..<4).map { UInt8(truncatingIfNeeded: offset >> (24 - 8 * $0)) } }
        func big(_ value: Int) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) } }
        bytes += [0, 0, 0, 0, 0, 0, 4, 2] + big(objects.count) + big(top) + big(table)
        return Data(bytes)
    }

    /// The shapes a bomb takes: nested arrays or dictionaries sharing one child, every level
    /// referring to all levels below it (deep and wide), and arrays and dictionaries alternating.
    enum Shape: CaseIterable { case arrays, dictionaries, deepAndWide, mixed }

    /// Objects appended to `objects` that expand to at least 2^40 objects; returns the top one.
    static func bomb(_ shape: Shape, into objects: inout [Object], random: inout SplitMix64) -> Int {
        let depth = 40 + random.next(below: 20)
        let width = 2 + random.next(below: 3)
        objects.append(.integer(UInt8(random.next(below: 200))))
        var levels = [objects.count - 1]
        var keys: [Int] = []
        for index in 0..<width {
            objects.append(.string("k\(index)"))
            keys.append(objects.count - 1)
        }
        for level in 0..<depth {
            let below = levels.last!
            let useDictionary =
                switch shape {
                case .arrays, .deepAndWide: false
                case .dictionaries: true
                case .mixed: level % 2 == 0
                }
            if shape == .deepAndWide {
                objects.append(.array(levels + Array(repeating: below, count: width - 1)))
            } else if useDictionary {
                objects.append(.dictionary(keys.map { (key: $0, value: below) }))
            } else {
                objects.append(.array(Array(repeating: below, count: width)))
            }
            levels.append(objects.count - 1)
        }
        return levels.last!
    }

    /// Core Data's metadata for `hashes`, written by hand, with `AppBomb` holding a bomb.
    static func metadata(hashes: [String: Data], shape: Shape?, random: inout SplitMix64) -> Data {
        var objects: [Object] = []
        func add(_ object: Object) -> Int {
            objects.append(object)
            return objects.count - 1
        }
        var hashPairs: [(key: Int, value: Int)] = []
        for (name, hash) in hashes.sorted(by: { $0.key < $1.key }) {
            hashPairs.append((add(.string(name)), add(.data(Array(hash)))))
        }
        var pairs: [(key: Int, value: Int)] = [
            (add(.string("NSStoreType")), add(.string("SQLite"))),
            (add(.string("NSStoreModelVersionHashesVersion")), add(.integer(3))),
            (add(.string("NSStoreModelVersionHashes")), add(.dictionary(hashPairs))),
        ]
        if let shape {
            let key = add(.string("AppBomb"))
            pairs.append((key, bomb(shape, into: &objects, random: &random)))
        }
        let top = add(.dictionary(pairs))
        return binaryPlist(objects, top: top)
    }

    /// Whether a folder this process made in the temporary folder holds a copy of `store` (other
    /// suites import at the same time, so only a copy of this very store counts).
    static func copyLeft(of store: URL) -> Bool {
        let manager = FileManager.default
        let temporary = manager.temporaryDirectory.path
        // The write-ahead log holds the store's rows; the main file may be the same for many.
        let original = manager.contents(atPath: store.path + "-wal")
        let names = (try? manager.contentsOfDirectory(atPath: temporary)) ?? []
        return names.contains { name in
            name.hasPrefix("modelwright-coredata-import-\(getpid())-")
                && manager.contents(atPath: "\(temporary)/\(name)/source.sqlite-wal") == original
        }
    }

    /// 16 stores (4 of each shape) whose metadata is a bomb of a few KB: each is refused in well
    /// under a second with an error naming the store and the expansion, and nothing is left.
    @Test(arguments: 0..<16)
    func aMetadataBombIsRefusedQuickly(seed: Int) throws {
        // Fixtures no other suite draws, so a copy in the temporary folder is this test's.
        let test = try CoreDataStoreRefusalTests.Case(seed: 1_000 + seed)
        defer { test.remove() }
        var random = SplitMix64(seed: 2_929_005, index: seed)
        let shape = Shape.allCases[seed % Shape.allCases.count]
        let hashes = CoreDataVersionHashes.hashes(of: test.prepared.storeModel.versions[0])
        let plist = Self.metadata(hashes: hashes, shape: shape, random: &random)
        #expect(plist.count < 8_192)
        let connection = try SQLiteConnection(path: test.store.path)
        let statement = try connection.statement("UPDATE Z_METADATA SET Z_PLIST = ?")
        statement.bind(plist, 1)
        try statement.run()
        statement.reset()
        let started = Date()
        let error = test.refusal()
        #expect(Date().timeIntervalSince(started) < 5, "\(shape) took too long")
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains(test.store.path) && text.contains("expands to more than"), "\(shape): \(text)")
        #expect(!Self.copyLeft(of: test.store), "a copy of the store was left in the temporary folder")
    }

    /// The same metadata without a bomb, and with objects shared within the bound, is read.
    @Test(arguments: 0..<4)
    func sharedObjectsWithinTheBoundAreRead(seed: Int) throws {
        var random = SplitMix64(seed: 2_929_006, index: seed)
        let hashes = ["Entity\(seed)": Data(repeating: UInt8(seed), count: 32)]
        let plain = Self.metadata(hashes: hashes, shape: nil, random: &random)
        try CoreDataPropertyListBound.check(plain)
        // 2^10 leaves: shared, but far below the bound.
        var objects: [Object] = [.integer(1)]
        for level in 0..<10 { objects.append(.array([level, level])) }
        try CoreDataPropertyListBound.check(Self.binaryPlist(objects, top: 10))
        let read = try PropertyListSerialization.propertyList(from: plain, options: [], format: nil)
        #expect((read as? [String: Any])?["NSStoreType"] as? String == "SQLite")
    }

    /// A property list that contains itself is refused, not followed forever.
    @Test func aCycleIsRefused() {
        let objects: [Object] = [.array([1]), .array([0])]
        #expect(throws: CoreDataValueError.self) {
            try CoreDataPropertyListBound.check(Self.binaryPlist(objects, top: 0))
        }
    }
}
