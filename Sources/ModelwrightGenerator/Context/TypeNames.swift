import Modelwright
import ModelwrightSchema

/// The Swift names of a model's entities, enums and composites: the schema's names with the
/// config's ``Naming`` applied, checked so the generated code compiles. The one place the
/// templates' type names come from; storage names (tables, entity names in the schema
/// description, checksums) are never taken from here.
struct TypeNames {
    private var names: [String: String] = [:]

    /// The names for the model's current version, or an error naming the config key (or, for a
    /// clash the schema alone causes, the model file) and the fix.
    init(model: PlannedModel, naming: Naming, configPath: String?) throws {
        guard let current = model.current else { return }
        let graph = current.graph
        let configPath = configPath ?? GeneratorConfig.fileName
        let kinds =
            graph.entities.map { ($0.name, "entity") } + graph.enumerations.map { ($0.schemaDescription.name, "enum") }
            + graph.composites.map { ($0.name, "composite") }
        let schemaNames = kinds.map(\.0)
        for name in naming.types.keys.sorted() where !schemaNames.contains(name) {
            let hint = Suggestions.closest(to: name, among: schemaNames).map { "; did you mean '\($0)'?" } ?? ""
            throw GeneratorError.invalidConfig(
                path: configPath,
                message:
                    "'naming.types' renames '\(name)', which is not an entity, enum or composite of \(model.name)\(hint)"
            )
        }
        for entity in graph.entities {
            names[entity.name] = naming.recordName(forEntity: entity.name)
        }
        for name in graph.enumerations.map(\.schemaDescription.name) + graph.composites.map(\.name) {
            names[name] = naming.valueTypeName(for: name)
        }
        // Other generated declarations share the module's namespace with the types.
        var owners = [model.name: "the generated schema enum"]
        if model.steps.contains(where: { !$0.customStages.isEmpty }) {
            owners[GeneratedNamespace.migrationsProtocol(ofModel: model.name)] =
                "the protocol of custom migration stages"
        }
        // Names the schema keeps come first, so a clash is reported on the name `naming` changed.
        let kept = kinds.filter { names[$0.0] == $0.0 }
        let changed = kinds.filter { names[$0.0] != $0.0 }
        for (name, kind) in kept {
            if let owner = owners[name] {
                throw GeneratorError.invalidConfig(
                    path: current.path,
                    message:
                        "\(kind) '\(name)' has the name of \(owner); rename it, or give it another Swift name in 'naming.types' of \(GeneratorConfig.fileName)"
                )
            }
            owners[name] = "\(kind) '\(name)'"
        }
        for (name, kind) in changed {
            let swiftName = names[name] ?? name
            let problem =
                !SwiftSpelling.isIdentifier(swiftName)
                ? "which is not a Swift identifier"
                : NameRules.reservedTypeNames.contains(swiftName)
                    ? "which the generated code uses for Swift's, Foundation's or the runtime's type of that name"
                    : owners[swiftName].map { "which \($0) already has" }
            if let problem {
                throw GeneratorError.invalidConfig(
                    path: configPath,
                    message:
                        "'naming' gives \(kind) '\(name)' the Swift name '\(swiftName)', \(problem); choose another in 'naming.types'"
                )
            }
            owners[swiftName] = "\(kind) '\(name)'"
        }
    }

    /// The Swift name of an entity, enum or composite, in backticks where it is a keyword.
    subscript(_ schemaName: String) -> String {
        SwiftSpelling.identifier(names[schemaName] ?? schemaName)
    }

    /// The Swift type of an attribute (without optionality).
    func type(of attribute: AttributeType) -> String {
        switch attribute {
        case .enumeration(let description): self[description.name]
        case .composite(let description): self[description.name]
        default: SwiftSpelling.type(of: attribute)
        }
    }
}
