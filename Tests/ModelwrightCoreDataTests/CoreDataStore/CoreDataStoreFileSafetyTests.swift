import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright
@testable import ModelwrightCoreData

/// The importer reads the user's files and nothing else: a link or FIFO in a store file's place,
/// or in its external data, is refused without touching what it points at; a hot rollback journal
/// is honoured; and no file or folder of the user's is written or removed, even by a dry run.
@Suite(.heavy, .serialized) struct CoreDataStoreFileSafetyTests {
    typealias Case = CoreDataStoreRefusalTests.Case

    static let storeFiles = ["", "-wal", "-shm"]

    /// Each store file in turn is a link to the real one in another folder: the import refuses it
    /// and the real files keep their bytes (SQLite once opened and checkpointed the original).
    @Test(arguments: storeFiles)
    func aLinkedStoreFileIsRefusedAndItsTargetIsUntouched(suffix: String) throws {
        let test = try Case(seed: 10, rowsInLog: true)
        defer { test.remove() }
        let manager = FileManager.default
        let real = test.folder.appendingPathComponent("real")
        try manager.createDirectory(at: real, withIntermediateDirectories: true)
        let realStore = real.appendingPathComponent(test.store.lastPathComponent)
        for file in Self.storeFiles {
            try manager.copyItem(atPath: test.store.path + file, toPath: realStore.path + file)
        }
        try manager.removeItem(atPath: test.store.path + suffix)
        try manager.createSymbolicLink(atPath: test.store.path + suffix, withDestinationPath: realStore.path + suffix)
        let before = CoreDataStoreImportTests.snapshot(realStore)
        guard case .unsafeFile(let path, let reason)? = test.refusal() else {
            Issue.record("a linked '\(suffix)' file was not refused")
            return
        }
        #expect(path == test.store.path + suffix)
        #expect(reason.contains("symbolic link"))
        #expect(CoreDataStoreImportTests.snapshot(realStore) == before, "the link's target changed")
    }

    /// Each store file with a second hard link elsewhere (the same file under two names, which a
    /// backup tool or an attacker can make): the import reads the contents only, so it succeeds,
    /// the shared file keeps its bytes through either name, and the new store shares no file with
    /// anything (one link). A hard link gains an attacker nothing a copy of the file would not: the
    /// importer never writes, truncates or renames a file of the store's, and never opens one
    /// with SQLite.
    @Test(arguments: storeFiles)
    func aHardLinkedStoreFileImportsAndTheSharedFileKeepsItsBytes(suffix: String) throws {
        let test = try Case(seed: 17, rowsInLog: true)
        defer { test.remove() }
        let other = test.folder.appendingPathComponent("elsewhere\(suffix)").path
        #expect(link(test.store.path + suffix, other) == 0)
        let before = FileManager.default.contents(atPath: other)
        let snapshot = CoreDataStoreImportTests.snapshot(test.store)
        let summary = try CoreDataStoreImport.importStore(
            at: test.store, model: test.prepared.storeModel, migrationPlan: test.prepared.plan, to: test.destination)
        #expect(summary.totalRows == test.writer.objects.count)
        #expect(FileManager.default.contents(atPath: other) == before, "the other name's bytes changed")
        #expect(CoreDataStoreImportTests.snapshot(test.store) == snapshot, "the store changed")
        var status = stat()
        #expect(stat(other, &status) == 0 && status.st_nlink == 2, "a link of the store's file went away")
        #expect(stat(test.destination.path, &status) == 0 && status.st_nlink == 1, "the new store has other names")
    }

    /// A FIFO in a store file's place is refused at once; reading it would wait forever.
    @Test(arguments: storeFiles)
    func aFIFOInAStoreFilesPlaceIsRefusedWithoutWaiting(suffix: String) throws {
        let test = try Case(seed: 11, rowsInLog: true)
        defer { test.remove() }
        try FileManager.default.removeItem(atPath: test.store.path + suffix)
        #expect(mkfifo(test.store.path + suffix, 0o600) == 0)
        #expect {
            try CoreDataStoreImport.importStore(
                at: test.store, model: test.prepared.storeModel, migrationPlan: test.prepared.plan,
                to: test.destination)
        } throws: { error in
            guard case .unsafeFile(let path, let reason)? = error as? CoreDataStoreImportError else { return false }
            return path == test.store.path + suffix && reason.contains("not a regular file")
        }
        #expect(!FileManager.default.fileExists(atPath: test.destination.path))
    }

    /// A store whose fixture keeps data in `_EXTERNAL_DATA`.
    static func caseWithExternalData() throws -> Case {
        for seed in 100..<200 {
            let test = try Case(seed: seed, rowsInLog: false)
            if !test.writer.externalFiles.isEmpty { return test }
            test.remove()
        }
        throw CoreDataStoreImportError.verificationFailed(problems: ["no fixture keeps external data"])
    }

    /// An external data file that is a link (to a secret outside the store's folder), a FIFO, or
    /// whose `_EXTERNAL_DATA` folder is itself a link, is refused naming the file; never read.
    @Test(arguments: ["file link", "folder link", "fifo"])
    func externalDataIsReadOnlyFromRegularFilesInsideTheSupportFolder(kind: String) throws {
        let test = try Self.caseWithExternalData()
        defer { test.remove() }
        let manager = FileManager.default
        let external = test.folder.appendingPathComponent(".Shop_SUPPORT/_EXTERNAL_DATA")
        let secret = test.folder.appendingPathComponent("secret")
        try manager.createDirectory(at: secret, withIntermediateDirectories: true)
        for name in test.writer.externalFiles.keys {
            let file = external.appendingPathComponent(name)
            try Data("secret".utf8).write(to: secret.appendingPathComponent(name))
            switch kind {
            case "file link":
                try manager.removeItem(at: file)
                try manager.createSymbolicLink(at: file, withDestinationURL: secret.appendingPathComponent(name))
            case "fifo":
                try manager.removeItem(at: file)
                #expect(mkfifo(file.path, 0o600) == 0)
            default:
                break
            }
        }
        if kind == "folder link" {
            try manager.removeItem(at: external)
            try manager.createSymbolicLink(at: external, withDestinationURL: secret)
        }
        guard case .unreadableValue(_, _, _, let reason)? = test.refusal() else {
            Issue.record("external data through a \(kind) was not refused")
            return
        }
        #expect(reason.contains(kind == "fifo" ? "not a regular file" : "symbolic link"), "\(reason)")
        #expect(reason.contains(test.folder.path))
    }

    /// A rollback-journal store caught mid-transaction (its file holds uncommitted pages, its
    /// `-journal` the committed ones): the import reads what Core Data would, the committed rows.
    @Test func aHotRollbackJournalIsRolledBackInTheCopy() throws {
        let test = try Case(seed: 12, rowsInLog: false)
        defer { test.remove() }
        let manager = FileManager.default
        let connection = try SQLiteConnection(path: test.store.path)
        try connection.execute("PRAGMA journal_mode=DELETE")
        let tables = try CoreDataStoreSource.tableNames(on: connection).filter { !$0.hasPrefix("Z_") }
        try connection.execute("PRAGMA cache_size=10")
        let snapshot = test.folder.appendingPathComponent("snapshot")
        try manager.createDirectory(at: snapshot, withIntermediateDirectories: true)
        struct RolledBack: Error {}
        do {
            try connection.inTransaction(.immediate) {
                for table in tables { try connection.execute("DELETE FROM \"\(table)\"") }
                // Enough new pages that SQLite spills the deletions into the database file.
                try connection.execute(
                    "CREATE TABLE spill AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) SELECT randomblob(2000) AS b FROM n"
                )
                for suffix in ["", "-journal"] {
                    try manager.copyItem(
                        atPath: test.store.path + suffix,
                        toPath: snapshot.appendingPathComponent("Shop.sqlite").path + suffix)
                }
                throw RolledBack()
            }
        } catch is RolledBack {}
        // The copied file alone is torn (it differs from the committed file): its journal is what
        // holds the committed pages.
        #expect(
            manager.contents(atPath: snapshot.appendingPathComponent("Shop.sqlite").path)
                != manager.contents(atPath: test.store.path), "the transaction did not spill into the file")
        connection.close()
        for suffix in ["", "-journal"] {
            try? manager.removeItem(atPath: test.store.path + suffix)
            try manager.moveItem(
                atPath: snapshot.appendingPathComponent("Shop.sqlite").path + suffix, toPath: test.store.path + suffix)
        }
        try manager.removeItem(at: snapshot)
        let summary = try CoreDataStoreImport.importStore(
            at: test.store, model: test.prepared.storeModel, migrationPlan: test.prepared.plan, to: test.destination)
        #expect(summary.totalRows == test.writer.objects.count)
        #expect(manager.fileExists(atPath: test.store.path + "-journal"), "the user's journal was touched")
    }

    /// A dry run creates no folder and writes nothing beside the output; a real run removes no
    /// folder it did not create, even one with the name earlier versions used for their work.
    @Test func aDryRunWritesNothingAndNoFolderOfTheUsersIsRemoved() throws {
        let test = try Case(seed: 13)
        defer { test.remove() }
        let manager = FileManager.default
        let usersFolder = test.folder.appendingPathComponent(".Shop.store.import")
        try manager.createDirectory(at: usersFolder, withIntermediateDirectories: true)
        try Data("notes".utf8).write(to: usersFolder.appendingPathComponent("notes.txt"))
        let listing = try manager.contentsOfDirectory(atPath: test.folder.path).sorted()
        let nested = test.folder.appendingPathComponent("new/a/b/Shop.store")
        for destination in [test.destination, nested] {
            try CoreDataStoreImport.importStore(
                at: test.store, model: test.prepared.storeModel, migrationPlan: test.prepared.plan,
                to: destination, dryRun: true)
        }
        #expect(try manager.contentsOfDirectory(atPath: test.folder.path).sorted() == listing)
        let summary = try CoreDataStoreImport.importStore(
            at: test.store, model: test.prepared.storeModel, migrationPlan: test.prepared.plan, to: test.destination)
        #expect(summary.totalRows == test.writer.objects.count)
        #expect(
            try manager.contentsOfDirectory(atPath: test.folder.path).sorted() == (listing + ["Shop.store"]).sorted())
        #expect(manager.contents(atPath: usersFolder.appendingPathComponent("notes.txt").path) == Data("notes".utf8))
    }

    /// A dangling link at the destination is something there: refused by name, left as it was.
    @Test func aDanglingLinkAtTheDestinationIsNeverReplaced() throws {
        let test = try Case(seed: 14)
        defer { test.remove() }
        let target = test.folder.appendingPathComponent("elsewhere.store").path
        try FileManager.default.createSymbolicLink(atPath: test.destination.path, withDestinationPath: target)
        guard case .destinationExists(let path)? = test.refusal() else {
            Issue.record("a dangling link at the destination was not refused")
            return
        }
        #expect(path == test.destination.path)
        #expect(!FileManager.default.fileExists(atPath: target))
    }

    /// An output folder that cannot be made (a file stands where a folder goes) is named in the
    /// error, not reported as a raw Foundation error.
    @Test func anOutputFolderThatCannotBeMadeIsNamed() throws {
        let test = try Case(seed: 16)
        defer { test.remove() }
        let file = test.folder.appendingPathComponent("plain-file")
        try Data("a file".utf8).write(to: file)
        let destination = file.appendingPathComponent("inner/Shop.store")
        #expect {
            try CoreDataStoreImport.importStore(
                at: test.store, model: test.prepared.storeModel, migrationPlan: test.prepared.plan, to: destination)
        } throws: { error in
            guard case .cannotWrite(let path, _)? = error as? CoreDataStoreImportError else { return false }
            return path == destination.deletingLastPathComponent().path
        }
        #expect(FileManager.default.contents(atPath: file.path) == Data("a file".utf8))
    }

    /// Two imports to one destination at once: one writes a complete store, the other is refused;
    /// neither removes the other's work.
    @Test func twoImportsToOneDestinationLeaveOneCompleteStore() throws {
        let test = try Case(seed: 15)
        defer { test.remove() }
        let outcomes = Outcomes()
        let (store, model, plan, destination) = (
            test.store, test.prepared.storeModel, test.prepared.plan, test.destination
        )
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            do {
                let summary = try CoreDataStoreImport.importStore(
                    at: store, model: model, migrationPlan: plan, to: destination)
                outcomes.add("wrote \(summary.totalRows)")
            } catch let error as CoreDataStoreImportError {
                guard case .destinationExists = error else { return outcomes.add("\(error)") }
                outcomes.add("refused")
            } catch {
                outcomes.add("\(error)")
            }
        }
        #expect(outcomes.sorted == ["refused", "wrote \(test.writer.objects.count)"])
        let summary = try CoreDataStoreImport.importStore(
            at: store, model: model, migrationPlan: plan, to: destination, dryRun: true)
        try CoreDataStoreReader.verify(
            at: destination.path, schema: plan.current,
            expectedRows: Dictionary(
                uniqueKeysWithValues: summary.rows.compactMap { name, count in
                    model.versions[0].entities.first { $0.name == name }?.schemaName.map { ($0, count) }
                }
            ))
    }

    /// What each concurrent run ended with.
    final class Outcomes: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [String] = []
        func add(_ value: String) { lock.withLock { values.append(value) } }
        var sorted: [String] { lock.withLock { values.sorted() } }
    }
}
