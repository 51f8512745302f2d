/// Which stored values a record can read back, as SQL: every column's test is its decoding rule's
/// (`DecodingFunction.Kind`, which owns the rules records read by), so a migration can check every
/// row of a table in one scan, and clear what a lossy step gives up, by those rules.
enum StoredValues {
    /// SQL that is 1 for a row whose `column` the record of its entity cannot read (`NULL` in a
    /// column the entity requires included), else 0; spelled for `dialect` (SQLite by default).
    static func unreadable(_ column: ColumnLayout, in dialect: some SQLDialect = SQLiteDialect()) -> String {
        let name = quoted(column.name)
        return
            "CASE WHEN \(name) IS NULL THEN \(column.isOptional ? 0 : 1) WHEN \(readable(column, in: dialect)) THEN 0 ELSE 1 END"
    }

    /// SQL that is true when the column's non-NULL value reads as its type (the dialect's
    /// ``SQLDialect/decodes(_:as:)``, and an enum's raw value is one of its cases).
    static func readable(_ column: ColumnLayout, in dialect: some SQLDialect = SQLiteDialect()) -> String {
        let name = quoted(column.name)
        let decodes = dialect.decodes(name, as: column.type)
        guard case .enumeration(let description)? = column.type else { return decodes }
        // The raw value must also be one of the enum's cases.
        let values = description.cases.map { literal($0.rawValue, of: description) }
        return "\(decodes) AND \(name) IN (\(values.joined(separator: ", ")))"
    }

    /// The SQL literal of one of the enum's raw values, as the store keeps it.
    static func literal(_ rawValue: String, of description: EnumDescription) -> String {
        description.rawType == .int
            ? Int64(rawValue).map(String.init) ?? SQLSyntax.string(rawValue) : SQLSyntax.string(rawValue)
    }

    /// For each optional composite attribute of `entity` with a required field, SQL that is 1 for a
    /// row holding some of its fields but not every required one: the record would read the
    /// composite as absent and lose the fields it holds.
    static func incompleteComposites(of entity: EntityLayout) -> [(property: String, sql: String)] {
        var groups: [(property: String, columns: [ColumnLayout])] = []
        for column in entity.columns where column.field != nil {
            if groups.last?.property == column.property {
                groups[groups.count - 1].columns.append(column)
            } else {
                groups.append((column.property, [column]))
            }
        }
        return groups.compactMap { group in
            let required = group.columns.filter(\.isRequiredField)
            // A required composite's required fields are required columns, checked one by one; a
            // composite without required fields reads as present whatever its columns hold.
            guard !required.isEmpty, group.columns.allSatisfy(\.isOptional) else { return nil }
            let present = group.columns.map { "\(quoted($0.name)) IS NOT NULL" }.joined(separator: " OR ")
            let missing = required.map { "\(quoted($0.name)) IS NULL" }.joined(separator: " OR ")
            return (group.property, "CASE WHEN (\(present)) AND (\(missing)) THEN 1 ELSE 0 END")
        }
    }
}
