import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright
@testable import ModelwrightCoreData

/// The sweep of a killed import's folders (issue 29): it removes a killed run's folder whatever
/// output that run wrote, and never a folder the importer did not make, even one named like its
/// own after a process that no longer runs.
@Suite(.heavy, .serialized) struct CoreDataStoreSweepTests {
    /// What a planted folder holds.
    enum Planted: CaseIterable {
        /// A user's file, no marker: not the importer's.
        case userFile
        /// The marker and a user's file: the importer's name set does not cover it.
        case markerAndUserFile
        /// The marker and a subfolder.
        case markerAndFolder
        /// What a killed run leaves: the marker and the files it writes.
        case killedRun
    }

    /// The id of a process that ran and ended.
    static func deadProcessID() throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }

    /// Makes `path` holding `planted`; returns a listing of what it holds.
    static func plant(_ planted: Planted, at path: String, random: inout SplitMix64) throws {
        let manager = FileManager.default
        try manager.createDirectory(atPath: path, withIntermediateDirectories: true)
        let marker = path + "/" + CoreDataStoreFiles.ownerMarker
        switch planted {
        case .userFile:
            try Data("mine \(random.next())".utf8).write(to: URL(fileURLWithPath: path + "/userfile"))
        case .markerAndUserFile:
            try Data().write(to: URL(fileURLWithPath: marker))
            try Data("mine".utf8).write(to: URL(fileURLWithPath: path + "/notes.txt"))
        case .markerAndFolder:
            try Data().write(to: URL(fileURLWithPath: marker))
            try manager.createDirectory(atPath: path + "/photos", withIntermediateDirectories: true)
        case .killedRun:
            try Data().write(to: URL(fileURLWithPath: marker))
            let names =
                random.next(below: 2) == 0 ? ["store", "store-journal"] : ["source.sqlite", "source.sqlite-wal"]
            for name in names { try Data("copy".utf8).write(to: URL(fileURLWithPath: path + "/" + name)) }
        }
    }

    /// What is below `path`, with each file's bytes.
    static func contents(_ path: String) -> [String: Data] {
        var result: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: path)
        while let name = enumerator?.nextObject() as? String {
            result[name] = FileManager.default.contents(atPath: path + "/" + name) ?? Data()
        }
        return result
    }

    /// 12 imports, each beside 4 to 8 planted folders of a process that ended, under names of other
    /// outputs and in the temporary folder: the killed runs' folders go, every other stays as it was.
    @Test(arguments: 0..<12)
    func onlyAKilledImportsFoldersAreSwept(seed: Int) throws {
        let test = try CoreDataStoreRefusalTests.Case(seed: seed % 3)
        defer { test.remove() }
        var random = SplitMix64(seed: 2_929_007, index: seed)
        let pid = try Self.deadProcessID()
        var planted: [(path: String, kind: Planted, contents: [String: Data])] = []
        let temporary = FileManager.default.temporaryDirectory.path
        defer { for folder in planted { try? FileManager.default.removeItem(atPath: folder.path) } }
        for index in 0..<(4 + random.next(below: 5)) {
            let kind =
                index < Planted.allCases.count
                ? Planted.allCases[index] : Planted.allCases.randomElement(using: &random)!
            let output = ["Shop.store", "Other.store", "a.b.store", "x"].randomElement(using: &random)!
            let suffix = String(format: "%06d", random.next(below: 1_000_000))
            let inTemporary = random.next(below: 4) == 0
            let path =
                inTemporary
                ? "\(temporary)/modelwright-coredata-import-\(pid)-\(suffix)"
                : "\(test.folder.path)/.\(output).import-\(pid)-\(suffix)"
            guard !FileManager.default.fileExists(atPath: path) else { continue }
            // Planted under a name no sweep reads, then renamed whole: an import another test runs
            // meanwhile sweeps a killed run's folder it finds (as it should), and took one half
            // planted, so the next file's write failed (CI at 7f9c29a).
            let staging = path + ".planting"
            try Self.plant(kind, at: staging, random: &random)
            let contents = Self.contents(staging)
            guard rename(staging, path) == 0 else { throw CocoaError(.fileWriteUnknown) }
            planted.append((path, kind, contents))
        }
        try CoreDataStoreImport.importStore(
            at: test.store, model: test.prepared.storeModel, migrationPlan: test.prepared.plan, to: test.destination)
        for folder in planted {
            if folder.kind == .killedRun {
                #expect(!FileManager.default.fileExists(atPath: folder.path), "a killed run's \(folder.path) stayed")
            } else {
                #expect(
                    Self.contents(folder.path) == folder.contents, "\(folder.kind) at \(folder.path) was changed")
            }
        }
    }
}
