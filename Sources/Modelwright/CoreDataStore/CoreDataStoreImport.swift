import CSQLite
import Foundation

/// Brings an app's Core Data store into a new Modelwright store, at first launch: finds the model
/// version that wrote the store by Core Data's entity version hashes, writes every object and link
/// at that version, migrates the result to the current version by the app's plan, and moves it
/// into place only once it is complete and verified.
///
/// ```swift
/// let destination = documents.appendingPathComponent("Trips.store")
/// if !FileManager.default.fileExists(atPath: destination.path) {
///     let summary = try CoreDataStoreImport.importStore(
///         at: documents.appendingPathComponent("Trips.sqlite"),
///         model: coreDataModel,                 // the bundled <Model>.coredata-store.json, decoded
///         migrationPlan: Trips.migrationPlan,
///         to: destination)
///     print("imported \(summary.totalRows) objects written by '\(summary.coreDataVersion)'")
/// }
/// ```
///
/// The Core Data store is only read: the contents of its `.sqlite`, `-wal`, `-shm` and `-journal`
/// are copied into a new folder of the system's temporary folder (`modelwright-coredata-import-*`)
/// and the copy is opened, so Core Data can still open the original if anything fails. A symbolic
/// link, FIFO or device in place of any of these files is refused, and external data is read only
/// from regular files below the store's `_SUPPORT` folder, reached without following links. The
/// new store is written in a folder beside the destination (`.<destination>.import-<pid>-*`) that
/// the run creates and removes; a run killed midway leaves that folder and the temporary copy,
/// and the next import (of any store to any destination in that folder) removes those of
/// processes that no longer run, if they hold the importer's marker file and only files it writes.
/// A destination among the store's own files or inside its `_SUPPORT` folder is refused.
/// A failed or interrupted import leaves nothing at `destination`; running it again writes the
/// same record IDs, each a version-7 UUID made from the store's UUID, the root entity and `Z_PK`.
///
/// ## Topics
///
/// ### Importing
/// - ``importStore(at:model:migrationPlan:to:dryRun:)``
/// - ``Summary``
public enum CoreDataStoreImport {
    /// What an import found and wrote.
    public struct Summary: Sendable, Equatable {
        /// The Core Data model version whose hashes the store has, such as `Model 37`.
        public var coreDataVersion: String
        /// The schema version that Core Data version was imported as.
        public var schemaVersion: Int
        /// The store's `NSStoreUUID`.
        public var storeUUID: String
        /// Rows read, by Core Data entity name.
        public var rows: [String: Int]
        /// Links between objects read (to-one and to-many, each pair once per side that stores it).
        public var links: Int
        /// Every row read.
        public var totalRows: Int { rows.values.reduce(0, +) }
    }

    /// Imports the Core Data store at `storeURL` into a new Modelwright store at `destination`.
    ///
    /// - Parameters:
    ///   - storeURL: The Core Data store's `.sqlite` file; its `-wal` and `-shm` are read beside it,
    ///     and external binary data from `.<Name>_SUPPORT/_EXTERNAL_DATA`.
    ///   - model: Every version of the Core Data model, as `import-coredata` kept it.
    ///   - migrationPlan: The app's plan, which holds every schema version.
    ///   - destination: Where the new store goes; nothing may be there yet.
    ///   - dryRun: Reads and checks everything but writes no store.
    /// - Returns: The version matched and what was read and written.
    /// - Throws: ``CoreDataStoreImportError``, or the migration's error.
    @discardableResult
    public static func importStore(
        at storeURL: URL, model: CoreDataStoreModel, migrationPlan: MigrationPlan, to destination: URL,
        dryRun: Bool = false
    ) throws -> Summary {
        if !dryRun {
            try CoreDataStoreFiles.checkOutside(store: storeURL, destination: destination)
            if CoreDataStoreFiles.entryExists(destination.path) {
                throw CoreDataStoreImportError.destinationExists(path: destination.path)
            }
        }
        let manager = FileManager.default
        // The copy of the user's store goes in a folder of the system's temporary folder that only
        // this run created (the system empties it, so a killed run's copy does not stay); nothing
        // of a dry run goes beside the output.
        let temporaryFolder = manager.temporaryDirectory.path
        CoreDataStoreFiles.removeStaleFolders(in: temporaryFolder, prefix: sourcePrefix)
        let sourceFolder = try CoreDataStoreFiles.makeUniqueFolder(in: temporaryFolder, prefix: sourcePrefix)
        defer { CoreDataStoreFiles.removeFolderMadeHere(sourceFolder) }
        let source = try CoreDataStoreSource(url: storeURL, workFolder: sourceFolder)
        defer { source.discard() }
        let version = try matchingVersion(of: source, in: model)
        let layout = CoreDataStoreLayout(version)
        try checkEntityIDs(of: source, against: layout)
        let schema = try schema(version.schemaVersion, in: migrationPlan)
        let reader = try CoreDataStoreReader(source: source, layout: layout, schema: schema)
        if dryRun {
            let counts = try reader.countRows()
            return Summary(
                coreDataVersion: version.name, schemaVersion: version.schemaVersion, storeUUID: source.storeUUID,
                rows: counts.rows, links: counts.links)
        }
        let folder = destination.deletingLastPathComponent()
        do {
            try manager.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw CoreDataStoreImportError.cannotWrite(path: folder.path, reason: "the folder cannot be created")
        }
        // The new store is written beside the destination, so placing it is one link within a
        // folder; the folder's name is unique to this run, and only this run removes it.
        let workPrefix = ".\(destination.lastPathComponent).import-"
        // A killed run's folder is swept whatever output it was writing, since it holds a copy of
        // the user's data; only folders an import made, holding only what an import writes, go.
        CoreDataStoreFiles.removeStaleFolders(in: folder.path, prefix: ".", tag: ".import-")
        let work = try CoreDataStoreFiles.makeUniqueFolder(in: folder.path, prefix: workPrefix)
        defer { CoreDataStoreFiles.removeFolderMadeHere(work) }
        let temporary = work.appendingPathComponent("store")
        let written: (rows: [String: Int], links: Int)
        do {
            try Store(url: temporary, schema: schema).close()
            written = try reader.write(to: temporary.path)
            try Store(url: temporary, migrationPlan: migrationPlan).close()
            // The write verified the store at its version before committing; only a migration can
            // change what it holds since.
            if schema.version != migrationPlan.current.version {
                try CoreDataStoreReader.verify(
                    at: temporary.path, schema: migrationPlan.current,
                    expectedRows: try expectedRows(
                        written.rows, layout: layout, from: schema, plan: migrationPlan))
            }
        } catch let error as SQLiteError where error.code == SQLITE_FULL || error.code == SQLITE_IOERR {
            // SQLite names neither the file nor the cause of a failed write: a full disk reads
            // SQLITE_FULL, a write past the file-size limit (EFBIG) a bare I/O error.
            throw CoreDataStoreImportError.cannotWrite(
                path: destination.path,
                reason:
                    "the new store could not be written in \(folder.path) (\(error.message)): its disk is full, or the store reached this process's file-size limit ('ulimit -f')"
            )
        }
        // The store was written without syncs: it reaches the disk here, before it is visible.
        try CoreDataStoreFiles.synchronize(temporary.path)
        // The one step that makes the new store visible, refused if anything took the name since.
        try CoreDataStoreFiles.placeWithoutReplacing(temporary, at: destination)
        try? CoreDataStoreFiles.synchronize(folder.path)
        return Summary(
            coreDataVersion: version.name, schemaVersion: version.schemaVersion, storeUUID: source.storeUUID,
            rows: written.rows, links: written.links)
    }

    /// The start of the name of the folder a run copies the store into, in the temporary folder.
    private static let sourcePrefix = "modelwright-coredata-import-"

    /// The rows the migrated store must hold, by schema entity name: every entity the imported
    /// version and the current one share keeps the count read (none, if it was empty), since a
    /// lightweight migration keeps every row. A custom stage is the app's code and may add or
    /// remove rows, so after one only readability and links are checked.
    private static func expectedRows(
        _ rows: [String: Int], layout: CoreDataStoreLayout, from schema: SchemaDescription, plan: MigrationPlan
    ) throws -> [String: Int] {
        var read: [String: Int] = [:]
        for (name, count) in rows {
            if let schemaName = layout.entities[name]?.entity.schemaName { read[schemaName] = count }
        }
        let later = plan.stages.filter { $0.source.version >= schema.version }
        guard later.allSatisfy(\.isLightweight) else { return [:] }
        let before = Set(try SchemaLayout(schema).entities.keys)
        var expected: [String: Int] = [:]
        for name in try SchemaLayout(plan.current).entities.keys where before.contains(name) {
            expected[name] = read[name] ?? 0
        }
        return expected
    }

    /// The version whose entity hashes are the store's, or an error naming the entities that differ
    /// from the closest version.
    private static func matchingVersion(
        of source: CoreDataStoreSource, in model: CoreDataStoreModel
    ) throws -> CoreDataStoreModel.Version {
        var closest: (version: CoreDataStoreModel.Version, differences: [String])?
        for version in model.versions.reversed() {
            let hashes = CoreDataVersionHashes.hashes(of: version)
            if hashes == source.versionHashes { return version }
            var differences: [String] = []
            for name in Set(hashes.keys).union(source.versionHashes.keys).sorted() {
                switch (hashes[name], source.versionHashes[name]) {
                case (nil, _): differences.append("'\(name)' is in the store, not in the version")
                case (_, nil): differences.append("'\(name)' is in the version, not in the store")
                case (let mine, let theirs) where mine != theirs: differences.append("'\(name)' hashes differently")
                default: break
                }
            }
            if closest == nil || differences.count < closest!.differences.count { closest = (version, differences) }
        }
        throw CoreDataStoreImportError.noMatchingVersion(
            path: source.path, closestVersion: closest?.version.name ?? "(none)",
            differences: closest?.differences ?? ["the model has no versions"])
    }

    /// Checks `Z_PRIMARYKEY` against the ids the matched version gives its entities. After a
    /// rename by renaming identifier, Core Data keeps the old name there.
    private static func checkEntityIDs(of source: CoreDataStoreSource, against layout: CoreDataStoreLayout) throws {
        let stored = try source.primaryKeyEntities()
        for (id, name) in layout.names.sorted(by: { $0.key < $1.key }) {
            guard let storedName = stored[id] else {
                throw CoreDataStoreImportError.layoutMismatch(
                    path: source.path, problem: "Z_PRIMARYKEY has no entity \(id) ('\(name)')")
            }
            let entity = layout.entities[name]?.entity
            guard storedName == name || storedName == entity?.renamingIdentifier else {
                throw CoreDataStoreImportError.layoutMismatch(
                    path: source.path,
                    problem: "Z_PRIMARYKEY names entity \(id) '\(storedName)', where the version has '\(name)'")
            }
        }
    }

    /// The schema of version `number`: the plan's current one, or the source of the stage leaving it.
    private static func schema(_ number: Int, in plan: MigrationPlan) throws -> SchemaDescription {
        if plan.current.version == number { return plan.current }
        guard let stage = plan.stages.first(where: { $0.source.version == number }) else {
            throw CoreDataStoreImportError.versionNotInPlan(schemaVersion: number)
        }
        return try stage.source.schema()
    }
}

extension UUIDVersion7 {
    /// The ID an imported Core Data object gets: a version-7 UUID whose time field counts `Z_PK`
    /// milliseconds from Core Data's reference date, so IDs sort as the keys did, and whose other
    /// bits are the SHA-256 of the store's UUID, the root entity and the key, so a second run
    /// gives the same ID.
    static func imported(storeUUID: String, rootEntity: String, primaryKey: Int64) -> UUID {
        var message = Array(storeUUID.utf8) + [0] + Array(rootEntity.utf8) + [0]
        message += withUnsafeBytes(of: primaryKey.littleEndian) { Array($0) }
        var bytes = SHA256.digest(of: message)
        let milliseconds = UInt64(978_307_200_000) &+ UInt64(truncatingIfNeeded: primaryKey)
        for index in 0..<6 {
            bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> UInt64(40 - index * 8))
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x70
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            )
        )
    }
}
