import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright

/// Several processes opening one store file at the same moment (an app and its widget, see the
/// shared-stores article) create it once and migrate it once: every decision is taken under the
/// write lock. The racers are `StoreRaceProbe` processes, started together with random offsets;
/// its plan's custom stages double prices and then add 3, so a stage that ran twice shows in
/// every row. `MODELWRIGHT_LARGE=1` runs 25 times as many races.
@Suite(.heavy, .serialized)
struct OpenRaceTests {
    private static let probe = builtExecutable(named: "StoreRaceProbe")
    private static let isLarge = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1"
    private static let races = isLarge ? 200 : 8

    private struct Outcome {
        let status: Int32
        let output: String
    }

    /// Starts one racer per argument list, each told to begin at `start` plus its own offset, and
    /// waits for all of them.
    private static func race(_ racers: [[String]]) throws -> [Outcome] {
        let processes = try racers.map { arguments -> (Process, Pipe) in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: probe)
            process.arguments = arguments
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            return (process, pipe)
        }
        return processes.map { process, pipe in
            let output = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return Outcome(status: process.terminationStatus, output: String(decoding: output, as: UTF8.self))
        }
    }

    /// A start time far enough ahead for every racer to be launched and waiting, plus a random
    /// offset of up to 20 ms per racer (none for about a third of them).
    private static func startTimes(count: Int, using random: inout SplitMix64) -> [String] {
        let base = UInt64(Date().timeIntervalSince1970 * 1_000_000_000) + 250_000_000
        return (0..<count).map { _ in
            let offset = random.next(below: 3) == 0 ? 0 : UInt64(random.next(below: 20_000)) * 1_000
            return String(base + offset)
        }
    }

    private static func scalar(_ path: String, _ sql: String) throws -> String {
        let connection = try SQLiteConnection(path: path, readOnly: true)
        let statement = try SQLiteStatement(connection: connection, sql: sql)
        return try statement.step() ? statement.string(0) : ""
    }

    private static func temporaryStore() throws -> (folder: URL, path: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("race-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return (folder, folder.appendingPathComponent("Race.sqlite").path)
    }

    @Test("processes that open one old store at once run each custom stage exactly once")
    func eachStageRunsOnce() throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.probe), "build the StoreRaceProbe target")
        var random = SplitMix64(seed: 0x2402)
        for race in 0..<Self.races {
            let (folder, store) = try Self.temporaryStore()
            defer { try? FileManager.default.removeItem(at: folder) }
            let rows = 1 + random.next(below: 3_000)
            #expect(try Self.race([["seed", store, String(rows)]]).map(\.status) == [0])
            let count = 2 + random.next(below: 3)
            let history = (0..<count).map { _ in random.next(below: 2) == 0 ? "0" : "1" }
            let starts = Self.startTimes(count: count, using: &random)
            let outcomes = try Self.race((0..<count).map { ["open", store, starts[$0], history[$0]] })

            let context =
                "race \(race): \(count) processes, \(rows) rows, history \(history), outputs \(outcomes.map(\.output))"
            #expect(outcomes.allSatisfy { $0.status == 0 && $0.output.hasPrefix("stages=") }, "\(context)")
            let ran = outcomes.flatMap { outcome in
                outcome.output.dropFirst("stages=".count).split(whereSeparator: { $0 == "," || $0 == "\n" })
            }
            #expect(ran.filter { $0 == "double" }.count == 1, "\(context)")
            #expect(ran.filter { $0 == "addThree" }.count == 1, "\(context)")
            #expect(try Self.scalar(store, "SELECT value FROM _modelwright_metadata WHERE key = 'version'") == "3")
            #expect(try Self.scalar(store, "SELECT count(*) FROM Item") == String(rows), "\(context)")
            // Item n had price n: doubled once, then 3 added once.
            let wrong = try Self.scalar(
                store, "SELECT count(*) FROM Item WHERE price <> 2 * CAST(substr(name, 6) AS INTEGER) + 3")
            #expect(wrong == "0", "\(context)")
            #expect(try Self.scalar(store, "PRAGMA integrity_check") == "ok", "\(context)")
        }
    }

    @Test("processes that create one store at once all open it, and it is created once")
    func creationNeverFails() throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.probe), "build the StoreRaceProbe target")
        var random = SplitMix64(seed: 0x2403)
        for race in 0..<Self.races {
            let (folder, store) = try Self.temporaryStore()
            defer { try? FileManager.default.removeItem(at: folder) }
            let count = 2 + random.next(below: 3)
            // With the plan or with the schema alone, with history or without: each creates the
            // current version when it finds no store, and opens it when another process was first.
            let racers = Self.startTimes(count: count, using: &random).map { start in
                [random.next(below: 2) == 0 ? "open" : "create", store, start, random.next(below: 2) == 0 ? "0" : "1"]
            }
            let outcomes = try Self.race(racers)

            let context = "race \(race): \(racers), outputs \(outcomes.map(\.output))"
            #expect(outcomes.allSatisfy { $0.status == 0 && $0.output == "stages=\n" }, "\(context)")
            #expect(try Self.scalar(store, "SELECT value FROM _modelwright_metadata WHERE key = 'version'") == "3")
            let historyFormat = try Self.scalar(
                store, "SELECT count(*) FROM _modelwright_metadata WHERE key = 'historyFormat'")
            #expect(historyFormat == (racers.contains { $0[3] == "1" } ? "1" : "0"), "\(context)")
            #expect(try Self.scalar(store, "PRAGMA journal_mode") == "wal", "\(context)")
            #expect(try Self.scalar(store, "PRAGMA integrity_check") == "ok", "\(context)")
        }
    }

    /// Steps another process may run under an open store: a rename changes the tables' SQL; the
    /// retypes change the checksum while every table's SQL (and so SQLite's schema cookie) stays.
    static let underneathSteps: [(old: AttributeDescription, new: AttributeDescription)] = [
        (AttributeDescription(name: "price", type: .double), AttributeDescription(name: "cost", type: .double)),
        (AttributeDescription(name: "price", type: .int16), AttributeDescription(name: "price", type: .int32)),
        (AttributeDescription(name: "price", type: .int32), AttributeDescription(name: "price", type: .int64)),
        (AttributeDescription(name: "price", type: .float), AttributeDescription(name: "price", type: .double)),
    ]

    @Test(
        "a store another connection migrated after this one opened it is refused, not used with the old schema",
        arguments: 0..<underneathSteps.count)
    func storeMigratedUnderneathIsRefused(step: Int) async throws {
        let (oldAttribute, newAttribute) = Self.underneathSteps[step]
        let old = SchemaDescription(
            modelName: "Shared", version: 1,
            entities: [EntityDescription(name: "Item", attributes: [oldAttribute])])
        let new = SchemaDescription(
            modelName: "Shared", version: 2,
            entities: [EntityDescription(name: "Item", attributes: [newAttribute])])
        let (folder, path) = try Self.temporaryStore()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = URL(fileURLWithPath: path)
        // The older widget opens the store, then the updated app migrates it (its own connections,
        // as another process's would be).
        let widget = try Store(url: url, schema: old)
        defer { try? widget.close() }
        try await widget.performAndSave { _ in }
        try Store(url: url, migrationPlan: MigrationPlan(current: new, stages: [.lightweight(from: old, to: new)]))
            .close()
        let refused = StoreError.schemaMismatch(
            storeChecksum: new.checksum.hexDigits, storeVersion: 2, expectedChecksum: old.checksum.hexDigits,
            expectedVersion: 1)
        await #expect(throws: refused) { try await widget.performAndSave { _ in } }
        await #expect(throws: refused) { try await widget.performQuery { _ in } }
    }

    @Test("an older app's plan refuses a newer app's store whose structure it knows, untouched", arguments: [1, 2])
    func olderPlanRefusesNewerStore(olderCurrent: Int) throws {
        // A → B (a custom stage doubles prices) → A: the older app's current version has the
        // newer store's checksum, but not its number.
        func version(_ number: Int, _ name: String, renamedFrom: String? = nil) -> SchemaDescription {
            SchemaDescription(
                modelName: "Shared", version: number,
                entities: [
                    EntityDescription(
                        name: "Item",
                        attributes: [AttributeDescription(name: name, type: .double, renamedFrom: renamedFrom)])
                ])
        }
        let versions = [version(1, "price"), version(2, "cost"), version(3, "price", renamedFrom: "cost")]
        let doubled = MigrationStage.custom(
            from: versions[0], to: versions[1],
            steps: [
                .init(name: "double", label: "doubles prices") {
                    try $0.execute("UPDATE \"Item\" SET \"cost\" = \"price\" * 2")
                }
            ])
        let newer = MigrationPlan(
            current: versions[2], stages: [doubled, .lightweight(from: versions[1], to: versions[2])])
        let (folder, path) = try Self.temporaryStore()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = URL(fileURLWithPath: path)
        try Store(url: url, schema: versions[0]).close()
        try SQLiteConnection(path: path).execute("INSERT INTO \"Item\" (\"id\", \"price\") VALUES (1, 10)")
        try Store(url: url, migrationPlan: newer).close()
        let before = try Data(contentsOf: url)

        let older = MigrationPlan(
            current: versions[olderCurrent - 1],
            stages: olderCurrent == 1 ? [] : [doubled])
        #expect(throws: MigrationError.self) { try Store(url: url, migrationPlan: older) }
        #expect(try Data(contentsOf: url) == before)
        try Store(url: url, migrationPlan: newer).close()
        #expect(try Self.scalar(path, "SELECT CAST(price AS INTEGER) FROM Item") == "20")
        #expect(try Self.scalar(path, "SELECT value FROM _modelwright_metadata WHERE key = 'version'") == "3")
    }
}
