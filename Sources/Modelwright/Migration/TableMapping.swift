/// How the tables and columns of one version correspond to the next's, from the renames the
/// destination declares (`renamedFrom`): what the migrator renames, keeps, converts and fills.
struct TableMapping {
    /// For each destination table that existed before: the source table's name.
    private(set) var sourceTable: [String: String] = [:]
    /// For each mapped destination table: destination column → source column.
    private(set) var sourceColumn: [String: [String: String]] = [:]
    /// For each destination table: the SQL a rebuild fills a column from when it is not simply the
    /// column (a lossless type conversion, a default for a newly required column, a join table
    /// whose sides swapped).
    private(set) var copyExpression: [String: [String: String]] = [:]
    /// Entities renamed inside a table with an `_entity` column: destination table → (old, new).
    private(set) var entityRenames: [String: [(old: String, new: String)]] = [:]
    /// Destination tables whose `_entity` column is new, with the entity existing rows belong to.
    private(set) var newDiscriminator: [String: String] = [:]
    /// Columns with the default `now`, which has no SQL form: destination table → columns.
    private(set) var nowColumns: [String: [String]] = [:]

    init(source: SchemaLayout, destination: SchemaLayout) {
        let old = source.schema
        let new = destination.schema
        // Tables first: a root entity keeps its table when it was a root before.
        for entity in new.entities {
            let oldName = entity.renamedFrom ?? entity.name
            guard destination.entities[entity.name]?.table == entity.name,
                source.entities[oldName]?.table == oldName
            else { continue }
            sourceTable[entity.name] = oldName
            sourceColumn[entity.name, default: [:]]["id"] = "id"
        }
        for entity in new.entities {
            let oldName = entity.renamedFrom ?? entity.name
            guard let newLayout = destination.entities[entity.name] else { continue }
            let table = newLayout.table
            for attribute in entity.attributes where attribute.defaultValue == .now {
                nowColumns[table, default: []].append(attribute.name)
            }
            guard let oldLayout = source.entities[oldName], let oldEntity = old.entity(named: oldName),
                sourceTable[table] == oldLayout.table
            else { continue }
            mapColumns(of: entity, in: newLayout, from: oldEntity, in: oldLayout, old: old)
            if newLayout.hasDiscriminator {
                if oldLayout.hasDiscriminator {
                    sourceColumn[table, default: [:]]["_entity"] = "_entity"
                    if oldName != entity.name { entityRenames[table, default: []].append((oldName, entity.name)) }
                } else if oldLayout.table == oldName {
                    newDiscriminator[table] = entity.name
                }
            }
            mapJoinTables(
                of: entity, in: newLayout, destination: destination, from: oldLayout, source: source, old: old)
        }
    }

    private mutating func mapColumns(
        of entity: EntityDescription, in newLayout: EntityLayout,
        from oldEntity: EntityDescription, in oldLayout: EntityLayout, old: SchemaDescription
    ) {
        let table = newLayout.table
        let oldAttributes = Self.lineage(of: oldEntity, in: old).flatMap(\.attributes)
        for attribute in entity.attributes {
            let oldName = attribute.renamedFrom ?? attribute.name
            guard let oldAttribute = oldAttributes.first(where: { $0.name == oldName }) else { continue }
            for column in newLayout.columns where column.property == attribute.name {
                let oldColumn = oldName + column.name.dropFirst(attribute.name.count)
                guard oldLayout.columns.contains(where: { $0.name == oldColumn && $0.property == oldName }) else {
                    continue
                }
                sourceColumn[table, default: [:]][column.name] = oldColumn
                var expression = Self.conversion(from: oldAttribute.type, to: attribute.type, column: column.name)
                if oldAttribute.isOptional, !attribute.isOptional, let literal = column.defaultLiteral {
                    expression = "COALESCE(\(expression ?? quoted(column.name)), \(literal))"
                }
                if let expression { copyExpression[table, default: [:]][column.name] = expression }
            }
        }
        for relationship in entity.relationships where relationship.cardinality == .toOne {
            let oldName = relationship.renamedFrom ?? relationship.name
            if oldLayout.columns.contains(where: { $0.name == oldName && $0.property == oldName }) {
                sourceColumn[table, default: [:]][relationship.name] = oldName
            }
            let position = ToManyStorage.positionColumn(forInverse: relationship.name)
            let oldPosition = ToManyStorage.positionColumn(forInverse: oldName)
            if newLayout.positionColumns.contains(position), oldLayout.positionColumns.contains(oldPosition) {
                sourceColumn[table, default: [:]][position] = oldPosition
            }
        }
    }

    private mutating func mapJoinTables(
        of entity: EntityDescription, in newLayout: EntityLayout, destination: SchemaLayout,
        from oldLayout: EntityLayout, source: SchemaLayout, old: SchemaDescription
    ) {
        let oldRelationships = oldLayout.relationships
        for relationship in entity.relationships where relationship.cardinality == .toMany {
            guard
                case .joinTable(let name, "source", _, let position)? = try? destination.storage(
                    of: relationship, from: newLayout),
                let oldRelationship = oldRelationships.first(where: {
                    $0.name == (relationship.renamedFrom ?? relationship.name) && $0.cardinality == .toMany
                }),
                case .joinTable(let oldName, let oldSource, _, let oldPosition)? = try? source.storage(
                    of: oldRelationship, from: oldLayout)
            else { continue }
            sourceTable[name] = oldName
            var columns = ["source": "source", "destination": "destination"]
            if position != nil, oldPosition != nil { columns["position"] = "position" }
            sourceColumn[name] = columns
            if oldSource != "source" {
                // The other side owned the table before: its columns trade places.
                copyExpression[name] = ["source": "\"destination\"", "destination": "\"source\""]
            }
        }
    }

    /// The SQL that converts a column's stored value losslessly from one type to another, or
    /// `nil` when the stored value serves as it is (or only a custom stage can convert it).
    static func conversion(from old: AttributeType, to new: AttributeType, column: String) -> String? {
        let integers: [AttributeType] = [.bool, .int16, .int32, .int64, .int]
        let floats: [AttributeType] = [.double, .float]
        if (integers.contains(old) || floats.contains(old)) && floats.contains(new) && !floats.contains(old) {
            return "CAST(\(quoted(column)) AS REAL)"
        }
        if (integers.contains(old) || floats.contains(old)) && (new == .string || new == .decimal) {
            return "CAST(\(quoted(column)) AS TEXT)"
        }
        return nil
    }

    /// The entity and its ancestors, root first.
    static func lineage(of entity: EntityDescription, in schema: SchemaDescription) -> [EntityDescription] {
        var result = [entity]
        while let parent = result[0].parent.flatMap(schema.entity(named:)),
            !result.contains(where: { $0.name == parent.name })
        {
            result.insert(parent, at: 0)
        }
        return result
    }
}
