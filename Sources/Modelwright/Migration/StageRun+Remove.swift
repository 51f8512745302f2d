import Foundation

// The remove phase of a stage's run: deleted rows, dropped tables, rebuilds, alterations in place,
// join tables made again and indexes (see `StageRun` in Migrator.swift).
extension StageRun {
    // MARK: - Remove phase

    mutating func removePhase() throws {
        // One read serves the whole phase: deleting rows and dropping removed tables leave the
        // destination's tables as they are, and a rebuild leaves its table without indexes. The
        // final check reads the store again, so a wrong assumption here fails the stage.
        var actual = try StoreSchema.read(connection)
        try connection.execute(connection.dialect.alterationsBracket.before)
        for table in tableOrder where actual.tables[table]?.columns["_entity"] != nil {
            let members = destination.entities.values.filter { $0.table == table }.map(\.name).sorted()
            let allowed = members.map(SQLSyntax.string).joined(separator: ", ")
            let count = try scalar(
                "SELECT count(*) FROM \(quoted(table)) WHERE \"_entity\" NOT IN (\(allowed))")
            if count > 0 {
                try dropLinks(
                    to: "SELECT \"id\" FROM \(quoted(table)) WHERE \"_entity\" NOT IN (\(allowed))", in: table, actual)
                try execute(
                    "DELETE FROM \(quoted(table)) WHERE \"_entity\" NOT IN (\(allowed))",
                    .updateRows(table: table, reason: "removes rows of entities it no longer holds"))
            }
        }
        for table in removedTables {
            try execute(connection.dialect.dropTable(table), .dropTable(table))
        }
        let reshaped = tableOrder.filter { table in
            // Indexes alone never need a rebuild: they are dropped and created below.
            guard let have = actual.tables[table], let want = expected.tables[table] else { return false }
            // A join table whose sides trade is copied even when its shape stays (both sides of a
            // self-referencing relationship lead to one table): a rename alone reverses its links.
            // On SQLite, a column whose values convert (a `Double` narrowed to a `Float`, rounded by
            // `mw_float`) may keep its declared type: the rebuild's copy converts them.
            return !have.hasShape(of: want)
                || ((tables[table]?.relationship != nil || !connection.dialect.altersTablesInPlace)
                    && mapping.copyExpression[table] != nil)
        }
        let recreated = connection.dialect.altersTablesInPlace ? joinTablesToRecreate(actual) : []
        for table in reshaped where connection.dialect.altersTablesInPlace && !recreated.contains(table) {
            guard let have = actual.tables[table], let want = expected.tables[table] else { continue }
            try alter(table, have: have, want: want)
        }
        for table in recreated {
            guard let have = actual.tables[table], let want = expected.tables[table] else { continue }
            try recreateJoinTable(table, have: have, want: want)
        }
        for table in reshaped where !connection.dialect.altersTablesInPlace {
            guard let have = actual.tables[table], let want = expected.tables[table] else { continue }
            try rebuild(table, have: have, want: want)
            actual.tables[table]?.indexes = []
            actual.tables[table]?.indexNames = [:]
        }
        try renameForeignKeys(except: recreated)
        // An alteration in place drops the indexes of the columns it dropped: read what is left.
        if connection.dialect.altersTablesInPlace { actual = try StoreSchema.read(connection) }
        try synchronizeIndexes(actual)
        if !filled.isEmpty { try connection.execute("DROP TABLE IF EXISTS \(Self.exactValues)") }
        try connection.execute(connection.dialect.alterationsBracket.after)
    }

    /// Gives the foreign keys of each continued table whose name or columns the step renamed the
    /// names a fresh store gives them (``SQLDialect/renameForeignKey(_:of:)``), as a renamed
    /// table's primary key and indexes get theirs; a join table made again has them already. One
    /// statement per key of such a table, so a step stays constant time.
    private mutating func renameForeignKeys(except recreated: [String]) throws {
        for table in tableOrder where !recreated.contains(table) {
            guard let old = mapping.sourceTable[table], let keys = expected.tables[table]?.foreignKeys else { continue }
            let renamedColumns = mapping.sourceColumn[table]?.contains { $0.key != $0.value } ?? false
            guard old != table || renamedColumns else { continue }
            for key in keys.sorted(by: { $0.column < $1.column }) {
                guard let sql = connection.dialect.renameForeignKey(key.column, of: table) else { return }
                try execute(sql, nil)
            }
        }
    }

    /// Drops the links to the rows `ids` selects of `table`, which leave it (rows of an entity
    /// that left the hierarchy, now in their own table under the same IDs) while the new version
    /// still keeps those links in `table`: a link typed as the hierarchy cannot hold them. A join
    /// table's links go; an optional to-one is cleared; a required one is left for the checks,
    /// which name it. Whether the step may lose them was settled before the stage changed anything
    /// (``KeptLinks/read(_:stage:)`` refuses an undeclared loss, whichever side holds the links).
    private mutating func dropLinks(to ids: String, in table: String, _ actual: StoreSchema) throws {
        for (other, definition) in actual.tables.sorted(by: { $0.key < $1.key }) {
            guard let relationship = tables[other]?.relationship else { continue }
            let kept = expected.tables[other]?.foreignKeys ?? []
            for key in definition.foreignKeys.sorted(by: { $0.column < $1.column })
            where key.table == table && kept.contains(where: { $0.column == key.column && $0.table == table }) {
                try execute(
                    "DELETE FROM \(quoted(other)) WHERE \(quoted(key.column)) IN (\(ids))",
                    .updateRows(table: other, reason: "drops the links of \(relationship) to rows that left \(table)"))
            }
        }
        var cleared: Set<String> = []
        for entity in destination.entities.values.sorted(by: { $0.name < $1.name }) where !entity.isAbstract {
            for column in entity.columns where column.type == nil && column.isOptional {
                guard let target = column.destination.flatMap({ destination.entities[$0] }), target.table == table,
                    actual.tables[entity.table]?.columns[column.name] != nil,
                    cleared.insert(entity.table + "." + column.name).inserted
                else { continue }
                try execute(
                    "UPDATE \(quoted(entity.table)) SET \(quoted(column.name)) = NULL WHERE \(quoted(column.name)) IN (\(ids))",
                    .updateRows(
                        table: entity.table,
                        reason: "clears \(entity.name).\(column.property) where it pointed at rows that left \(table)"))
            }
        }
    }

    private mutating func rebuild(_ table: String, have: StoreSchema.Table, want: StoreSchema.Table) throws {
        let columns = want.columns.keys.filter { have.columns[$0] != nil }.sorted()
        let expressions = columns.map { column in
            let copy = mapping.copyExpression[table]?[column] ?? quoted(column)
            return filled[table]?.contains(column) == true ? exactValue(of: column, in: table, else: copy) : copy
        }
        for (column, expression) in zip(columns, expressions)
        where want.columns[column]?.isNotNull == true && have.columns[column]?.isNotNull == false {
            let missing = try scalar("SELECT count(*) FROM \(quoted(table)) WHERE (\(expression)) IS NULL")
            if missing > 0 {
                throw MigrationError.missingValues(stage: name, table: table, column: column, rows: missing)
            }
        }
        guard let definition = tables[table] else { return }
        let copy = "_mw_rebuild_" + table
        try execute(definition.create(named: copy), nil)
        try execute(
            "INSERT INTO \(quoted(copy)) (\(columns.map(quoted).joined(separator: ", "))) SELECT \(expressions.joined(separator: ", ")) FROM \(quoted(table))",
            nil)
        rowsCopied += connection.changes
        try execute(connection.dialect.dropTable(table), nil)
        try execute(connection.dialect.renameTable(copy, to: table), .rebuildTable(table))
        report(.tableCopied, table)
    }

    /// The continued join tables an engine that alters tables in place makes again rather than
    /// alters: those that changed name or shape. A rename of either entity or relationship, or a
    /// side made ordered or unordered, may give the table to the other side (its `source` column
    /// then holds the other entity's rows, its keys lead the other way round) and changes the names
    /// its keys and indexes were made with; altering it in place left a table no fresh store has.
    /// Made again from the destination's own definition (``SchemaSQL/tables(for:in:)``, which a
    /// fresh store is created from), it is a fresh store's by construction, and the stage's check
    /// compares it with one.
    private func joinTablesToRecreate(_ actual: StoreSchema) -> [String] {
        tableOrder.filter { table in
            guard tables[table]?.relationship != nil, let old = mapping.sourceTable[table],
                let have = actual.tables[table], let want = expected.tables[table]
            else { return false }
            return old != table || !have.hasShape(of: want) || mapping.copyExpression[table] != nil
        }
    }

    /// Makes a join table again from the destination's definition (see ``joinTablesToRecreate(_:)``):
    /// its links go to a temporary table through the mapping's copy expressions (a side traded when
    /// the other side owns it now), the table is dropped and created as a fresh store creates it, and
    /// the links come back. Its indexes follow in ``synchronizeIndexes(_:)``.
    private mutating func recreateJoinTable(_ table: String, have: StoreSchema.Table, want: StoreSchema.Table) throws {
        guard let definition = tables[table] else { return }
        let columns = want.columns.keys.filter { have.columns[$0] != nil }.sorted()
        let copies = mapping.copyExpression[table] ?? [:]
        let kept = "_mw_links_" + table
        let selected = columns.map { "\(copies[$0] ?? quoted($0)) AS \(quoted($0))" }.joined(separator: ", ")
        let list = columns.map(quoted).joined(separator: ", ")
        try execute("CREATE TEMP TABLE \(quoted(kept)) AS SELECT \(selected) FROM \(quoted(table))", nil)
        try execute(connection.dialect.dropTable(table), nil)
        try execute(definition.create, nil)
        try execute("INSERT INTO \(quoted(table)) (\(list)) SELECT \(list) FROM \(quoted(kept))", nil)
        rowsCopied += connection.changes
        try execute(connection.dialect.dropTable(kept), .rebuildTable(table))
        touched.insert(table)
        report(.tableCopied, table)
    }

    /// Brings `table` to the destination's shape in place (``SQLDialect/altersTablesInPlace``):
    /// columns the destination lacks are dropped, each changed column is converted (the mapping's
    /// conversion, a narrowing guarded so an out-of-range value becomes the default or NULL as
    /// SQLite's value check would clear it, NULL for a lossy retype), its default and requirement
    /// set, and foreign keys dropped and added; required columns are checked for missing values
    /// first, as a rebuild checks them. Indexes follow in ``synchronizeIndexes(_:)``.
    private mutating func alter(_ table: String, have: StoreSchema.Table, want: StoreSchema.Table) throws {
        let dialect = connection.dialect
        let copies = mapping.copyExpression[table] ?? [:]
        for column in want.columns.keys.sorted() where have.columns[column] != nil {
            guard let had = have.columns[column], let wanted = want.columns[column], wanted.isNotNull, !had.isNotNull
            else { continue }
            // A retyped column is read as its conversion gives it: the copy expression is SQLite's,
            // which reads any value as any type.
            let value =
                had.type != wanted.type
                ? retypedValue(of: column, in: table, wanted: wanted) : copies[column] ?? quoted(column)
            let missing = try scalar("SELECT count(*) FROM \(quoted(table)) WHERE (\(value)) IS NULL")
            if missing > 0 {
                throw MigrationError.missingValues(stage: name, table: table, column: column, rows: missing)
            }
        }
        for key in have.foreignKeys.subtracting(want.foreignKeys).sorted(by: { $0.column < $1.column })
        where want.columns[key.column] != nil {
            try execute(try dialect.dropForeignKey(key.column, of: table), nil)
        }
        for column in have.columns.keys.sorted() where want.columns[column] == nil {
            try execute(dialect.dropColumn(column, of: table), nil)
        }
        let changed = want.columns.keys.sorted().filter { column in
            guard let had = have.columns[column], let wanted = want.columns[column] else { return false }
            return had != wanted
        }
        // Retyped columns convert as they change type; the others take the rebuild's copy
        // expression (a default where they held nothing, a join table's sides traded) in one update,
        // so expressions that read each other's columns read the values from before.
        var retyped: Set<String> = []
        for column in changed {
            guard let had = have.columns[column], let wanted = want.columns[column], had.type != wanted.type else {
                continue
            }
            retyped.insert(column)
            if had.defaultValue != nil { try execute(dialect.setDefault(nil, column: column, of: table), nil) }
            if had.isNotNull { try execute(dialect.setRequired(false, column: column, of: table), nil) }
            let expression = retypedValue(of: column, in: table, wanted: wanted)
            try execute(dialect.alterColumnType(column, of: table, to: wanted.type, using: expression), nil)
        }
        let assignments = copies.filter { want.columns[$0.key] != nil && !retyped.contains($0.key) }
            .sorted { $0.key < $1.key }.map { "\(quoted($0.key)) = \($0.value)" }
        if !assignments.isEmpty {
            try execute("UPDATE \(quoted(table)) SET \(assignments.joined(separator: ", "))", nil)
            rowsCopied += connection.changes
        }
        for column in changed {
            guard let had = have.columns[column], let wanted = want.columns[column] else { continue }
            if had.defaultValue != wanted.defaultValue || had.type != wanted.type {
                try execute(dialect.setDefault(wanted.defaultValue, column: column, of: table), nil)
            }
            if wanted.isNotNull != (had.isNotNull && had.type == wanted.type) {
                try execute(dialect.setRequired(wanted.isNotNull, column: column, of: table), nil)
            }
        }
        for key in want.foreignKeys.subtracting(have.foreignKeys).sorted(by: { $0.column < $1.column })
        where have.columns[key.column] != nil {
            try execute(dialect.addForeignKey(key.column, of: table, referencing: key.table), nil)
        }
        operations.append(.rebuildTable(table))
        touched.insert(table)
        report(.tableCopied, table)
    }

    /// The SQL a retyped `column` of `table` takes its values from in an alteration in place: its
    /// conversion, and where rows hold no value the default that the mapping fills them with (an
    /// optional attribute made required, whatever the table's column requires: a parent's rows
    /// may not have it) or that the required column has.
    private func retypedValue(of column: String, in table: String, wanted: StoreSchema.Column) -> String {
        let layout = destination.entities.values.filter { $0.table == table }.lazy.flatMap(\.columns)
            .first { $0.name == column }
        let expression = conversion(of: column, in: table, to: layout)
        guard let value = mapping.defaultFill[table]?[column] ?? (wanted.isNotNull ? wanted.defaultValue : nil) else {
            return expression
        }
        return "COALESCE(\(expression), \(value))"
    }

    /// The SQL that converts the stored values of `column` of `table` to the destination's type in
    /// an alteration in place (``TableMapping/typedConversion(of:from:to:copy:dialect:)``), or NULL
    /// where the step gives the values up (a lossy retype, which SQLite's check would clear).
    func conversion(of column: String, in table: String, to layout: ColumnLayout?) -> String {
        let copy = mapping.copyExpression[table]?[column]
        guard let layout, let oldName = mapping.sourceColumn[table]?[column],
            let old = source.entities.values.lazy.filter({ $0.table == self.mapping.sourceTable[table] })
                .flatMap(\.columns).first(where: { $0.name == oldName })
        else { return copy ?? "NULL" }
        return TableMapping.typedConversion(
            of: quoted(column), from: old, to: layout, copy: copy, dialect: connection.dialect)
    }

    private mutating func synchronizeIndexes(_ actual: StoreSchema) throws {
        for table in tableOrder {
            guard let definition = tables[table], var have = actual.tables[table] else { continue }
            let wanted = Set(definition.indexes.map { StoreSchema.Index(columns: $0.columns, isUnique: $0.isUnique) })
            // An index keeps its name when its column is renamed; when the destination gives that
            // name to an index of other columns (a sibling's column took the plain name, see
            // `ColumnNames`), the old one goes, and is made again under its own name below.
            let wantedNames = Dictionary(
                definition.indexes.map {
                    ($0.name.lowercased(), StoreSchema.Index(columns: $0.columns, isUnique: $0.isUnique))
                },
                uniquingKeysWith: { first, _ in first })
            for (index, name) in have.indexNames.sorted(by: { $0.value < $1.value })
            where wantedNames[name.lowercased()].map({ $0 != index }) ?? false {
                try execute(connection.dialect.dropIndex(name), .dropIndex(table: table, name: name))
                have.indexes.remove(index)
                have.indexNames[index] = nil
            }
            for index in have.indexes.subtracting(wanted).sorted(by: { "\($0)" < "\($1)" }) {
                guard let name = have.indexNames[index] else { continue }
                try execute(connection.dialect.dropIndex(name), .dropIndex(table: table, name: name))
            }
            // An index named after an old name of its table (an entity renamed, `Person_index_age`
            // on `Writer`) is made again under a fresh store's name: the old name would take the
            // name a later version's new entity of that name needs, which the plan cannot see.
            for index in definition.indexes {
                let key = StoreSchema.Index(columns: index.columns, isUnique: index.isUnique)
                guard have.indexes.contains(key), let name = have.indexNames[key], name != index.name else { continue }
                try execute(connection.dialect.dropIndex(name), .dropIndex(table: table, name: name))
                have.indexes.remove(key)
                have.indexNames[key] = nil
            }
            for index in definition.indexes
            where !have.indexes.contains(StoreSchema.Index(columns: index.columns, isUnique: index.isUnique)) {
                try execute(index.create, .createIndex(table: table, name: index.name))
            }
        }
    }

}
