import Foundation
import Modelwright
import ModelwrightSchema

extension CoreDataVersionTranslator {
    // MARK: - Fetch request templates

    /// `request name: Entity where "predicate"` for a model-level fetch request template, or `nil`
    /// with a warning naming the template when its predicate is outside what requests can say.
    mutating func render(_ template: CoreDataModel.FetchRequest) -> String? {
        let notImported = "fetch request template '\(template.name)' is not imported"
        guard let entity = entityNames[template.entity] else {
            warn("\(notImported): its entity '\(template.entity)' is not imported", at: template.location)
            return nil
        }
        reportOther(
            template.attributes, of: "fetch request template '\(template.name)'",
            ignoring: ["name", "entity", "predicateString"], at: template.location)
        var line = "request \(CoreDataNames.memberName(template.name)): \(entity)"
        if let text = template.predicateString {
            switch PredicateParser.parse(text) {
            case .failure(let problem):
                warn("\(notImported): its predicate cannot be read: \(problem.message)", at: template.location)
                return nil
            case .success(let predicate):
                line +=
                    " where " + quoted(schemaSpelling(of: text, predicate, on: template.entity), at: template.location)
            }
        }
        return line
    }

    /// The predicate's text with each key path name the import changed (`id` → `id_`) in its
    /// schema spelling, walking relationships from `entity`.
    private func schemaSpelling(of text: String, _ predicate: AST.Predicate, on entity: String) -> String {
        PredicateKeyPaths.respelled(text, predicate, from: entity) { name, entity in property(name, of: entity) }
    }

    /// The schema name of an imported property of `entity` or an ancestor, and a relationship's destination.
    func property(_ name: String, of entity: String) -> (name: String, destination: String?)? {
        var owner: String? = entity
        var visited: Set<String> = []
        while let current = owner, visited.insert(current).inserted {
            if let schemaName = propertyNames[current]?[name] {
                return (schemaName, relationships[current]?.first { $0.name == name }?.destinationEntity)
            }
            owner = parents[current]
        }
        return nil
    }

    /// Resolves the version's text and removes each request whose predicate does not fit the model
    /// (a key path the schema names differently, a constant of the wrong type), with a warning
    /// naming the template: the imported model must validate.
    mutating func dropUnresolvedRequests(
        _ requests: [(line: Int, template: CoreDataModel.FetchRequest)], from lines: inout [String]
    ) {
        guard !requests.isEmpty else { return }
        let file = SourceFile(path: model.path, text: lines.joined(separator: "\n") + "\n")
        let errors = ResolvedFile.compile(file).diagnostics.filter { $0.severity == .error }
        for request in requests.reversed() {
            guard let error = errors.first(where: { $0.location?.line == request.line + 1 }) else { continue }
            warn(
                "fetch request template '\(request.template.name)' is not imported: \(error.message)",
                at: request.template.location)
            lines.removeSubrange((request.line - 1)...request.line)
        }
    }
}
