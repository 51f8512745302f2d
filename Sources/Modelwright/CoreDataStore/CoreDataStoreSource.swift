import Foundation

/// A copy of a Core Data store, opened for reading: its files copied into the import's private
/// temporary folder (the user's files are only ever read), its metadata, and its tables.
final class CoreDataStoreSource {
    /// The original store's path, for messages.
    let path: String
    /// `Z_UUID`: the store's `NSStoreUUID`.
    let storeUUID: String
    /// `NSStoreModelVersionHashes`.
    let versionHashes: [String: Data]
    /// `NSPersistenceFrameworkVersion`, when recorded.
    let frameworkVersion: Int?
    /// The folder the store is in, which external data is read below.
    let storeFolder: String
    /// `.<Name>_SUPPORT`, whose `_EXTERNAL_DATA` holds external binary data.
    let supportFolder: String
    let connection: SQLiteConnection
    private let copyFolder: URL

    /// Copies the store at `url` (with `-wal`, `-shm` and a rollback `-journal`) into
    /// `workFolder`, a folder this run created, and opens the copy. Each file's contents are read
    /// through a descriptor opened without following a link, and only from a regular file, so
    /// SQLite never opens (or checkpoints into) anything but the copy.
    init(url: URL, workFolder: URL) throws {
        path = url.path
        let name = url.deletingPathExtension().lastPathComponent
        storeFolder = url.deletingLastPathComponent().path
        supportFolder = ".\(name)_SUPPORT"
        copyFolder = workFolder
        let copy = workFolder.appendingPathComponent("source.sqlite")
        var found: Set<String> = []
        // A hot `-journal` holds what an interrupted transaction overwrote: copied with the store,
        // SQLite rolls the copy back when it opens it, as Core Data would the original.
        for suffix in ["", "-wal", "-shm", "-journal"] {
            guard let descriptor = try CoreDataStoreFiles.openRegular(url.path + suffix) else { continue }
            defer { close(descriptor) }
            try CoreDataStoreFiles.copy(descriptor, from: url.path + suffix, toPath: copy.path + suffix)
            found.insert(suffix)
        }
        guard found.contains("") else {
            throw CoreDataStoreImportError.notACoreDataStore(path: url.path, reason: "there is no file at this path")
        }
        // A -wal counts only when SQLite would read a frame of it: an emptied one, one cut to its
        // 32-byte header or one of other bytes (no valid header, or a first frame whose salts or
        // checksum disagree) is read as no log at all, so it is as lost as a missing one.
        let hasLog = found.contains("-wal") && Self.logHoldsAFrame(URL(fileURLWithPath: copy.path + "-wal"))
        if !hasLog, try Self.indexRecordsFrames(URL(fileURLWithPath: copy.path + "-shm")) {
            throw CoreDataStoreImportError.missingWriteAheadLog(path: url.path)
        }
        let isWriteAheadLogged = Self.headerSaysWriteAheadLog(copy)
        do {
            connection = try SQLiteConnection(path: copy.path)
            // Reading links sorts each join table by source: a cache this size keeps SQLite's
            // sorter in memory for a store of a few hundred thousand links, instead of temp files.
            try connection.execute("PRAGMA cache_size = -65536")
            let tables = try Self.tableNames(on: connection)
            guard tables.contains("Z_METADATA"), tables.contains("Z_PRIMARYKEY") else {
                if !hasLog, isWriteAheadLogged { throw CoreDataStoreImportError.missingWriteAheadLog(path: url.path) }
                throw CoreDataStoreImportError.notACoreDataStore(
                    path: url.path, reason: "it has no Z_METADATA and Z_PRIMARYKEY tables")
            }
            let statement = try connection.statement("SELECT Z_UUID, Z_PLIST FROM Z_METADATA")
            guard try statement.step() else {
                throw CoreDataStoreImportError.notACoreDataStore(path: url.path, reason: "Z_METADATA has no row")
            }
            storeUUID = statement.string(0)
            let plistData = statement.data(1)
            statement.reset()
            let metadata = try Self.metadata(plistData, path: url.path)
            versionHashes = metadata.hashes
            frameworkVersion = metadata.framework
            // A store copied without its -wal after Core Data checkpointed its tables, but not its
            // rows, reads as an empty store. No byte of the main file tells that apart from a store
            // that is empty and was closed cleanly (the log then is deleted): not the header (both
            // say WAL, 2 and 2), not the page count (the tables' pages are there in both), not
            // Z_PRIMARYKEY's Z_MAX (all 0 in both: the saves that raised it were in the lost log
            // too). So both are refused, with their own error, which says so: only the caller can
            // know whether these are the files Core Data left or a copy. A store in rollback-journal
            // mode (header 1 and 1) has no log to lose, and an empty one imports as empty.
            if !hasLog, isWriteAheadLogged, try !Self.holdsObjects(tables, on: connection) {
                throw CoreDataStoreImportError.emptyWithoutWriteAheadLog(path: url.path)
            }
        } catch let error as CoreDataStoreImportError {
            throw error
        } catch let error as SQLiteError {
            throw CoreDataStoreImportError.notACoreDataStore(path: url.path, reason: error.description)
        }
    }

    deinit {
        connection.close()
    }

    /// Closes the copy and deletes it.
    func discard() {
        connection.close()
        CoreDataStoreFiles.removeFolderMadeHere(copyFolder)
    }

    /// The names of the tables.
    static func tableNames(on connection: SQLiteConnection) throws -> Set<String> {
        let statement = try connection.statement(connection.dialect.tableNames)
        defer { statement.reset() }
        var names: Set<String> = []
        while try statement.step() { names.insert(statement.string(0)) }
        return names
    }

    /// The column names of `table`.
    func columns(of table: String) throws -> Set<String> {
        let statement = try connection.statement(connection.dialect.columnNames)
        defer { statement.reset() }
        statement.bind(table, 1)
        var names: Set<String> = []
        while try statement.step() { names.insert(statement.string(0)) }
        return names
    }

    /// `Z_PRIMARYKEY`: entity names by `Z_ENT`.
    func primaryKeyEntities() throws -> [Int: String] {
        let statement = try connection.statement("SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY")
        defer { statement.reset() }
        var names: [Int: String] = [:]
        while try statement.step() { names[Int(statement.int64(0))] = statement.string(1) }
        return names
    }

    private static func metadata(_ data: Data, path: String) throws -> (hashes: [String: Data], framework: Int?) {
        do {
            try CoreDataPropertyListBound.check(data)
        } catch {
            throw CoreDataStoreImportError.notACoreDataStore(
                path: path, reason: "Z_METADATA's Z_PLIST: \(error.reason)")
        }
        let plist: Any
        do {
            plist = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            throw CoreDataStoreImportError.notACoreDataStore(
                path: path, reason: "Z_METADATA's Z_PLIST is not a property list")
        }
        guard let metadata = plist as? [String: Any] else {
            throw CoreDataStoreImportError.notACoreDataStore(
                path: path, reason: "Z_METADATA's Z_PLIST is not a dictionary")
        }
        if let type = metadata["NSStoreType"] as? String, type != "SQLite" {
            throw CoreDataStoreImportError.notACoreDataStore(
                path: path, reason: "its store type is '\(type)', not SQLite")
        }
        let framework = (metadata["NSPersistenceFrameworkVersion"] as? NSNumber)?.intValue
        let hashesVersion = (metadata["NSStoreModelVersionHashesVersion"] as? NSNumber)?.intValue
        guard hashesVersion == 3 else {
            throw CoreDataStoreImportError.unsupportedFramework(
                path: path,
                reason:
                    "its version hashes are in format \(hashesVersion.map(String.init) ?? "(none)")\(framework.map { " (framework \($0))" } ?? ""); this importer reads format 3"
            )
        }
        guard let raw = metadata["NSStoreModelVersionHashes"] as? [String: Any] else {
            throw CoreDataStoreImportError.notACoreDataStore(
                path: path, reason: "its metadata has no NSStoreModelVersionHashes")
        }
        var hashes: [String: Data] = [:]
        for (name, value) in raw {
            guard let hash = value as? Data else {
                throw CoreDataStoreImportError.notACoreDataStore(
                    path: path, reason: "the version hash of '\(name)' is not data")
            }
            hashes[name] = hash
        }
        try checkSummaries(of: hashes, in: metadata, path: path)
        return (hashes, framework)
    }

    /// Newer frameworks store two summaries of the hashes beside them (`coredata-store-format.md`,
    /// §9): the digest (framework 1044 on) and the checksum (1333 on). Each one present must agree
    /// with the hashes, or the metadata was damaged and the hashes cannot be trusted to pick the
    /// version that wrote the store.
    private static func checkSummaries(of hashes: [String: Data], in metadata: [String: Any], path: String) throws {
        let summaries: [(key: String, recipe: ([String: Data]) -> String)] = [
            ("NSStoreModelVersionHashesDigest", CoreDataVersionHashes.digest(of:)),
            ("NSStoreModelVersionChecksumKey", CoreDataVersionHashes.checksum(of:)),
        ]
        for (key, recipe) in summaries {
            guard let stored = metadata[key] else { continue }
            guard let text = stored as? String else {
                throw CoreDataStoreImportError.corruptMetadata(path: path, reason: "its \(key) is not a string")
            }
            guard text == recipe(hashes) else {
                throw CoreDataStoreImportError.corruptMetadata(
                    path: path, reason: "its \(key) disagrees with its own NSStoreModelVersionHashes")
            }
        }
    }

    /// Whether any table of objects (`Z…` but the bookkeeping tables) holds a row.
    private static func holdsObjects(_ tables: Set<String>, on connection: SQLiteConnection) throws -> Bool {
        let bookkeeping: Set<String> = ["Z_METADATA", "Z_PRIMARYKEY", "Z_MODELCACHE"]
        for table in tables.sorted() where table.hasPrefix("Z") && !bookkeeping.contains(table) {
            let statement = try connection.statement("SELECT 1 FROM \(quoted(table)) LIMIT 1")
            defer { statement.reset() }
            if try statement.step() { return true }
        }
        return false
    }

    /// Whether the database header says write-ahead logging (file format bytes 18 and 19 are 2).
    private static func headerSaysWriteAheadLog(_ url: URL) -> Bool {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return false }
        defer { try? handle.close() }
        guard let header = try? handle.read(upToCount: 20), header.count == 20 else { return false }
        return header[18] == 2 && header[19] == 2
    }

    /// Whether the write-ahead log at `url` holds a frame SQLite would read: a header with the
    /// log's magic number, format 3007000, a page size SQLite writes and a matching checksum, then
    /// a first frame with the header's salts and a checksum that continues the header's over the
    /// frame's first 8 bytes and its page (SQLite's recipe: 32-bit words in the byte order the
    /// magic number's low bit names, summed in pairs).
    private static func logHoldsAFrame(_ url: URL) -> Bool {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return false }
        defer { try? handle.close() }
        guard let header = try? handle.read(upToCount: 32), header.count == 32 else { return false }
        let bytes = [UInt8](header)
        func bigEndian(_ bytes: [UInt8], _ at: Int) -> UInt32 {
            bytes[at..<at + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }
        let magic = bigEndian(bytes, 0)
        let pageSize = Int(bigEndian(bytes, 8))
        guard magic & 0xFFFF_FFFE == 0x377F_0682, bigEndian(bytes, 4) == 3_007_000,
            pageSize >= 512, pageSize <= 65_536, pageSize & (pageSize - 1) == 0
        else { return false }
        let wordsBigEndian = magic & 1 == 1
        func checksum(_ data: [UInt8], _ start: (UInt32, UInt32)) -> (UInt32, UInt32) {
            var (first, second) = start
            var index = 0
            while index + 8 <= data.count {
                let words = [index, index + 4].map { at -> UInt32 in
                    let word = bigEndian(data, at)
                    return wordsBigEndian ? word : word.byteSwapped
                }
                first = first &+ words[0] &+ second
                second = second &+ words[1] &+ first
                index += 8
            }
            return (first, second)
        }
        let headerSum = checksum(Array(bytes[0..<24]), (0, 0))
        guard headerSum == (bigEndian(bytes, 24), bigEndian(bytes, 28)) else { return false }
        guard let frame = try? handle.read(upToCount: 24 + pageSize), frame.count == 24 + pageSize else {
            return false
        }
        let frameBytes = [UInt8](frame)
        guard bigEndian(frameBytes, 0) != 0, frameBytes[8..<16].elementsEqual(bytes[16..<24]) else { return false }
        let frameSum = checksum(Array(frameBytes[24...]), checksum(Array(frameBytes[0..<8]), headerSum))
        return frameSum == (bigEndian(frameBytes, 16), bigEndian(frameBytes, 20))
    }

    /// Whether a write-ahead-log index (`-shm`) says the log holds frames: `mxFrame`, at byte 16 of
    /// its header, in the byte order of the machine that wrote it.
    private static func indexRecordsFrames(_ url: URL) throws -> Bool {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return false }
        defer { try? handle.close() }
        guard let header = try handle.read(upToCount: 48), header.count >= 20 else { return false }
        let frames = header[16..<20]
        return frames.contains { $0 != 0 }
    }
}
