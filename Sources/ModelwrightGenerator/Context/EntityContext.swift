import Modelwright
import ModelwrightSchema
import Mustache

/// The context of one record type: its stored properties in column order, its queryable fields
/// (composites among them) and its to-many relationships.
///
/// The column order is the runtime's (`SchemaDescription.recordPropertyOrder()`, from the store's
/// own layout), passed in as the schema names of the entity's properties: the generator does not
/// decide it a second time.
enum EntityContext {
    static func make(
        _ entity: EntityGraph.Entity, in graph: EntityGraph, names: TypeNames, propertyOrder: [String]
    ) -> MustacheValue {
        let lineage = graph.ancestors(of: entity).reversed() + [entity]
        // By the name the schema and the runtime's layout give each property.
        var declared: [(schemaName: String, property: Property)] = []
        var fields: [MustacheValue] = []
        var toOne: [MustacheValue] = []
        var compositeFields: [MustacheValue] = []
        for member in lineage {
            for attribute in member.attributes {
                let name = SwiftSpelling.identifier(attribute.name)
                let type = names.type(of: attribute.type) + (attribute.isOptional ? "?" : "")
                var defaultExpression = attribute.isOptional ? " = nil" : ""
                if let value = attribute.defaultValue {
                    defaultExpression =
                        " = "
                        + SwiftSpelling.expression(
                            for: value, type: attribute.type, typeName: names.type(of: attribute.type))
                }
                declared.append(
                    (
                        attribute.name,
                        Property(
                            name: name,
                            spelling: attribute.name,
                            type: type,
                            isOptional: attribute.isOptional,
                            defaultExpression: defaultExpression,
                            doc: attribute.doc,
                            encode: Coding.encode(name, type: attribute.type),
                            decode: Coding.decode(type: attribute.type, isOptional: attribute.isOptional)
                        )
                    )
                )
                switch attribute.type {
                case .composite(let composite):
                    let fieldsType = names[composite.name] + ".Fields"
                    compositeFields.append([
                        "name": .string(name),
                        "type": .string(attribute.isOptional ? "OptionalComposite<\(fieldsType)>" : fieldsType),
                        "column": .string(SwiftSpelling.string(attribute.name)),
                        "doc": docLines(attribute.doc),
                    ])
                case .codable: break  // JSON text, not a comparable column
                default:
                    fields.append(field(name, type: type, column: attribute.name, doc: attribute.doc))
                }
            }
            for relationship in member.relationships where relationship.cardinality == .toOne {
                let name = SwiftSpelling.identifier(relationship.idProperty)
                let destination = names[relationship.destination]
                let type = "\(destination).ID" + (relationship.isOptional ? "?" : "")
                declared.append(
                    (
                        relationship.name,
                        Property(
                            name: name,
                            spelling: relationship.idProperty,
                            type: type,
                            isOptional: relationship.isOptional,
                            defaultExpression: relationship.isOptional ? " = nil" : "",
                            doc: relationship.doc,
                            encode: "try row.encode(\(name))",
                            decode: "try row.decode()"
                        )
                    )
                )
                fields.append(field(name, type: type, column: relationship.name, doc: relationship.doc))
                toOne.append([
                    "name": .string(SwiftSpelling.identifier(relationship.name)),
                    "column": .string(SwiftSpelling.string(relationship.name)),
                    "destination": .string(destination),
                    "doc": docLines(relationship.doc),
                ])
            }
        }
        let properties = inColumnOrder(declared, propertyOrder)
        let toMany = lineage.flatMap(\.relationships).filter { $0.cardinality == .toMany }.map { relationship in
            [
                "name": .string(SwiftSpelling.identifier(relationship.name)),
                "requestName": .string(
                    SwiftSpelling.identifier(GeneratedNamespace.requestProperty(ofRelationship: relationship.name))),
                "column": .string(SwiftSpelling.string(relationship.name)),
                "destination": .string(names[relationship.destination]),
                "doc": docLines(relationship.doc),
                "isOrdered": .bool(relationship.isOrdered),
            ] as MustacheValue
        }
        return [
            "name": .string(names[entity.name]),
            "entityName": .string(SwiftSpelling.string(entity.name)),
            "doc": docLines(entity.doc),
            "isAbstract": .bool(entity.isAbstract),
            "properties": .list(
                properties.enumerated().map { index, property in
                    property.context(separator: index == properties.count - 1 ? "" : ",")
                }
            ),
            "optionalProperties": .list(
                properties.filter(\.isOptional).map {
                    ["name": .string($0.name), "argument": .string(SwiftSpelling.argumentLabel($0.spelling))]
                        as MustacheValue
                }),
            "hasOptionalProperties": .bool(properties.contains(where: \.isOptional)),
            "firstOptionalProperty": .string(properties.first(where: \.isOptional)?.name ?? ""),
            "fields": .list(fields),
            "compositeFields": .list(compositeFields),
            "toOne": .list(toOne),
            "toMany": .list(toMany),
            "hasToMany": .bool(!toMany.isEmpty),
            "requests": .list(
                graph.requests.filter { $0.entity == entity.name }.map { RequestContext.make($0, names: names) }),
        ]
    }

    /// The properties in the runtime's column order. One the order does not name (which a layout
    /// of the same schema cannot leave out) keeps its place after the others rather than vanish
    /// from the record; `ColumnOrderTests` would report it.
    private static func inColumnOrder(
        _ declared: [(schemaName: String, property: Property)], _ order: [String]
    ) -> [Property] {
        let positions = Dictionary(order.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        // Each property's place looked up once, then sorted by index: looked up in the comparison,
        // it hashed two names per comparison.
        let places = declared.indices.map { positions[declared[$0].schemaName] ?? order.count + $0 }
        return declared.indices.sorted { (places[$0], $0) < (places[$1], $1) }.map { declared[$0].property }
    }

    /// A stored property, whose context waits for the separator that only the last one lacks.
    private struct Property {
        /// The name as an identifier, in backticks when it is a keyword.
        let name: String
        /// The name as the model spells it, for argument labels.
        let spelling: String
        let type: String
        let isOptional: Bool
        let defaultExpression: String
        let doc: [String]
        let encode: String
        let decode: String

        func context(separator: String) -> MustacheValue {
            [
                "name": .string(name),
                "parameter": .string(SwiftSpelling.parameterLabel(spelling)),
                "argument": .string(SwiftSpelling.argumentLabel(spelling)),
                "type": .string(type),
                "default": .string(defaultExpression),
                "doc": docLines(doc),
                "encode": .string(encode),
                "decode": .string(decode),
                // `with(…)` takes an optional of the type, so nil means "keep": a doubly optional
                // parameter lets an optional property be cleared with `.some(nil)`.
                "withType": .string(type + "?"),
                "separator": .string(separator),
            ]
        }
    }

    private static func field(_ name: String, type: String, column: String, doc: [String]) -> MustacheValue {
        [
            "name": .string(name),
            "type": .string(type),
            "column": .string(SwiftSpelling.string(column)),
            "doc": docLines(doc),
        ]
    }
}
