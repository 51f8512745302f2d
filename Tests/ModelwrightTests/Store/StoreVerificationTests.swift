import CSQLite
import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright

/// A store file from outside is opened only when its whole schema is what the runtime creates.
///
/// The property: over seeded random schemas (inheritance, every simple type, defaults, optional
/// and required columns, uniqueness constraints, indexes, to-one, to-many and ordered
/// relationships, history on or off), every untampered store opens, also after a migration, and
/// every store with one tampering drawn from a pool (a trigger, a view, an extra or missing table,
/// column, index; uniqueness changed; `sqlite_master` edited through `writable_schema`; a
/// generated column, a virtual table, statistics) is refused with
/// ``StoreError/unexpectedSchema(path:differences:)``, its file byte for byte as it was.
///
/// `MODELWRIGHT_LARGE=1` runs 3,000 cases instead of the CI's 150.
struct StoreVerificationTests {
    private static let caseCount = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == nil ? 150 : 3_000

    @Test("every tampered store is refused untouched, every untampered one opens")
    func tamperedStoresAreRefusedUntouched() throws {
        var refused: [String: Int] = [:]
        var opened = 0
        var skipped = 0
        for seed in 0..<UInt64(Self.caseCount) {
            var random = SplitMix64(seed: seed, index: 24)
            // One case in ten is the Trips fixture: reserved-word names, every column type, deep inheritance.
            let schema = seed % 10 == 0 ? Fixture.schema : StoreSchemas.schema(&random, version: 1)
            let history: HistoryTracking = random.chance(0.5) ? .enabled(author: "app") : .disabled
            let url = temporaryStoreURL()
            defer { removeStore(at: url) }
            do {
                try Store(url: url, schema: schema, history: history).close()
            } catch {
                skipped += 1  // a drawn schema the runtime refuses to lay out: nothing to verify
                continue
            }
            // The untampered store opens, with and without history.
            try Store(url: url, schema: schema, history: history).close()
            try Store(url: url, schema: schema).close()
            opened += 1

            guard let tampering = Tampering.apply(&random, to: url) else { continue }
            let before = try Data(contentsOf: url)
            #expect(!FileManager.default.fileExists(atPath: url.path + "-wal"))
            do {
                try Store(url: url, schema: schema, history: history).close()
                Issue.record("seed \(seed): the store opened after \(tampering)")
            } catch StoreError.unexpectedSchema(_, let differences) {
                #expect(!differences.isEmpty)
                refused[tampering.kind, default: 0] += 1
            } catch {
                Issue.record("seed \(seed), \(tampering): \(error)")
            }
            #expect(try Data(contentsOf: url) == before, "seed \(seed): \(tampering) changed the file")
        }
        #expect(skipped * 5 < Self.caseCount, "too many drawn schemas could not be laid out: \(skipped)")
        // Every kind of tampering was drawn and refused at least once.
        #expect(Set(refused.keys).isSuperset(of: Tampering.alwaysApplicable), "\(refused)")
        print(
            "StoreVerificationTests: \(opened) stores opened untampered; refused \(refused.sorted { $0.key < $1.key })")
    }

    @Test("a tampered store of an older version is refused before the migrator runs; a migrated one opens")
    func olderStoresAreVerifiedBeforeMigrating() throws {
        var migrated = 0
        var refused = 0
        for seed in 0..<UInt64(Self.caseCount / 3) {
            var random = SplitMix64(seed: seed, index: 2401)
            let v1 = StoreSchemas.schema(&random, version: 1)
            let v2 = StoreSchemas.nextVersion(of: v1, &random)
            let plan = MigrationPlan(current: v2, stages: [.lightweight(from: v1, to: v2)])
            let history: HistoryTracking = random.chance(0.5) ? .enabled(author: "app") : .disabled
            let url = temporaryStoreURL()
            defer { removeStore(at: url) }
            do {
                try Store(url: url, schema: v1, history: history).close()
                _ = try SchemaLayout(v2)
            } catch {
                continue
            }
            let pristine = try Data(contentsOf: url)
            // Untampered: migrates, then opens at the new version with and without the plan.
            try Store(url: url, migrationPlan: plan, history: history).close()
            try Store(url: url, schema: v2, history: history).close()
            try Store(url: url, migrationPlan: plan).close()
            migrated += 1

            try pristine.write(to: url)
            guard let tampering = Tampering.apply(&random, to: url) else { continue }
            let before = try Data(contentsOf: url)
            #expect(throws: StoreError.self, "seed \(seed): \(tampering)") {
                try Store(url: url, migrationPlan: plan, history: history).close()
            }
            #expect(try Data(contentsOf: url) == before, "seed \(seed): \(tampering) changed the file")
            refused += 1
        }
        #expect(migrated > Self.caseCount / 6)
        print("StoreVerificationTests: \(migrated) stores migrated and reopened, \(refused) tampered ones refused")
    }

    @Test("the messages name what differs")
    func messagesNameTheDifference() throws {
        let url = temporaryStoreURL()
        defer { removeStore(at: url) }
        try Store(url: url, schema: Fixture.schema).close()
        let raw = try RawDatabase(url.path)
        try raw.execute("CREATE TRIGGER \"drop\u{1B}[2K\" BEFORE INSERT ON \"User\" BEGIN SELECT RAISE(IGNORE); END")
        try raw.execute("DROP INDEX \"User_unique_username\"")
        raw.close()
        do {
            try Store(url: url, schema: Fixture.schema).close()
            Issue.record("opened")
        } catch let error as StoreError {
            let text = error.description
            #expect(text.contains("trigger \"drop\\u{1b}[2K\""), "\(text)")
            #expect(text.contains("unique index"), "\(text)")
            #expect(text.contains("\"username\""), "\(text)")
            #expect(text.contains("left untouched"))
        }
    }

    @Test("a hostile schema cannot edit sqlite_master through the runtime's connections")
    func connectionsAreDefensive() throws {
        let connection = try SQLiteConnection(path: nil)
        try connection.execute("CREATE TABLE t (a)")
        try connection.execute("PRAGMA writable_schema=ON")
        #expect(throws: SQLiteError.self) {
            try connection.execute("UPDATE sqlite_master SET sql = 'CREATE TABLE t (b)' WHERE name = 't'")
        }
    }

    @Test("a function named in a schema runs only if SQLite deems it harmless")
    func schemaIsNotTrusted() throws {
        let connection = try SQLiteConnection(path: nil)
        // The runtime's own functions are registered without SQLITE_INNOCUOUS: called directly,
        // they run; named in a view (or a trigger, a default, a CHECK), they do not.
        try connection.execute("SELECT mw_decodes(0, '1')")
        try connection.execute("CREATE VIEW \"hostile\" AS SELECT mw_decodes(0, '1') AS \"value\"")
        #expect(throws: SQLiteError.self) { try connection.execute("SELECT * FROM \"hostile\"") }
    }

    // MARK: - Files replaced under an open store

    @Test("a write after the store's file was replaced fails, and the new file stays readable")
    func replacedFileStopsWrites() async throws {
        let url = temporaryStoreURL()
        let other = temporaryStoreURL()
        defer {
            removeStore(at: url)
            removeStore(at: other)
        }
        let store = try Store(url: url, schema: Fixture.schema)
        try await store.performAndSave { try $0.insert(makeUser("ada")) }
        let replacement = try Store(url: other, schema: Fixture.schema)
        try await replacement.performAndSave { try $0.insert(makeUser("grace")) }
        try replacement.close()
        #expect(rename(other.path, url.path) == 0)
        await #expect(throws: StoreError.storeFileReplaced(path: url.path)) {
            try await store.performAndSave { try $0.insert(makeUser("ines")) }
        }
        // Another process opening the path now reads the new file whole.
        let reopened = try Store(url: url, schema: Fixture.schema)
        let names = try await reopened.performQuery { try $0.fetch(User.request()).map(\.username) }
        #expect(names == ["grace"])
        try reopened.close()
        try store.close()
    }

    /// Another program moves a file over a store's path while the store is open and holds frames
    /// in its log, and a third opener comes before the old store's next write. A KNOWN GAP: the log
    /// has its index (the old store uses it), so only the identity in a log's first page can tell,
    /// and not every log holds that page; such an opener may read a mix of both stores, and its own
    /// close may copy the old log into the new file. What is asserted: a refusal leaves the new file
    /// untouched. The other outcomes are counted, for the record (see Security.md).
    @Test("a store opened between a file's replacement and the old writer's next write: refused untouched, or counted")
    func openedWhileTheOldWriterStillHasItsLog() async throws {
        var outcomes: [String: Int] = [:]
        func kind(_ names: Set<String>, old: Set<String>, new: Set<String>) -> String {
            names == new ? "the new file" : names == old ? "the old store's rows" : "a mix"
        }
        for seed in 0..<UInt64(max(10, Self.caseCount / 10)) {
            var random = SplitMix64(seed: seed, index: 2403)
            let url = temporaryStoreURL()
            let other = temporaryStoreURL()
            defer {
                removeStore(at: url)
                removeStore(at: other)
            }
            let (old, oldNames) = try await Self.fill(url, prefix: "a", &random)
            let (replacement, newNames) = try await Self.fill(other, prefix: "b", &random)
            try replacement.close()
            #expect(rename(other.path, url.path) == 0)
            let before = try Data(contentsOf: url)
            do {
                let opened = try Store(url: url, schema: Fixture.schema)
                defer { try? opened.close() }
                let names = try await opened.performQuery { try $0.fetch(User.request()).map(\.username) }
                outcomes["read " + kind(Set(names), old: oldNames, new: newNames), default: 0] += 1
            } catch let error as StoreError {
                #expect(try Data(contentsOf: url) == before, "seed \(seed): \(error)")
                outcomes["refused", default: 0] += 1
            } catch {
                outcomes["failed at the first read", default: 0] += 1
            }
            try old.close()
            do {
                let reopened = try Store(url: url, schema: Fixture.schema)
                defer { try? reopened.close() }
                let names = try await reopened.performQuery { try $0.fetch(User.request()).map(\.username) }
                outcomes["afterwards: " + kind(Set(names), old: oldNames, new: newNames), default: 0] += 1
            } catch {
                outcomes["afterwards: damaged", default: 0] += 1
            }
        }
        print("StoreVerificationTests: opened between a replacement and the old writer's next write: \(outcomes)")
    }

    /// SQLite applies any log whose frames agree with the log's own header; nothing in a log names
    /// the database it belongs to. Over random histories of two stores (rows inserted, deleted,
    /// checkpoints in between), the other store's log is put beside a closed store, and opening it
    /// must either be refused with both files untouched, or read exactly one store's rows, whole:
    /// never a mix.
    @Test("a store beside another store's write-ahead log is refused untouched or reads one store whole")
    func foreignWriteAheadLog() async throws {
        var outcomes: [String: Int] = [:]
        for seed in 0..<UInt64(Self.caseCount / 10) {
            var random = SplitMix64(seed: seed, index: 2402)
            let url = temporaryStoreURL()
            let other = temporaryStoreURL()
            defer {
                removeStore(at: url)
                removeStore(at: other)
            }
            let own = try await Self.fill(url, prefix: "a", &random)
            try own.store.close()
            let (writer, expected) = try await Self.fill(other, prefix: "b", &random)
            defer { try? writer.close() }
            guard FileManager.default.fileExists(atPath: other.path + "-wal") else { continue }
            try FileManager.default.copyItem(atPath: other.path + "-wal", toPath: url.path + "-wal")
            let before = try Data(contentsOf: url)
            let log = try Data(contentsOf: URL(fileURLWithPath: url.path + "-wal"))
            do {
                let opened = try Store(url: url, schema: Fixture.schema)
                let names = try await opened.performQuery { try $0.fetch(User.request()).map(\.username) }
                try opened.close()
                #expect(Set(names) == own.names || Set(names) == expected, "seed \(seed): a mix of two stores")
                outcomes[Set(names) == own.names ? "read its own rows" : "read the other store's rows", default: 0] += 1
            } catch let error as StoreError {
                #expect(try Data(contentsOf: url) == before, "seed \(seed): \(error)")
                #expect(try Data(contentsOf: URL(fileURLWithPath: url.path + "-wal")) == log)
                outcomes["refused", default: 0] += 1
            } catch {
                Issue.record("seed \(seed): \(error)")
            }
        }
        print("StoreVerificationTests: a foreign log beside a store: \(outcomes.sorted { $0.key < $1.key })")
    }

    @Test("a hot rollback journal of another store is refused with both files untouched; the store's own is recovered")
    func foreignHotJournal() async throws {
        var outcomes: [String: Int] = [:]
        for seed in 0..<UInt64(Self.caseCount / 15) {
            var random = SplitMix64(seed: seed, index: 2403)
            let url = temporaryStoreURL()
            let other = temporaryStoreURL()
            let crashed = temporaryStoreURL()
            defer {
                for store in [url, other, crashed] { removeStore(at: store) }
            }
            // Two stores in rollback-journal mode, as a backup made with `VACUUM INTO` is.
            let own = try await Self.fill(url, prefix: "a", &random)
            try own.store.close()
            let (writer, _) = try await Self.fill(other, prefix: "b", &random)
            try writer.close()
            for store in [url, other] { try RawDatabase(store.path).execute("PRAGMA journal_mode=DELETE") }
            // Half the time the other store's state before its interrupted write carries a trigger.
            if random.chance(0.5) {
                try RawDatabase(other.path).execute(
                    "CREATE TRIGGER \"evil\" BEFORE INSERT ON \"User\" BEGIN SELECT RAISE(IGNORE); END")
            }
            // An interrupted write of each store: its journal, copied while the write is under way
            // (its pages spilled into the file), is a hot journal for whichever file it lands beside.
            try Self.interruptedWrite(on: other, rows: 1 + random.next(below: 60)).journal.write(
                to: URL(fileURLWithPath: url.path + "-journal"))
            // A copy of the store and its journal taken in the middle of its own write: a crash.
            try FileManager.default.copyItem(at: url, to: crashed)
            let (ownJournal, midWrite) = try Self.interruptedWrite(on: crashed, rows: 1 + random.next(below: 60))
            try midWrite.write(to: crashed)
            try ownJournal.write(to: URL(fileURLWithPath: crashed.path + "-journal"))
            let before = try Data(contentsOf: url)
            let journal = try Data(contentsOf: URL(fileURLWithPath: url.path + "-journal"))
            do {
                try Store(url: url, schema: Fixture.schema).close()
                Issue.record("seed \(seed): opened beside another store's journal")
            } catch StoreError.damagedStore(_, let problems) {
                #expect(problems.joined().contains("-journal"), "\(problems)")
                outcomes["refused", default: 0] += 1
            } catch {
                Issue.record("seed \(seed): \(error)")
            }
            #expect(try Data(contentsOf: url) == before, "seed \(seed): the file changed")
            #expect(try Data(contentsOf: URL(fileURLWithPath: url.path + "-journal")) == journal)
            // The store's own interrupted write is rolled back by SQLite, and the store reads as it was.
            let store = try Store(url: crashed, schema: Fixture.schema)
            let names = try await store.performQuery { try $0.fetch(User.request()).map(\.username) }
            try store.close()
            #expect(Set(names) == own.names, "seed \(seed): the store's own journal was not rolled back")
            outcomes["own journal recovered", default: 0] += 1
        }
        print("StoreVerificationTests: hot journals: \(outcomes.sorted { $0.key < $1.key })")
    }

    /// Runs a write on the rollback-journal store at `url` that spills pages into the file, reads
    /// its journal and the file while the write is under way, then rolls the write back.
    private static func interruptedWrite(on url: URL, rows: Int) throws -> (journal: Data, file: Data) {
        let raw = try RawDatabase(url.path)
        defer { raw.close() }
        try raw.execute("PRAGMA cache_size=1")
        try raw.execute("BEGIN IMMEDIATE")
        try raw.execute("CREATE TABLE \"pad\" (\"x\")")
        try raw.execute(
            "INSERT INTO \"pad\" SELECT zeroblob(3000) FROM (WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL "
                + "SELECT i + 1 FROM r WHERE i < \(rows)) SELECT i FROM r)")
        try raw.execute("UPDATE \"User\" SET \"rating\" = \"rating\" + 1")
        try raw.execute("DELETE FROM \"Trip\"")
        let captured = (
            try Data(contentsOf: URL(fileURLWithPath: url.path + "-journal")), try Data(contentsOf: url)
        )
        try raw.execute("ROLLBACK")
        return captured
    }

    @Test("an index pointed at an empty b-tree with its SQL unchanged is refused untouched")
    func indexWithoutItsEntries() async throws {
        var refused: [String: Int] = [:]
        for seed in 0..<UInt64(Self.caseCount / 15) {
            var random = SplitMix64(seed: seed, index: 2404)
            let url = temporaryStoreURL()
            defer { removeStore(at: url) }
            let filled = try await Self.fill(url, prefix: "a", &random)
            try filled.store.close()
            guard !filled.names.isEmpty else { continue }
            let raw = try RawDatabase(url.path)
            // Every index of the table with rows, those SQLite made for UNIQUE clauses included.
            let index = random.pick(
                raw.strings("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'User'"))
            try raw.execute("CREATE TABLE \"orphan\" (\"a\")")
            try raw.execute("CREATE INDEX \"orphan_a\" ON \"orphan\" (\"a\")")
            let root = raw.strings("SELECT rootpage FROM sqlite_master WHERE name = 'orphan_a'")[0]
            try raw.execute("PRAGMA writable_schema=ON")
            try raw.execute("DELETE FROM sqlite_master WHERE name IN ('orphan', 'orphan_a')")
            try raw.execute("UPDATE sqlite_master SET rootpage = \(root) WHERE name = \(SQLSyntax.string(index))")
            raw.close()
            let before = try Data(contentsOf: url)
            do {
                try Store(url: url, schema: Fixture.schema).close()
                Issue.record("seed \(seed): opened with \(index) pointing at an empty b-tree")
            } catch StoreError.unexpectedSchema(_, let differences) {
                #expect(differences.joined().contains(index), "\(differences)")
                refused[index, default: 0] += 1
            } catch {
                Issue.record("seed \(seed): \(error)")
            }
            #expect(try Data(contentsOf: url) == before, "seed \(seed): the file changed")
        }
        #expect(refused.count >= 3, "\(refused)")
        print("StoreVerificationTests: indexes without their entries refused: \(refused.sorted { $0.key < $1.key })")
    }

    @Test("a schema changed by another connection while the store is open is refused at the next read and write")
    func schemaChangedWhileOpen() async throws {
        var refused: [String: Int] = [:]
        for seed in 0..<UInt64(Self.caseCount) {
            var random = SplitMix64(seed: seed, index: 2405)
            let schema = seed % 10 == 0 ? Fixture.schema : StoreSchemas.schema(&random, version: 1)
            let history: HistoryTracking = random.chance(0.5) ? .enabled(author: "app") : .disabled
            let url = temporaryStoreURL()
            defer { removeStore(at: url) }
            guard let store = try? Store(url: url, schema: schema, history: history) else { continue }
            defer { try? store.close() }
            _ = try await store.performQuery { _ in 0 }
            // Editing `sqlite_master` directly changes no schema cookie: SQLite's connections keep
            // the schema they verified, and the next opening refuses the file (the first test).
            guard let tampering = Tampering.apply(&random, to: url), tampering.kind != "sqlite_master edited" else {
                continue
            }
            await #expect(throws: StoreError.self, "seed \(seed): read after \(tampering)") {
                _ = try await store.performQuery { _ in 0 }
            }
            await #expect(throws: StoreError.self, "seed \(seed): write after \(tampering)") {
                _ = try await store.performAndSave { _ in 0 }
            }
            refused[tampering.kind, default: 0] += 1
        }
        #expect(refused.count >= 8, "\(refused)")
        print("StoreVerificationTests: changed while open, refused: \(refused.sorted { $0.key < $1.key })")
    }

    @Test("a custom stage that leaves a trigger, a view or statistics fails at migration, naming it")
    func customStageLeftovers() throws {
        let v1 = SchemaDescription(
            modelName: "M", version: 1,
            entities: [EntityDescription(name: "E", attributes: [AttributeDescription(name: "a", type: .string)])])
        var v2 = v1
        v2.version = 2
        v2.entities[0].attributes.append(AttributeDescription(name: "b", type: .int, isOptional: true))
        let leftovers: [(sql: String, named: String)] = [
            ("ANALYZE", "sqlite_stat1"), ("CREATE VIEW \"v\" AS SELECT 1", "view \"v\""),
            ("CREATE TRIGGER \"t\" AFTER INSERT ON \"E\" BEGIN SELECT 1; END", "trigger \"t\""),
            (
                "CREATE TRIGGER \"m\" BEFORE UPDATE ON \"_modelwright_metadata\" BEGIN SELECT RAISE(IGNORE); END",
                "trigger \"m\""
            ),
            ("CREATE TEMP TABLE \"scratch\" (\"x\")", ""),
        ]
        for (sql, named) in leftovers {
            let url = temporaryStoreURL()
            defer { removeStore(at: url) }
            try Store(url: url, schema: v1).close()
            try RawDatabase(url.path).execute("INSERT INTO \"E\" (\"id\", \"a\") VALUES (randomblob(16), 'x')")
            let stage = MigrationStage.custom(
                from: v1, to: v2, steps: [.init(name: "leave", label: "leave") { try $0.execute(sql) }])
            let plan = MigrationPlan(current: v2, stages: [stage])
            do {
                try Store(url: url, migrationPlan: plan).close()
                // A temporary table is the connection's own, not the store's: it is no leftover.
                #expect(named.isEmpty, "\(sql): the stage committed")
                try Store(url: url, migrationPlan: plan).close()
            } catch MigrationError.schemaMismatch(_, let differences) {
                #expect(!named.isEmpty, "\(sql): \(differences)")
                #expect(differences.joined().contains(named), "\(sql): \(differences)")
                // The store stays at the version before the stage, and opens there.
                try Store(url: url, schema: v1).close()
            }
        }
    }

    /// A temporary trigger is the connection's own, so no schema check sees it; made by a custom
    /// stage on the store's metadata table, it swallows (`RAISE(IGNORE)`) or rewrites the stage's
    /// version write. The stage must roll back with ``StoreError/metadataNotRecorded(key:value:found:)``
    /// rather than commit version 2's tables under version 1's metadata. Every combination of the
    /// statement it acts on and what it does: 4 cases.
    @Test("a metadata write that a trigger swallows or rewrites rolls the stage back")
    func metadataWriteThatDoesNotTake() throws {
        let v1 = SchemaDescription(
            modelName: "M", version: 1,
            entities: [EntityDescription(name: "E", attributes: [AttributeDescription(name: "a", type: .string)])])
        var v2 = v1
        v2.version = 2
        v2.entities[0].attributes.append(AttributeDescription(name: "b", type: .int, isOptional: true))
        let table = "main.\"_modelwright_metadata\""
        var cases: [[String]] = []
        // SQLite records metadata with INSERT OR REPLACE, so an UPDATE trigger alone sees nothing.
        for events in [["INSERT"], ["INSERT", "UPDATE"]] {
            cases.append(
                events.map {
                    "CREATE TEMP TRIGGER \"m_\($0)\" BEFORE \($0) ON \(table) BEGIN SELECT RAISE(IGNORE); END"
                })
            cases.append(
                events.map {
                    "CREATE TEMP TRIGGER \"m_\($0)\" AFTER \($0) ON \(table) BEGIN "
                        + "UPDATE \"_modelwright_metadata\" SET \"value\" = NEW.\"value\" || '0' WHERE \"key\" = NEW.\"key\"; END"
                })
        }
        for sql in cases {
            let url = temporaryStoreURL()
            defer { removeStore(at: url) }
            try Store(url: url, schema: v1).close()
            let stage = MigrationStage.custom(
                from: v1, to: v2,
                steps: [
                    .init(name: "sabotage", label: "sabotage") { context in
                        for statement in sql { try context.execute(statement) }
                    }
                ])
            let plan = MigrationPlan(current: v2, stages: [stage])
            do {
                try Store(url: url, migrationPlan: plan).close()
                Issue.record("\(sql): the stage committed though its metadata write did not take")
            } catch StoreError.metadataNotRecorded(let key, let value, let found) {
                #expect(
                    ["model", "version", "checksum"].contains(key),
                    "\(sql): \(key) = \(value), found \(found ?? "none")")
            } catch {
                Issue.record("\(sql): failed with \(error), not metadataNotRecorded")
            }
            // The stage rolled back: the store is still version 1 and opens as such.
            try Store(url: url, schema: v1).close()
        }
    }

    @Test("history of a newer format: refused as such with history on, opened without")
    func newerHistoryFormat() throws {
        let url = temporaryStoreURL()
        defer { removeStore(at: url) }
        try Store(url: url, schema: Fixture.schema, history: .enabled(author: "app")).close()
        let raw = try RawDatabase(url.path)
        try raw.execute("UPDATE \"_modelwright_metadata\" SET \"value\" = '2' WHERE \"key\" = 'historyFormat'")
        try raw.execute("ALTER TABLE \"_mw_history_changes\" ADD COLUMN \"origin\" TEXT")
        raw.close()
        #expect(throws: StoreError.unsupportedHistoryFormat(found: "2", supported: HistorySQL.format)) {
            try Store(url: url, schema: Fixture.schema, history: .enabled(author: "app")).close()
        }
        try Store(url: url, schema: Fixture.schema).close()
        // The format's own tables are set aside, not the rest of the store.
        try RawDatabase(url.path).execute("CREATE VIEW \"v\" AS SELECT 1")
        #expect(throws: StoreError.self) { try Store(url: url, schema: Fixture.schema).close() }
    }

    @Test("a file that is not an SQLite database is refused as not a store, untouched")
    func notAnSQLiteFile() throws {
        var random = SplitMix64(seed: 0, index: 2406)
        for size in [1, 100, 512, 4096, 70_000] {
            let url = temporaryStoreURL()
            defer { removeStore(at: url) }
            let bytes = Data((0..<size).map { _ in UInt8(random.next(below: 256)) })
            try bytes.write(to: url)
            do {
                try Store(url: url, schema: Fixture.schema).close()
                Issue.record("\(size) bytes: opened")
            } catch {
                #expect(error as? StoreError == .notAStore(path: url.path), "\(size) bytes: \(error)")
            }
            #expect(try Data(contentsOf: url) == bytes)
        }
    }

    /// A store at `url` after a random history: batches of inserts and deletes, sometimes a checkpoint.
    private static func fill(
        _ url: URL, prefix: String, _ random: inout SplitMix64
    ) async throws -> (store: Store, names: Set<String>) {
        let store = try Store(url: url, schema: Fixture.schema)
        var names: Set<String> = []
        var next = 0
        for _ in 0..<(1 + random.next(below: 4)) {
            let count = 1 + random.next(below: 200)
            let batch = (next..<(next + count)).map { "\(prefix)\($0)" }
            next += count
            try await store.performAndSave { context in
                for name in batch { try context.insert(makeUser(name)) }
            }
            names.formUnion(batch)
            if random.chance(0.4), let victim = names.randomElement(using: &random) {
                let threshold = victim
                try await store.performAndSave { context in
                    _ = try context.batchDelete(User.request().filter { $0.username < threshold })
                }
                names = names.filter { $0 >= threshold }
            }
            if random.chance(0.3) {
                try RawDatabase(url.path).execute("PRAGMA wal_checkpoint(TRUNCATE)")
            }
        }
        return (store, names)
    }
}

// MARK: - Random schemas a store can hold

/// Seeded random schemas that lay out: entities with parents, attributes of every simple type
/// and string enums, optional or required, with defaults, uniqueness constraints and indexes,
/// and to-one, to-many and ordered relationships (names unique per model, so siblings never share
/// a column).
enum StoreSchemas {
    private static let types: [AttributeType] = [
        .bool, .int16, .int32, .int64, .int, .double, .float, .decimal, .string, .date, .data, .uuid, .url,
        .enumeration(
            EnumDescription(
                name: "Kind", rawType: .string,
                cases: [.init(name: "a", rawValue: "a"), .init(name: "b", rawValue: "b")])
        ),
    ]

    private static func defaultValue(for type: AttributeType, _ random: inout SplitMix64) -> DefaultValue? {
        switch type {
        case .bool: .bool(random.chance(0.5))
        case .int16, .int32, .int64, .int: .integer(Int64(random.next(below: 100)) - 50)
        case .double, .float: .floatingPoint(random.pick([0, -0.0, 1.5, -2.25, 1e300]))
        case .decimal: .decimal("2.25")
        case .string: .string(random.pick(["", "d", "it's", "\"q\""]))
        case .date: .date(secondsSince1970: 1_710_000_000)
        case .enumeration: .enumCase("b")
        default: nil
        }
    }

    static func schema(_ random: inout SplitMix64, version: Int) -> SchemaDescription {
        let count = 1 + random.next(below: 4)
        var entities: [EntityDescription] = []
        for index in 0..<count {
            let name = "E\(index)"
            let parent = index > 0 && random.chance(0.3) ? entities[random.next(below: index)].name : nil
            var attributes: [AttributeDescription] = []
            for number in 0..<random.next(below: 5) {
                let type = random.pick(types)
                let optional = random.chance(0.5)
                let value = random.chance(0.4) ? defaultValue(for: type, &random) : nil
                attributes.append(
                    AttributeDescription(
                        name: "\(name.lowercased())a\(number)", type: type,
                        isOptional: optional || value == nil && random.chance(0.5),
                        defaultValue: value))
            }
            let names = attributes.map(\.name)
            var unique: [[String]] = []
            var indexes: [[String]] = []
            if !names.isEmpty && random.chance(0.4) {
                unique.append(Array(names.shuffled(using: &random).prefix(1 + random.next(below: 2))))
            }
            if !names.isEmpty && random.chance(0.4) {
                indexes.append(Array(names.shuffled(using: &random).prefix(1 + random.next(below: 2))))
            }
            entities.append(
                EntityDescription(
                    name: name, parent: parent, isAbstract: parent == nil && random.chance(0.15),
                    attributes: attributes,
                    uniquenessConstraints: unique, indexes: indexes))
        }
        for index in entities.indices where random.chance(0.6) {
            let destination = entities[random.next(below: entities.count)].name
            let toMany = random.chance(0.5)
            entities[index].relationships.append(
                RelationshipDescription(
                    name: "r\(index)", destination: destination, cardinality: toMany ? .toMany : .toOne,
                    isOrdered: toMany && random.chance(0.4),
                    deleteRule: random.pick([.nullify, .cascade, .deny, .noAction])))
        }
        return SchemaDescription(modelName: "Random", version: version, entities: entities)
    }

    /// The next version: one to three lightweight changes (an added optional attribute, an index,
    /// a uniqueness constraint dropped, an attribute renamed, an entity added).
    static func nextVersion(of schema: SchemaDescription, _ random: inout SplitMix64) -> SchemaDescription {
        var next = schema
        next.version = schema.version + 1
        for _ in 0..<(1 + random.next(below: 3)) {
            let index = random.next(below: next.entities.count)
            var entity = next.entities[index]
            switch random.next(below: 5) {
            case 0:
                entity.attributes.append(
                    AttributeDescription(
                        name: "added\(index)x\(entity.attributes.count)", type: random.pick(types), isOptional: true))
            case 1 where !entity.attributes.isEmpty:
                entity.indexes.append([random.pick(entity.attributes).name])
            case 2:
                entity.uniquenessConstraints.removeAll()
            case 3 where !entity.attributes.isEmpty:
                let position = random.next(below: entity.attributes.count)
                let old = entity.attributes[position].name
                guard entity.attributes[position].renamedFrom == nil else { break }
                entity.attributes[position].name = old + "Renamed"
                entity.attributes[position].renamedFrom = old
                entity.uniquenessConstraints = entity.uniquenessConstraints.map {
                    $0.map { $0 == old ? old + "Renamed" : $0 }
                }
                entity.indexes = entity.indexes.map { $0.map { $0 == old ? old + "Renamed" : $0 } }
            default:
                next.entities.append(
                    EntityDescription(
                        name: "New\(next.entities.count)",
                        attributes: [AttributeDescription(name: "n", type: .string, isOptional: true)]))
            }
            next.entities[index] = entity
        }
        return next
    }
}

// MARK: - Tampering

/// One change another program could make to a store file, drawn from a pool.
private struct Tampering: CustomStringConvertible {
    var kind: String
    var detail: String
    var description: String { "\(kind) (\(detail))" }

    /// The kinds every store can be given (the others need an index, a column, a module …).
    static let alwaysApplicable: Set<String> = [
        "trigger dropping inserts", "trigger rewriting rows", "view", "view named like a table", "extra table",
        "extra index", "extra column", "generated column", "statistics", "sqlite_master edited", "metadata trigger",
    ]

    /// Applies one random tampering to the closed store at `url` with SQLite's own API, as another
    /// program would; `nil` when the drawn one does not apply to this store.
    static func apply(_ random: inout SplitMix64, to url: URL) -> Tampering? {
        guard let raw = try? RawDatabase(url.path) else { return nil }
        defer { raw.close() }
        let tables = raw.strings(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '_modelwright_metadata' ORDER BY name"
        )
        let indexes = raw.strings(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name")
        guard let table = tables.isEmpty ? nil : random.pick(tables) else { return nil }
        let columns = raw.strings("SELECT name FROM pragma_table_info(\(SQLSyntax.string(table))) ORDER BY cid")
        let column = random.pick(columns)
        let t = quoted(table)
        let c = quoted(column)
        func done(_ kind: String, _ sql: [String]) -> Tampering? {
            for statement in sql {
                guard (try? raw.execute(statement)) != nil else { return nil }
            }
            return Tampering(kind: kind, detail: "\(table).\(column): " + sql.joined(separator: "; "))
        }
        switch random.next(below: 16) {
        case 0:
            return done(
                "trigger dropping inserts",
                ["CREATE TRIGGER \"mw_x\" BEFORE INSERT ON \(t) BEGIN SELECT RAISE(IGNORE); END"])
        case 1:
            return done(
                "trigger rewriting rows",
                ["CREATE TRIGGER \"mw_y\" AFTER UPDATE ON \(t) BEGIN UPDATE \(t) SET \(c) = NULL; END"])
        case 2:
            return done("view", ["CREATE VIEW \"v\" AS SELECT 1"])
        case 3:
            return done(
                "view named like a table",
                [
                    "PRAGMA foreign_keys=OFF", "PRAGMA legacy_alter_table=ON", "ALTER TABLE \(t) RENAME TO \"real\"",
                    "CREATE VIEW \(t) AS SELECT * FROM \"real\"",
                ])
        case 4:
            return done("extra table", ["CREATE TABLE \"extra\" (\"a\" TEXT)"])
        case 5:
            return done("extra index", ["CREATE INDEX \"extra_index\" ON \(t) (\(c))"])
        case 6:
            guard !indexes.isEmpty else { return nil }
            return done("missing index", ["DROP INDEX \(quoted(random.pick(indexes)))"])
        case 7:
            guard !indexes.isEmpty else { return nil }
            let index = random.pick(indexes)
            guard let sql = raw.strings("SELECT sql FROM sqlite_master WHERE name = \(SQLSyntax.string(index))").first
            else {
                return nil
            }
            let flipped =
                sql.hasPrefix("CREATE UNIQUE INDEX")
                ? sql.replacingOccurrences(of: "CREATE UNIQUE INDEX", with: "CREATE INDEX")
                : sql.replacingOccurrences(of: "CREATE INDEX", with: "CREATE UNIQUE INDEX")
            return done("uniqueness changed", ["DROP INDEX \(quoted(index))", flipped])
        case 8:
            return done("extra column", ["ALTER TABLE \(t) ADD COLUMN \"extra\" TEXT"])
        case 9:
            return done("missing column", ["ALTER TABLE \(t) DROP COLUMN \(c)"])
        case 10:
            return done(
                "generated column", ["ALTER TABLE \(t) ADD COLUMN \"g\" INTEGER GENERATED ALWAYS AS (1) VIRTUAL"])
        case 11:
            return done("statistics", ["ANALYZE"])
        case 12:
            return done("virtual table", ["CREATE VIRTUAL TABLE \"search\" USING fts5(\"a\")"])
        case 13:
            return done(
                "metadata trigger",
                [
                    "CREATE TRIGGER \"mw_m\" BEFORE UPDATE ON \"_modelwright_metadata\" BEGIN SELECT RAISE(IGNORE); END"
                ])
        case 14:
            return done("renamed column", ["ALTER TABLE \(t) RENAME COLUMN \(c) TO \"other\""])
        default:
            // Edits SQLite's own record of an entry, as `writable_schema` allows another program.
            let entries = raw.strings("SELECT name FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name")
            let entry = random.pick(entries)
            guard let sql = raw.strings("SELECT sql FROM sqlite_master WHERE name = \(SQLSyntax.string(entry))").first
            else { return nil }
            let edits: [(String, String)] = [
                (" NOT NULL", ""), ("PRIMARY KEY", "PRIMARY KEY ON CONFLICT REPLACE"),
                ("CREATE UNIQUE INDEX", "CREATE INDEX"),
                (" TEXT", " TEXT COLLATE NOCASE"), (" INTEGER", " TEXT"), (" REAL", " NUMERIC"), (" BLOB", " ANY"),
                (" DEFERRABLE INITIALLY DEFERRED", ""), ("ON DELETE CASCADE", "ON DELETE SET NULL"),
                (" DEFAULT ", " DEFAULT 1 + "), ("(", "( /* , \"hidden\" TEXT */ "),
                (") WITHOUT ROWID", ", CHECK (1)) WITHOUT ROWID"),
                (" NOT NULL", " UNIQUE ON CONFLICT REPLACE NOT NULL"), (")", ") WHERE 0"),
            ]
            let applicable = edits.filter { sql.contains($0.0) }
            guard !applicable.isEmpty else { return nil }
            let (from, to) = random.pick(applicable)
            guard let range = sql.range(of: from, options: from == ")" ? .backwards : []) else { return nil }
            var edited = sql
            edited.replaceSubrange(range, with: to)
            return done(
                "sqlite_master edited",
                [
                    "PRAGMA writable_schema=ON",
                    "UPDATE sqlite_master SET sql = \(SQLSyntax.string(edited)) WHERE name = \(SQLSyntax.string(entry))",
                    "PRAGMA writable_schema=OFF",
                ]
            ).map { Tampering(kind: $0.kind, detail: "\(entry): \(from) → \(to)") }
        }
    }
}

/// A database opened with SQLite's C API alone, as another program would open it: without the
/// runtime's defensive settings.
private final class RawDatabase {
    private var handle: OpaquePointer?

    init(_ path: String) throws {
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else {
            throw SQLiteError(connection: handle, code: SQLITE_CANTOPEN, sql: nil)
        }
    }

    func execute(_ sql: String) throws {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw SQLiteError(connection: handle, code: code, sql: sql) }
    }

    func strings(_ sql: String) -> [String] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else { return [] }
        defer { sqlite3_finalize(statement) }
        var result: [String] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            result.append(sqlite3_column_text(statement, 0).map { String(cString: $0) } ?? "")
        }
        return result
    }

    func close() {
        sqlite3_close_v2(handle)
        handle = nil
    }

    deinit { close() }
}
