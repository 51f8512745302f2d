/// Whether a run of stages between two versions with one checksum leaves every row as it was, so a
/// store that records no version number and has that checksum may be taken for the newer one.
///
/// Something added and removed again in between (a column that lived one release) holds no data
/// at either end, so it does not matter. What exists at both ends must exist in every version in
/// between, traced through renames, with the same type, optionality, parent and storage: a removal
/// and a re-adding, a retyping or a move in between would change the data that a real migration
/// through those stages writes.
enum NetZeroSteps {
    /// The first reason the stages change data, or `nil` when they do not. Decodes their versions.
    static func problem(in stages: [MigrationStage]) throws -> String? {
        if let custom = stages.first(where: { !$0.isLightweight }) {
            return
                "the step from version \(custom.source.version) to \(custom.destination.version) has a custom stage (\(custom.customSteps.map(\.name).joined(separator: ", ")))"
        }
        guard let last = stages.last else { return nil }
        // Oldest first: the schemas of every version from the first stage's source to the last's destination.
        let schemas = try stages.map { try $0.source.schema() } + [try last.destination.schema()]
        guard let newest = schemas.last else { return nil }
        for entity in newest.entities {
            if let problem = trace(entity, through: schemas) { return problem }
        }
        return nil
    }

    /// Follows `entity` of the newest schema back to the oldest, and its properties with it.
    private static func trace(_ entity: EntityDescription, through schemas: [SchemaDescription]) -> String? {
        var current = entity
        var attributes = Dictionary(entity.attributes.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var relationships = Dictionary(
            entity.relationships.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for index in stride(from: schemas.count - 1, to: 0, by: -1) {
            let older = schemas[index - 1]
            let step = "version \(older.version) to \(schemas[index].version)"
            guard let previous = older.entity(named: current.renamedFrom ?? current.name) else {
                return "\(entity.name) is added in the step from \(step), so its rows would be lost"
            }
            guard previous.parent == current.parent, previous.isAbstract == current.isAbstract else {
                return "\(entity.name) changes its parent or abstractness in the step from \(step)"
            }
            var olderAttributes: [String: AttributeDescription] = [:]
            for (name, attribute) in attributes {
                guard
                    let before = previous.attributes.first(where: {
                        $0.name == (attribute.renamedFrom ?? attribute.name)
                    })
                else {
                    return "\(entity.name).\(name) is added in the step from \(step), so its values would be lost"
                }
                guard before.type == attribute.type, before.isOptional == attribute.isOptional else {
                    return "\(entity.name).\(name) changes its type or optionality in the step from \(step)"
                }
                olderAttributes[name] = before
            }
            var olderRelationships: [String: RelationshipDescription] = [:]
            for (name, relationship) in relationships {
                guard
                    let before = previous.relationships.first(where: {
                        $0.name == (relationship.renamedFrom ?? relationship.name)
                    })
                else {
                    return "\(entity.name).\(name) is added in the step from \(step), so its links would be lost"
                }
                guard
                    before.destination == relationship.destination, before.inverse == relationship.inverse,
                    before.cardinality == relationship.cardinality, before.isOrdered == relationship.isOrdered,
                    before.isOptional == relationship.isOptional
                else {
                    return "\(entity.name).\(name) changes how it links in the step from \(step)"
                }
                olderRelationships[name] = before
            }
            current = previous
            attributes = olderAttributes
            relationships = olderRelationships
        }
        // A chain of renames that comes back to other names is a change, even with one checksum.
        if current.name != entity.name || attributes.contains(where: { $0.key != $0.value.name })
            || relationships.contains(where: { $0.key != $0.value.name })
        {
            return "\(entity.name) or one of its properties is renamed in between"
        }
        return nil
    }
}
