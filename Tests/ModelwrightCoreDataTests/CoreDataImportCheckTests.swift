import Foundation
import ModelwrightSchema
import ModelwrightTestSupport
import Testing

@testable import ModelwrightCoreData

/// The import checks the folder it writes by running the front end on the folder as it will read
/// once written, from the bytes it holds: that check must say what loading the written folder
/// says, whatever the folder held before.
@Suite(.heavy)
struct CoreDataImportCheckTests {
    /// What an output folder may hold before the import, drawn at random.
    private struct FolderState: CustomStringConvertible {
        var exists = false
        var earlierImport = false
        var editedVersion = false
        var staleVersion = false
        var staleGap = false
        var lock: Lock = .none
        var link = false

        enum Lock { case none, matching, differing, garbage }

        var description: String {
            "exists \(exists), earlier \(earlierImport), edited \(editedVersion), stale \(staleVersion) "
                + "gap \(staleGap), "
                + "lock \(lock), link \(link)"
        }

        static func draw(_ random: inout SplitMix64) -> FolderState {
            var state = FolderState()
            state.exists = random.chance(0.85)
            guard state.exists else { return state }
            state.earlierImport = random.chance(0.6)
            state.editedVersion = state.earlierImport && random.chance(0.5)
            state.staleVersion = random.chance(0.4)
            state.staleGap = state.staleVersion && random.chance(0.5)
            state.lock = random.pick([.none, .none, .matching, .differing, .garbage])
            state.link = random.chance(0.2)
            return state
        }
    }

    private static let bundles = [
        CoreDataTestSupport.fixtures.appendingPathComponent("SampleModel.xcdatamodeld").path,
        CoreDataTestSupport.fixtures.appendingPathComponent("test.xcdatamodel").path,
    ]

    @Test(arguments: 0..<40)
    func importCheckSaysWhatLoadingTheWrittenFolderSays(seed: Int) throws {
        var random = SplitMix64(seed: 0x5_9111E, index: seed)
        let state = FolderState.draw(&random)
        let bundle = try CoreDataBundle.open(path: random.pick(Self.bundles))
        let root = CoreDataTestSupport.temporaryFolder("import-check")
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("Model")
        try prepare(folder, as: state, for: bundle)

        var options = CoreDataImporter.Options()
        options.folder = folder.path
        let result = CoreDataImporter.importModel(bundle, options: options)
        try #require(!result.hasErrors, "\(state)")
        _ = try CoreDataImporter.write(result, to: folder.path)
        let loaded = FrontEnd.run(modelAt: folder.path)
        #expect(result.checked != nil, "\(state)")
        CoreDataTestSupport.expectSameCheck(result.checked, loaded)
        // The states that break the folder must reach what they test.
        if state.lock == .garbage || state.lock == .differing || state.link || state.staleGap {
            #expect(loaded.hasErrors, "\(state)")
        }
    }

    /// Fills `folder` as `state` says: an earlier import of `bundle` (one version edited), a
    /// version after the import's last, a lock file, a link named like a schema file.
    private func prepare(_ folder: URL, as state: FolderState, for bundle: CoreDataBundle) throws {
        guard state.exists else { return }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let earlier = CoreDataImporter.importModel(bundle)
        let name = earlier.modelName
        if state.earlierImport {
            var files = earlier.files
            if state.editedVersion, !files.isEmpty {
                files[0].text += "\n/// Edited after the earlier import.\n"
            }
            for file in files {
                try Data(file.text.utf8).write(to: folder.appendingPathComponent(file.name))
            }
        }
        if state.staleVersion {
            // One past the last version, or two past it, leaving a version missing.
            let number = earlier.files.count + (state.staleGap ? 2 : 1)
            try Data("model \(name) version \(number)\n".utf8).write(
                to: folder.appendingPathComponent("\(name).v\(number).model"))
        }
        switch state.lock {
        case .none: break
        case .matching, .differing:
            // A lock freezing version 1 as imported, or as another model's version 1.
            let scratch = folder.deletingLastPathComponent().appendingPathComponent("scratch")
            if state.lock == .matching {
                _ = try CoreDataImporter.write(earlier, to: scratch.path)
            } else {
                try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
                try Data("model \(name) version 1\nentity Other { code: Int64 = 0 }\n".utf8).write(
                    to: scratch.appendingPathComponent("\(name).v1.model"))
            }
            let model = try #require(FrontEnd.run(modelAt: scratch.path).model)
            try LockFile.freezing(model, through: 1).encoded().write(
                to: folder.appendingPathComponent(LockFile.fileName))
        case .garbage:
            try Data("{ not json".utf8).write(to: folder.appendingPathComponent(LockFile.fileName))
        }
        if state.link {
            try FileManager.default.createSymbolicLink(
                atPath: folder.appendingPathComponent("Elsewhere.v7.model").path, withDestinationPath: "/etc/hostname")
        }
    }
}
