import Foundation

// One stage's run (`StageRun`) goes through its phases over shared state, one file each:
// `StageRun+Add` (renames, added columns, new tables, filled values, custom steps' obligations),
// `StageRun+Remove` (deleted rows, dropped tables, rebuilds, alterations in place, join tables made
// again, indexes) and `StageRun+Checks` (foreign keys, kept rows and links, values, the schema). The
// link checks live in `KeptLinks`, moved rows in `MovedRows`. Its SQL text comes from the
// connection's dialect (`SQLDialect`).

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
    /// Told of each operation as the stage records it, right after its statement ran: how a tool
    /// that records the statements sent places the stage's row work among them.
    var onOperation: ((MigrationOperation) -> Void)?

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
        run.onOperation = onOperation
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
struct StageRun {
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
    var operations: [MigrationOperation] = [] {
        didSet {
            guard let onOperation else { return }
            for operation in operations.dropFirst(oldValue.count) { onOperation(operation) }
        }
    }
    /// Told of each operation appended to ``operations`` (``Migrator/onOperation``).
    var onOperation: ((MigrationOperation) -> Void)?
    var rowsCopied = 0
    /// Tables whose rows this stage changed, for the foreign key check.
    var touched: Set<String> = []
    /// Tables whose rows this stage changed or copied.
    var changedTables: Set<String> { touched.union(operations.map(\.table)) }
    /// Columns an obligation filled while they still had the source version's declared type, by
    /// table: that type's affinity may have changed the values as they were written (a `Double`
    /// into a `Decimal`'s `TEXT` column becomes text, a `String` "007" in an `INTEGER` column
    /// becomes 7), so each value is also kept exactly in ``exactValues`` for the rebuild to copy.
    var filled: [String: Set<String>] = [:]
    /// Source tables no destination table continues, by their current name.
    var removedTables: [String] = []
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

    mutating func execute(_ sql: String, _ operation: MigrationOperation?) throws {
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
}
