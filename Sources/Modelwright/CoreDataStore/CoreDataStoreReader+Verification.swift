// The check of an imported store before it is placed: every row readable by its record, every
// link resolving, and each entity's row count.
extension CoreDataStoreReader {
    /// Checks the store at `path` (or on `connection`): every row of every entity readable by its
    /// record, every link resolving, and, when given, the row count of each entity.
    static func verify(at path: String, schema: SchemaDescription, expectedRows: [String: Int]?) throws {
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        try verify(on: connection, layout: try SchemaLayout(schema), expectedRows: expectedRows)
    }

    /// The same check on an open connection, with the layout already built.
    static func verify(
        on connection: SQLiteConnection, layout: SchemaLayout, expectedRows: [String: Int]?
    ) throws {
        var problems: [String] = []
        for (name, entity) in layout.entities.sorted(by: { $0.key < $1.key }) {
            // One pass over the entity's rows counts them and the unreadable values of every column.
            let own = entity.hasDiscriminator ? " WHERE \"_entity\" = \(SQLSyntax.string(name))" : ""
            let sums = entity.columns.map { "COALESCE(SUM(\(StoredValues.unreadable($0))), 0)" }
            let statement = try connection.statement(
                "SELECT \((["COUNT(*)"] + sums).joined(separator: ", ")) FROM \(quoted(entity.table))\(own)")
            defer { statement.reset() }
            guard try statement.step() else { continue }
            if let expected = expectedRows?[name], statement.int64(0) != Int64(expected) {
                problems.append("'\(name)' has \(statement.int64(0)) rows, where \(expected) were read")
            }
            for (index, column) in entity.columns.enumerated() where statement.int64(Int32(index + 1)) > 0 {
                problems.append("\(statement.int64(Int32(index + 1))) rows of '\(name)' cannot read '\(column.key)'")
            }
        }
        let statement = try connection.statement(connection.dialect.foreignKeyViolations(in: nil))
        defer { statement.reset() }
        var dangling: [String: Int] = [:]
        while try statement.step() { dangling[statement.string(0), default: 0] += 1 }
        for (table, count) in dangling.sorted(by: { $0.key < $1.key }) {
            problems.append("\(count) links in table \(table) lead to no row")
        }
        if !problems.isEmpty { throw CoreDataStoreImportError.verificationFailed(problems: problems) }
    }
}
