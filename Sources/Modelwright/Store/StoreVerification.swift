import Foundation

/// Checks, before anything reads a store's rows or writes to it, that the file holds exactly what
/// the runtime's own DDL creates for the schema its metadata names: the same tables with the same
/// column definitions, constraints and options, the same indexes, and nothing else — no trigger,
/// view, virtual table, extra table or index.
///
/// A store can come from outside (a document, a backup, an app-group file another program wrote),
/// and its checksum says only which schema it claims to hold. A trigger can drop or rewrite rows,
/// a missing unique index lets duplicates in, a column declared `UNIQUE ON CONFLICT REPLACE`
/// deletes rows silently. So the expected schema is not described a second time here: the DDL
/// that creates stores (`SchemaSQL`, and `HistorySQL` when the store has history tables) runs in
/// a private in-memory database, and the two databases' `sqlite_master` are compared entry by
/// entry, as SQL tokens. SQLite builds its whole idea of a schema from that text, so equal text
/// means an equal schema, whatever `PRAGMA writable_schema` did to the file.
///
/// What a migration may legitimately leave different from a fresh store is all that is set aside:
/// the order of a table's columns (`ADD COLUMN` appends), the names of indexes (a renamed column
/// keeps its index's name), spacing, and the case of keywords. Text the runtime never writes (a
/// comment, a bracketed name) is a difference.
enum StoreVerification {
    /// Throws ``StoreError/unexpectedSchema(path:differences:)`` when the database `connection` is
    /// open on is not exactly a store of the schema its metadata records, and
    /// ``StoreError/notAStore(path:)`` when it has entries but no metadata table. An empty database
    /// passes (it is about to be created), and so does a store whose checksum is neither `layout`'s
    /// nor a source of `plan`'s stages (the caller refuses it). Reads only: the file is untouched.
    ///
    /// Also throws ``StoreError/damagedStore(path:problems:)`` for a log that belongs to another
    /// store, where that can be told, and for a rollback journal that does not prove to be this
    /// store's. Call it before the connection's first statement (a `BEGIN` included): that
    /// statement plays back a rollback journal into the file and creates a write-ahead log's
    /// index, and the checks of both depend on finding them as they were.
    ///
    /// Returns the schema cookie (`PRAGMA schema_version`) of the snapshot it verified: the
    /// opening transaction and ``Store`` compare it to tell whether the schema changed since.
    @discardableResult
    static func verify(_ connection: SQLiteConnection, path: String, layout: SchemaLayout, plan: MigrationPlan?) throws
        -> Int64
    {
        // Read before SQLite first reads the store, which may recover the log into a new index.
        let hasLog = isFile(path) && hasFrames(path + "-wal")
        let hasIndex = FileManager.default.fileExists(atPath: path + "-shm")
        if isFile(path) {
            // SQLite reads a file shorter than its header as an empty database, and would create
            // a store over it.
            if let file = FileHandle(forReadingAtPath: path) {
                defer { try? file.close() }
                let header = (try? file.read(upToCount: 16)) ?? Data()
                guard header.isEmpty || header == Data("SQLite format 3\u{0}".utf8) else {
                    throw StoreError.notAStore(path: path)
                }
            }
            try checkJournal(path)
        }
        do {
            let fileIdentity = hasLog ? identity(inFileAt: path) : nil
            // One read transaction, so the schema and the metadata naming it come from one
            // snapshot, even while another process migrates the store.
            return try connection.inTransaction(.deferred) {
                try verifySchema(connection, path: path, layout: layout, plan: plan)
                if let fileIdentity, fileIdentity != 0, try identity(on: connection) != fileIdentity {
                    throw StoreError.damagedStore(
                        path: path, problems: ["the write-ahead log holds the first page of another store"])
                }
                if hasLog && !hasIndex { try checkPages(connection, path: path) }
                return try schemaCookie(on: connection)
            }
        } catch let error as SQLiteError where hasLog && error.code == 11 {  // SQLITE_CORRUPT, read through the log
            connection.keepFileOnClose()
            throw StoreError.damagedStore(path: path, problems: [display(error.message)])
        } catch let error as SQLiteError where error.code == 26 {  // SQLITE_NOTADB: not an SQLite file at all
            connection.keepFileOnClose()
            throw StoreError.notAStore(path: path)
        } catch {
            connection.keepFileOnClose()
            throw error
        }
    }

    /// SQLite's schema cookie, which every change to `sqlite_master` increments, in any process:
    /// one read of the first page, which the transaction already holds.
    static func schemaCookie(on connection: SQLiteConnection) throws -> Int64 {
        let statement = try connection.statement("PRAGMA schema_version")
        defer { statement.reset() }
        return try statement.step() ? statement.int64(0) : 0
    }

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
    private static func checkJournal(_ path: String) throws {
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
    private static func identity(on connection: SQLiteConnection) throws -> Int32 {
        let read = try SQLiteStatement(connection: connection, sql: "PRAGMA user_version")
        return try read.step() ? Int32(truncatingIfNeeded: read.int64(0)) : 0
    }

    /// The identity in the database file itself, ignoring any log: bytes 60–63 of its header,
    /// which never change once written, so a read racing a checkpoint still sees them whole.
    private static func identity(inFileAt path: String) -> Int32? {
        guard let file = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? file.close() }
        guard let header = try? file.read(upToCount: 64), header.count == 64 else { return nil }
        return header[60..<64].reduce(Int32(0)) { ($0 << 8) | Int32($1) }
    }

    private static func isFile(_ path: String) -> Bool {
        path != ":memory:" && !path.isEmpty
    }

    /// Whether the write-ahead log at `path` holds any frame (past its 32-byte header).
    private static func hasFrames(_ path: String) -> Bool {
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
    private static func checkPages(_ connection: SQLiteConnection, path: String) throws {
        let check = try SQLiteStatement(connection: connection, sql: "PRAGMA integrity_check(20)")
        var problems: [String] = []
        while try check.step() {
            let line = check.string(0)
            if line != "ok" { problems.append(display(line)) }
        }
        guard problems.isEmpty else { throw StoreError.damagedStore(path: path, problems: problems) }
    }

    /// Compares the schema with what its metadata names (see ``verify(_:path:layout:plan:)``),
    /// inside the caller's transaction; an open store calls it again whenever the schema cookie
    /// changed, since another process may have edited the schema while it was open.
    static func verifySchema(
        _ connection: SQLiteConnection, path: String, layout: SchemaLayout, plan: MigrationPlan?
    ) throws {
        let actual: [Entry]
        do {
            actual = try entries(of: connection)
        } catch let error as SQLiteError where error.code == 11 {  // SQLITE_CORRUPT: SQLite cannot parse the schema
            throw StoreError.unexpectedSchema(path: path, differences: [display(error.message)])
        }
        guard !actual.isEmpty else { return }
        guard actual.contains(where: { $0.type == "table" && $0.name == SchemaSQL.metadataTable }) else {
            throw StoreError.notAStore(path: path)
        }
        // The metadata table's own definition is checked before its rows say which schema to expect.
        let metadataOnly = actual.filter { $0.table == SchemaSQL.metadataTable }
        let metadataDifferences = differences(metadataOnly, expected: try entries(created: [SchemaSQL.createMetadata]))
        guard metadataDifferences.isEmpty else {
            throw StoreError.unexpectedSchema(path: path, differences: metadataDifferences)
        }
        let metadata = try StoreMetadata.read(on: connection)
        guard let expectedLayout = try self.layout(recorded: metadata, current: layout, plan: plan) else { return }
        let historyFormat = metadata.values[StoreMetadata.historyFormatKey]
        let found = try differences(
            actual, on: connection, layout: expectedLayout,
            historyIsKnown: historyFormat.map { $0 == HistorySQL.format })
        guard found.isEmpty else { throw StoreError.unexpectedSchema(path: path, differences: found) }
    }

    /// What differs between the schema of the database `connection` is open on and what the
    /// runtime creates for `layout` (with history tables, when the store has any), one sentence
    /// each, down to the entries of every index: the check a migration stage ends with, so a
    /// stage that leaves anything behind (a trigger, a view, `sqlite_stat1`) fails then, naming
    /// it, rather than every later opening of the store.
    static func differences(on connection: SQLiteConnection, layout: SchemaLayout) throws -> [String] {
        let format = try StoreMetadata.read(on: connection).values[StoreMetadata.historyFormatKey]
        return try differences(
            try entries(of: connection), on: connection, layout: layout,
            historyIsKnown: format.map { $0 == HistorySQL.format })
    }

    /// `historyIsKnown` is `false` when the metadata records a history format other than this
    /// runtime's: those tables are set aside here, and an opening that records history refuses
    /// the store with ``StoreError/unsupportedHistoryFormat(found:supported:)`` (one that does
    /// not never touches them).
    private static func differences(
        _ actual: [Entry], on connection: SQLiteConnection, layout: SchemaLayout, historyIsKnown: Bool?
    ) throws -> [String] {
        var actual = actual
        var statements = SchemaSQL.createStatements(for: layout)
        // History tables are the store's whether or not this opening records history: when any is
        // there, all must be, exactly as the runtime creates them (what they bring beside them,
        // `sqlite_sequence`, included).
        if actual.contains(where: { $0.name.hasPrefix(HistorySQL.tablePrefix) }) {
            statements += HistorySQL.create
        }
        var expected = try entries(created: statements)
        if historyIsKnown == false {
            actual.removeAll { $0.table.hasPrefix(HistorySQL.tablePrefix) }
            expected.removeAll { $0.table.hasPrefix(HistorySQL.tablePrefix) }
        }
        let found = differences(actual, expected: expected)
        guard found.isEmpty else { return found }
        return try indexDifferences(actual, on: connection)
    }

    /// Every index must hold one entry per row of its table. Equal SQL text does not say so: an
    /// index entry's root page can be pointed (with `writable_schema`) at an empty b-tree, and a
    /// unique index there enforces nothing. So the rows of each table are counted (SQLite counts a
    /// b-tree's cells page by page), and so are the entries of each of its indexes, by a scan that
    /// must use that index: a plain `count(*)`, even with `INDEXED BY`, counts whichever b-tree of
    /// the table is smallest, so the scan tests the index's first column (always true, never
    /// simplified away). On a store with 100,000 rows in a table of five indexes this adds about
    /// 15 milliseconds to opening (see <doc:Security#Store-files-from-outside>). An index whose
    /// b-tree holds as many entries as the table has rows, but the wrong ones, is not caught here;
    /// the log check's `integrity_check` would, at about a second per 25 MB.
    private static func indexDifferences(_ actual: [Entry], on connection: SQLiteConnection) throws -> [String] {
        var result: [String] = []
        var rowCounts: [String: Int64] = [:]
        func count(_ sql: String) throws -> Int64 {
            let statement = try SQLiteStatement(connection: connection, sql: sql)
            return try statement.step() ? statement.int64(0) : 0
        }
        for entry in actual.sorted(by: { $0.name < $1.name }) where entry.type == "index" && entry.rootPage > 0 {
            let table = quoted(entry.table)
            let first = try SQLiteStatement(
                connection: connection, sql: "SELECT name FROM pragma_index_info(?) WHERE seqno = 0")
            first.bind(entry.name, 1)
            guard try first.step(), !first.isNull(0) else { continue }
            let column = quoted(first.string(0))
            let rows: Int64
            if let known = rowCounts[entry.table] {
                rows = known
            } else {
                rows = try count("SELECT count(*) FROM \(table) NOT INDEXED")
                rowCounts[entry.table] = rows
            }
            let entries = try count(
                "SELECT count(*) FROM \(table) INDEXED BY \(quoted(entry.name)) WHERE \(column) IS NOT NULL OR \(column) IS NULL"
            )
            if entries != rows {
                result.append(
                    "the index \(display(quoted(entry.name))) holds \(entries) entries for \(rows) rows of "
                        + display(table))
            }
        }
        return result
    }

    /// Throws ``StoreError/storeFileReplaced(path:)`` when the file `connection` has open is no
    /// longer the one at its path (moved, replaced by `mv`, deleted). Called before each write
    /// transaction: a write would go to the old file's log, beside the new file, and the next
    /// process to open the path would apply it to the wrong database.
    static func checkFileInPlace(_ connection: SQLiteConnection) throws {
        guard connection.fileHasMoved else { return }
        // The log still holds this file's committed frames, and readers of whatever file now has
        // the path would take them for its pages: they go into the old file, and the log is emptied.
        try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        throw StoreError.storeFileReplaced(path: connection.path)
    }

    /// The layout of the version the store's metadata records, when it is the current one or the
    /// source of one of the plan's stages.
    private static func layout(
        recorded metadata: StoreMetadata, current: SchemaLayout, plan: MigrationPlan?
    ) throws -> SchemaLayout? {
        guard let checksum = metadata.checksum else { return nil }
        if checksum == current.schema.checksum.hexDigits { return current }
        guard let stage = plan?.stages.first(where: { $0.source.checksum.hexDigits == checksum }) else { return nil }
        return try SchemaLayout(stage.source.schema())
    }

    // MARK: - Entries

    /// One row of `sqlite_master`.
    private struct Entry {
        var type: String
        var name: String
        var table: String
        var rootPage: Int64
        var sql: String?
    }

    private static func entries(of connection: SQLiteConnection) throws -> [Entry] {
        let statement = try SQLiteStatement(
            connection: connection, sql: "SELECT type, name, tbl_name, rootpage, sql FROM sqlite_master")
        var entries: [Entry] = []
        while try statement.step() {
            entries.append(
                Entry(
                    type: statement.isNull(0) ? "" : statement.string(0),
                    name: statement.isNull(1) ? "" : statement.string(1),
                    table: statement.isNull(2) ? "" : statement.string(2),
                    rootPage: statement.int64(3),
                    sql: statement.isNull(4) ? nil : statement.string(4)))
        }
        return entries
    }

    /// The entries a database created by `statements` has, from a private in-memory database.
    private static func entries(created statements: [String]) throws -> [Entry] {
        let memory = try SQLiteConnection(path: nil)
        // One transaction: SQLite rereads the schema once, not after every statement.
        try memory.inTransaction(.deferred) { try memory.execute(statements) }
        return try entries(of: memory)
    }

    // MARK: - Comparing

    /// What one entry creates, with what may differ between a migrated store and a fresh one set aside.
    private enum Shape: Hashable {
        /// A table: the tokens before its definitions (`CREATE TABLE "name"`), each definition
        /// (a column or a table constraint) in canonical text, and the options after them.
        case table(head: String, definitions: [[String]: Int], options: String)
        /// An index SQLite made for a table's `PRIMARY KEY` or `UNIQUE` clause (no SQL of its own).
        case automaticIndex(name: String)
        /// Any other entry (an index, a trigger, a view) in canonical text, the index's name left out.
        case text(String)
    }

    /// What differs between the entries of the store and those expected, one sentence each.
    private static func differences(_ actual: [Entry], expected: [Entry]) -> [String] {
        var result: [String] = []
        let expectedTables = Dictionary(
            expected.filter { $0.type == "table" }.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let actualTables = Dictionary(
            actual.filter { $0.type == "table" }.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for name in Set(actualTables.keys).union(expectedTables.keys).sorted() {
            switch (actualTables[name], expectedTables[name]) {
            case (nil, _): result.append("the table \(display(quoted(name))) is missing")
            case (let table?, nil): result.append("the store has an unexpected \(describe(table))")
            case (let table?, let wanted?): result += tableDifferences(table, wanted)
            }
        }
        // Indexes, triggers, views and anything else, compared by what they do, whatever their names.
        var wanted: [String: [Shape: Int]] = [:]
        for entry in expected where entry.type != "table" {
            wanted[entry.table, default: [:]][shape(of: entry), default: 0] += 1
        }
        var extra: [Entry] = []
        for entry in actual where entry.type != "table" {
            let key = shape(of: entry)
            if let count = wanted[entry.table]?[key], count > 0 {
                wanted[entry.table]?[key] = count - 1
            } else {
                extra.append(entry)
            }
        }
        for entry in extra {
            result.append("the store has an unexpected \(describe(entry))")
        }
        for entry in expected where entry.type != "table" {
            let key = shape(of: entry)
            if let count = wanted[entry.table]?[key], count > 0 {
                wanted[entry.table]?[key] = count - 1
                result.append("the \(describe(entry)) is missing")
            }
        }
        // Two entries on one root page read and write the same b-tree: only a damaged or edited
        // `sqlite_master` can say so.
        var owners: [Int64: String] = [:]
        for entry in actual where entry.type == "table" || entry.type == "index" {
            guard entry.rootPage > 0 else {
                if entry.sql?.uppercased().hasPrefix("CREATE VIRTUAL") != true {
                    result.append("the \(entry.type) \(display(entry.name)) has no storage of its own")
                }
                continue
            }
            if let other = owners[entry.rootPage] {
                result.append("\(display(entry.name)) and \(display(other)) share one b-tree (page \(entry.rootPage))")
            } else {
                owners[entry.rootPage] = entry.name
            }
        }
        return result
    }

    private static func tableDifferences(_ table: Entry, _ wanted: Entry) -> [String] {
        guard case .table(let head, let definitions, let options) = shape(of: table),
            case .table(let wantedHead, let wantedDefinitions, let wantedOptions) = shape(of: wanted)
        else { return ["the table \(display(table.name)) is not defined as the schema defines it"] }
        guard head == wantedHead else {
            return ["the table \(display(table.name)) is defined as \(display(head)), expected \(display(wantedHead))"]
        }
        var result: [String] = []
        let name = display(table.name)
        var extra: [[String]: Int] = [:]
        var missing: [[String]: Int] = [:]
        for (definition, count) in definitions where count > wantedDefinitions[definition] ?? 0 {
            extra[definition] = count - (wantedDefinitions[definition] ?? 0)
        }
        for (definition, count) in wantedDefinitions where count > definitions[definition] ?? 0 {
            missing[definition] = count - (definitions[definition] ?? 0)
        }
        // A changed column is reported once, paired with the expected definition of the same name.
        let sortedMissing = missing.keys.sorted { $0.lexicographicallyPrecedes($1) }
        var paired: Set<[String]> = []
        for definition in extra.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            let text = display(definition.joined(separator: " "))
            if let partner = sortedMissing.first(where: { $0.first == definition.first && !paired.contains($0) }) {
                paired.insert(partner)
                result.append("in \(name), \(text) was expected as \(display(partner.joined(separator: " ")))")
            } else {
                result.append("\(name) has an unexpected definition \(text)")
            }
        }
        for definition in sortedMissing where !paired.contains(definition) {
            result.append("\(name) lacks the definition \(display(definition.joined(separator: " ")))")
        }
        if options != wantedOptions {
            let want = wantedOptions.isEmpty ? "none" : display(wantedOptions)
            result.append("\(name) has the options \(options.isEmpty ? "none" : display(options)), expected \(want)")
        }
        return result
    }

    private static func shape(of entry: Entry) -> Shape {
        guard let sql = entry.sql else { return .automaticIndex(name: entry.type + " " + entry.name) }
        guard var tokens = SQLTokens(sql) else {
            // Text the runtime never writes: it matches nothing, so the entry is reported.
            return .text("unreadable " + entry.type + " " + sql)
        }
        if entry.type == "table", let open = tokens.items.firstIndex(of: "(") {
            var definitions: [[String]: Int] = [:]
            var depth = 0
            var current: [String] = []
            var end = tokens.items.count
            for index in (open + 1)..<tokens.items.count {
                let token = tokens.items[index]
                if token == "(" { depth += 1 }
                if token == ")" {
                    if depth == 0 {
                        end = index
                        break
                    }
                    depth -= 1
                }
                if token == "," && depth == 0 {
                    definitions[current, default: 0] += 1
                    current = []
                } else {
                    current.append(token)
                }
            }
            definitions[current, default: 0] += 1
            let options = end + 1 < tokens.items.count ? tokens.items[(end + 1)...].joined(separator: " ") : ""
            return .table(
                head: tokens.items[..<open].joined(separator: " "), definitions: definitions,
                options: end == tokens.items.count ? "(unclosed)" : options)
        }
        // `CREATE [UNIQUE] INDEX name ON …`: the name is set aside, the entry's type and table kept.
        if entry.type == "index", let position = tokens.items.firstIndex(of: "INDEX"),
            position + 1 < tokens.items.count
        {
            tokens.items.remove(at: position + 1)
        }
        return .text(entry.type + " " + tokens.items.joined(separator: " "))
    }

    private static func describe(_ entry: Entry) -> String {
        let name = display(quoted(entry.name))
        switch entry.type {
        case "table", "view", "trigger": return "\(entry.type) \(name)"
        case "index":
            guard let sql = entry.sql, let tokens = SQLTokens(sql), let on = tokens.items.firstIndex(of: "ON") else {
                return "index \(name) on \(display(quoted(entry.table)))"
            }
            let kind = tokens.items.contains("UNIQUE") ? "unique index" : "index"
            return "\(kind) \(name) on \(display(tokens.items[(on + 1)...].joined(separator: " ")))"
        default: return "\(display(entry.type)) \(name)"
        }
    }

    /// Text from the file, fit for a message read in a terminal or a log: control, format and
    /// separator characters spelled as `\u{…}` escapes, and long text cut.
    private static func display(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars.prefix(200) {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .unassigned, .privateUse, .surrogate:
                result += "\\u{\(String(scalar.value, radix: 16))}"
            default:
                result.unicodeScalars.append(scalar)
            }
        }
        return text.unicodeScalars.count > 200 ? result + "…" : result
    }
}

/// The tokens of one SQL statement in canonical text: keywords and bare names in upper case,
/// quoted names and strings re-quoted the runtime's way, numbers and punctuation as written, so
/// two statements SQLite reads alike compare equal token by token.
///
/// Strict on purpose: what the runtime's DDL and SQLite's own rewriting (`ALTER TABLE`) never
/// produce — comments, bracketed or backquoted names, other characters — makes the text
/// unreadable, and a store holding it is refused rather than read past.
private struct SQLTokens {
    var items: [String] = []

    init?(_ sql: String) {
        let bytes = Array(sql.utf8)
        var index = 0
        func isWordByte(_ byte: UInt8) -> Bool {
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x5F || byte == 0x24
        }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0C, 0x0D:
                index += 1
            case 0x22, 0x27:  // "name", 'text'
                var value: [UInt8] = []
                index += 1
                var closed = false
                while index < bytes.count {
                    if bytes[index] == byte {
                        if index + 1 < bytes.count && bytes[index + 1] == byte {
                            value.append(byte)
                            index += 2
                            continue
                        }
                        index += 1
                        closed = true
                        break
                    }
                    value.append(bytes[index])
                    index += 1
                }
                guard closed else { return nil }
                let text = String(decoding: value, as: UTF8.self)
                items.append(byte == 0x22 ? SQLSyntax.identifier(text) : SQLSyntax.string(text))
            case 0x28, 0x29, 0x2C, 0x3B, 0x2B:  // ( ) , ; +
                items.append(String(UnicodeScalar(byte)))
                index += 1
            case 0x2D:  // -, but not the start of a comment
                guard index + 1 >= bytes.count || bytes[index + 1] != 0x2D else { return nil }
                items.append("-")
                index += 1
            case _ where (byte == 0x58 || byte == 0x78) && index + 1 < bytes.count && bytes[index + 1] == 0x27:
                // X'…': a blob literal, in lower-case hexadecimal.
                guard let close = bytes[(index + 2)...].firstIndex(of: 0x27) else { return nil }
                let digits = bytes[(index + 2)..<close]
                guard digits.allSatisfy({ isWordByte($0) }) else { return nil }
                items.append("X'" + String(decoding: digits, as: UTF8.self).lowercased() + "'")
                index = close + 1
            case _ where byte >= 0x30 && byte <= 0x39 || byte == 0x2E:  // a number, as written
                let start = index
                while index < bytes.count,
                    isWordByte(bytes[index]) || bytes[index] == 0x2E
                        || ((bytes[index] == 0x2B || bytes[index] == 0x2D)
                            && (bytes[index - 1] == 0x65 || bytes[index - 1] == 0x45))
                {
                    index += 1
                }
                items.append(String(decoding: bytes[start..<index], as: UTF8.self))
            case _ where isWordByte(byte):
                let start = index
                while index < bytes.count, isWordByte(bytes[index]) { index += 1 }
                items.append(String(decoding: bytes[start..<index], as: UTF8.self).uppercased())
            default:
                return nil
            }
        }
    }
}
