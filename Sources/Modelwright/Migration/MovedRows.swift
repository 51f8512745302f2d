import Foundation

/// The rows of entities that change tables in a stage (an entity given another parent, or none),
/// moved by the migrator with their IDs: every link to them, which holds their IDs, stays valid,
/// and the stage's code finds them where the new version keeps them.
///
/// The rows are read before the stage changes the store, with each kept column's value (converted
/// as a kept attribute's is), and written into the new table after the add phase, before the
/// app's code; the remove phase then deletes them from the table they left.
struct MovedRows {
    /// One entity whose rows change tables.
    private struct Move {
        let entity: EntityLayout
        /// The temporary table its rows wait in, with the destination's column names.
        let rows: String
        /// The query that reads them in the source version's store.
        let select: String
        let columns: [String]
    }

    private let moves: [Move]

    /// The columns each new table gets no value for from the rows that move into it, by table:
    /// a required attribute the stage adds without a default. The add phase creates the table
    /// with them nullable, a custom stage's obligation fills them, and the rebuild of the remove
    /// phase makes them required again, refusing rows still without a value.
    var columnsLeftEmpty: [String: Set<String>] {
        moves.reduce(into: [:]) { result, move in
            let written = Set(move.columns)
            let empty = move.entity.columns.map(\.name).filter { !written.contains($0) }
            result[move.entity.table, default: []].formUnion(empty)
        }
    }

    /// The entities of a stage from `source` to `destination` whose rows change tables.
    init(source: SchemaLayout, destination: SchemaLayout, mapping: TableMapping, dialect: some SQLDialect) {
        var moves: [Move] = []
        for description in destination.schema.entities {
            guard let entity = destination.entities[description.name], !entity.isAbstract,
                let old = source.entities[description.renamedFrom ?? description.name], !old.isAbstract,
                old.table != mapping.sourceTable[entity.table]
            else { continue }
            let attributes = TableMapping.lineage(of: description, in: destination.schema).flatMap(\.attributes)
            var columns = ["id"]
            var values = ["t.\"id\""]
            for column in entity.columns {
                let renamedFrom = attributes.first { $0.name == column.property }?.renamedFrom
                guard
                    let (oldColumn, expression, fill) = TableMapping.source(
                        of: column, renamedFrom: renamedFrom, in: entity, from: old, dialect: dialect)
                else { continue }
                let stored = "t." + quoted(oldColumn)
                var value = expression.replacingOccurrences(of: TableMapping.sourcePlaceholder, with: stored)
                // Typed columns take the typed conversion an alteration in place runs: the copy
                // expression is SQLite's, whose narrowing keeps the value for the check to clear,
                // where PostgreSQL's insert refuses it (22003) or has no cast (a `smallint` into a
                // `boolean`, 42804).
                if dialect.altersTablesInPlace, let before = old.columns.first(where: { $0.name == oldColumn }),
                    before.storage != column.storage
                {
                    value = TableMapping.typedConversion(
                        of: stored, from: before, to: column, copy: value, dialect: dialect)
                    if let fill { value = "COALESCE(\(value), \(fill))" }
                    // A value only the app's code converts waits as NULL of the column's type (an
                    // untyped NULL would make the waiting table's column `text`).
                    if value == "NULL" { value = dialect.cast(value, to: column.storage) }
                }
                columns.append(column.name)
                values.append(value)
            }
            for column in entity.positionColumns {
                let inverse = String(column.dropLast("._position".count))
                guard let key = entity.columns.first(where: { $0.name == inverse })?.key else { continue }
                let oldKey = description.relationships.first { $0.name == key }?.renamedFrom ?? key
                let oldPosition = ToManyStorage.positionColumn(forInverse: old.columnName(oldKey))
                guard old.positionColumns.contains(oldPosition) else { continue }
                columns.append(column)
                values.append("t." + quoted(oldPosition))
            }
            let select =
                "SELECT \(zip(values, columns).map { "\($0) AS \(quoted($1))" }.joined(separator: ", ")) "
                + "FROM \(quoted(old.table)) AS t"
                + (old.hasDiscriminator ? " WHERE t.\"_entity\" = \(SQLSyntax.string(old.name))" : "")
            moves.append(Move(entity: entity, rows: "_mw_moved_\(moves.count)", select: select, columns: columns))
        }
        self.moves = moves
    }

    /// Copies the rows that move into temporary tables; runs before the stage changes the store.
    func read(_ connection: some DatabaseConnection) throws {
        for move in moves {
            try connection.execute("CREATE TEMP TABLE \(quoted(move.rows)) AS \(move.select)")
        }
    }

    /// Writes the rows into their new tables (which the add phase made ready) and drops the
    /// temporary tables; returns the tables written.
    func write(_ connection: some DatabaseConnection) throws -> [String] {
        var written: [String] = []
        for move in moves {
            let entity = move.entity
            let names = move.columns.map(quoted) + (entity.hasDiscriminator ? ["\"_entity\""] : [])
            let values = move.columns.map(quoted) + (entity.hasDiscriminator ? [SQLSyntax.string(entity.name)] : [])
            try connection.execute(
                "INSERT INTO \(quoted(entity.table)) (\(names.joined(separator: ", "))) "
                    + "SELECT \(values.joined(separator: ", ")) FROM \(quoted(move.rows))")
            try connection.execute("DROP TABLE \(quoted(move.rows))")
            written.append(entity.table)
        }
        return written
    }
}
