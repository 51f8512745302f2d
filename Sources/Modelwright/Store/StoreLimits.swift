/// SQLite's limits and the names SQLite and the runtime keep for themselves: what a schema's store
/// must stay within for `Store` to create it. The schema's checks ask here (through
/// ``SchemaDescription/storeProblems()``), so a model `validate` accepts always gets a store.
package enum StoreLimits {
    /// The most columns a table may have: SQLite's `SQLITE_MAX_COLUMN` as SQLite ships it (and as
    /// Apple's and the Linux distributions' builds keep it). `id` and `_entity` count.
    package static let maximumColumns = 2_000

    /// Beginnings of table names that SQLite (`sqlite_`, its own tables such as `sqlite_stat1` and
    /// `sqlite_sequence`) and the runtime (`_mw_`: history and a migration's working tables;
    /// `_modelwright_`: the metadata) keep, compared without case as SQLite compares names.
    package static let reservedTablePrefixes = ["sqlite_", "_mw_", "_modelwright_"]

    /// Column names the full-text index keeps for itself, compared without case: a `@searchable`
    /// attribute's column may not take one. The names are the SQLite dialect's
    /// (``SQLiteDialect/reservedSearchColumns``): `validate` has no engine to ask, and SQLite's
    /// are the ones a store on any engine must avoid, since its file may be opened on SQLite.
    package static var reservedSearchColumns: [String] { SQLiteDialect.reservedSearchColumns }

    /// The suffixes of the tables and indexes a full-text index adds to its name, in the SQLite
    /// dialect (``SQLiteDialect/searchIndexTableSuffixes``).
    package static var searchIndexSuffixes: [String] { SQLiteDialect.searchIndexTableSuffixes }

    /// The longest name, in UTF-8 bytes, a table or column may have: PostgreSQL keeps the first
    /// 63 bytes of a name (`NAMEDATALEN` - 1) and drops the rest without a word, so two long names
    /// that begin alike become one (`42P07`, `42701`) and a store made on SQLite could not be made
    /// on PostgreSQL. The runtime's own longer names (indexes, foreign keys, full-text indexes) are
    /// shortened with a digest instead (``PostgresDialect/indexName(_:)``); these are the user's.
    package static let maximumNameBytes = 63

    /// Whether a table of that name would meet one SQLite or the runtime keeps.
    package static func isReserved(tableName name: String) -> Bool {
        let lowercased = name.lowercased()
        return reservedTablePrefixes.contains { lowercased.hasPrefix($0) }
    }
}

/// Why the store of a schema could not be created, with the schema element to blame.
package struct StoreProblem: Sendable, Equatable {
    /// The entity whose declaration causes it.
    package let entity: String
    /// The attribute or relationship of `entity` that causes it, if one does.
    package let property: String?
    /// What is wrong, in the schema's terms, and the fix.
    package let message: String
}

extension SchemaDescription {
    /// Every way the store this schema describes would break SQLite's rules: a table named like
    /// one SQLite or the runtime keeps, two tables or two columns of one table whose names differ
    /// only in case (SQLite compares names without case), and a table with more columns than
    /// ``StoreLimits/maximumColumns``. It reads the tables the store would create, so it covers
    /// every column the layout adds: inherited ones, each composite field's, position columns.
    package func storeProblems() throws -> [StoreProblem] {
        let layout = try SchemaLayout(self)
        var problems: [StoreProblem] = []
        var seen: [String: String] = [:]
        // SQLite's DDL, since the limits checked are SQLite's.
        let tables = SchemaSQL.tables(for: layout, in: SQLiteDialect())
        // Entities' tables first, so a clash is reported at the join table's relationship.
        for table in tables.filter({ $0.relationship == nil }) + tables.filter({ $0.relationship != nil }) {
            let owner =
                table.relationship.map { $0.split(separator: ".", maxSplits: 1).map(String.init) } ?? [table.name]
            let entity = owner[0]
            let property = owner.count > 1 ? owner[1] : nil
            let what =
                table.relationship.map { "the join table '\(table.name)' that stores '\($0)'" }
                ?? "the table of '\(table.name)'"
            if StoreLimits.isReserved(tableName: table.name) {
                let prefix = StoreLimits.reservedTablePrefixes.first { table.name.lowercased().hasPrefix($0) } ?? ""
                problems.append(
                    StoreProblem(
                        entity: entity, property: property,
                        message:
                            "\(what) would begin with '\(prefix)', which SQLite or the store keeps for its own tables (names compare without case); rename \(property == nil ? "the entity" : "the relationship or its entity")"
                    ))
            } else if let other = seen[table.name.lowercased()] {
                problems.append(
                    StoreProblem(
                        entity: entity, property: property,
                        message:
                            "\(what) would have the name of the table '\(other)', since SQLite compares names without case; rename the relationship or its entity"
                    ))
            } else {
                seen[table.name.lowercased()] = table.name
            }
            if table.columns.count > StoreLimits.maximumColumns {
                problems.append(
                    StoreProblem(
                        entity: entity, property: property,
                        message:
                            "\(what) would have \(table.columns.count) columns, more than SQLite's limit of \(StoreLimits.maximumColumns) (every entity of a hierarchy shares its root's table, and each composite field is a column); split the entity or its hierarchy"
                    ))
            }
        }
        // Columns of one table whose names differ only in case: each entity's own columns, after
        // its ancestors', so a clash is reported where the later one is declared.
        var columns: [String: [String: String]] = [:]
        for entity in entities {
            guard let entityLayout = layout.entities[entity.name] else { continue }
            let ownProperties = Set(entity.attributes.map(\.name) + entity.relationships.map(\.name))
            if columns[entityLayout.table] == nil { columns[entityLayout.table] = ["id": "id", "_entity": "_entity"] }
            for column in entityLayout.columns {
                let key = column.name.lowercased()
                if let other = columns[entityLayout.table]?[key] {
                    guard other != column.name, ownProperties.contains(column.property) else { continue }
                    problems.append(
                        StoreProblem(
                            entity: entity.name, property: column.property,
                            message:
                                "the columns '\(column.name)' and '\(other)' of the table '\(entityLayout.table)' differ only in case, and SQLite compares names without case; rename one"
                        ))
                } else {
                    columns[entityLayout.table]?[key] = column.name
                }
            }
        }
        problems += searchIndexProblems(layout)
        problems += nameLengthProblems(layout)
        return problems
    }

    /// Every table and column whose name is longer than ``StoreLimits/maximumNameBytes``: an
    /// entity's table, a join table (named after a side's entity and relationship), an attribute's
    /// or relationship's column, a composite field's (`attribute.field`), an ordered side's
    /// position column (`inverse._position`). Each is reported once, at the declaration that names it.
    func nameLengthProblems(_ layout: SchemaLayout) -> [StoreProblem] {
        let limit = StoreLimits.maximumNameBytes
        let tables = SchemaSQL.tables(for: layout, in: SQLiteDialect())
        func fix(_ name: String) -> String {
            "is \(name.utf8.count) bytes long, and PostgreSQL keeps only the first \(limit) of a name"
        }
        var problems: [StoreProblem] = []
        for table in tables where table.name.utf8.count > limit {
            if let relationship = table.relationship {
                let owner = relationship.split(separator: ".", maxSplits: 1).map(String.init)
                problems.append(
                    StoreProblem(
                        entity: owner[0], property: owner.count > 1 ? owner[1] : nil,
                        message:
                            "the join table '\(table.name)' that stores '\(relationship)' \(fix(table.name)); shorten the relationship's name or its entity's (keeping the data with '@renamed(from:)')"
                    ))
            } else {
                problems.append(
                    StoreProblem(
                        entity: table.name, property: nil,
                        message:
                            "the name of the entity '\(table.name)' names its table and \(fix(table.name)); shorten it (keeping the data with '@renamed(from:)')"
                    ))
            }
        }
        for entity in entities {
            guard let entityLayout = layout.entities[entity.name] else { continue }
            let own = Set(entity.attributes.map(\.name) + entity.relationships.map(\.name))
            for column in entityLayout.columns where column.name.utf8.count > limit && own.contains(column.property) {
                let what =
                    column.field == nil ? "'\(column.property)'" : "the field '\(column.name)' of '\(column.property)'"
                problems.append(
                    StoreProblem(
                        entity: entity.name, property: column.property,
                        message:
                            "the column of \(what) \(fix(column.name)); shorten the name (keeping the data with '@renamed(from:)')"
                    ))
            }
            for column in entityLayout.positionColumns where column.utf8.count > limit {
                let key = String(column.dropLast(ToManyStorage.positionColumn(forInverse: "").count))
                guard let owner = entityLayout.columns.first(where: { $0.name == key }), own.contains(owner.property)
                else { continue }
                problems.append(
                    StoreProblem(
                        entity: entity.name, property: owner.property,
                        message:
                            "the position column '\(column)' that keeps the order of the links '\(owner.property)' makes \(fix(column)); shorten the relationship's name (keeping the data with '@renamed(from:)')"
                    ))
            }
        }
        return problems
    }

    /// A searchable column named like one FTS5 keeps, and two full-text indexes whose tables
    /// would meet (the index of `Note` adds `…Note_pending`, `…Note_content`, the index of
    /// `Note_pending` is `…Note_pending`), names compared without case.
    private func searchIndexProblems(_ layout: SchemaLayout) -> [StoreProblem] {
        var problems: [StoreProblem] = []
        var names: [String: String] = [:]
        for entity in entities {
            guard let entityLayout = layout.entities[entity.name] else { continue }
            for attribute in entity.searchableAttributes
            where StoreLimits.reservedSearchColumns.contains(entityLayout.columnName(attribute).lowercased()) {
                problems.append(
                    StoreProblem(
                        entity: entity.name, property: attribute,
                        message:
                            "the searchable attribute '\(attribute)' would name a column of the full-text index '\(entityLayout.columnName(attribute))', which SQLite's FTS5 keeps for itself (\(StoreLimits.reservedSearchColumns.joined(separator: ", ")), compared without case); rename the attribute"
                    ))
            }
        }
        for index in SchemaSQL.searchIndexes(for: layout) {
            let entity = entities.first { layout.entities[$0.name]?.table == index.table }?.name ?? index.table
            for suffix in StoreLimits.searchIndexSuffixes {
                let name = (index.name + suffix).lowercased()
                if let other = names[name], other != index.table {
                    problems.append(
                        StoreProblem(
                            entity: entity, property: nil,
                            message:
                                "the full-text index of '\(index.table)' would name a table '\(index.name + suffix)' that the full-text index of '\(other)' also needs, since SQLite compares names without case; rename one of the entities so that neither name is the other's followed by '_'"
                        ))
                    break
                }
                names[name] = index.table
            }
        }
        return problems
    }
}
