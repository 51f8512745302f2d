@_spi(Generated) import Modelwright
import ModelwrightSchema
import Mustache

/// Everything the templates need about one model, precomputed so they stay logic-less: Swift
/// names already escaped, types already spelled, doc comments split into lines, stored
/// properties in column order, and the Swift statements that encode and decode each one.
///
/// Built from the model's current ``EntityGraph`` (records and queries) and every version's
/// `SchemaDescription` (schema); turned into a ``MustacheValue`` for rendering. The README of
/// `Templates/` lists every key with an example. Type names come from ``TypeNames``, which
/// applies the config's naming, so every template follows it.
struct RenderContext {
    let value: MustacheValue

    init(model: PlannedModel, config: GeneratorConfig) throws {
        guard let current = model.current else {
            value = .null
            return
        }
        let graph = current.graph
        let names = try TypeNames(model: model, naming: config.naming, configPath: config.path)
        let accessLevel = config.accessLevel
        let access = accessLevel == .public ? "public " : ""
        let versionFiles = model.versions.map { fileName($0.path) }
        // The runtime decides the column order; every record is written in it.
        let propertyOrder = try current.schema.recordPropertyOrder()
        let value: MustacheObject = [
            "access": .string(access),
            // Before `access` on what only the runtime calls (row coding, field paths): a public
            // declaration that names the runtime's SPI must be SPI itself.
            "spi": .string(accessLevel == .public ? "@_spi(Generated) " : ""),
            "model": .string(SwiftSpelling.identifier(model.name)),
            "modelName": .string(model.name),
            "modelLiteral": .string(SwiftSpelling.string(model.name)),
            "isPublic": .bool(accessLevel == .public),
            "sourceFile": .string(SwiftSpelling.commentText(fileName(current.path))),
            "versionFiles": .string(SwiftSpelling.commentText(versionFiles.joined(separator: ", "))),
            "doc": docLines(graph.doc),
            "entities": .list(
                graph.entities.parallelMap {
                    EntityContext.make($0, in: graph, names: names, propertyOrder: propertyOrder[$0.name] ?? [])
                }),
            "enums": .list(graph.enumerations.map { Self.enumeration($0, names: names) }),
            "composites": .list(graph.composites.map { Self.composite($0, names: names) }),
            "versions": SchemaContext.versions(of: model, current: current),
            "current": SchemaContext.current(current),
            "currentVersion": .int(current.number),
        ]
        self.value = .object(value.adding(MigrationsContext.make(model, names: names)))
    }

    private static func enumeration(_ enumeration: EntityGraph.Enumeration, names: TypeNames) -> MustacheValue {
        let description = enumeration.schemaDescription
        return [
            "name": .string(names[description.name]),
            "rawType": .string(description.rawType == .string ? "String" : "Int"),
            "doc": docLines(enumeration.doc),
            "cases": .list(
                description.cases.map { enumCase in
                    let rawValue: String
                    if description.rawType == .int {
                        rawValue = " = \(enumCase.rawValue)"
                    } else {
                        rawValue =
                            enumCase.rawValue == enumCase.name ? "" : " = \(SwiftSpelling.string(enumCase.rawValue))"
                    }
                    return [
                        "name": .string(SwiftSpelling.identifier(enumCase.name)),
                        "rawValue": .string(rawValue),
                        "doc": docLines(enumeration.caseDocs[enumCase.name] ?? []),
                    ]
                }
            ),
        ]
    }

    private static func composite(_ composite: EntityGraph.Composite, names: TypeNames) -> MustacheValue {
        let fields = composite.fields.map { field in
            let type = names.type(of: field.type) + (field.isOptional ? "?" : "")
            return (field: field, name: SwiftSpelling.identifier(field.name), type: type)
        }
        let required = fields.filter { !$0.field.isOptional }
        return [
            "name": .string(names[composite.name]),
            "doc": docLines(composite.doc),
            "columnCount": .int(fields.count),
            "fields": .list(
                fields.enumerated().map { index, entry in
                    [
                        "separator": .string(index == fields.count - 1 ? "" : ","),
                        "name": .string(entry.name),
                        "parameter": .string(SwiftSpelling.parameterLabel(entry.field.name)),
                        "argument": .string(SwiftSpelling.argumentLabel(entry.field.name)),
                        "type": .string(entry.type),
                        "doc": docLines(entry.field.doc),
                        "encode": .string(
                            Coding.encode(entry.name, type: entry.field.type)),
                        "decodedType": .string(entry.field.isOptional ? entry.type : entry.type + "?"),
                        "column": .string(SwiftSpelling.string(entry.field.name)),
                    ]
                }
            ),
            "hasRequired": .bool(!required.isEmpty),
            "requiredFields": .list(
                required.enumerated().map { index, entry in
                    [
                        "name": .string(entry.name),
                        "column": .string(SwiftSpelling.string(entry.field.name)),
                        "separator": .string(index == required.count - 1 ? "" : ","),
                        // swift-format wants a comma after each element of an array literal of several.
                        "listSeparator": .string(required.count > 1 ? "," : ""),
                    ]
                }
            ),
        ]
    }
}

/// The model's doc comment lines as a list the templates prefix with `///`, each made safe to
/// stay inside its comment.
func docLines(_ lines: [String]) -> MustacheValue {
    .list(lines.map { .string($0.isEmpty ? "" : " " + SwiftSpelling.commentText($0)) })
}

/// The last component of a path.
func fileName(_ path: String) -> String {
    path.split(separator: "/").last.map(String.init) ?? path
}

/// How generated code writes and reads each kind of column. Every row-coding call of the runtime
/// throws, so each is written with `try`: which values the runtime can refuse is its own business.
enum Coding {
    /// The statement that writes a value.
    static func encode(_ name: String, type: AttributeType) -> String {
        switch type {
        case .composite: "try row.encodeComposite(\(name))"
        case .codable: "try row.encodeJSON(\(name))"
        default: "try row.encode(\(name))"
        }
    }

    /// The expression that reads a value.
    static func decode(type: AttributeType, isOptional: Bool) -> String {
        switch type {
        case .composite: return isOptional ? "try row.decodeComposite()" : "try row.decodeRequiredComposite()"
        case .codable: return isOptional ? "try row.decodeJSON()" : "try row.decodeRequiredJSON()"
        default: return "try row.decode()"
        }
    }
}
