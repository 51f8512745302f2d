import Foundation

// Over 1,000 lines for now (1,350): one stage's run (`StageRun`) goes through its phases (add,
// custom steps, remove, checks) over shared private state. The split is along those phases, each
// a family of operations: `StageRun+Add` (renames, added columns, new tables, filled values),
// `StageRun+Remove` (deleted rows, dropped tables, rebuilds, alterations in place, join tables made
// again, indexes), `StageRun+Checks` (from `check(everyTable:)` on). It opens that state to the
// module, and it is a move of ~1,100 lines with no change of logic: several branches of one wave
// edit this file in parallel (the PostgreSQL migration work: this wave's join tables, the last
// wave's table order), and a move under them turns each of their edits into a conflict. So it is
// the first commit after a wave's merge, not part of one. The link checks already live in
// `KeptLinks`, moved rows in `MovedRows`. Its SQL text comes from the connection's dialect
// (`SQLDialect`).

/// Runs migration stages on a store's writer connection, each in its own transaction.
///
/// A stage goes in two phases around the app's custom steps:
///
/// 1. **Add** (after `willMigrate`): rename tables and columns, add new columns (in place, with
///    their default; a required column with no default is added nullable for a custom step to
///    fill), fill `now` defaults and `_entity` values, create new tables.
/// 2. **Remove** (after `didMigrate`): delete rows of entities that left a table, drop removed
///    tables, rebuild every table whose shape still differs from a fresh store's with SQLite's
///    12-step procedure (create, copy, drop, rename), then drop and create indexes.
///
/// The stage ends by checking foreign keys and comparing the store's schema with a fresh store
/// of the destination version; the metadata row records the new checksum in the same transaction,
/// so a store is always wholly at one version or the next.
struct Migrator {
    let connection: any DatabaseConnection
    let progress: (@Sendable (MigrationProgress) -> Void)?
    /// Whether custom steps' obligations are met by synthetic stubs instead of the app's code:
    /// how tools run a custom stage on rows before any app implements it.
    var stubsObligations = false

    /// Runs one stage in its own transaction and returns what it did to the tables;
    /// `freshSchemas` remembers what fresh stores look like across stages (the planner runs
    /// hundreds of them).
    @discardableResult
    func run(
        _ stage: MigrationStage, number: Int, of count: Int, freshSchemas: FreshSchemaCache? = nil
    ) throws -> [MigrationOperation] {
        // A stage's table rebuilds need foreign keys off, and SQLite ignores the pragma inside a transaction.
        if let off = connection.dialect.foreignKeysOff { try connection.execute(off) }
        defer { if let on = connection.dialect.foreignKeysOn { try? connection.execute(on) } }
        let result = try connection.inTransaction(.immediate) {
            try runInOpenTransaction(stage, number: number, of: count, freshSchemas: freshSchemas)
        }
        reportCommitted(result)
        return result.operations
    }

    /// What one stage did, for the progress report after it commits.
    struct StageResult {
        let stage: MigrationStage
        let number: Int
        let count: Int
        let operations: [MigrationOperation]
        let rowsCopied: Int
    }

    /// Runs one stage inside the caller's write transaction, begun with foreign keys off, and
    /// records the destination version in it; the caller commits, then calls ``reportCommitted(_:)``.
    /// A store opening runs each stage so, in the transaction that read the store's version.
    ///
    /// `records` are the app's record types, of the `current` version: the rows the stage changed
    /// of each entity whose columns at the stage's destination are the current version's are
    /// decoded with them (``RecordDecodingCheck``), so a value a stage writes that the app cannot
    /// read fails that stage, not a later one.
    func runInOpenTransaction(
        _ stage: MigrationStage, number: Int, of count: Int, freshSchemas: FreshSchemaCache? = nil,
        records: [any Record.Type] = [], current: SchemaLayout? = nil
    ) throws -> StageResult {
        // The statements kept by shape were rendered for the schema this stage changes.
        connection.forgetShapes()
        defer { connection.forgetShapes() }
        var run = try StageRun(stage: stage, connection: connection, freshSchemas: freshSchemas) {
            event, table, rows in
            report(event, stage: stage, number: number, of: count, table: table, rows: rows)
        }
        run.report(.stageStarted, nil)
        let kept = try run.keptRowCounts()
        let before = MigrationContext(connection: connection, layout: run.source)
        for step in stage.customSteps { try step.willMigrate?(before) }
        // The links of every relationship the stage keeps (of those whose storage moves, for a
        // stage without the app's code), read before anything changes.
        let links = KeptLinks(
            source: run.source, destination: run.destination, mapping: run.mapping, all: !stage.customSteps.isEmpty
        ) { entity, relationship in
            stage.declaresLoss(of: entity, relationship, in: run.source.schema)
        } entityLost: { entity in
            stage.declaresLoss(of: entity, nil, in: run.source.schema)
        }
        try links.read(connection, stage: run.name)
        // An entity removed with its rows is a loss the step declares, as a link's is.
        try run.checkRemovals { stage.declaresLoss(of: $0, nil, in: run.source.schema) }
        // The rows of entities that change tables move with their IDs, before the app's code.
        let moved = MovedRows(
            source: run.source, destination: run.destination, mapping: run.mapping, dialect: connection.dialect)
        try moved.read(connection)
        try run.dropChangedSearchIndexes()
        try run.addPhase(leavingEmpty: moved.columnsLeftEmpty)
        try run.move(moved)
        try run.carry(links)
        let after = MigrationContext(
            connection: connection, layout: run.destination,
            removed: (run.source, run.removedEntityTables(), run.displacedEntities()))
        for step in stage.customSteps {
            for obligation in step.obligations {
                try run.meet(obligation, context: after, stub: stubsObligations)
            }
            try step.didMigrate(after)
        }
        if !stage.customSteps.isEmpty { try run.linkOneToOnes() }
        try run.placeUnplacedRows()
        try run.removePhase()
        try run.clearUnreadableValues(except: stage.customSteps.flatMap(\.obligations))
        try run.createSearchIndexes()
        try run.check(everyTable: !stage.customSteps.isEmpty)
        // The app's code may have written any Codable column: each holds JSON of the shape its
        // version declares, as far as the archive records it, or this stage fails, not a later one.
        if !stage.customSteps.isEmpty && !stubsObligations { try run.checkJSONShapes() }
        try links.check(connection, stage: run.name)
        if let current, !records.isEmpty {
            try RecordDecodingCheck.run(
                records, layout: run.destination, current: current, on: connection, stage: run.name,
                // The last stage reads every row, as opening the store will.
                changed: stage.customSteps.isEmpty && stage.destination.version != current.schema.version
                    ? run.changedTables : nil)
        }
        // A stub cannot pair the two sides of a one-to-one (it points every row at a row it finds),
        // nor know which moved rows the app's code keeps: the app's code is held to both.
        if !stubsObligations {
            try run.checkOneToOnes(everyTable: !stage.customSteps.isEmpty)
            try run.checkKeptRows(kept)
        }
        try SyncBookkeeping.migrate(from: run.source, to: run.destination, mapping: run.mapping, on: connection)
        try StoreMetadata.record(run.destination.schema, on: connection)
        try HistorySQL.recordMigration(on: connection)
        return StageResult(
            stage: stage, number: number, count: count, operations: run.operations, rowsCopied: run.rowsCopied)
    }

    /// Tells `progress` that the stage committed.
    func reportCommitted(_ result: StageResult) {
        report(
            .stageCommitted, stage: result.stage, number: result.number, of: result.count, table: nil,
            rows: result.rowsCopied)
    }

    private func report(
        _ event: MigrationProgress.Event, stage: MigrationStage, number: Int, of count: Int, table: String?, rows: Int
    ) {
        progress?(
            MigrationProgress(
                event: event, stage: number, stageCount: count, fromVersion: stage.source.version,
                toVersion: stage.destination.version, table: table, rowsCopied: rows))
    }
}

/// The state of one stage while it runs.
private struct StageRun {
    let stage: MigrationStage
    let connection: any DatabaseConnection
    let source: SchemaLayout
    let destination: SchemaLayout
    let mapping: TableMapping
    /// The destination's tables, by name.
    let tables: [String: SchemaSQL.Table]
    let tableOrder: [String]
    /// The source version's table names.
    let sourceTables: [String]
    let expected: StoreSchema
    let onProgress: (MigrationProgress.Event, String?, Int) -> Void
    private(set) var operations: [MigrationOperation] = []
    private(set) var rowsCopied = 0
    /// Tables whose rows this stage changed, for the foreign key check.
    private var touched: Set<String> = []
    /// Tables whose rows this stage changed or copied.
    var changedTables: Set<String> { touched.union(operations.map(\.table)) }
    /// Columns an obligation filled while they still had the source version's declared type, by
    /// table: that type's affinity may have changed the values as they were written (a `Double`
    /// into a `Decimal`'s `TEXT` column becomes text, a `String` "007" in an `INTEGER` column
    /// becomes 7), so each value is also kept exactly in ``exactValues`` for the rebuild to copy.
    private var filled: [String: Set<String>] = [:]
    /// Source tables no destination table continues, by their current name.
    private var removedTables: [String] = []
    let name: String

    init(
        stage: MigrationStage, connection: some DatabaseConnection, freshSchemas: FreshSchemaCache?,
        onProgress: @escaping (MigrationProgress.Event, String?, Int) -> Void
    ) throws {
        self.stage = stage
        self.connection = connection
        source = try SchemaLayout(stage.source.schema())
        destination = try SchemaLayout(stage.destination.schema())
        mapping = TableMapping(source: source, destination: destination, dialect: connection.dialect)
        let definitions = SchemaSQL.tables(for: destination, in: connection.dialect)
        tables = Dictionary(definitions.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        tableOrder = definitions.map(\.name)
        sourceTables = SchemaSQL.tables(for: source, in: connection.dialect).map(\.name)
        expected = try StoreSchema.fresh(definitions, on: connection, cache: freshSchemas)
        self.onProgress = onProgress
        name = "from version \(stage.source.version) to \(stage.destination.version)"
    }

    func report(_ event: MigrationProgress.Event, _ table: String?) {
        onProgress(event, table, rowsCopied)
    }

    private mutating func execute(_ sql: String, _ operation: MigrationOperation?) throws {
        try connection.execute(sql)
        if let operation {
            operations.append(operation)
            if !operation.isConstantTime { touched.insert(operation.table) }
        }
    }

    // MARK: - Full-text indexes

    /// Removes, before the stage changes a table, each full-text index of the source that the
    /// destination does not keep as it is (other attributes, a renamed table or column, none):
    /// its triggers would write columns the stage renames or drops.
    mutating func dropChangedSearchIndexes() throws {
        let kept = Set(SchemaSQL.searchIndexes(for: destination))
        for index in SchemaSQL.searchIndexes(for: source) where !kept.contains(index) {
            let statements = try index.drop(in: connection.dialect)
            for (number, sql) in statements.enumerated() {
                try execute(
                    sql, number == statements.count - 1 ? .dropIndex(table: index.table, name: index.name) : nil)
            }
        }
    }

    /// Creates, once every table has its final shape and rows, each full-text index of the
    /// destination that the source did not have as it is, filled from the rows; and rebuilds a
    /// kept one whose table the stage recreated, since its triggers went with the old table.
    mutating func createSearchIndexes() throws {
        let had = Set(SchemaSQL.searchIndexes(for: source))
        let recreated = Set(
            operations.compactMap { operation -> String? in
                switch operation {
                case .createTable(let table), .rebuildTable(let table), .renameTable(_, let table): table
                default: nil
                }
            })
        for index in SchemaSQL.searchIndexes(for: destination)
        where had.contains(index) && !recreated.contains(index.table) {
            // Kept as it is: only the rows the stage wrote need indexing.
            try connection.execute(try index.synchronize(in: connection.dialect))
        }
        for index in SchemaSQL.searchIndexes(for: destination)
        where !had.contains(index) || recreated.contains(index.table) {
            let statements =
                (had.contains(index) ? try index.drop(in: connection.dialect) : [])
                + (try index.create(in: connection.dialect))
            for (number, sql) in statements.enumerated() {
                try execute(
                    sql, number == statements.count - 1 ? .createIndex(table: index.table, name: index.name) : nil)
            }
        }
    }

    /// The table each source entity the stage removes is read from after the add phase, by its
    /// source name: its own table (moved aside when a destination table took its name), or the
    /// destination table that continues the one it shared.
    func removedEntityTables() -> [String: String] {
        let continuing = Dictionary(
            mapping.sourceTable.map { ($0.value, $0.key) }, uniquingKeysWith: { first, second in min(first, second) })
        let kept = Set(destination.schema.entities.map { $0.renamedFrom ?? $0.name })
        var result: [String: String] = [:]
        for entity in source.schema.entities where !kept.contains(entity.name) {
            guard let table = source.entities[entity.name]?.table else { continue }
            if let current = continuing[table] {
                result[entity.name] = current
            } else {
                result[entity.name] = removedTables.contains("_mw_removed_" + table) ? "_mw_removed_" + table : table
            }
        }
        return result
    }

    /// The source entities the stage removes whose rows stay in a table that continues while an
    /// entity renamed to their name joins it (`Memo` renamed `Note` beside a removed `Note`): the
    /// add phase gives their rows the `_entity` value ``MigrationContext/displacedValue(of:)``, so
    /// they are told apart from the renamed entity's until the remove phase deletes them.
    func displacedEntities() -> Set<String> {
        let kept = Set(destination.schema.entities.map { $0.renamedFrom ?? $0.name })
        var result: Set<String> = []
        for entity in source.schema.entities where !kept.contains(entity.name) {
            guard let table = source.entities[entity.name]?.table,
                let current = mapping.sourceTable.first(where: { $0.value == table })?.key,
                mapping.entityRenames[current]?.contains(where: { $0.new == entity.name }) == true
            else { continue }
            result.insert(entity.name)
        }
        return result
    }

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

    /// Gives `column` of `table` the destination's type now, optional and without a default until
    /// the remove phase sets both (an alteration in place, ``SQLDialect/altersTablesInPlace``).
    private mutating func retype(_ column: ColumnLayout, in table: String) throws {
        let dialect = connection.dialect
        try connection.execute(dialect.alterationsBracket.before)
        try execute(dialect.setDefault(nil, column: column.name, of: table), nil)
        try execute(dialect.setRequired(false, column: column.name, of: table), nil)
        try execute(
            dialect.alterColumnType(
                column.name, of: table, to: dialect.columnType(column.storage),
                using: conversion(of: column.name, in: table, to: column)),
            .rebuildTable(table))
        try connection.execute(dialect.alterationsBracket.after)
    }

    /// The temporary table that keeps the exact values obligations wrote into columns whose
    /// declared type is still the source's: its columns have no type, so SQLite converts nothing.
    private static let exactValues = "temp.\"_mw_exact_values\""

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
    private func exactValue(of column: String, in table: String, else fallback: String) -> String {
        let (name, row) = (quoted(column), quoted(table) + ".\"id\"")
        let key = SQLSyntax.string(table + "." + column)
        return
            "CASE WHEN EXISTS (SELECT 1 FROM \(Self.exactValues) AS e WHERE e.\"key\" = \(key) AND e.\"id\" = \(row) AND e.\"stored\" IS \(quoted(table)).\(name)) THEN (SELECT e.\"value\" FROM \(Self.exactValues) AS e WHERE e.\"key\" = \(key) AND e.\"id\" = \(row)) ELSE \(fallback) END"
    }

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
            return !have.hasShape(of: want)
                || (tables[table]?.relationship != nil && mapping.copyExpression[table] != nil)
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
        let layouts = destination.entities.values.filter { $0.table == table }
        let copies = mapping.copyExpression[table] ?? [:]
        for column in want.columns.keys.sorted() where have.columns[column] != nil {
            guard want.columns[column]?.isNotNull == true, have.columns[column]?.isNotNull == false else { continue }
            let value = copies[column] ?? quoted(column)
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
            let layout = layouts.lazy.flatMap(\.columns).first { $0.name == column }
            var expression = conversion(of: column, in: table, to: layout)
            if wanted.isNotNull, let value = wanted.defaultValue { expression = "COALESCE(\(expression), \(value))" }
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

    /// The SQL that converts the stored values of `column` of `table` to the destination's type in
    /// an alteration in place: the mapping's conversion (a cast), the value itself where only the
    /// declared width changes (guarded to the new integer range), or NULL where the step gives the
    /// values up (a lossy retype, which SQLite's check would clear).
    private func conversion(of column: String, in table: String, to layout: ColumnLayout?) -> String {
        let name = quoted(column)
        let copy = mapping.copyExpression[table]?[column]
        guard let layout, let new = layout.type?.scalar,
            let oldName = mapping.sourceColumn[table]?[column],
            let old = source.entities.values.lazy.filter({ $0.table == self.mapping.sourceTable[table] })
                .flatMap(\.columns).first(where: { $0.name == oldName })
        else { return copy ?? "NULL" }
        // The mapping's copy expression is SQLite's, which reads any value as any type: it serves
        // where the stored type stays, and a typed conversion is spelled here otherwise.
        if old.storage == layout.storage { return copy ?? connection.dialect.cast(name, to: layout.storage) }
        guard let before = old.type?.scalar, before.conversion(to: new) != nil else { return "NULL" }
        // A boolean converts through a 32-bit integer, the one integer PostgreSQL casts it to and from.
        let through = old.storage == .boolean || layout.storage == .boolean
        let value = through ? connection.dialect.cast(name, to: .integer32) : name
        let cast = connection.dialect.cast(value, to: layout.storage)
        if let range = new.integerRange {
            return "CASE WHEN \(value) BETWEEN \(range.lowerBound) AND \(range.upperBound) THEN \(cast) END"
        }
        // Only a double or a decimal can hold what a `real` cannot (an integer's text 'NaN' would
        // not even parse as the column's type).
        if layout.storage == .float, old.storage == .double || old.storage == .decimal {
            return "CASE WHEN \(name) IN ('NaN', 'Infinity', '-Infinity') OR abs(\(name)) <= 3.4028234663852886e38 "
                + "THEN \(cast) END"
        }
        return cast
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

    // MARK: - Checks

    /// Checks foreign keys of the tables whose rows changed (of every table after custom steps, which
    /// may have written anywhere), then compares the whole schema with a fresh store's.
    func check(everyTable: Bool) throws {
        let dropped = operations.contains { if case .dropTable = $0 { true } else { false } }
        let checked = everyTable || dropped ? [nil] : touched.sorted().map(Optional.some)
        // An engine without a query for broken foreign keys (PostgreSQL checks them only at commit,
        // when the error could no longer name the stage) is asked about each key of the schema.
        var keys: StoreSchema?
        for table in checked {
            let sql: String
            do {
                sql = try connection.dialect.foreignKeyViolations(in: table)
            } catch is SQLDialectError {
                if keys == nil { keys = try StoreSchema.read(connection) }
                try checkForeignKeys(of: table, in: keys ?? StoreSchema(tables: [:]))
                continue
            }
            let statement = try connection.prepare(sql)
            var violations: [String: (parent: String, rows: Int)] = [:]
            while try statement.step() {
                let child = statement.string(0)
                violations[child] = (statement.string(2), (violations[child]?.rows ?? 0) + 1)
            }
            if let (child, violation) = violations.min(by: { $0.key < $1.key }) {
                // A join table is named by the relationship it stores, in the app's words.
                throw MigrationError.foreignKeyViolation(
                    stage: name, table: tables[child]?.relationship.map { "the links of \($0)" } ?? child,
                    parent: violation.parent, rows: violation.rows)
            }
        }
        try checkToOneTargets(everyTable: everyTable || dropped)
        let differences = try StoreSchema.read(connection).differences(from: expected)
        guard differences.isEmpty else { throw MigrationError.schemaMismatch(stage: name, differences: differences) }
        // The app's own code (`MigrationContext.execute`) can leave what no table comparison sees —
        // a trigger, a view, `sqlite_stat1` from `ANALYZE` — and every later opening would refuse
        // the store for it: the stage is held to the comparison an opening makes, and fails now.
        if everyTable {
            let left = try connection.schemaDifferences(from: destination)
            guard left.isEmpty else { throw MigrationError.schemaMismatch(stage: name, differences: left) }
        }
        try checkValues(everyTable: everyTable)
    }

    /// Checks each foreign key of `table` (of every table for `nil`) with a query: the rows whose
    /// reference finds no row, as ``MigrationError/foreignKeyViolation(stage:table:parent:rows:)``.
    private func checkForeignKeys(of table: String?, in schema: StoreSchema) throws {
        for (child, definition) in schema.tables.sorted(by: { $0.key < $1.key }) where table == nil || child == table {
            for key in definition.foreignKeys.sorted(by: { $0.column < $1.column }) {
                let column = "c.\(quoted(key.column))"
                let rows = try scalar(
                    "SELECT count(*) FROM \(quoted(child)) AS c WHERE \(column) IS NOT NULL "
                        + "AND NOT EXISTS (SELECT 1 FROM \(quoted(key.table)) AS p WHERE p.\"id\" = \(column))")
                guard rows > 0 else { continue }
                throw MigrationError.foreignKeyViolation(
                    stage: name, table: tables[child]?.relationship.map { "the links of \($0)" } ?? child,
                    parent: key.table, rows: rows)
            }
        }
    }

    /// The number of rows of each concrete entity of both versions whose rows change tables (a
    /// move to another parent, which the app's code performs), by its destination name. Only
    /// those: a count per entity per stage would scan every table of a long history, and no other
    /// change moves a kept entity's rows.
    func keptRowCounts() throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for description in destination.schema.entities {
            guard let entity = destination.entities[description.name], !entity.isAbstract,
                let old = source.entities[description.renamedFrom ?? description.name], !old.isAbstract,
                old.table != mapping.sourceTable[entity.table]
            else { continue }
            counts[entity.name] = try scalar("SELECT count(*) FROM \(quoted(old.table)) WHERE \(rows(of: old))")
        }
        return counts
    }

    /// Refuses the stage when it removes an entity whose rows the store holds and `declared` does
    /// not say it may (a hand-built plan without `lossy`; generated plans declare each removal):
    /// runs before anything changes, so the store stays as it was.
    func checkRemovals(declared: (String) -> Bool) throws {
        let continuing = Set(destination.schema.entities.map { $0.renamedFrom ?? $0.name })
        for description in source.schema.entities where !continuing.contains(description.name) {
            guard let entity = source.entities[description.name], !entity.isAbstract, !declared(entity.name) else {
                continue
            }
            let rows = try scalar("SELECT count(*) FROM \(quoted(entity.table)) WHERE \(rows(of: entity))")
            if rows > 0 {
                throw MigrationError.undeclaredEntityRemoval(stage: self.name, entity: entity.name, rows: rows)
            }
        }
    }

    /// Checks that no entity counted by ``keptRowCounts()`` lost rows: rows of an
    /// entity that exists in both versions never disappear silently (an entity moved to another
    /// parent whose rows the stage's code did not move would otherwise be emptied).
    func checkKeptRows(_ counts: [String: Int]) throws {
        for (name, before) in counts.sorted(by: { $0.key < $1.key }) {
            guard let entity = destination.entities[name] else { continue }
            let after = try scalar("SELECT count(*) FROM \(quoted(entity.table)) WHERE \(rows(of: entity))")
            if after < before {
                throw MigrationError.rowsLost(stage: self.name, entity: name, before: before, after: after)
            }
        }
    }

    /// Checks that every to-one relationship points at a row of its destination entity (or an
    /// entity below it): a table holding several entities lets a foreign key accept a row of a
    /// sibling (a `Dog` where a `Cat` is required), which the record would then fail to find.
    private func checkToOneTargets(everyTable: Bool) throws {
        for description in destination.schema.entities {
            guard let entity = destination.entities[description.name], !entity.isAbstract else { continue }
            for column in entity.columns {
                // A row that left the destination's table (an entity that leaves its parent) is
                // missing from it, so a to-one still pointing at it fails too.
                guard column.type == nil, let target = column.destination.flatMap({ destination.entities[$0] }),
                    target.hasDiscriminator || everyTable || touched.contains(target.table),
                    everyTable || touched.contains(entity.table) || touched.contains(target.table)
                else { continue }
                let allowed = target.entityNames.map(SQLSyntax.string).joined(separator: ", ")
                let wrong = target.hasDiscriminator ? " OR t1.\"_entity\" NOT IN (\(allowed))" : ""
                let found = target.hasDiscriminator ? "coalesce(t1.\"_entity\", 'missing')" : "'missing'"
                let statement = try connection.prepare(
                    "SELECT count(*), min(\(connection.dialect.literal(of: "t0.\"id\""))), min(\(found)) "
                        + "FROM \(quoted(entity.table)) AS t0 "
                        + "LEFT JOIN \(quoted(target.table)) AS t1 ON t1.\"id\" = t0.\(quoted(column.name)) "
                        + "WHERE \(entity.hasDiscriminator ? "t0.\"_entity\" = \(SQLSyntax.string(entity.name))" : "TRUE") "
                        + "AND t0.\(quoted(column.name)) IS NOT NULL AND (t1.\"id\" IS NULL\(wrong))")
                guard try statement.step(), statement.int64(0) > 0 else { continue }
                throw MigrationError.wrongRelationshipTarget(
                    stage: name, entity: entity.name, relationship: column.property, row: statement.string(1),
                    destination: target.name, found: statement.string(2), rows: Int(statement.int64(0)))
            }
        }
    }

    /// Sets the empty side of each one-to-one that the app's code set on the other side only, as a
    /// store write sets both: a stage that splits `Order.street` into a new `Address` and sets
    /// `Order.address` also gets `Address.order`. Sides that disagree are left for the check.
    mutating func linkOneToOnes() throws {
        for description in destination.schema.entities {
            guard let entity = destination.entities[description.name], !entity.isAbstract else { continue }
            for relationship in entity.relationships where relationship.cardinality == .toOne {
                guard let inverseName = relationship.inverse,
                    let target = destination.entities[relationship.destination],
                    let inverse = target.relationships.first(where: { $0.name == inverseName }),
                    inverse.cardinality == .toOne
                else { continue }
                let table = quoted(target.table)
                let inverseColumn = quoted(target.columnName(inverseName))
                let owners =
                    "FROM \(quoted(entity.table)) AS t0 WHERE t0.\(quoted(entity.columnName(relationship.name))) = \(table).\"id\""
                    + (entity.hasDiscriminator ? " AND t0.\"_entity\" = \(SQLSyntax.string(entity.name))" : "")
                let targets = target.discriminatorSQL(alias: table).map { " AND \($0)" } ?? ""
                let empty = "\(inverseColumn) IS NULL"
                let missing = try scalar(
                    "SELECT count(*) FROM \(table) WHERE \(empty)\(targets) AND EXISTS (SELECT 1 \(owners))")
                guard missing > 0 else { continue }
                try execute(
                    "UPDATE \(table) SET \(inverseColumn) = (SELECT min(t0.\"id\") \(owners)) "
                        + "WHERE \(empty)\(targets) AND EXISTS (SELECT 1 \(owners))",
                    .updateRows(
                        table: target.table,
                        reason: "sets \(target.name).\(inverseName) from \(entity.name).\(relationship.name)"))
            }
        }
    }

    /// Checks that both sides of every one-to-one agree: each side keeps a column, and a store
    /// write sets both, but a stage's code may set one (the row it points at must point back).
    func checkOneToOnes(everyTable: Bool) throws {
        for description in destination.schema.entities {
            guard let entity = destination.entities[description.name], !entity.isAbstract else { continue }
            for relationship in entity.relationships where relationship.cardinality == .toOne {
                guard let inverseName = relationship.inverse,
                    let target = destination.entities[relationship.destination],
                    let inverse = target.relationships.first(where: { $0.name == inverseName }),
                    inverse.cardinality == .toOne,
                    everyTable || touched.contains(entity.table) || touched.contains(target.table)
                else { continue }
                let column = quoted(entity.columnName(relationship.name))
                let statement = try connection.prepare(
                    "SELECT count(*), min(\(connection.dialect.literal(of: "t0.\"id\""))) "
                        + "FROM \(quoted(entity.table)) AS t0 "
                        + "JOIN \(quoted(target.table)) AS t1 ON t1.\"id\" = t0.\(column) "
                        + "WHERE \(entity.hasDiscriminator ? "t0.\"_entity\" = \(SQLSyntax.string(entity.name))" : "TRUE") "
                        + "AND \(connection.dialect.differs("t1.\(quoted(target.columnName(inverseName)))", "t0.\"id\""))"
                )
                guard try statement.step(), statement.int64(0) > 0 else { continue }
                throw MigrationError.oneToOneMismatch(
                    stage: name, entity: entity.name, relationship: relationship.name, row: statement.string(1),
                    destination: relationship.destination, inverse: inverseName, rows: Int(statement.int64(0)))
            }
        }
    }

    // MARK: - Values

    /// The columns of each concrete destination entity whose values the step may have made
    /// unreadable: new ones, and those whose type or optionality changed; with `retyped`, only
    /// those that kept their values across a change of type.
    private func changedColumns(retyped: Bool = false) -> [(entity: EntityLayout, columns: [ColumnLayout])] {
        destination.schema.entities.compactMap { description -> (EntityLayout, [ColumnLayout])? in
            guard let entity = destination.entities[description.name], !entity.isAbstract else { return nil }
            let old = source.entities[description.renamedFrom ?? description.name]
            let changed = entity.columns.filter { column in
                guard let oldName = mapping.entitySource[entity.name]?[column.name],
                    let before = old?.columns.first(where: { $0.name == oldName })
                else { return !retyped }
                return before.type != column.type || (!retyped && before.isOptional && !column.isOptional)
            }
            return changed.isEmpty ? nil : (entity, changed)
        }
    }

    /// The condition that picks the rows of exactly `entity` in its table.
    private func rows(of entity: EntityLayout) -> String {
        entity.hasDiscriminator ? "\"_entity\" = \(SQLSyntax.string(entity.name))" : "TRUE"
    }

    /// Replaces the values of a column whose type changed that the new type cannot read, as if
    /// the attribute had been removed and added (what a `lossy` step accepts): with its default,
    /// or `NULL` when it is optional. It runs after the app's code, so a custom stage's values
    /// (which its obligations give every retyped column it owes) are already readable; a `lossy`
    /// retyping beside a custom stage loses what it said it would. Columns an obligation owes are
    /// left as the app's code left them, for the check to judge. A required column without a
    /// default keeps them, and the check refuses the stage.
    mutating func clearUnreadableValues(except owed: [MigrationStage.Obligation]) throws {
        for (entity, columns) in changedColumns(retyped: true) {
            let owedHere = owed.filter { destination.entities[$0.entity]?.entityNames.contains(entity.name) == true }
            for column in columns where column.isOptional || column.defaultLiteral != nil {
                guard !owedHere.contains(where: { $0.property == nil || $0.property == column.property }) else {
                    continue
                }
                let name = quoted(column.name)
                try execute(
                    "UPDATE \(quoted(entity.table)) SET \(name) = \(column.defaultLiteral ?? "NULL") WHERE \(rows(of: entity)) AND \(name) IS NOT NULL AND NOT (\(StoredValues.readable(column, in: connection.dialect)))",
                    .updateRows(
                        table: entity.table, reason: "clears what \(entity.name).\(column.property) cannot read"))
            }
        }
    }

    /// Checks that every row of the entities whose columns changed (of every entity after custom
    /// steps) reads back as the destination's records: one scan per entity.
    private func checkValues(everyTable: Bool) throws {
        let targets: [(entity: EntityLayout, columns: [ColumnLayout])] =
            everyTable
            ? destination.schema.entities.compactMap { description in
                destination.entities[description.name].flatMap { $0.isAbstract ? nil : ($0, $0.columns) }
            } : changedColumns()
        for (entity, columns) in targets where !columns.isEmpty {
            // Each column's values, then each optional composite's completeness (the composites
            // whose columns the step may have changed).
            let changed = Set(columns.map(\.property))
            let tests =
                columns.map { (property: $0.property, sql: StoredValues.unreadable($0, in: connection.dialect)) }
                + StoredValues.incompleteComposites(of: entity).filter { changed.contains($0.property) }
            let counts = tests.map { "sum(\($0.sql))" }.joined(separator: ", ")
            let statement = try connection.prepare(
                "SELECT \(counts) FROM \(quoted(entity.table)) WHERE \(rows(of: entity))")
            guard try statement.step() else { continue }
            for (index, test) in tests.enumerated() where statement.int64(Int32(index)) > 0 {
                throw MigrationError.unreadableValues(
                    stage: name, entity: entity.name, attribute: test.property,
                    rows: Int(statement.int64(Int32(index))))
            }
        }
    }

    /// Checks every `Codable` column of the destination whose archived type spelling has a known
    /// shape (``JSONShape``) against it, row by row; throws
    /// ``MigrationError/wrongJSONShape(stage:entity:attribute:row:declared:reason:)`` for the first
    /// row that does not fit.
    func checkJSONShapes() throws {
        for description in destination.schema.entities {
            guard let entity = destination.entities[description.name], !entity.isAbstract else { continue }
            for column in entity.columns {
                guard case .codable(let typeName)? = column.type, let shape = JSONShape(spelling: typeName) else {
                    continue
                }
                let statement = try connection.prepare(
                    "SELECT \"id\", \(quoted(column.name)) FROM \(quoted(entity.table)) "
                        + "WHERE \(rows(of: entity)) AND \(quoted(column.name)) IS NOT NULL ORDER BY \"id\"")
                while try statement.step() {
                    guard case .text(let json) = statement.value(1) else { continue }
                    if let problem = shape.problem(inJSON: json) {
                        throw MigrationError.wrongJSONShape(
                            stage: name, entity: entity.name, attribute: column.property,
                            row: Self.rowName(statement.value(0)),
                            declared: "Codable<\(typeName)> of version \(stage.destination.version)", reason: problem)
                    }
                }
            }
        }
    }

    /// A row's ID as errors name it: a UUID when it is one, as ``RecordDecodingCheck`` names rows.
    private static func rowName(_ id: SQLValue) -> String {
        if case .blob(let data) = id, data.count == 16 {
            return UUID(uuid: data.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }).uuidString
        }
        return "\(id)"
    }

    private func scalar(_ sql: String) throws -> Int {
        let statement = try connection.prepare(sql)
        guard try statement.step() else { return 0 }
        return Int(statement.int64(0))
    }
}
