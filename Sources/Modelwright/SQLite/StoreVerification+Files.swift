import Foundation

// The files beside an SQLite store (its rollback journal, its write-ahead log and its index) and
// the identity stamped in its header: checked before SQLite reads them, so a file another store
// left there is refused instead of played back into this one.
extension StoreVerification {
    // MARK: - The log beside the file

    /// Refuses a hot rollback journal (`-journal`) that does not prove to be this store's.
    ///
    /// A store in rollback-journal mode (a backup made with `VACUUM INTO`, before the runtime first
    /// switches it to its write-ahead log) is recovered by SQLite on the first read from any
    /// journal beside it: the journal's pages are written into the file, whichever database they
    /// came from, before verification could look. Nothing in a journal names its database except
    /// the original first page, which every transaction that changes the schema, the free list or
    /// the file's size journals, and which carries the store's identity (``stampIdentity(on:)``).
    /// So a journal whose copy of page 1 carries this file's identity is the store's own
    /// interrupted write, and SQLite rolls it back as it should; beside a file with an identity,
    /// any other journal with a valid header (another store's, or one without page 1, which would
    /// cut the file to its size before the write) is refused with both files untouched, since
    /// playing it back could mix two databases. A file without an identity cannot be told
    /// apart: one another process is creating right now (its journal is live, not hot), or one
    /// made before identities existed.
    static func checkJournal(_ path: String) throws {
        guard let journal = FileHandle(forReadingAtPath: path + "-journal") else { return }
        defer { try? journal.close() }
        // A journal is hot only with this header: an empty, truncated or zeroed one is ignored by SQLite.
        let magic: [UInt8] = [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7]
        guard let header = try? journal.read(upToCount: 28), header.count == 28, Array(header.prefix(8)) == magic
        else { return }
        func word(_ data: Data, _ offset: Int) -> UInt32 {
            data[data.startIndex + offset..<data.startIndex + offset + 4].reduce(UInt32(0)) { ($0 << 8) | UInt32($1) }
        }
        let sectorSize = UInt64(word(header, 20))
        let pageSize = UInt64(word(header, 24))
        let refusal = StoreError.damagedStore(
            path: path,
            problems: [
                "a rollback journal (\(path)-journal) beside the store holds an interrupted write that is not "
                    + "the store's own, which opening would play back into the file"
            ])
        guard let fileIdentity = identity(inFileAt: path), fileIdentity != 0 else { return }
        guard sectorSize >= 32, pageSize >= 512, let end = try? journal.seekToEnd() else { throw refusal }
        // Records follow the header's sector: a page number, the page, a checksum.
        var offset = sectorSize
        while offset + 4 + pageSize <= end {
            try? journal.seek(toOffset: offset)
            guard let record = try? journal.read(upToCount: 64 + 4), record.count == 68 else { break }
            if word(record, 0) == 1 {
                guard Int32(bitPattern: word(record, 4 + 60)) == fileIdentity else { throw refusal }
                return
            }
            offset += 4 + pageSize + 4
        }
        throw refusal
    }

    /// Gives a new store a random identity, in the `user_version` field of its header. The first
    /// page, which holds it, is in every log whose transactions changed the schema or the free list
    /// (not one that only grew the file: the log records the size itself), and a log whose first
    /// page carries another identity belongs to another store. Call inside the transaction that
    /// creates the store, which commits to the file itself before the store switches to its log.
    static func stampIdentity(on connection: SQLiteConnection) throws {
        try connection.execute("PRAGMA user_version = \(Int32.random(in: 1...Int32.max))")
    }

    /// The identity as the connection reads it: from the log's copy of the first page if it has one.
    static func identity(on connection: SQLiteConnection) throws -> Int32 {
        let read = try SQLiteStatement(connection: connection, sql: "PRAGMA user_version")
        return try read.step() ? Int32(truncatingIfNeeded: read.int64(0)) : 0
    }

    /// The identity in the database file itself, ignoring any log: bytes 60–63 of its header,
    /// which never change once written, so a read racing a checkpoint still sees them whole.
    static func identity(inFileAt path: String) -> Int32? {
        guard let file = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? file.close() }
        guard let header = try? file.read(upToCount: 64), header.count == 64 else { return nil }
        return header[60..<64].reduce(Int32(0)) { ($0 << 8) | Int32($1) }
    }

    static func isFile(_ path: String) -> Bool {
        path != ":memory:" && !path.isEmpty
    }

    /// Whether the write-ahead log at `path` holds any frame (past its 32-byte header).
    static func hasFrames(_ path: String) -> Bool {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let size = attributes[.size] as? NSNumber
        else { return false }
        return size.int64Value > 32
    }

    /// A log found without its index is one no process has open: copied, restored or moved beside
    /// the store with it, or left by another file that had this path. SQLite applies any log whose
    /// frames are consistent with its own header, and nothing in the log names the database it
    /// belongs to, so the pages are checked: `integrity_check`, since a mix of two stores' pages
    /// can leave every b-tree well formed and only an index disagreeing with its table (which
    /// `quick_check` does not compare). It takes about a second per 25 MB, only in this rare state:
    /// a log beside a store in use, or left by a crash, has its index.
    static func checkPages(_ connection: SQLiteConnection, path: String) throws {
        let check = try SQLiteStatement(connection: connection, sql: "PRAGMA integrity_check(20)")
        var problems: [String] = []
        while try check.step() {
            let line = check.string(0)
            if line != "ok" { problems.append(display(line)) }
        }
        guard problems.isEmpty else { throw StoreError.damagedStore(path: path, problems: problems) }
    }

    /// Throws ``StoreError/storeFileReplaced(path:)`` when the file `connection` has open is no
    /// longer the one at its path (moved, replaced by `mv`, deleted). Called before each write
    /// transaction: a write would go to the old file's log, beside the new file, and the next
    /// process to open the path would apply it to the wrong database.
    static func checkFileInPlace(_ connection: SQLiteConnection) throws {
        guard connection.fileHasMoved else { return }
        // The log still holds this file's committed frames, and readers of whatever file now has
        // the path would take them for its pages: they go into the old file, and the log is emptied.
        try? connection.execute(connection.dialect.checkpoint)
        throw StoreError.storeFileReplaced(path: connection.path)
    }
}
