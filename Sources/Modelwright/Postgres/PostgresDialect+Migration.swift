import Foundation

extension PostgresDialect {
    /// Adds the runtime's deferred foreign key under the name a fresh store gives it
    /// (``foreignKeyName(table:column:)``): PostgreSQL's own guess for an unnamed key is cut
    /// differently past 63 bytes, and the schema check compares key names.
    package func addForeignKey(_ column: String, of table: String, referencing target: String) -> String {
        "ALTER TABLE \(identifier(table)) ADD CONSTRAINT \(identifier(Self.foreignKeyName(table: table, column: column))) "
            + "FOREIGN KEY (\(identifier(column))) REFERENCES \(identifier(target))(\"id\") DEFERRABLE INITIALLY DEFERRED"
    }

    /// A block that finds the foreign key on `column` of `table` in the catalog and renames it to
    /// ``foreignKeyName(table:column:)`` when its name differs: a renamed table or column keeps the
    /// name its key was created with, which a fresh store of the new version does not have, and a
    /// later version's new table of the old name would need.
    package func renameForeignKey(_ column: String, of table: String) -> String? {
        let name = Self.foreignKeyName(table: table, column: column)
        return "DO $mw$ DECLARE found text; BEGIN SELECT k.conname INTO found FROM pg_constraint k "
            + "JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = k.conkey[1] "
            + "WHERE k.conrelid = to_regclass(\(string(identifier(table)))) AND k.contype = 'f' "
            + "AND a.attname = \(string(column)); IF found IS NOT NULL AND found <> \(string(name)) THEN "
            + "EXECUTE format('ALTER TABLE %I RENAME CONSTRAINT %I TO %I', \(string(table)), found, \(string(name))); "
            + "END IF; END $mw$"
    }

    /// The PostgreSQL statements of one migration step from `source` to `destination`, in the
    /// order they run in the step's one transaction (PostgreSQL's DDL is transactional, so a step
    /// never needs SQLite's create-copy-drop-rename rebuild: a changed column is altered in place).
    ///
    /// Tables and columns are matched by ``TableMapping``, the migrator's own matching (renames
    /// included); each definition is spelled by ``tableDefinitions(for:)``, so a migrated store
    /// and a fresh one of `destination` hold the same columns, constraints and indexes. The order:
    /// renames, dropped indexes and foreign keys, new tables, column changes (a required column
    /// without a default is added nullable and tightened after the rows are filled), dropped
    /// columns and tables (after the row work, which may read them; each table by ``dropTable(_:)``, as the
    /// migrator drops it), new foreign keys and indexes, then the metadata row (version, checksum).
    ///
    /// `rowWork` lists the row updates the migrator makes in the step (filled defaults, remapped
    /// enum values, a custom stage's values): they depend on the rows, so each is written as an SQL
    /// comment where it runs.
    package static func migrationStatements(
        from source: SchemaDescription, to destination: SchemaDescription, rowWork: [String] = []
    ) throws -> [String] {
        let dialect = PostgresDialect()
        let mapping = TableMapping(
            source: try SchemaLayout(source), destination: try SchemaLayout(destination), dialect: dialect)
        let before = Dictionary(
            try tableDefinitions(for: source).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let after = try tableDefinitions(for: destination)
        let continued = Set(mapping.sourceTable.values)
        var statements: [String] = []
        var tightened: [String] = []
        var droppedColumns: [String] = []

        // Renames first, so every later statement names tables and columns as the destination does;
        // names that swap go through temporary ones.
        let tableRenames = mapping.sourceTable.filter { $0.key != $0.value }.sorted { $0.key < $1.key }
        let swapsTables = tableRenames.contains { before[$0.key] != nil }
        for (index, rename) in tableRenames.enumerated() where swapsTables {
            statements.append(dialect.renameTable(rename.value, to: "_mw_renaming_\(index)"))
        }
        for (index, rename) in tableRenames.enumerated() {
            statements.append(dialect.renameTable(swapsTables ? "_mw_renaming_\(index)" : rename.value, to: rename.key))
        }
        for table in after {
            guard mapping.sourceTable[table.name] != nil, let columns = mapping.sourceColumn[table.name] else {
                continue
            }
            let renames = columns.filter { $0.key != $0.value }.sorted { $0.key < $1.key }
            let swaps = renames.contains { columns.values.contains($0.key) }
            for (index, rename) in renames.enumerated() where swaps {
                statements.append(dialect.renameColumn(rename.value, of: table.name, to: "_mw_renaming_\(index)"))
            }
            for (index, rename) in renames.enumerated() {
                statements.append(
                    dialect.renameColumn(swaps ? "_mw_renaming_\(index)" : rename.value, of: table.name, to: rename.key)
                )
            }
        }

        // Indexes and foreign keys that the destination spells differently go, to be made again.
        let afterIndexes = Set(after.flatMap { $0.indexes.map(\.statement) })
        let afterKeys = Set(after.flatMap { $0.foreignKeys.map(\.statement) })
        for table in after {
            guard let old = mapping.sourceTable[table.name].flatMap({ before[$0] }) else { continue }
            for index in old.indexes
            where !afterIndexes.contains(Self.renamed(index.statement, table: old, to: table)) {
                statements.append(dialect.dropIndex(index.name))
            }
            for key in old.foreignKeys {
                let column = mapping.sourceColumn[table.name]?.first { $0.value == key.column }?.key
                guard
                    column == nil
                        || !afterKeys.contains(
                            Self.renamed(key.statement, table: old, to: table, column: (key.column, column ?? "")))
                else { continue }
                // The name it was created with: renaming a table or column keeps a constraint's name.
                statements.append(
                    "ALTER TABLE \(table.quotedName) DROP CONSTRAINT IF EXISTS " + SQLSyntax.identifier(key.name))
            }
        }
        for table in after where mapping.sourceTable[table.name] == nil {
            let columns = table.columns.map(\.definition)
            statements.append(
                "CREATE TABLE \(table.quotedName) (\((columns + table.constraints).joined(separator: ", ")))")
        }

        // Each continued table's columns: added, dropped, retyped, tightened or loosened, defaulted.
        for table in after {
            guard let old = mapping.sourceTable[table.name].flatMap({ before[$0] }) else { continue }
            let sources = mapping.sourceColumn[table.name] ?? [:]
            let oldColumns = Dictionary(
                old.columns.map { ($0.name, $0.definition) }, uniquingKeysWith: { first, _ in first })
            let kept = Set(sources.values)
            // Dropped after the row work, which may read them (a custom stage splitting a column).
            for column in old.columns where !kept.contains(column.name) {
                droppedColumns.append(
                    "ALTER TABLE \(table.quotedName) DROP COLUMN \(SQLSyntax.identifier(column.name))")
            }
            for column in table.columns {
                let quotedColumn = SQLSyntax.identifier(column.name)
                let alter = "ALTER TABLE \(table.quotedName) ALTER COLUMN \(quotedColumn) "
                guard let previous = sources[column.name].flatMap({ oldColumns[$0] }) else {
                    if Self.needsFilling(column.definition) {
                        statements.append(
                            dialect.addColumn(
                                column.definition.replacingOccurrences(of: " NOT NULL", with: ""), to: table.name))
                        tightened.append(alter + "SET NOT NULL")
                    } else {
                        statements.append(dialect.addColumn(column.definition, to: table.name))
                    }
                    continue
                }
                let (oldType, oldNotNull, oldDefault) = Self.parts(previous)
                let (newType, newNotNull, newDefault) = Self.parts(column.definition)
                if oldType != newType {
                    if oldDefault != nil { statements.append(alter + "DROP DEFAULT") }
                    statements.append(alter + "TYPE \(newType) USING CAST(\(quotedColumn) AS \(newType))")
                }
                if oldDefault != newDefault || (oldType != newType && newDefault != nil) {
                    if let newDefault {
                        statements.append(alter + "SET DEFAULT \(newDefault)")
                    } else if oldType == newType {
                        statements.append(alter + "DROP DEFAULT")
                    }
                }
                if oldNotNull && !newNotNull { statements.append(alter + "DROP NOT NULL") }
                if !oldNotNull && newNotNull { tightened.append(alter + "SET NOT NULL") }
            }
        }
        statements += rowWork.map { "-- " + $0.replacingOccurrences(of: "\n", with: " ") }
        statements += tightened + droppedColumns
        // One statement per table, spelled by the dialect as the migrator runs it (with `CASCADE`).
        statements += before.keys.filter { !continued.contains($0) }.sorted().map(dialect.dropTable)
        let beforeKeys = Set(
            after.flatMap { table in
                (mapping.sourceTable[table.name].flatMap { before[$0] }).map { old in
                    old.foreignKeys.map { key in
                        Self.renamed(
                            key.statement, table: old, to: table,
                            column: (
                                key.column,
                                mapping.sourceColumn[table.name]?.first { $0.value == key.column }?.key ?? ""
                            ))
                    }
                } ?? []
            })
        let beforeIndexes = Set(
            after.flatMap { table in
                (mapping.sourceTable[table.name].flatMap { before[$0] }).map { old in
                    old.indexes.map { Self.renamed($0.statement, table: old, to: table) }
                } ?? []
            })
        statements += after.flatMap { $0.foreignKeys.map(\.statement) }.filter { !beforeKeys.contains($0) }
        statements += after.flatMap { $0.indexes.map(\.statement) }.filter { !beforeIndexes.contains($0) }
        statements.append(
            dialect.insertReplacing(
                into: SQLSyntax.identifier(SchemaSQL.metadataTable), columns: ["\"key\"", "\"value\""],
                key: ["\"key\""],
                "VALUES ('\(StoreMetadata.versionKey)', \(dialect.string(String(destination.version)))), "
                    + "('\(StoreMetadata.checksumKey)', \(dialect.string(destination.checksum.hexDigits)))"))
        return statements
    }

    /// Whether a column definition is required with no default: added nullable, filled, then tightened.
    private static func needsFilling(_ definition: String) -> Bool {
        definition.contains(" NOT NULL") && !definition.contains(" DEFAULT ") && !definition.contains("PRIMARY KEY")
    }

    /// A column definition's type, whether it is required, and its default.
    private static func parts(_ definition: String) -> (type: String, notNull: Bool, default: String?) {
        var rest = definition
        var value: String?
        if let range = rest.range(of: " DEFAULT ") {
            value = String(rest[range.upperBound...])
            rest = String(rest[..<range.lowerBound])
        }
        let notNull = rest.hasSuffix(" NOT NULL")
        if notNull { rest.removeLast(" NOT NULL".count) }
        // The name is quoted and may hold spaces; the type follows its closing quote.
        let type = rest.range(of: "\" ", options: .backwards).map { String(rest[$0.upperBound...]) } ?? rest
        return (type, notNull, value)
    }

    /// A statement of the source table spelled with the destination table's (and column's) name,
    /// to compare it with the destination's.
    private static func renamed(
        _ statement: String, table old: TableDefinition, to new: TableDefinition, column: (String, String)? = nil
    ) -> String {
        var result = statement.replacingOccurrences(of: old.quotedName, with: new.quotedName)
        if let (from, to) = column, !to.isEmpty {
            result = result.replacingOccurrences(
                of: "(\(SQLSyntax.identifier(from)))", with: "(\(SQLSyntax.identifier(to)))")
        }
        return result
    }
}
