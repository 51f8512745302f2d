/// Which stored values a record can read back, as SQL: the decoding rules of ``ColumnValue``
/// written as conditions, so a migration can check every row of a table in one scan, and clear
/// what a lossy step gives up, without decoding a record.
enum StoredValues {
    /// SQL that is 1 for a row whose `column` the record of its entity cannot read (`NULL` in a
    /// column the entity requires included), else 0.
    static func unreadable(_ column: ColumnLayout) -> String {
        let name = quoted(column.name)
        return "CASE WHEN \(name) IS NULL THEN \(column.isOptional ? 0 : 1) WHEN \(readable(column)) THEN 0 ELSE 1 END"
    }

    /// SQL that is true when the column's non-NULL value reads as its type.
    static func readable(_ column: ColumnLayout) -> String {
        let name = quoted(column.name)
        guard let type = column.type else { return "typeof(\(name)) = 'blob' AND length(\(name)) = 16" }
        switch type {
        case .bool, .int64, .int: return "typeof(\(name)) = 'integer'"
        case .int16: return "typeof(\(name)) = 'integer' AND \(name) BETWEEN -32768 AND 32767"
        case .int32: return "typeof(\(name)) = 'integer' AND \(name) BETWEEN -2147483648 AND 2147483647"
        case .double, .float, .date: return "typeof(\(name)) IN ('real', 'integer')"
        case .string, .codable, .composite: return "typeof(\(name)) = 'text'"
        // Text is not enough: the runtime parses these, so the check asks it.
        case .decimal: return "mw_decodes(\(DecodingFunction.Kind.decimal.rawValue), \(name)) = 1"
        case .url: return "mw_decodes(\(DecodingFunction.Kind.url.rawValue), \(name)) = 1"
        case .data: return "typeof(\(name)) = 'blob'"
        case .uuid: return "typeof(\(name)) = 'blob' AND length(\(name)) = 16"
        case .enumeration(let description):
            let kind = description.rawType == .int ? "integer" : "text"
            let values = description.cases.map { enumCase in
                description.rawType == .int
                    ? Int64(enumCase.rawValue).map(String.init) ?? SQLSyntax.string(enumCase.rawValue)
                    : SQLSyntax.string(enumCase.rawValue)
            }
            return "typeof(\(name)) = '\(kind)' AND \(name) IN (\(values.joined(separator: ", ")))"
        }
    }
}
