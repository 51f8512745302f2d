import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright
@testable import ModelwrightCoreData

/// The import runs in a real process (`modelwright import-coredata-store`), killed with SIGKILL at a
/// random moment: the destination is then absent or a complete store, the Core Data store is as it
/// was, and the next run imports it.
@Suite(.heavy, .serialized) struct CoreDataStoreKillTests {
    /// Runs the CLI with `arguments`; kills it after `delay` when given. Returns its exit status and
    /// output, or `nil` when it was killed.
    static func runCLI(_ arguments: [String], killAfter delay: Duration? = nil) throws -> (
        status: Int32, output: String
    )? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: builtExecutable(named: "ModelwrightCLI"))
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        if let delay {
            Thread.sleep(
                forTimeInterval: Double(delay.components.attoseconds) / 1e18 + Double(delay.components.seconds))
            kill(process.processIdentifier, SIGKILL)
        }
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        if process.terminationReason == .uncaughtSignal { return nil }
        return (process.terminationStatus, output)
    }

    @Test func theCommandPrintsTheMatchedVersionAndTheCounts() throws {
        var random = SplitMix64(seed: 4_242)
        let fixture = CoreDataStoreFixture(random: &random)
        let prepared = try CoreDataStoreImportTests.prepare(fixture)
        defer { try? FileManager.default.removeItem(at: prepared.folder) }
        let folder = CoreDataTestSupport.temporaryFolder("cli")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let writer = CoreDataStoreWriter(fixture: fixture, random: &random)
        let store = try writer.write(
            to: folder, name: "Shop", hashes: CoreDataVersionHashes.hashes(of: prepared.storeModel.versions[0]),
            rowsInLog: true, random: &random)
        let output = folder.appendingPathComponent("Shop.store")
        let dry = try #require(
            try Self.runCLI(["import-coredata-store", store.path, "--model", prepared.folder.path, "--dry-run"]))
        #expect(dry.status == 0, "\(dry.output)")
        #expect(dry.output.contains("matched Core Data version 'Shop' (schema version 1)"), "\(dry.output)")
        #expect(dry.output.contains("\(writer.objects.count) objects"), "\(dry.output)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
        let run = try #require(
            try Self.runCLI([
                "import-coredata-store", store.path, "--model", prepared.folder.path, "--output", output.path,
            ]))
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("wrote \(output.path) at version 2"), "\(run.output)")
        try StoreReadBack(
            destination: output, schema: prepared.versions[1], model: prepared.storeModel.versions[0], writer: writer
        )
        .expectEverythingCameAcross()
        // A second run refuses: the store it would write is there.
        let again = try #require(
            try Self.runCLI([
                "import-coredata-store", store.path, "--model", prepared.folder.path, "--output", output.path,
            ]))
        #expect(again.status == 1)
        #expect(again.output.contains("already exists"), "\(again.output)")
    }

    @Test func aKillAtAnyMomentLeavesNoStoreOrACompleteOne() throws {
        var random = SplitMix64(seed: 1_729)
        let fixture = CoreDataStoreFixture(random: &random)
        let prepared = try CoreDataStoreImportTests.prepare(fixture)
        defer { try? FileManager.default.removeItem(at: prepared.folder) }
        let folder = CoreDataTestSupport.temporaryFolder("kill")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let large = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1"
        let writer = CoreDataStoreWriter(
            fixture: fixture, random: &random, objectsPerEntity: large ? 400...800 : 100...200)
        let store = try writer.write(
            to: folder, name: "Shop", hashes: CoreDataVersionHashes.hashes(of: prepared.storeModel.versions[0]),
            rowsInLog: true, random: &random)
        let before = CoreDataStoreImportTests.snapshot(store)
        let output = folder.appendingPathComponent("Shop.store")
        let arguments = ["import-coredata-store", store.path, "--model", prepared.folder.path, "--output", output.path]
        // How long a whole run takes, to kill within it.
        let clock = ContinuousClock()
        let start = clock.now
        _ = try Self.runCLI(arguments)
        let whole = clock.now - start
        try FileManager.default.removeItem(at: output)
        var outcomes: [String: Int] = [:]
        for _ in 0..<(large ? 40 : 4) {
            // The first part of a run is the CLI planning the model; most kills land after it.
            let delay = whole * Double.random(in: 0.2...1.1, using: &random)
            let result = try Self.runCLI(arguments, killAfter: delay)
            #expect(CoreDataStoreImportTests.snapshot(store) == before, "the Core Data store changed")
            if FileManager.default.fileExists(atPath: output.path) {
                // Whatever is there is the whole store.
                try StoreReadBack(
                    destination: output, schema: prepared.versions[1], model: prepared.storeModel.versions[0],
                    writer: writer
                ).expectEverythingCameAcross()
                try FileManager.default.removeItem(at: output)
                outcomes[result == nil ? "killed after the store was in place" : "finished", default: 0] += 1
            } else {
                #expect(result == nil, "the run ended without a store: \(result?.output ?? "")")
                outcomes["killed, no store", default: 0] += 1
                // The next run cleans up what the killed one left and imports.
                let next = try #require(try Self.runCLI(arguments))
                #expect(next.status == 0, "\(next.output)")
                // No copy of the user's data stays beside the destination.
                let left = try FileManager.default.contentsOfDirectory(atPath: folder.path)
                #expect(!left.contains { $0.hasPrefix(".Shop.store.import") }, "\(left)")
                try StoreReadBack(
                    destination: output, schema: prepared.versions[1], model: prepared.storeModel.versions[0],
                    writer: writer
                ).expectEverythingCameAcross()
                try FileManager.default.removeItem(at: output)
            }
        }
        #expect(outcomes["killed, no store", default: 0] > 0, "\(outcomes)")
    }

    /// The command run under a file-size limit (`ulimit -f`, issue 29): SIGXFSZ would kill it with
    /// no message and its temporary copy left behind. It must instead fail with an error naming
    /// the limit, exit 1, and leave nothing in the temporary folder or beside the output. 6 runs,
    /// each with a limit drawn below the largest file the import writes (the copy of the store's
    /// files, or the new store), so either write can be the one that fails.
    @Test(arguments: 0..<6)
    func aRunPastTheFileSizeLimitFailsWithAMessageAndLeavesNothing(seed: Int) throws {
        var random = SplitMix64(seed: 2_929_295, index: seed)
        let fixture = CoreDataStoreFixture(random: &random)
        let prepared = try CoreDataStoreImportTests.prepare(fixture)
        defer { try? FileManager.default.removeItem(at: prepared.folder) }
        let folder = CoreDataTestSupport.temporaryFolder("fsize")
        let temporary = folder.appendingPathComponent("tmp")
        let outputFolder = folder.appendingPathComponent("out")
        for made in [temporary, outputFolder] {
            try FileManager.default.createDirectory(at: made, withIntermediateDirectories: true)
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        let writer = CoreDataStoreWriter(fixture: fixture, random: &random)
        let store = try writer.write(
            to: folder, name: "Shop", hashes: CoreDataVersionHashes.hashes(of: prepared.storeModel.versions[0]),
            rowsInLog: true, random: &random)
        let whole = folder.appendingPathComponent("whole.store")
        let unlimited = try #require(
            try Self.runCLI([
                "import-coredata-store", store.path, "--model", prepared.folder.path, "--output", whole.path,
            ]))
        #expect(unlimited.status == 0, "\(unlimited.output)")
        func size(_ path: String) -> Int {
            ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
        }
        let largest = max(size(whole.path), size(store.path), size(store.path + "-wal"))
        // bash's `ulimit -f` counts 1024-byte blocks.
        let blocks = 1 + random.next(below: max(1, largest / 1024 - 1))
        let output = outputFolder.appendingPathComponent("Shop.store")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [
            "-c", "ulimit -f \(blocks); exec \"$0\" \"$@\"", builtExecutable(named: "ModelwrightCLI"),
            "import-coredata-store", store.path, "--model", prepared.folder.path, "--output", output.path,
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = temporary.path
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(
            process.terminationReason == .exit,
            "killed by signal \(process.terminationStatus) under a limit of \(blocks) KB (largest file \(largest))")
        #expect(process.terminationStatus == 1, "\(text)")
        #expect(text.contains("error:") && text.contains("ulimit -f"), "\(text)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.path).isEmpty, "the copy was left")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outputFolder.path).isEmpty, "files were left")
    }
}
