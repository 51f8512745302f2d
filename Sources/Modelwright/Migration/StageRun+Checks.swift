import Foundation

// The checks that end a stage's run: foreign keys, kept rows and links, one-to-ones, values and
// the schema compared with a fresh store's (see `StageRun` in Migrator.swift).
extension StageRun {
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
    func rows(of entity: EntityLayout) -> String {
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
                // The default as the engine writes it into the column's type (PostgreSQL's
                // `boolean` takes `true`, not SQLite's 1, even in a statement that matches no row).
                let value = column.defaultLiteral.map { connection.dialect.defaultExpression($0, for: column.storage) }
                try execute(
                    "UPDATE \(quoted(entity.table)) SET \(name) = \(value ?? "NULL") WHERE \(rows(of: entity)) AND \(name) IS NOT NULL AND NOT (\(StoredValues.readable(column, in: connection.dialect)))",
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

    func scalar(_ sql: String) throws -> Int {
        let statement = try connection.prepare(sql)
        guard try statement.step() else { return 0 }
        return Int(statement.int64(0))
    }
}
