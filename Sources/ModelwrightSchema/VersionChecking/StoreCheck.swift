import Modelwright

/// Checks one version's store namespace on its lowered description, after resolving: what would
/// keep the store from being created, as the runtime's own layout of the store finds it
/// (``SchemaDescription/storeProblems()``): reserved table names, names that differ only in case,
/// SQLite's column limit. Resolving only flags a graph that may have such a problem
/// (``EntityGraph/storeCheckDue``), so that the resolve stage never lowers.
enum StoreCheck {
    /// Reports each problem at the entity, attribute or relationship that causes it, when
    /// resolving flagged the graph.
    static func check(_ graph: EntityGraph, diagnostics: inout DiagnosticSink) {
        guard graph.storeCheckDue, let problems = try? SchemaLowering.lower(graph).storeProblems() else { return }
        for problem in problems {
            guard let entity = graph.entity(named: problem.entity) else { continue }
            let range =
                problem.property.flatMap { property in
                    entity.attributes.first { $0.name == property }?.range
                        ?? entity.relationships.first { $0.name == property }?.range
                } ?? entity.range
            diagnostics.error(problem.message, at: range.start)
        }
    }
}
