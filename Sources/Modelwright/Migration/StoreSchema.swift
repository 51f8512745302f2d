/// The schema of an SQLite database as SQLite reports it: tables, columns, indexes and foreign
/// keys, read with `PRAGMA`s rather than compared as SQL text.
///
/// A migration ends by comparing the migrated store's `StoreSchema` with that of a fresh store
/// of the same version; any difference is an error that names it. Column order and index names
/// are left out of the comparison: the store always names columns, and a renamed column keeps
/// its index under the old name.
struct StoreSchema: Sendable, Equatable {
    struct Column: Sendable, Equatable {
        var type: String
        var isNotNull: Bool
        var defaultValue: String?
        var isPrimaryKey: Bool
    }

    struct Index: Sendable, Hashable {
        var columns: [String]
        var isUnique: Bool
    }

    struct ForeignKey: Sendable, Hashable {
        var column: String
        var table: String
        var onDelete: String
    }

    struct Table: Sendable, Equatable {
        var columns: [String: Column]
        var indexes: Set<Index>
        /// Index names by what they index, for dropping ones no longer wanted.
        var indexNames: [Index: String]
        var foreignKeys: Set<ForeignKey>
        var isWithoutRowID: Bool

        static func == (lhs: Table, rhs: Table) -> Bool {
            lhs.hasShape(of: rhs) && lhs.indexes == rhs.indexes
        }

        /// Whether the two tables have the same columns and foreign keys, whatever their indexes.
        func hasShape(of other: Table) -> Bool {
            columns == other.columns && foreignKeys == other.foreignKeys && isWithoutRowID == other.isWithoutRowID
        }
    }

    var tables: [String: Table]

    /// Reads the schema of the database `connection` is open on.
    static func read(_ connection: SQLiteConnection) throws -> StoreSchema {
        var tables: [String: Table] = [:]
        let master = try connection.statement(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        var names: [(String, String)] = []
        while try master.step() { names.append((master.string(0), master.string(1))) }
        master.reset()
        for (name, sql) in names {
            var table = Table(
                columns: [:], indexes: [], indexNames: [:], foreignKeys: [],
                isWithoutRowID: sql.uppercased().hasSuffix("WITHOUT ROWID"))
            let info = try SQLiteStatement(connection: connection, sql: "PRAGMA table_info(\(quoted(name)))")
            while try info.step() {
                table.columns[info.string(1)] = Column(
                    type: info.string(2).uppercased(),
                    isNotNull: info.int64(3) != 0,
                    defaultValue: info.isNull(4) ? nil : info.string(4),
                    isPrimaryKey: info.int64(5) != 0
                )
            }
            let list = try SQLiteStatement(connection: connection, sql: "PRAGMA index_list(\(quoted(name)))")
            var indexes: [(String, Bool, String)] = []
            while try list.step() { indexes.append((list.string(1), list.int64(2) != 0, list.string(3))) }
            // Indexes SQLite makes for PRIMARY KEY and UNIQUE clauses ("pk", "u") are part of the table.
            for (indexName, isUnique, origin) in indexes where origin == "c" {
                let columns = try SQLiteStatement(
                    connection: connection, sql: "PRAGMA index_info(\(quoted(indexName)))")
                var names: [(Int64, String)] = []
                while try columns.step() { names.append((columns.int64(0), columns.string(2))) }
                let index = Index(columns: names.sorted { $0.0 < $1.0 }.map(\.1), isUnique: isUnique)
                table.indexes.insert(index)
                table.indexNames[index] = indexName
            }
            let keys = try SQLiteStatement(connection: connection, sql: "PRAGMA foreign_key_list(\(quoted(name)))")
            while try keys.step() {
                table.foreignKeys.insert(
                    ForeignKey(column: keys.string(3), table: keys.string(2), onDelete: keys.string(6)))
            }
            tables[name] = table
        }
        return StoreSchema(tables: tables)
    }

    /// Reads the schema a fresh store of `schema` has, from a private in-memory database.
    static func fresh(_ layout: SchemaLayout) throws -> StoreSchema {
        let connection = try SQLiteConnection(path: nil)
        for statement in SchemaSQL.createStatements(for: layout) {
            try connection.execute(statement)
        }
        return try read(connection)
    }

    /// What differs between this schema and `expected`, one sentence each; empty when they match.
    func differences(from expected: StoreSchema) -> [String] {
        var result: [String] = []
        for name in Set(tables.keys).union(expected.tables.keys).sorted() {
            guard let table = tables[name] else {
                result.append("table \(name) is missing")
                continue
            }
            guard let wanted = expected.tables[name] else {
                result.append("table \(name) should not exist")
                continue
            }
            for column in Set(table.columns.keys).union(wanted.columns.keys).sorted() {
                switch (table.columns[column], wanted.columns[column]) {
                case (nil, _): result.append("\(name).\(column) is missing")
                case (_, nil): result.append("\(name).\(column) should not exist")
                case (let have?, let want?) where have != want:
                    result.append("\(name).\(column) is \(have.summary), expected \(want.summary)")
                default: break
                }
            }
            for index in table.indexes.subtracting(wanted.indexes) {
                result.append("\(name) has an unexpected \(index.summary)")
            }
            for index in wanted.indexes.subtracting(table.indexes) {
                result.append("\(name) lacks the \(index.summary)")
            }
            for key in table.foreignKeys.symmetricDifference(wanted.foreignKeys) {
                let verb = table.foreignKeys.contains(key) ? "has an unexpected" : "lacks the"
                result.append("\(name) \(verb) foreign key \(key.column) → \(key.table)")
            }
            if table.isWithoutRowID != wanted.isWithoutRowID {
                result.append("\(name) should\(wanted.isWithoutRowID ? "" : " not") be a WITHOUT ROWID table")
            }
        }
        return result.sorted()
    }
}

extension StoreSchema.Column {
    var summary: String {
        var parts = [type.isEmpty ? "untyped" : type, isNotNull ? "NOT NULL" : "nullable"]
        if let defaultValue { parts.append("DEFAULT \(defaultValue)") }
        if isPrimaryKey { parts.append("PRIMARY KEY") }
        return parts.joined(separator: " ")
    }
}

extension StoreSchema.Index {
    var summary: String {
        "\(isUnique ? "unique index" : "index") on (\(columns.joined(separator: ", ")))"
    }
}
