/// One change a migration stage makes to a store's tables.
public enum MigrationOperation: Sendable, Equatable, CustomStringConvertible {
    /// `CREATE TABLE`.
    case createTable(String)
    /// `DROP TABLE`.
    case dropTable(String)
    /// `ALTER TABLE … RENAME TO …`.
    case renameTable(from: String, to: String)
    /// `ALTER TABLE … RENAME COLUMN …`.
    case renameColumn(table: String, from: String, to: String)
    /// `ALTER TABLE … ADD COLUMN …`.
    case addColumn(table: String, column: String)
    /// An `UPDATE` or `DELETE` over a table's rows, with why.
    case updateRows(table: String, reason: String)
    /// SQLite's table rebuild: create the new shape, copy every row, drop, rename.
    case rebuildTable(String)
    /// `CREATE INDEX`.
    case createIndex(table: String, name: String)
    /// `DROP INDEX`.
    case dropIndex(table: String, name: String)

    /// The table the operation changes.
    public var table: String {
        switch self {
        case .createTable(let table), .dropTable(let table), .rebuildTable(let table): table
        case .renameTable(_, let to): to
        case .renameColumn(let table, _, _), .addColumn(let table, _), .updateRows(let table, _),
            .createIndex(let table, _), .dropIndex(let table, _):
            table
        }
    }

    /// Whether SQLite does it in constant time, whatever the number of rows: creating a table and
    /// the three `ALTER TABLE`s SQLite does in place. The others visit every row of the table.
    public var isConstantTime: Bool {
        switch self {
        case .createTable, .renameTable, .renameColumn, .addColumn, .dropIndex: true
        case .dropTable, .updateRows, .rebuildTable, .createIndex: false
        }
    }

    /// The operation in a few words, such as `create table User`.
    public var description: String {
        switch self {
        case .createTable(let table): "create table \(table)"
        case .dropTable(let table): "drop table \(table)"
        case .renameTable(let from, let to): "rename table \(from) to \(to)"
        case .renameColumn(let table, let from, let to): "rename column \(table).\(from) to \(to)"
        case .addColumn(let table, let column): "add column \(table).\(column)"
        case .updateRows(let table, let reason): "update rows of \(table) (\(reason))"
        case .rebuildTable(let table): "rebuild table \(table)"
        case .createIndex(let table, let name): "create index \(name) on \(table)"
        case .dropIndex(let table, let name): "drop index \(name) on \(table)"
        }
    }
}
