import Modelwright
import ModelwrightSchema
import Mustache

/// The context of the schema file. Only the current version is typed Swift: its
/// `SchemaDescription`, one declaration per entity so no single expression is slow to type-check.
/// Every earlier version is a ``SchemaArchive`` text, one record per line, which compiles as one
/// string literal however long the history, and which the runtime decodes only to migrate.
enum SchemaContext {
    /// What the template says about every version: its number, name, file and checksum; an earlier
    /// version's archive lines; `isCurrent` for the last.
    static func version(_ version: ModelVersion, isCurrent: Bool) -> MustacheValue {
        [
            "number": .int(version.number),
            "name": .string(name(of: version)),
            "file": .string(SwiftSyntax.commentText(fileName(version.path))),
            "isCurrent": .bool(isCurrent),
            "archive": .list(isCurrent ? [] : SchemaArchive.lines(of: version.schema).map { .string($0) }),
            // Last: the checksum may still be computing in the background (see `ModelVersion`).
            "checksum": .string(version.checksum.hexDigits),
        ]
    }

    /// The current version's typed description: the enum and composite descriptions its entities
    /// refer to, and each entity's `EntityDescription(…)` arguments.
    static func current(_ version: ModelVersion) -> MustacheValue {
        let schema = version.schema
        let prefix = name(of: version)
        let reference: @Sendable (String) -> String = { name in prefix + name }
        let entities: [MustacheValue] = schema.entities.parallelMap { entity in
            [
                "name": .string(prefix + entity.name),
                "lines": .list(lines(for: entity, reference: reference).map { .string($0) }),
            ]
        }
        return [
            "number": .int(version.number),
            "name": .string(prefix),
            "file": .string(SwiftSyntax.commentText(fileName(version.path))),
            "types": .list(types(of: schema, reference: reference)),
            "entities": .list(entities),
        ]
    }

    /// The Swift name of a version's declaration, such as `version3`.
    private static func name(of version: ModelVersion) -> String {
        "version\(version.number)"
    }

    /// The enum and composite descriptions the schema's attributes refer to, by name.
    private static func types(of schema: SchemaDescription, reference: (String) -> String) -> [MustacheValue] {
        var types: [String: MustacheValue] = [:]
        for attribute in schema.entities.flatMap(\.attributes) {
            switch attribute.type {
            case .enumeration(let description):
                var lines = [
                    "name: \(SwiftSyntax.string(description.name)),", "rawType: .\(description.rawType.rawValue),",
                ]
                lines += SwiftSyntax.arrayArgument(
                    "cases",
                    description.cases.map {
                        [".init(name: \(SwiftSyntax.string($0.name)), rawValue: \(SwiftSyntax.string($0.rawValue)))"]
                    },
                    width: 104
                )
                types[description.name] = [
                    "name": .string(reference(description.name)), "kind": "EnumDescription",
                    "lines": .list(lines.map { .string($0) }),
                ]
            case .composite(let description):
                var lines = ["name: \(SwiftSyntax.string(description.name)),"]
                lines += SwiftSyntax.arrayArgument(
                    "fields",
                    description.fields.map {
                        SwiftSyntax.call(
                            "AttributeDescription", SwiftSyntax.attributeArguments($0, reference: reference), width: 104
                        )
                    },
                    width: 104
                )
                types[description.name] = [
                    "name": .string(reference(description.name)), "kind": "CompositeDescription",
                    "lines": .list(lines.map { .string($0) }),
                ]
            default:
                break
            }
        }
        return types.keys.sorted().compactMap { types[$0] }
    }

    /// The arguments of `EntityDescription(…)`, one per line, naming only what differs from the
    /// defaults and wrapped to stay within 120 columns at the template's indentation.
    private static func lines(for entity: EntityDescription, reference: (String) -> String) -> [String] {
        let width = 120 - 16  // the template indents arguments by 8, array elements by 4 more, plus a comma
        var arguments: [[String]] = [["name: \(SwiftSyntax.string(entity.name))"]]
        if let parent = entity.parent { arguments.append(["parent: \(SwiftSyntax.string(parent))"]) }
        if entity.isAbstract { arguments.append(["isAbstract: true"]) }
        if !entity.attributes.isEmpty {
            let elements = entity.attributes.map {
                SwiftSyntax.call(
                    "AttributeDescription", SwiftSyntax.attributeArguments($0, reference: reference), width: width)
            }
            arguments.append(SwiftSyntax.arrayArgument("attributes", elements, width: width))
        }
        if !entity.relationships.isEmpty {
            let elements = entity.relationships.map {
                SwiftSyntax.call("RelationshipDescription", SwiftSyntax.relationshipArguments($0), width: width)
            }
            arguments.append(SwiftSyntax.arrayArgument("relationships", elements, width: width))
        }
        if !entity.uniquenessConstraints.isEmpty {
            let elements = entity.uniquenessConstraints.map { [SwiftSyntax.stringList($0)] }
            arguments.append(SwiftSyntax.arrayArgument("uniquenessConstraints", elements, width: width))
        }
        if !entity.indexes.isEmpty {
            let elements = entity.indexes.map { [SwiftSyntax.stringList($0)] }
            arguments.append(SwiftSyntax.arrayArgument("indexes", elements, width: width))
        }
        if !entity.defaultSort.isEmpty {
            let elements = entity.defaultSort.map {
                [
                    "SortDescription(attribute: \(SwiftSyntax.string($0.attribute))\($0.ascending ? "" : ", ascending: false"))"
                ]
            }
            arguments.append(SwiftSyntax.arrayArgument("defaultSort", elements, width: width))
        }
        if let old = entity.renamedFrom { arguments.append(["renamedFrom: \(SwiftSyntax.string(old))"]) }
        if let modifier = entity.versionHashModifier {
            arguments.append(["versionHashModifier: \(SwiftSyntax.string(modifier))"])
        }
        // Every argument but the last ends with a comma.
        for index in arguments.indices.dropLast() {
            arguments[index][arguments[index].count - 1] += ","
        }
        return arguments.flatMap { $0 }
    }
}
