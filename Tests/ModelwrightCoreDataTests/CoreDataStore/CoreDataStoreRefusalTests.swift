import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright
@testable import ModelwrightCoreData

/// Stores the importer must refuse with a clear error, leaving the Core Data store as it was and
/// nothing at the destination: truncated, foreign, written by another model or a newer framework,
/// or missing the write-ahead log that holds its rows.
@Suite(.heavy, .serialized) struct CoreDataStoreRefusalTests {
    /// A store of a random model, written to a fresh folder, and that model imported.
    struct Case {
        var folder: URL
        var store: URL
        var prepared: CoreDataStoreImportTests.Prepared
        var writer: CoreDataStoreWriter
        var destination: URL { folder.appendingPathComponent("Shop.store") }

        init(
            seed: Int, rowsInLog: Bool = true, metadataChanges: [String: Any] = [:], checkpointedTables: Bool = false
        ) throws {
            var random = SplitMix64(seed: 2_929, index: seed)
            let fixture = CoreDataStoreFixture(random: &random)
            prepared = try CoreDataStoreImportTests.prepare(fixture)
            folder = CoreDataTestSupport.temporaryFolder("refusal")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            writer = CoreDataStoreWriter(fixture: fixture, random: &random)
            store = try writer.write(
                to: folder, name: "Shop", hashes: CoreDataVersionHashes.hashes(of: prepared.storeModel.versions[0]),
                rowsInLog: rowsInLog, random: &random, metadataChanges: metadataChanges,
                checkpointedTables: checkpointedTables)
        }

        func remove() {
            try? FileManager.default.removeItem(at: folder)
            try? FileManager.default.removeItem(at: prepared.folder)
        }

        /// Runs the import, which must throw; checks that nothing changed and returns the error.
        func refusal(
            model: CoreDataStoreModel? = nil, sourceLocation: SourceLocation = #_sourceLocation
        ) -> CoreDataStoreImportError? {
            let before = CoreDataStoreImportTests.snapshot(store)
            let listing = try? FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
            var caught: Error?
            do {
                try CoreDataStoreImport.importStore(
                    at: store, model: model ?? prepared.storeModel, migrationPlan: prepared.plan, to: destination)
            } catch {
                caught = error
            }
            #expect(caught != nil, "the import did not refuse", sourceLocation: sourceLocation)
            #expect(
                CoreDataStoreImportTests.snapshot(store) == before, "the store changed", sourceLocation: sourceLocation)
            #expect(
                (try? FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()) == listing,
                "files were left beside the store", sourceLocation: sourceLocation)
            #expect(caught is CoreDataStoreImportError, "\(String(describing: caught))", sourceLocation: sourceLocation)
            return caught as? CoreDataStoreImportError
        }
    }

    @Test(arguments: 0..<3)
    func aTruncatedStoreIsRefused(seed: Int) throws {
        let test = try Case(seed: seed, rowsInLog: false)
        defer { test.remove() }
        // Every file cut short, each at a random length.
        var random = SplitMix64(seed: 77, index: seed)
        for suffix in ["", "-wal"] {
            let path = test.store.path + suffix
            guard let data = FileManager.default.contents(atPath: path), data.count > 100 else { continue }
            try data.prefix(random.size(in: 1...(data.count / 2))).write(to: URL(fileURLWithPath: path))
        }
        try? FileManager.default.removeItem(atPath: test.store.path + "-shm")
        let error = test.refusal()
        #expect(error.map { "\($0)" }?.contains(test.store.path) == true, "\(String(describing: error))")
    }

    @Test func aForeignFileIsRefused() throws {
        let test = try Case(seed: 0)
        defer { test.remove() }
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: test.store.path + suffix) }
        try Data("not a database at all, just text".utf8).write(to: test.store)
        guard case .notACoreDataStore? = test.refusal() else {
            Issue.record("a text file was not refused as not a Core Data store")
            return
        }
        // An SQLite database of some other program.
        try FileManager.default.removeItem(at: test.store)
        let connection = try SQLiteConnection(path: test.store.path)
        try connection.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        connection.close()
        guard case .notACoreDataStore(_, let reason)? = test.refusal() else {
            Issue.record("an SQLite file of another program was not refused")
            return
        }
        #expect(reason.contains("Z_METADATA"))
    }

    @Test func aStoreOfAnotherModelNamesTheEntitiesThatDiffer() throws {
        let test = try Case(seed: 1)
        defer { test.remove() }
        // The model as the app has it now: one attribute of `tag` became required in place.
        var model = test.prepared.storeModel
        for index in model.versions.indices {
            let tag = try #require(model.versions[index].entities.firstIndex { $0.name == "tag" })
            model.versions[index].entities[tag].attributes.append(
                CoreDataStoreModel.Attribute(name: "editedInPlace", schemaName: nil, typeCode: 700))
        }
        guard case .noMatchingVersion(_, let closest, let differences)? = test.refusal(model: model) else {
            Issue.record("a store of another model version was not refused")
            return
        }
        #expect(closest == "Shop")
        #expect(differences == ["'tag' hashes differently"])
    }

    @Test func aNewerFrameworksHashesAreRefused() throws {
        let test = try Case(seed: 2, metadataChanges: ["NSStoreModelVersionHashesVersion": 4])
        defer { test.remove() }
        guard case .unsupportedFramework(_, let reason)? = test.refusal() else {
            Issue.record("hashes in an unknown format were not refused")
            return
        }
        #expect(reason.contains("format 4"))
    }

    @Test func aStoreWithoutItsWriteAheadLogIsRefused() throws {
        let test = try Case(seed: 3, rowsInLog: true)
        defer { test.remove() }
        try FileManager.default.removeItem(atPath: test.store.path + "-wal")
        guard case .missingWriteAheadLog? = test.refusal() else {
            Issue.record("a store whose -wal is missing (with its -shm) was not refused")
            return
        }
        // Without the index either, the store holds no tables: still the log is what is missing.
        try FileManager.default.removeItem(atPath: test.store.path + "-shm")
        guard case .missingWriteAheadLog? = test.refusal() else {
            Issue.record("a store whose -wal and -shm are missing was not refused")
            return
        }
    }

    /// A key or bookkeeping column holding a number that is not whole (issue 29) is refused naming
    /// the table, the column and the row; the same column holding the integral REAL of its value
    /// imports as it did. 8 stores, each with a random table, row, column and fraction.
    @Test(arguments: 0..<8)
    func aBookkeepingColumnThatIsNotAWholeNumberIsRefused(seed: Int) throws {
        let test = try Case(seed: 80 + seed, rowsInLog: false)
        defer { test.remove() }
        var random = SplitMix64(seed: 2_929_010, index: seed)
        let connection = try SQLiteConnection(path: test.store.path)
        let listing = try connection.statement(
            "SELECT m.name FROM sqlite_master AS m WHERE m.type = 'table' AND m.name LIKE 'Z%' "
                + "AND m.name NOT IN ('Z_METADATA', 'Z_PRIMARYKEY', 'Z_MODELCACHE') AND m.name NOT LIKE 'Z\\_%' ESCAPE '\\' "
                + "AND EXISTS (SELECT 1 FROM pragma_table_info(m.name) AS p WHERE p.name = 'Z_ENT') ORDER BY m.name")
        var tables: [String] = []
        while try listing.step() { tables.append(listing.string(0)) }
        listing.reset()
        var rows: [(table: String, key: Int64)] = []
        for table in tables {
            let keys = try connection.statement("SELECT Z_PK FROM \(quoted(table)) ORDER BY Z_PK")
            while try keys.step() { rows.append((table, keys.int64(0))) }
            keys.reset()
        }
        let row = try #require(rows.isEmpty ? nil : rows[random.next(below: rows.count)])
        let column = random.next(below: 2) == 0 ? "Z_ENT" : "Z_OPT"
        let fraction = [0.5, 0.25, 0.125][random.next(below: 3)]
        func set(_ expression: String) throws {
            try connection.execute(
                "UPDATE \(quoted(row.table)) SET \(column) = \(expression) WHERE Z_PK = \(row.key)")
        }
        try set("CAST(\(column) AS REAL)")
        let whole = try CoreDataStoreImport.importStore(
            at: test.store, model: test.prepared.storeModel, migrationPlan: test.prepared.plan,
            to: test.folder.appendingPathComponent("whole.store"), dryRun: true)
        try set("\(column) + \(fraction)")
        connection.close()
        guard case .layoutMismatch(_, let problem)? = test.refusal() else {
            Issue.record("\(column) holding a fraction in \(row.table) was not refused")
            return
        }
        #expect(
            problem.contains("row Z_PK \(row.key) of \(row.table) has \(column)") && problem.contains("whole number"),
            "\(problem)")
        #expect(whole.totalRows > 0)
    }

    /// A join table's member key or order holding what is not a whole number (a REAL with a
    /// fraction, TEXT, a BLOB) is refused with the table, column and row named, like the key
    /// columns of entity tables; the same store with the value as an integral REAL imports.
    /// 8 stores with a many-to-many relationship, each damaged in a random row, column and way.
    @Test(arguments: 0..<8)
    func aJoinTableKeyThatIsNotAWholeNumberIsRefused(seed: Int) throws {
        var random = SplitMix64(seed: 2_929_040, index: seed)
        let (test, table, columns, rows) = try Self.drawJoinTable(seedBase: 400, seed: seed, random: &random)
        defer { test.remove() }
        let connection = try SQLiteConnection(path: test.store.path)
        let row = random.pick(rows)
        let column = random.pick(columns)
        func set(_ expression: String) throws {
            try connection.execute("UPDATE \(quoted(table)) SET \(column) = \(expression) WHERE rowid = \(row)")
        }
        try set("CAST(\(column) AS REAL)")
        let whole = try CoreDataStoreImport.importStore(
            at: test.store, model: test.prepared.storeModel, migrationPlan: test.prepared.plan,
            to: test.folder.appendingPathComponent("whole.store"), dryRun: true)
        #expect(whole.totalRows > 0)
        let damage = random.pick([
            // TEXT a number would not do: the column's INTEGER affinity stores '7' as 7.
            "\(column) + 0.5", "'0x' || CAST(\(column) AS INTEGER)", "CAST(\(column) AS INTEGER) || 'x'",
            "X'0102'",
        ])
        try set(damage)
        connection.close()
        guard case .layoutMismatch(_, let problem)? = test.refusal() else {
            Issue.record("\(table).\(column) set to \(damage) was not refused")
            return
        }
        #expect(
            problem.contains("of \(table) has \(column) ") && problem.contains("whole number")
                && problem.contains("row (\(columns.sorted()[0]) "),
            "\(problem)")
    }

    /// A store drawn from `seedBase + seed * 20` on that has a join row (up to 20 tries), one of its
    /// non-empty join tables picked by `random`, that table's columns and its rows' `rowid`s. The
    /// store is the caller's to remove.
    private static func drawJoinTable(
        seedBase: Int, seed: Int, random: inout SplitMix64
    ) throws -> (test: Case, table: String, columns: [String], rows: [Int64]) {
        var found: (test: Case, table: String)?
        for attempt in 0..<20 where found == nil {
            let test = try Case(seed: seedBase + seed * 20 + attempt, rowsInLog: false)
            let connection = try SQLiteConnection(path: test.store.path)
            // Join tables are the `Z_…` tables that are not Core Data's bookkeeping.
            let listing = try connection.statement(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_%' ESCAPE '\\' "
                    + "AND name NOT IN ('Z_METADATA', 'Z_PRIMARYKEY', 'Z_MODELCACHE') ORDER BY name")
            var joinTables: [String] = []
            while try listing.step() { joinTables.append(listing.string(0)) }
            listing.reset()
            var nonEmpty: [String] = []
            for table in joinTables {
                let count = try connection.statement("SELECT COUNT(*) FROM \(quoted(table))")
                if try count.step(), count.int64(0) > 0 { nonEmpty.append(table) }
                count.reset()
            }
            connection.close()
            if nonEmpty.isEmpty { test.remove() } else { found = (test, random.pick(nonEmpty)) }
        }
        let (test, table) = try #require(found, "no drawn store had a join row")
        let connection = try SQLiteConnection(path: test.store.path)
        defer { connection.close() }
        var columns: [String] = []
        let info = try connection.statement("SELECT name FROM pragma_table_info('\(table)') ORDER BY cid")
        while try info.step() { columns.append(info.string(0)) }
        info.reset()
        let rowIDs = try connection.statement("SELECT rowid FROM \(quoted(table)) ORDER BY rowid")
        var rows: [Int64] = []
        while try rowIDs.step() { rows.append(rowIDs.int64(0)) }
        rowIDs.reset()
        return (test, table, columns, rows)
    }

    /// A join table's member key or `Z_FOK_` order holding NULL (issue 29): read as a link, a NULL
    /// key dropped the link and a NULL order put it first, both without a word. Core Data writes
    /// every column of a join row, so each is refused, naming the table, the column and the row.
    /// 8 stores with a many-to-many relationship; in each, every column of a random join row is
    /// emptied in turn (member keys, and orders where the relationship is ordered).
    @Test(arguments: 0..<8)
    func aJoinTableColumnHoldingNullIsRefused(seed: Int) throws {
        var random = SplitMix64(seed: 2_929_290, index: seed)
        let (test, table, columns, rows) = try Self.drawJoinTable(seedBase: 800, seed: seed, random: &random)
        defer { test.remove() }
        let row = random.pick(rows)
        for column in columns {
            let writer = try SQLiteConnection(path: test.store.path)
            let saved = try writer.statement("SELECT \(quoted(column)) FROM \(quoted(table)) WHERE rowid = \(row)")
            #expect(try saved.step())
            let original = saved.int64(0)
            saved.reset()
            try writer.execute("UPDATE \(quoted(table)) SET \(quoted(column)) = NULL WHERE rowid = \(row)")
            writer.close()
            guard case .layoutMismatch(_, let problem)? = test.refusal() else {
                Issue.record("\(table).\(column) set to NULL was not refused")
                continue
            }
            #expect(
                problem.contains("of the join table \(table) has \(column) NULL")
                    && problem.contains("row (\(columns.sorted()[0]) "),
                "\(problem)")
            let restorer = try SQLiteConnection(path: test.store.path)
            try restorer.execute("UPDATE \(quoted(table)) SET \(quoted(column)) = \(original) WHERE rowid = \(row)")
            restorer.close()
        }
        let whole = try CoreDataStoreImport.importStore(
            at: test.store, model: test.prepared.storeModel, migrationPlan: test.prepared.plan,
            to: test.folder.appendingPathComponent("whole.store"), dryRun: true)
        #expect(whole.links > 0)
    }

    /// A store whose objects are all in its log, copied with a `-wal` that holds no frame SQLite
    /// reads (emptied, cut to its header, or cut inside its first frame) and without a `-shm`
    /// that says otherwise (none, or one of zeros): it reads as empty, exactly as with no `-wal`,
    /// so it is refused as ``CoreDataStoreImportError/emptyWithoutWriteAheadLog(path:)`` (issue
    /// 29), not imported as an empty store. 8 stores, each with a random cut and `-shm`.
    @Test(arguments: 0..<8)
    func aStoreWithALogOfNoFrameAndNoIndexIsRefusedAsEmpty(seed: Int) throws {
        let test = try Case(seed: 120 + seed, rowsInLog: true, checkpointedTables: true)
        defer { test.remove() }
        var random = SplitMix64(seed: 2_929_291, index: seed)
        let logPath = test.store.path + "-wal"
        let log = try #require(FileManager.default.contents(atPath: logPath))
        let pageSize = log.count >= 12 ? Int(log[8]) << 24 | Int(log[9]) << 16 | Int(log[10]) << 8 | Int(log[11]) : 0
        #expect(log.count >= 32 + 24 + pageSize, "the log holds no frame")
        let kept: Int
        switch seed % 3 {
        case 0: kept = 0
        case 1: kept = random.size(in: 1...32)
        default: kept = 33 + random.next(below: 24 + pageSize - 1)
        }
        try log.prefix(kept).write(to: URL(fileURLWithPath: logPath))
        let indexPath = test.store.path + "-shm"
        if random.next(below: 2) == 0 {
            try? FileManager.default.removeItem(atPath: indexPath)
        } else {
            let size = (try? Data(contentsOf: URL(fileURLWithPath: indexPath)).count) ?? 32_768
            try Data(count: size).write(to: URL(fileURLWithPath: indexPath))
        }
        let error = test.refusal()
        guard case .emptyWithoutWriteAheadLog(let path)? = error else {
            Issue.record("a store with \(kept) bytes of its log was not refused as empty: \(String(describing: error))")
            return
        }
        #expect(path == test.store.path)
    }

    /// A store whose `-shm` says the log held frames, copied with a `-wal` SQLite reads no frame
    /// of (issue 29): random bytes, or the log with one byte of its header or first frame changed
    /// (magic, salt, checksum or page). Refused as a missing log, not imported as empty. The same
    /// store with its log intact imports every object, so the check accepts a real log.
    /// 8 stores, each damaged in a random way.
    @Test(arguments: 0..<8)
    func aStoreWithAGarbageLogIsRefusedAsMissingItsLog(seed: Int) throws {
        let test = try Case(seed: 140 + seed, rowsInLog: true, checkpointedTables: seed % 2 == 0)
        defer { test.remove() }
        var random = SplitMix64(seed: 2_929_292, index: seed)
        let logPath = test.store.path + "-wal"
        var log = try #require(FileManager.default.contents(atPath: logPath))
        let intact = try CoreDataStoreImport.importStore(
            at: test.store, model: test.prepared.storeModel, migrationPlan: test.prepared.plan,
            to: test.destination, dryRun: true)
        #expect(intact.totalRows == test.writer.objects.count)
        let pageSize = Int(log[8]) << 24 | Int(log[9]) << 16 | Int(log[10]) << 8 | Int(log[11])
        let damage: String
        if seed % 4 == 0 {
            log = Data((0..<log.count).map { _ in UInt8(random.next(below: 256)) })
            damage = "random bytes"
        } else {
            let offset = random.next(below: 32 + 24 + pageSize)
            log[offset] ^= UInt8(1 + random.next(below: 255))
            damage = "byte \(offset) changed"
        }
        try log.write(to: URL(fileURLWithPath: logPath))
        let error = test.refusal()
        guard case .missingWriteAheadLog(let path)? = error else {
            Issue.record("a store with a log of \(damage) was not refused as missing it: \(String(describing: error))")
            return
        }
        #expect(path == test.store.path)
    }

    /// A store copied with its `-wal` emptied or cut to at most its 32-byte header (issue 29), while
    /// its `-shm` says the log held frames: refused like a missing log, not imported without the
    /// rows the log held. 6 stores, each with a random length of log kept.
    @Test(arguments: 0..<6)
    func aStoreWithAnEmptiedWriteAheadLogIsRefused(seed: Int) throws {
        let test = try Case(seed: 60 + seed, rowsInLog: true, checkpointedTables: seed % 2 == 0)
        defer { test.remove() }
        var random = SplitMix64(seed: 2_929_009, index: seed)
        let log = try #require(FileManager.default.contents(atPath: test.store.path + "-wal"))
        #expect(FileManager.default.fileExists(atPath: test.store.path + "-shm"))
        try log.prefix(seed < 2 ? 0 : random.next(below: 33)).write(to: URL(fileURLWithPath: test.store.path + "-wal"))
        guard case .missingWriteAheadLog(let path)? = test.refusal() else {
            Issue.record("a store whose -wal was emptied was not refused as missing its log")
            return
        }
        #expect(path == test.store.path)
    }

    /// The store of an app that ran once before (its tables checkpointed into the main file), whose
    /// objects are all in the log: copied without its `-wal`, with or without the `-shm`, it would
    /// read as an empty store. With the log, the same store imports every object.
    @Test(arguments: 0..<4)
    func aStoreWhoseTablesWereCheckpointedButNotItsRowsIsRefusedWithoutItsLog(seed: Int) throws {
        let test = try Case(seed: 40 + seed, rowsInLog: true, checkpointedTables: true)
        defer { test.remove() }
        let header = try #require(FileManager.default.contents(atPath: test.store.path))
        #expect(header.count > 4096 && header[18] == 2 && header[19] == 2, "not a WAL store with its tables")
        let kept = test.folder.appendingPathComponent("kept")
        try FileManager.default.createDirectory(at: kept, withIntermediateDirectories: true)
        for suffix in ["", "-wal", "-shm"] {
            try FileManager.default.copyItem(
                atPath: test.store.path + suffix, toPath: kept.appendingPathComponent("Shop.sqlite").path + suffix)
        }
        let support = test.folder.appendingPathComponent(".Shop_SUPPORT")
        if FileManager.default.fileExists(atPath: support.path) {
            try FileManager.default.copyItem(at: support, to: kept.appendingPathComponent(".Shop_SUPPORT"))
        }
        try FileManager.default.removeItem(atPath: test.store.path + "-wal")
        if seed % 2 == 0 {
            try FileManager.default.removeItem(atPath: test.store.path + "-shm")
        }
        // With its -shm, the index says the log held frames: provably lost. Without it, the main
        // file is that of an empty store closed cleanly: Z_MAX is 0 everywhere, as the saves that
        // raised it are in the lost log too.
        let error = test.refusal()
        if seed % 2 == 0 {
            guard case .emptyWithoutWriteAheadLog(let path)? = error else {
                Issue.record(
                    "a store whose objects are all in a missing -wal was not refused: \(String(describing: error))")
                return
            }
            #expect(path == test.store.path)
            let connection = try SQLiteConnection(path: test.store.path, readOnly: true)
            let maximum = try connection.statement("SELECT MAX(Z_MAX) FROM Z_PRIMARYKEY")
            #expect(try maximum.step() && maximum.int64(0) == 0)
            maximum.reset()
            connection.close()
        } else {
            guard case .missingWriteAheadLog(let path)? = error else {
                Issue.record(
                    "a store whose -shm says its missing -wal held frames was not refused: \(String(describing: error))"
                )
                return
            }
            #expect(path == test.store.path)
        }
        let summary = try CoreDataStoreImport.importStore(
            at: kept.appendingPathComponent("Shop.sqlite"), model: test.prepared.storeModel,
            migrationPlan: test.prepared.plan, to: kept.appendingPathComponent("Shop.store"))
        #expect(summary.totalRows == test.writer.objects.count)
    }

    /// A store emptied of objects (and of keys: Z_MAX 0, nothing ever saved) and closed cleanly,
    /// so that SQLite itself checkpointed and deleted its log. In rollback-journal mode there is no
    /// log to lose, and it imports as empty; in write-ahead-log mode it is refused with the error
    /// that says a lost log looks the same (as the checkpointed-tables test shows it does).
    /// 4 stores, each in both modes.
    @Test(arguments: 0..<4)
    func anEmptyStoreClosedCleanlyImportsOnlyWhenNoLogCanBeLost(seed: Int) throws {
        for writeAheadLog in [false, true] {
            let test = try Case(seed: 90 + seed, rowsInLog: false)
            defer { test.remove() }
            // In a function of its own, so that no statement outlives the close: the close is then
            // the last connection's, which checkpoints the log into the file and deletes it.
            func empty() throws {
                let connection = try SQLiteConnection(path: test.store.path)
                defer { connection.close() }
                var tables: [String] = []
                do {
                    let listing = try connection.statement(
                        "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z%' "
                            + "AND name NOT IN ('Z_METADATA', 'Z_PRIMARYKEY', 'Z_MODELCACHE') ORDER BY name")
                    while try listing.step() { tables.append(listing.string(0)) }
                    listing.reset()
                }
                for table in tables { try connection.execute("DELETE FROM \(quoted(table))") }
                try connection.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = 0")
                if !writeAheadLog { try connection.execute("PRAGMA journal_mode=DELETE") }
            }
            try empty()
            let header = try #require(FileManager.default.contents(atPath: test.store.path))
            #expect(header[18] == (writeAheadLog ? 2 : 1) && header[19] == header[18])
            #expect(!FileManager.default.fileExists(atPath: test.store.path + "-wal"), "the close kept the log")
            if writeAheadLog {
                guard case .emptyWithoutWriteAheadLog(let path)? = test.refusal() else {
                    Issue.record("an empty write-ahead-log store without its log was not refused as such")
                    continue
                }
                #expect(path == test.store.path)
            } else {
                let summary = try CoreDataStoreImport.importStore(
                    at: test.store, model: test.prepared.storeModel, migrationPlan: test.prepared.plan,
                    to: test.destination)
                #expect(summary.totalRows == 0)
                #expect(FileManager.default.fileExists(atPath: test.destination.path))
            }
        }
    }

    /// After a rename by renaming identifier, Core Data keeps the old name in `Z_PRIMARYKEY`: the
    /// import accepts it when it is the entity's renaming identifier, and refuses any other name.
    @Test func anEntityRenamedByItsIdentifierKeepsItsOldNameInThePrimaryKeyTable() throws {
        let test = try Case(seed: 5)
        defer { test.remove() }
        let connection = try SQLiteConnection(path: test.store.path)
        let statement = try connection.statement("UPDATE Z_PRIMARYKEY SET Z_NAME = 'OldTag' WHERE Z_NAME = 'tag'")
        try connection.inTransaction(.immediate) { try statement.run() }
        statement.reset()
        connection.close()
        guard case .layoutMismatch(_, let problem)? = test.refusal() else {
            Issue.record("a Z_PRIMARYKEY name that is neither the entity's nor its identifier was accepted")
            return
        }
        #expect(problem.contains("'OldTag'"))
        var model = test.prepared.storeModel
        for index in model.versions.indices {
            let tag = try #require(model.versions[index].entities.firstIndex { $0.name == "tag" })
            model.versions[index].entities[tag].renamingIdentifier = "OldTag"
        }
        let summary = try CoreDataStoreImport.importStore(
            at: test.store, model: model, migrationPlan: test.prepared.plan, to: test.destination)
        #expect(summary.totalRows == test.writer.objects.count)
    }

    @Test func anExistingDestinationIsNeverReplaced() throws {
        let test = try Case(seed: 4)
        defer { test.remove() }
        try Data("the app's own store".utf8).write(to: test.destination)
        guard case .destinationExists? = test.refusal() else {
            Issue.record("an existing destination was not refused")
            return
        }
        #expect(FileManager.default.contents(atPath: test.destination.path) == Data("the app's own store".utf8))
    }
}
