import Foundation
import Modelwright

/// The runtime's ``CoreDataStoreModel`` of one imported version: every entity and property as the
/// `.xcdatamodel` declares it (those the import left out too, since a version hash covers them),
/// each with the schema name the translation gave it, so an app's Core Data store can be imported
/// at first launch with no toolchain.
enum CoreDataStoreFacts {
    /// The facts of `model`, imported as schema version `number` with the names in `shape`.
    static func version(
        of model: CoreDataModel, named name: String, number: Int, shape: ImportedShape
    ) -> CoreDataStoreModel.Version {
        var entities: [CoreDataStoreModel.Entity] = []
        var seenEntities: Set<String> = []
        for entity in model.entities where !entity.name.isEmpty && seenEntities.insert(entity.name).inserted {
            let imported = shape.entities[entity.name]
            var attributes: [CoreDataStoreModel.Attribute] = []
            var relationships: [CoreDataStoreModel.Relationship] = []
            var seen: Set<String> = []
            for attribute in entity.attributes where seen.insert(attribute.name).inserted {
                attributes.append(
                    CoreDataStoreModel.Attribute(
                        name: attribute.name, schemaName: imported?.attributes[attribute.name]?.schemaName,
                        typeCode: CoreDataStoreModel.Attribute.typeCode(of: attribute.attributeType) ?? 0,
                        isOptional: attribute.isOptional, isTransient: attribute.isTransient,
                        versionHashModifier: attribute.versionHashModifier,
                        allowsExternalStorage: isYes("allowsExternalBinaryDataStorage", attribute.otherAttributes),
                        preservesValueInHistoryOnDeletion: isYes("preserveAfterDeletion", attribute.otherAttributes)))
            }
            for relationship in entity.relationships where seen.insert(relationship.name).inserted {
                relationships.append(
                    CoreDataStoreModel.Relationship(
                        name: relationship.name, schemaName: imported?.relationships[relationship.name]?.schemaName,
                        destination: relationship.destinationEntity, inverse: relationship.inverseName,
                        isOptional: relationship.isOptional,
                        isTransient: isYes("transient", relationship.otherAttributes),
                        isToMany: relationship.isToMany, isOrdered: relationship.isOrdered,
                        minCount: relationship.minCount ?? 0,
                        maxCount: relationship.maxCount ?? (relationship.isToMany ? 0 : 1),
                        versionHashModifier: relationship.versionHashModifier))
            }
            entities.append(
                CoreDataStoreModel.Entity(
                    name: entity.name, schemaName: imported?.schemaName, parent: entity.parentEntity,
                    isAbstract: entity.isAbstract, renamingIdentifier: entity.elementID,
                    versionHashModifier: entity.versionHashModifier,
                    uniquenessConstraints: entity.uniquenessConstraints, attributes: attributes,
                    relationships: relationships))
        }
        return CoreDataStoreModel.Version(name: name, schemaVersion: number, entities: entities)
    }

    /// The JSON text of `model`: keys sorted, so the same model writes the same bytes.
    static func text(of model: CoreDataStoreModel) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(model)) ?? Data("{\"versions\":[]}".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    private static func isYes(_ name: String, _ attributes: [CoreDataXMLAttribute]) -> Bool {
        attributes.contains { $0.name == name && $0.value == "YES" }
    }
}
