import Modelwright

/// Lowers an ``EntityGraph`` into the runtime's `SchemaDescription`, the value generated code
/// embeds and the runtime turns into SQL and a checksum.
package enum SchemaLowering {
    /// The runtime description of one version.
    package static func lower(_ graph: EntityGraph) -> SchemaDescription {
        SchemaDescription(
            modelName: graph.modelName,
            version: graph.version,
            entities: graph.entities.map { entity in
                EntityDescription(
                    name: entity.name,
                    parent: entity.parent,
                    isAbstract: entity.isAbstract,
                    attributes: entity.attributes.map(\.schemaDescription),
                    relationships: entity.relationships.map(\.schemaDescription),
                    uniquenessConstraints: entity.uniquenessConstraints,
                    indexes: entity.indexes,
                    searchableAttributes: entity.searchableAttributes,
                    defaultSort: entity.defaultSort,
                    renamedFrom: entity.renamedFrom,
                    versionHashModifier: entity.versionHashModifier,
                    syncUniqueness: entity.sync?.unique
                )
            }
        )
    }
}
