/// The DDL that creates a store for a schema: tables, indexes for uniqueness, lookups and
/// foreign keys, and the metadata row that records which schema the store holds.
enum SchemaSQL {
    /// The table that records the model name, version and checksum of a store.
    static let metadataTable = "_modelwright_metadata"

    /// Every statement that creates the schema in an empty database, in order.
    static func createStatements(for layout: SchemaLayout) -> [String] {
        var statements = [
            "CREATE TABLE \(quoted(metadataTable)) (\"key\" TEXT PRIMARY KEY NOT NULL, \"value\" TEXT NOT NULL)"
        ]
        let schema = layout.schema
        let roots = schema.entities.filter { entity in (try? layout.entity(entity.name).table) == entity.name }
        for root in roots {
            guard let rootLayout = layout.entities[root.name] else { continue }
            let family = schema.entities.compactMap { layout.entities[$0.name] }.filter { $0.table == root.name }
            var definitions = ["\"id\" BLOB PRIMARY KEY NOT NULL"]
            if rootLayout.hasDiscriminator {
                definitions.append("\"_entity\" TEXT NOT NULL")
            }
            var seen: Set<String> = []
            var foreignKeys: [String] = []
            for member in family {
                for column in member.columns where seen.insert(column.name).inserted {
                    // Only the root's own columns hold a value in every row of the table.
                    let isRootColumn = rootLayout.columns.contains { $0.name == column.name }
                    let notNull = isRootColumn && !column.isOptional ? " NOT NULL" : ""
                    var definition =
                        "\(quoted(column.name))\(column.affinity.isEmpty ? "" : " " + column.affinity)\(notNull)"
                    if let target = column.references {
                        definition += " REFERENCES \(quoted(target))(\"id\") DEFERRABLE INITIALLY DEFERRED"
                        foreignKeys.append(column.name)
                    }
                    definitions.append(definition)
                }
            }
            for member in family {
                for column in member.positionColumns where seen.insert(column).inserted {
                    definitions.append("\(quoted(column)) INTEGER")
                }
            }
            statements.append("CREATE TABLE \(quoted(root.name)) (\(definitions.joined(separator: ", ")))")
            for column in foreignKeys {
                statements.append(
                    "CREATE INDEX \(quoted("\(root.name)_fk_\(column)")) ON \(quoted(root.name)) (\(quoted(column)))"
                )
            }
        }
        for entity in schema.entities {
            guard let entityLayout = layout.entities[entity.name] else { continue }
            // A join table is created from the side that owns it, where its `source` column is this entity's.
            for relationship in entity.relationships where relationship.cardinality == .toMany {
                guard
                    case .joinTable(let name, "source", _, let position)? = try? layout.storage(
                        of: relationship, from: entityLayout),
                    let destination = layout.entities[relationship.destination]
                else { continue }
                var columns = [
                    "\"source\" BLOB NOT NULL REFERENCES \(quoted(entityLayout.table))(\"id\") ON DELETE CASCADE",
                    "\"destination\" BLOB NOT NULL REFERENCES \(quoted(destination.table))(\"id\") ON DELETE CASCADE",
                ]
                if position != nil { columns.append("\"position\" INTEGER NOT NULL DEFAULT 0") }
                columns.append("PRIMARY KEY (\"source\", \"destination\")")
                statements.append("CREATE TABLE \(quoted(name)) (\(columns.joined(separator: ", "))) WITHOUT ROWID")
                statements.append(
                    "CREATE INDEX \(quoted("\(name)_destination")) ON \(quoted(name)) (\"destination\", \"source\")"
                )
            }
        }
        for entity in schema.entities {
            guard let entityLayout = layout.entities[entity.name] else { continue }
            let table = quoted(entityLayout.table)
            for constraint in entity.uniquenessConstraints {
                let columns = constraint.map(quoted).joined(separator: ", ")
                let name = quoted("\(entity.name)_unique_\(constraint.joined(separator: "_"))")
                statements.append("CREATE UNIQUE INDEX IF NOT EXISTS \(name) ON \(table) (\(columns))")
            }
            for index in entity.indexes {
                let columns = index.map(quoted).joined(separator: ", ")
                let name = quoted("\(entity.name)_index_\(index.joined(separator: "_"))")
                statements.append("CREATE INDEX IF NOT EXISTS \(name) ON \(table) (\(columns))")
            }
        }
        return statements
    }
}
