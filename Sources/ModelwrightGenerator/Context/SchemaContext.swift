import Modelwright
import ModelwrightSchema
import Mustache

/// The context of the schema file. Only the current version is typed Swift: its
/// `SchemaDescription`, one declaration per entity so no single expression is slow to type-check.
/// Every earlier version is a ``SchemaArchive`` text, one record per line, which compiles as one
/// string literal however long the history, and which the runtime decodes only to migrate.
///
/// The context holds values, never code: names and string literals already spelled for Swift,
/// flags, and lists. `Schema.mustache` lays out every line, so an override changes any of it.
/// Each list element carries a `separator`, `,` when the list has several elements and empty for
/// a lone one: swift-format wants exactly that in an array literal written one element per line.
enum SchemaContext {
    /// Every version, oldest first: its number, name, file and checksum; an earlier version's
    /// archive lines; `isCurrent` for the last.
    static func versions(of model: PlannedModel, current: LoweredVersion) -> MustacheValue {
        let separator = separator(count: model.versions.count)
        return .list(
            model.versions.parallelMap { version in
                let isCurrent = version.number == current.number
                return [
                    "number": .int(version.number),
                    "name": .string(name(of: version)),
                    "file": .string(SwiftSpelling.commentText(fileName(version.path))),
                    "isCurrent": .bool(isCurrent),
                    "separator": separator,
                    "archive": .list(isCurrent ? [] : SchemaArchive.lines(of: version.schema).map { .string($0) }),
                    // Last: the checksum may still be computing in the background (see `LoweredVersion`).
                    "checksum": .string(version.checksum.hexDigits),
                ]
            })
    }

    /// The current version's typed description: the enum and composite descriptions its entities
    /// refer to, and each entity's description.
    static func current(_ version: LoweredVersion) -> MustacheValue {
        let schema = version.schema
        let prefix = name(of: version)
        let reference: @Sendable (String) -> String = { name in prefix + name }
        let separator = separator(count: schema.entities.count)
        let entities: [MustacheValue] = schema.entities.parallelMap { entity in
            self.entity(entity, declaration: prefix + entity.name, separator: separator, reference: reference)
        }
        return [
            "number": .int(version.number),
            "name": .string(prefix),
            "file": .string(SwiftSpelling.commentText(fileName(version.path))),
            "types": .list(types(of: schema, reference: reference)),
            "entities": .list(entities),
        ]
    }

    /// The Swift name of a version's declaration, such as `version3`.
    private static func name(of version: LoweredVersion) -> String {
        "version\(version.number)"
    }

    /// The separator of each element of a list of `count` elements.
    private static func separator(count: Int) -> MustacheValue {
        .string(count > 1 ? "," : "")
    }

    /// A string literal, or `null` when there is no text, so a section leaves its argument out.
    private static func literal(_ text: String?) -> MustacheValue {
        text.map { .string(SwiftSpelling.string($0)) } ?? .null
    }

    /// The enum and composite descriptions the schema's attributes refer to, sorted by name.
    ///
    /// Each type is described once, however many attributes use it: the first use of a name
    /// builds its description and later uses only look the name up. Describing it per use cost
    /// uses × cases (1,500 attributes of one 3,000-case enum took 5 s for 32 KB of schema).
    private static func types(of schema: SchemaDescription, reference: (String) -> String) -> [MustacheValue] {
        var types: [String: MustacheValue] = [:]
        func describe(_ type: AttributeType) {
            switch type {
            case .enumeration(let description):
                guard types[description.name] == nil else { return }
                let separator = separator(count: description.cases.count)
                types[description.name] = [
                    "name": .string(reference(description.name)),
                    "typeName": .string(SwiftSpelling.string(description.name)),
                    "isEnum": true,
                    "rawType": .string(description.rawType.rawValue),
                    "cases": .list(
                        description.cases.map {
                            [
                                "name": .string(SwiftSpelling.string($0.name)),
                                "rawValue": .string(SwiftSpelling.string($0.rawValue)),
                                "separator": separator,
                            ]
                        }),
                    "fields": [],
                ]
            case .composite(let description):
                guard types[description.name] == nil else { return }
                let separator = separator(count: description.fields.count)
                types[description.name] = [
                    "name": .string(reference(description.name)),
                    "typeName": .string(SwiftSpelling.string(description.name)),
                    "isEnum": false,
                    "cases": [],
                    "fields": .list(
                        description.fields.map { self.attribute($0, separator: separator, reference: reference) }),
                ]
                // A composite's fields may name enums that no entity's attribute names: those are
                // described too, since the composite's description refers to them.
                for field in description.fields {
                    describe(field.type)
                }
            default:
                break
            }
        }
        for entity in schema.entities {
            for attribute in entity.attributes {
                describe(attribute.type)
            }
        }
        return types.keys.sorted().compactMap { types[$0] }
    }

    /// An entity's description: what `EntityDescription(…)` takes, each optional part `null`,
    /// `false` or empty when it has its default.
    private static func entity(
        _ entity: EntityDescription, declaration: String, separator: MustacheValue, reference: (String) -> String
    ) -> MustacheValue {
        let attributeSeparator = Self.separator(count: entity.attributes.count)
        let relationshipSeparator = Self.separator(count: entity.relationships.count)
        let sortSeparator = Self.separator(count: entity.defaultSort.count)
        return [
            "name": .string(declaration),
            "entityName": .string(SwiftSpelling.string(entity.name)),
            "separator": separator,
            "parent": literal(entity.parent),
            "isAbstract": .bool(entity.isAbstract),
            "hasAttributes": .bool(!entity.attributes.isEmpty),
            "attributes": .list(
                entity.attributes.map { attribute($0, separator: attributeSeparator, reference: reference) }),
            "hasRelationships": .bool(!entity.relationships.isEmpty),
            "relationships": .list(entity.relationships.map { relationship($0, separator: relationshipSeparator) }),
            "hasUniquenessConstraints": .bool(!entity.uniquenessConstraints.isEmpty),
            "uniquenessConstraints": nameLists(entity.uniquenessConstraints),
            "hasIndexes": .bool(!entity.indexes.isEmpty),
            "indexes": nameLists(entity.indexes),
            "hasSearchableAttributes": .bool(!entity.searchableAttributes.isEmpty),
            "searchableAttributes": nameLists([entity.searchableAttributes]),
            "hasDefaultSort": .bool(!entity.defaultSort.isEmpty),
            "defaultSort": .list(
                entity.defaultSort.map {
                    [
                        "attribute": .string(SwiftSpelling.string($0.attribute)),
                        "isDescending": .bool(!$0.ascending),
                        "separator": sortSeparator,
                    ]
                }),
            "renamedFrom": literal(entity.renamedFrom),
            "versionHashModifier": literal(entity.versionHashModifier),
            // How the sync server resolves rows that break a uniqueness constraint (`@sync(unique:)`).
            "syncUniqueness": entity.syncUniqueness.map { .string(SwiftSpelling.identifier($0.rawValue)) } ?? .null,
        ]
    }

    /// An attribute's description, for an entity's attributes or a composite's fields.
    private static func attribute(
        _ attribute: AttributeDescription, separator: MustacheValue, reference: (String) -> String
    ) -> MustacheValue {
        [
            "name": .string(SwiftSpelling.string(attribute.name)),
            "type": .string(SwiftSpelling.attributeType(attribute.type, reference: reference)),
            "isOptional": .bool(attribute.isOptional),
            "defaultValue": attribute.defaultValue.map { .string(SwiftSpelling.defaultValue($0)) } ?? .null,
            "renamedFrom": literal(attribute.renamedFrom),
            "versionHashModifier": literal(attribute.versionHashModifier),
            "separator": separator,
        ]
    }

    /// A relationship's description; `deleteRule` is `null` for the default, `nullify`.
    private static func relationship(_ relationship: RelationshipDescription, separator: MustacheValue)
        -> MustacheValue
    {
        [
            "name": .string(SwiftSpelling.string(relationship.name)),
            "destination": .string(SwiftSpelling.string(relationship.destination)),
            "inverse": literal(relationship.inverse),
            "cardinality": .string(relationship.cardinality.rawValue),
            "isOrdered": .bool(relationship.isOrdered),
            "isRequired": .bool(!relationship.isOptional),
            "deleteRule": relationship.deleteRule == .nullify ? .null : .string(relationship.deleteRule.rawValue),
            "renamedFrom": literal(relationship.renamedFrom),
            "versionHashModifier": literal(relationship.versionHashModifier),
            "separator": separator,
        ]
    }

    /// Lists of attribute names (uniqueness constraints, indexes): each with its `names` as string
    /// literals.
    private static func nameLists(_ lists: [[String]]) -> MustacheValue {
        let separator = separator(count: lists.count)
        return .list(
            lists.map { names in
                let nameSeparator = Self.separator(count: names.count)
                return [
                    "names": .list(
                        names.map { ["name": .string(SwiftSpelling.string($0)), "separator": nameSeparator] }),
                    "separator": separator,
                ]
            })
    }
}
