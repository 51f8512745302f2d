import Foundation

// The add phase of a stage's run: renames, added columns, new tables, filled values, and the
// obligations of custom steps (see `StageRun` in Migrator.swift).
extension StageRun {
    // MARK: - Add phase

    /// `leavingEmpty`: columns of new tables that rows moved into them have no value for (see
    /// ``MovedRows/columnsLeftEmpty``), created nullable until the rebuild.
    mutating func addPhase(leavingEmpty: [String: Set<String>] = [:]) throws {
        let continued = Set(mapping.sourceTable.values)
        // Removed tables stay readable until the remove phase; one whose name a destination table
        // takes moves aside first.
        for table in sourceTables where !continued.contains(table) {
            if tables[table] != nil {
                let aside = "_mw_removed_" + table
                try execute(connection.dialect.renameTable(table, to: aside), .renameTable(from: table, to: aside))
                removedTables.append(aside)
            } else {
                removedTables.append(table)
            }
        }
        try renameTables()
        let actual = try StoreSchema.read(connection)
        // An engine that resolves a reference when it is declared creates the new tables first, so
        // an added column can reference one (SQLite resolves it when it is used).
        let tablesFirst = connection.dialect.referencesNeedTheirTable
        if tablesFirst { try createTables(leavingEmpty: leavingEmpty) }
        for table in tableOrder {
            guard let columns = mapping.sourceColumn[table], let existing = actual.tables[table] else { continue }
            try renameColumns(of: table, columns, existing: Set(existing.columns.keys))
            try addColumns(to: table, keeping: Set(columns.keys))
        }
        if !tablesFirst { try createTables(leavingEmpty: leavingEmpty) }
        // Only `now` columns need to know which columns exist by now.
        try fillDefaults(mapping.nowColumns.isEmpty ? actual : StoreSchema.read(connection))
        try fillColumns()
        try remapEnumValues()
    }

    /// Creates the destination's new tables; `leavingEmpty` as ``addPhase(leavingEmpty:)`` takes it.
    /// They are created in the order a new store's tables are (``SchemaSQL/tableStatements(for:in:)``),
    /// so a new table may reference one declared after it, or two new tables each other.
    private mutating func createTables(leavingEmpty: [String: Set<String>]) throws {
        var created: [SchemaSQL.Table] = []
        for table in tableOrder where mapping.sourceTable[table] == nil {
            guard var definition = tables[table] else { continue }
            for column in leavingEmpty[table, default: []].sorted() {
                guard let sql = definition.columns[column], sql.contains(" NOT NULL"), !sql.contains(" DEFAULT ") else {
                    continue
                }
                definition.body = definition.body.replacingOccurrences(
                    of: sql, with: sql.replacingOccurrences(of: " NOT NULL", with: ""))
            }
            created.append(definition)
        }
        let (statements, ordered) = SchemaSQL.tableStatements(for: created, in: connection.dialect)
        for (index, sql) in statements.enumerated() {
            try execute(sql, index < ordered.count ? .createTable(ordered[index].name) : nil)
        }
    }

    /// Rewrites the stored raw values of enums whose cases kept their names but not their raw
    /// values, so each row keeps its case by name (a reordered `Int` enum would otherwise swap
    /// meanings silently). One statement per column, so swapped values do not chain; each
    /// concrete entity's rows once, since inherited columns appear in every sub-entity's layout.
    private mutating func remapEnumValues() throws {
        for description in destination.schema.entities {
            guard let entity = destination.entities[description.name], !entity.isAbstract,
                let old = source.entities[description.renamedFrom ?? description.name]
            else { continue }
            for column in entity.columns {
                guard case .enumeration(let after)? = column.type,
                    let oldName = mapping.entitySource[entity.name]?[column.name],
                    case .enumeration(let before)? = old.columns.first(where: { $0.name == oldName })?.type,
                    before.rawType == after.rawType,
                    let moves = before.rawValueChanges(to: after), !moves.isEmpty
                else { continue }
                let name = quoted(column.name)
                let cases = moves.map {
                    "WHEN \(StoredValues.literal($0.from, of: before)) THEN \(StoredValues.literal($0.to, of: after))"
                }
                let moved = moves.map { StoredValues.literal($0.from, of: before) }.joined(separator: ", ")
                try execute(
                    "UPDATE \(quoted(entity.table)) SET \(name) = CASE \(name) \(cases.joined(separator: " ")) ELSE \(name) END "
                        + "WHERE \(rows(of: entity)) AND \(name) IN (\(moved))",
                    .updateRows(
                        table: entity.table,
                        reason: "keeps each row's \(entity.name).\(column.property) case as its raw value changes"))
            }
        }
    }

    /// Moves the values of columns that siblings stop or start sharing (see `TableMapping.fills`):
    /// each entity's rows take their values from the column the entity used before, and rows
    /// whose values moved elsewhere leave the column they shared.
    private mutating func fillColumns() throws {
        for table in tableOrder {
            guard let fills = mapping.fills[table], !fills.isEmpty else { continue }
            let renamed = mapping.sourceColumn[table] ?? [:]
            let keeper = Dictionary(renamed.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
            // Where a source column is now: renamed, moved aside for a new column of its name, or in place.
            func current(_ column: String) -> String {
                if let kept = keeper[column] { return kept }
                return tables[table]?.columns[column] != nil ? "_mw_removed_" + column : column
            }
            for fill in fills where !fill.sources.isEmpty {
                try retypeBeforeFill(fill.column, in: table, current: current(fill.column))
                let cases = fill.sources.map { source in
                    let value = source.expression.replacingOccurrences(
                        of: TableMapping.sourcePlaceholder, with: quoted(current(source.column)))
                    return "WHEN \(SQLSyntax.string(source.entity)) THEN \(value)"
                }
                let entities = fill.sources.map { SQLSyntax.string($0.entity) }.joined(separator: ", ")
                try execute(
                    "UPDATE \(quoted(table)) SET \(quoted(fill.column)) = CASE \"_entity\" \(cases.joined(separator: " ")) END "
                        + "WHERE \"_entity\" IN (\(entities))",
                    .updateRows(table: table, reason: "moves the values of \(fill.column) into their own column"))
            }
            for fill in fills where !fill.cleared.isEmpty {
                let entities = fill.cleared.map(SQLSyntax.string).joined(separator: ", ")
                try execute(
                    "UPDATE \(quoted(table)) SET \(quoted(fill.column)) = NULL WHERE \"_entity\" IN (\(entities))",
                    .updateRows(table: table, reason: "clears \(fill.column) of the rows whose values moved"))
            }
        }
    }

    private mutating func renameTables() throws {
        let renames = mapping.sourceTable.filter { $0.key != $0.value }.sorted { $0.key < $1.key }
        let sources = Set(renames.map(\.value))
        // Swapped names (A → B while B → A) go through temporary names.
        let needsDetour = renames.contains { sources.contains($0.key) }
        var current = Dictionary(uniqueKeysWithValues: renames.map { ($0.key, $0.value) })
        if needsDetour {
            for (index, (table, old)) in renames.enumerated() {
                let detour = "_mw_renaming_\(index)"
                try execute(connection.dialect.renameTable(old, to: detour), nil)
                current[table] = detour
            }
        }
        for (table, _) in renames {
            guard let from = current[table] else { continue }
            try execute(
                connection.dialect.renameTable(from, to: table),
                .renameTable(from: mapping.sourceTable[table] ?? from, to: table))
        }
    }

    private mutating func renameColumns(of table: String, _ columns: [String: String], existing: Set<String>) throws {
        let kept = Set(columns.values)
        // A removed column whose name a new column takes moves aside; it is dropped later.
        for column in existing.sorted() where !kept.contains(column) && tables[table]?.columns[column] != nil {
            try execute(
                connection.dialect.renameColumn(column, of: table, to: "_mw_removed_" + column),
                .renameColumn(table: table, from: column, to: "_mw_removed_" + column))
        }
        let renames = columns.filter { $0.key != $0.value }.sorted { $0.key < $1.key }
        let needsDetour = renames.contains { kept.contains($0.key) }
        var current = Dictionary(uniqueKeysWithValues: renames.map { ($0.key, $0.value) })
        if needsDetour {
            for (index, (column, old)) in renames.enumerated() {
                let detour = "_mw_renaming_\(index)"
                try execute(connection.dialect.renameColumn(old, of: table, to: detour), nil)
                current[column] = detour
            }
        }
        for (column, old) in renames {
            try execute(
                connection.dialect.renameColumn(current[column] ?? old, of: table, to: column),
                .renameColumn(table: table, from: old, to: column))
        }
    }

    private mutating func addColumns(to table: String, keeping kept: Set<String>) throws {
        guard let definition = tables[table] else { return }
        for column in definition.columns.keys.sorted() where !kept.contains(column) {
            guard var sql = definition.columns[column] else { continue }
            // ADD COLUMN cannot add a NOT NULL column without a default: it is added nullable,
            // filled (by `now`, `_entity` or a custom step), and tightened by the rebuild.
            if sql.contains(" NOT NULL"), !sql.contains(" DEFAULT ") {
                sql = sql.replacingOccurrences(of: " NOT NULL", with: "")
            }
            try execute(connection.dialect.addColumn(sql, to: table), .addColumn(table: table, column: column))
            try keepNegativeZero(of: column, in: table)
        }
        try clearAddedFields(in: table, keeping: kept)
    }

    /// `ADD COLUMN` gives every existing row the column's default, but a row whose optional
    /// composite is absent must stay absent: a field's default in some columns beside NULL in
    /// another required one reads as neither, and the step was refused. The added columns of such
    /// a composite are cleared where it was absent before (every row, for a new attribute).
    private mutating func clearAddedFields(in table: String, keeping kept: Set<String>) throws {
        var groups: [String: [ColumnLayout]] = [:]
        for entity in destination.entities.values where entity.table == table {
            for column in entity.columns where column.field != nil {
                groups[column.property, default: []].append(column)
            }
        }
        for property in groups.keys.sorted() {
            let columns = groups[property] ?? []
            // An optional composite: every column may be NULL, and a required field says whether it is there.
            guard columns.allSatisfy(\.isOptional), columns.contains(where: \.isRequiredField) else { continue }
            let added = columns.filter { !kept.contains($0.name) && $0.defaultLiteral != nil }
            guard !added.isEmpty else { continue }
            let before = columns.filter { kept.contains($0.name) }
            let previouslyRequired = before.filter(\.isRequiredField)
            // Without a required field before, the composite read as present in every row.
            guard before.isEmpty || !previouslyRequired.isEmpty else { continue }
            let absent =
                previouslyRequired.isEmpty
                ? "" : " WHERE " + previouslyRequired.map { "\(quoted($0.name)) IS NULL" }.joined(separator: " OR ")
            try execute(
                "UPDATE \(quoted(table)) SET "
                    + added.map { "\(quoted($0.name)) = NULL" }.joined(separator: ", ") + absent,
                .updateRows(table: table, reason: "\(property) stays absent where it was"))
        }
    }

    /// SQLite gives the rows that existed before `ADD COLUMN` its default in a compact form, in
    /// which an integral `Double` reads back as an integer: the runtime reads it as the same
    /// number, except `-0.0`, which would lose its sign. A `-0.0` default is written out.
    private mutating func keepNegativeZero(of column: String, in table: String) throws {
        let layouts = destination.entities.values.filter { $0.table == table }
        guard
            let added = layouts.lazy.flatMap(\.columns).first(where: { $0.name == column }),
            added.type?.scalar?.keepsNegativeZero == true, added.defaultLiteral == "-0.0"
        else { return }
        let update = try connection.prepare(
            "UPDATE \(quoted(table)) SET \(quoted(column)) = \(connection.dialect.parameter)")
        update.bind(.real(-0.0), 1)
        try update.run()
        operations.append(.updateRows(table: table, reason: "\(column) defaults to -0.0"))
        touched.insert(table)
    }

    private mutating func fillDefaults(_ actual: StoreSchema) throws {
        let now = Date().timeIntervalSinceReferenceDate
        for table in tableOrder {
            if let entity = mapping.newDiscriminator[table] {
                try execute(
                    "UPDATE \(quoted(table)) SET \"_entity\" = \(SQLSyntax.string(entity))",
                    .updateRows(table: table, reason: "every existing row is a \(entity)"))
            }
            if let renames = mapping.entityRenames[table], !renames.isEmpty {
                // Rows of a removed entity whose name a renamed one takes keep apart, under another
                // value, in the same statement: the renames may swap names.
                let displaced = displacedEntities().filter { name in renames.contains { $0.new == name } }.sorted()
                let cases =
                    (renames.map { "WHEN \(SQLSyntax.string($0.old)) THEN \(SQLSyntax.string($0.new))" }
                    + displaced.map {
                        "WHEN \(SQLSyntax.string($0)) THEN \(SQLSyntax.string(MigrationContext.displacedValue(of: $0)))"
                    }).joined(separator: " ")
                try execute(
                    "UPDATE \(quoted(table)) SET \"_entity\" = CASE \"_entity\" \(cases) ELSE \"_entity\" END",
                    .updateRows(table: table, reason: "renamed entities"))
            }
            guard mapping.sourceTable[table] != nil else { continue }
            for (column, entity) in mapping.nowColumns[table] ?? [] where mapping.sourceColumn[table]?[column] == nil {
                guard actual.tables[table]?.columns[column] != nil, let layout = destination.entities[entity] else {
                    continue
                }
                // Only the rows of entities that have the attribute: a sibling's column of the same
                // name is another column (see `ColumnNames`).
                let rows = layout.discriminatorSQL(alias: quoted(table)).map { " AND " + $0 } ?? ""
                let value = connection.dialect.defaultExpression(String(now), for: .timestamp)
                try execute(
                    "UPDATE \(quoted(table)) SET \(quoted(column)) = \(value) WHERE \(quoted(column)) IS NULL\(rows)",
                    .updateRows(table: table, reason: "\(column) defaults to now"))
            }
        }
    }

    /// Gives every row that belongs to an ordered to-many relationship and has no place yet (the
    /// relationship became ordered, or a custom step linked it) a place after the placed ones, in
    /// ID order, as the store places a row it links: each list then reads in one order, always.
    mutating func placeUnplacedRows() throws {
        var placed: Set<String> = []
        for entity in destination.entities.keys.sorted() {
            guard let layout = destination.entities[entity] else { continue }
            let table = quoted(layout.table)
            for column in layout.positionColumns where placed.insert("\(layout.table).\(column)").inserted {
                let position = quoted(column)
                let inverse = quoted(String(column.dropLast("._position".count)))
                let unplaced = "\(inverse) IS NOT NULL AND \(position) IS NULL"
                let rows = try connection.prepare(
                    "SELECT \"id\", \(inverse), (SELECT COALESCE(MAX(placed.\(position)), -1) + 1 FROM \(table) placed "
                        + "WHERE placed.\(inverse) = row.\(inverse)) FROM \(table) row WHERE \(unplaced) ORDER BY \(inverse), \"id\""
                )
                var places: [(id: SQLValue, place: Int64)] = []
                var owner = SQLValue.null
                var next: Int64 = 0
                while try rows.step() {
                    if rows.value(1) != owner {
                        owner = rows.value(1)
                        if case .integer(let first) = rows.value(2) { next = first }
                    }
                    places.append((rows.value(0), next))
                    next += 1
                }
                guard !places.isEmpty else { continue }
                let update = try connection.prepare(
                    "UPDATE \(table) SET \(position) = \(connection.dialect.parameter) WHERE \"id\" = \(connection.dialect.parameter)"
                )
                for (id, place) in places {
                    update.reset()
                    update.bind(.integer(place), 1)
                    update.bind(id, 2)
                    try update.run()
                }
                operations.append(
                    .updateRows(table: layout.table, reason: "places the rows of ordered relationships that have none"))
                touched.insert(layout.table)
            }
        }
    }

    /// Writes the rows of entities that change tables into their new tables (see ``MovedRows``).
    mutating func move(_ rows: MovedRows) throws {
        for table in try rows.write(connection) {
            operations.append(.updateRows(table: table, reason: "moves the rows of an entity that changed tables"))
            touched.insert(table)
        }
    }

    /// Writes the links of relationships whose storage moved into their new storage (see ``KeptLinks``).
    mutating func carry(_ links: KeptLinks) throws {
        for table in try links.carry(connection) {
            operations.append(
                .updateRows(table: table, reason: "carries the links of a relationship into its new shape"))
            touched.insert(table)
        }
    }

    // MARK: - Obligations

    /// Runs the app's code for one obligation of a custom step; with `stub`, gives the values a
    /// stub would instead: a synthetic value of the new type for every row a value obligation
    /// names, and for a hook its attribute's columns in every row and every required column of
    /// the entity left empty a value (a required to-one, a row of its destination).
    mutating func meet(_ obligation: MigrationStage.Obligation, context: MigrationContext, stub: Bool) throws {
        let entity = try destination.entity(obligation.entity)
        let (destination, connection, name) = (destination, connection, name)
        switch obligation.work {
        case .hook(let body):
            guard stub else { return try body(context) }
            // The hook converts its attribute (a composite's or Codable value) in every row, as
            // the app's would.
            for column in entity.columns where column.type != nil && column.property == obligation.property {
                try fill(column, of: entity, onlyRowsWithoutValue: false) { row, _ in
                    try SyntheticRows.stub(for: column, row: row, of: entity, in: destination, connection: connection)
                }
            }
            for column in entity.columns where !column.isOptional {
                try fill(column, of: entity, onlyRowsWithoutValue: true) { row, _ in
                    try SyntheticRows.stub(for: column, row: row, of: entity, in: destination, connection: connection)
                }
            }
        case .value(let onlyRowsWithoutValue, let body):
            guard let column = entity.columns.first(where: { $0.property == obligation.property }) else {
                throw MigrationError.invalidPlan(
                    "stage \(name) has an obligation for \(obligation.entity).\(obligation.property ?? ""), which has no column"
                )
            }
            try fill(column, of: entity, onlyRowsWithoutValue: onlyRowsWithoutValue) { row, values in
                stub
                    ? try SyntheticRows.stub(for: column, row: row, of: entity, in: destination, connection: connection)
                    : try body(values)
            }
        }
    }

    /// Sets `column` of the rows of `entity` (those without a value, with `onlyRowsWithoutValue`)
    /// to what `value` returns for each row: all rows are read before the first is written.
    private mutating func fill(
        _ column: ColumnLayout, of entity: EntityLayout, onlyRowsWithoutValue: Bool,
        value: (Int, MigrationRow) throws -> SQLValue
    ) throws {
        let conditions =
            [entity.discriminatorSQL(alias: "t0"), onlyRowsWithoutValue ? "t0.\(quoted(column.name)) IS NULL" : nil]
            .compactMap { $0 }
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let rows = try MigrationContext(connection: connection, layout: destination).query(
            "SELECT * FROM \(quoted(entity.table)) AS t0\(filter) ORDER BY t0.\"id\"")
        guard !rows.isEmpty else { return }
        let values = try rows.enumerated().map { try value($0.offset, $0.element) }
        let update = try connection.prepare(
            "UPDATE \(quoted(entity.table)) SET \(quoted(column.name)) = \(connection.dialect.parameter) WHERE \"id\" = \(connection.dialect.parameter)"
        )
        var converts = try affinityConverts(column, in: entity.table)
        // An engine that alters tables in place gives the column its new type before the values
        // go in (its typed column would refuse them), so nothing needs keeping aside.
        if converts, connection.dialect.altersTablesInPlace {
            try retype(column, in: entity.table)
            converts = false
        }
        let keep = converts ? try exactValueInsert(entity.table, column.name) : nil
        for (row, value) in zip(rows, values) {
            update.reset()
            update.bind(value, 1)
            update.bind(row.id, 2)
            try update.run()
            guard let keep else { continue }
            keep.reset()
            keep.bind(row.id, 1)
            keep.bind(value, 2)
            try keep.run()
        }
        if converts { filled[entity.table, default: []].insert(column.name) }
        operations.append(
            .updateRows(table: entity.table, reason: "\(entity.name).\(column.property) from the custom stage"))
        touched.insert(entity.table)
    }

    /// On an engine that alters tables in place, gives `column` of `table` the destination's type
    /// now, when the store still holds it (`current` is its own name) under a source column's
    /// type: values of the new type, which a fill writes next, would not go into the old typed
    /// column (42804 on PostgreSQL: an attribute moved up its hierarchy and retyped from `Decimal`
    /// to `Bool`, or from `Bool?` to `Float = 1.5`, whose parent's rows take the default). The
    /// values convert as the one rule converts them (``ScalarType/conversion(to:)``); where no cast
    /// converts them they cannot be kept (the step declares them lost, or a custom stage fills
    /// them), and the column is emptied.
    private mutating func retypeBeforeFill(_ name: String, in table: String, current: String) throws {
        let dialect = connection.dialect
        let sourceTable = mapping.sourceTable[table] ?? table
        guard dialect.altersTablesInPlace, current == name,
            let column = destination.entities.values.lazy.filter({ $0.table == table }).flatMap(\.columns)
                .first(where: { $0.name == name }),
            let before = source.entities.values.lazy.filter({ $0.table == sourceTable }).flatMap(\.columns)
                .first(where: { $0.name == name }),
            dialect.columnType(before.storage) != dialect.columnType(column.storage)
        else { return }
        let converts = before.type?.scalar.flatMap { old in column.type?.scalar.flatMap(old.conversion(to:)) } != nil
        try retype(column, in: table, using: converts ? nil : "NULL")
    }

    /// Gives `column` of `table` the destination's type now, optional and without a default until
    /// the remove phase sets both (an alteration in place, ``SQLDialect/altersTablesInPlace``),
    /// converting its values with `using` (``conversion(of:in:to:)`` when `nil`).
    private mutating func retype(_ column: ColumnLayout, in table: String, using: String? = nil) throws {
        let dialect = connection.dialect
        try connection.execute(dialect.alterationsBracket.before)
        try execute(dialect.setDefault(nil, column: column.name, of: table), nil)
        try execute(dialect.setRequired(false, column: column.name, of: table), nil)
        try execute(
            dialect.alterColumnType(
                column.name, of: table, to: dialect.columnType(column.storage),
                using: using ?? conversion(of: column.name, in: table, to: column)),
            .rebuildTable(table))
        try connection.execute(dialect.alterationsBracket.after)
    }

    /// The temporary table that keeps the exact values obligations wrote into columns whose
    /// declared type is still the source's: its columns have no type, so SQLite converts nothing.
    static let exactValues = "temp.\"_mw_exact_values\""

    /// Whether `column` of `table` still has a source column's declared type whose affinity
    /// differs from the destination's, so values written into it now may change.
    private func affinityConverts(_ column: ColumnLayout, in table: String) throws -> Bool {
        guard let old = mapping.sourceColumn[table]?[column.name] else { return false }
        let before = source.entities.values.lazy.filter { $0.table == self.mapping.sourceTable[table] }
            .flatMap(\.columns).first { $0.name == old }
        let dialect = connection.dialect
        return before.map { dialect.columnType($0.storage) != dialect.columnType(column.storage) } ?? false
    }

    /// A statement that records, for the row with ID `?1`, the exact value `?2` an obligation wrote
    /// into `column` of `table`, with the value the column now holds for it.
    private func exactValueInsert(_ table: String, _ column: String) throws -> any DatabaseStatement {
        try connection.execute(
            "CREATE TEMP TABLE IF NOT EXISTS \"_mw_exact_values\" (\"key\", \"id\", \"value\", \"stored\", PRIMARY KEY (\"key\", \"id\"))"
        )
        let key = connection.dialect.string(table + "." + column)
        let (id, value) = (connection.dialect.parameter(1), connection.dialect.parameter(2))
        return try connection.prepare(
            connection.dialect.insertReplacing(
                into: Self.exactValues, columns: nil, key: ["\"key\"", "\"id\""],
                "VALUES (\(key), \(id), \(value), (SELECT \(quoted(column)) FROM \(quoted(table)) WHERE \"id\" = \(id)))"
            )
        )
    }

    /// The SQL a rebuild copies `column` of `table` with: for a row an obligation filled while the
    /// column had its old type, the exact value it wrote, unless later code (`didMigrate`)
    /// changed the row since; otherwise `fallback`.
    func exactValue(of column: String, in table: String, else fallback: String) -> String {
        let (name, row) = (quoted(column), quoted(table) + ".\"id\"")
        let key = SQLSyntax.string(table + "." + column)
        return
            "CASE WHEN EXISTS (SELECT 1 FROM \(Self.exactValues) AS e WHERE e.\"key\" = \(key) AND e.\"id\" = \(row) AND e.\"stored\" IS \(quoted(table)).\(name)) THEN (SELECT e.\"value\" FROM \(Self.exactValues) AS e WHERE e.\"key\" = \(key) AND e.\"id\" = \(row)) ELSE \(fallback) END"
    }

}
