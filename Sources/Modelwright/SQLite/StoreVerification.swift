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
/// This is the SQLite engine's check of a store at open: it reads SQLite's own catalog and files.
/// Another engine verifies its stores its own way (from its catalog; see `Contributing.md`,
/// "Adding a storage engine"). The checks of the files beside the store (journal, log, identity)
/// are in `StoreVerification+Files.swift`, the tokenizer the comparison uses in `SQLTokens.swift`.
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
                try verifySchema(connection, path: path, layout: layout, plan: plan, searchObjectsRestorable: true)
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
        let statement = try connection.statement(connection.dialect.schemaVersion)
        defer { statement.reset() }
        return try statement.step() ? statement.int64(0) : 0
    }

    /// Compares the schema with what its metadata names (see ``verify(_:path:layout:plan:)``),
    /// inside the caller's transaction; an open store calls it again whenever the schema cookie
    /// changed, since another process may have edited the schema while it was open.
    ///
    /// With `searchObjectsRestorable` (the check before the opening transaction), a store of the
    /// current version whose only differences are in the objects of its full-text indexes (their
    /// triggers, tables and index, found by their exact names and kinds) passes: they hold no data,
    /// and the opening transaction drops and recreates them before anything else reads or writes
    /// the rows (``restoreSearchObjects(_:layout:)``). A store of an earlier release lacks the
    /// triggers added since; refusing it would leave the app no way on. A store that a migration
    /// stage is due to read first, or an open store's schema changed meanwhile, is compared in full.
    static func verifySchema(
        _ connection: SQLiteConnection, path: String, layout: SchemaLayout, plan: MigrationPlan?,
        searchObjectsRestorable: Bool = false
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
        let metadataDifferences = differences(
            metadataOnly, expected: try entries(created: [SchemaSQL.createMetadata(in: connection.dialect)]))
        guard metadataDifferences.isEmpty else {
            throw StoreError.unexpectedSchema(path: path, differences: metadataDifferences)
        }
        let metadata = try StoreMetadata.read(on: connection)
        guard let expectedLayout = try self.layout(recorded: metadata, current: layout, plan: plan) else { return }
        let historyFormat = metadata.values[StoreMetadata.historyFormatKey]
        let historyIsKnown = historyFormat.map { $0 == HistorySQL.format }
        let found = try differences(actual, on: connection, layout: expectedLayout, historyIsKnown: historyIsKnown)
        guard !found.isEmpty else { return }
        if searchObjectsRestorable, expectedLayout.schema.checksum == layout.schema.checksum {
            let names = searchObjectNames(of: layout)
            let rest = try differences(
                actual, on: connection, layout: expectedLayout, historyIsKnown: historyIsKnown,
                setAside: { names.isRestorable($0) })
            if rest.isEmpty { return }
        }
        throw StoreError.unexpectedSchema(path: path, differences: found)
    }

    /// In the opening transaction of a store of `layout`: drops and recreates, with its rows, every
    /// full-text index whose objects (triggers, tables, index) differ from what the runtime creates,
    /// or are missing. ``verifySchema(_:path:layout:plan:searchObjectsRestorable:)`` let such a
    /// store through only when nothing else differs. Returns the names of the indexes recreated.
    @discardableResult
    static func restoreSearchObjects(_ connection: SQLiteConnection, layout: SchemaLayout) throws -> [String] {
        let indexes = SchemaSQL.searchIndexes(for: layout)
        guard !indexes.isEmpty else { return [] }
        let actual = try entries(of: connection)
        let created = try entries(created: try SchemaSQL.createStatements(for: layout, in: connection.dialect))
        var restored: [String] = []
        for index in indexes {
            let names = SearchObjectNames(indexes: [index])
            let expected = created.filter { names.contains($0.name) }
            let found = actual.filter { names.contains($0.name) }
            guard !differences(found, expected: expected).isEmpty else { continue }
            try connection.execute(
                try index.drop(in: connection.dialect) + index.create(in: connection.dialect))
            restored.append(index.name)
        }
        return restored
    }

    /// The names (compared without case, as SQLite does) of the objects of a store's full-text
    /// indexes, each with the kinds of entry it may be.
    private struct SearchObjectNames {
        private var kinds: [String: Set<String>] = [:]

        init(indexes: [SchemaSQL.SearchIndex]) {
            for index in indexes {
                for suffix in SQLiteDialect.searchIndexTableSuffixes {
                    kinds[(index.name + suffix).lowercased()] = ["table", "index"]
                }
                for suffix in SQLiteDialect.searchIndexTriggerSuffixes {
                    kinds[(index.name + suffix).lowercased()] = ["trigger"]
                }
            }
        }

        func contains(_ name: String) -> Bool { kinds[name.lowercased()] != nil }

        /// Whether `entry` is one the opening transaction drops by its name: a search object's name
        /// and one of its kinds.
        func isRestorable(_ entry: Entry) -> Bool {
            kinds[entry.name.lowercased()]?.contains(entry.type) == true
        }
    }

    private static func searchObjectNames(of layout: SchemaLayout) -> SearchObjectNames {
        SearchObjectNames(indexes: SchemaSQL.searchIndexes(for: layout))
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
    /// Entries for which `setAside` holds are left out of both sides.
    private static func differences(
        _ actual: [Entry], on connection: SQLiteConnection, layout: SchemaLayout, historyIsKnown: Bool?,
        setAside: (Entry) -> Bool = { _ in false }
    ) throws -> [String] {
        var actual = actual.filter { !setAside($0) }
        var statements = try SchemaSQL.createStatements(for: layout, in: connection.dialect)
        // History tables are the store's whether or not this opening records history: when any is
        // there, all must be, exactly as the runtime creates them (what they bring beside them,
        // `sqlite_sequence`, included).
        if actual.contains(where: {
            $0.name.hasPrefix(HistorySQL.tablePrefix) && !$0.name.hasPrefix(SyncBookkeeping.tablePrefix)
        }) {
            statements += HistorySQL.create(in: connection.dialect)
        }
        // Sync's tables (which share the history prefix) likewise: all of them, as sync creates them.
        if actual.contains(where: { $0.name.hasPrefix(SyncBookkeeping.tablePrefix) }) {
            statements += SyncBookkeeping.createStatements
        }
        var expected = try entries(created: statements).filter { !setAside($0) }
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
        // A full-text index's virtual table is `CREATE VIRTUAL TABLE … USING fts5(…)`, whose
        // arguments the tokenizer does not read as definitions: equal text is an equal table.
        if table.sql == wanted.sql { return [] }
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
    static func display(_ text: String) -> String {
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
