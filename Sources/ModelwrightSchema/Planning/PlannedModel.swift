import Modelwright

/// What the plan stage produces, and the front end's output: every version of a model, oldest
/// first (the last is the current one), and the planned migration between each and the next.
public struct PlannedModel: Sendable {
    /// The model's name.
    public let name: String
    /// The versions, numbered 1, 2, 3, … in order.
    public let versions: [LoweredVersion]
    /// The migration from each version to the next, oldest first.
    package let steps: [PlannedStep]

    /// The newest version, which the app's code is generated from.
    public var current: LoweredVersion? { versions.last }
}

extension PlannedModel {
    /// Plans the migration from each version to the next; `nil` when a step has a change nothing
    /// accounts for, which `diagnostics` then holds at the newer version's file.
    package static func plan(_ versions: [LoweredVersion], diagnostics: inout ModelDiagnostics) -> PlannedModel? {
        guard let first = versions.first else { return nil }
        // Each step is planned on its own (each runs its own shadow check), so they run in parallel.
        let sinks = diagnostics.versions
        let freshSchemas = FreshSchemaCache()
        let planned = Array(versions.indices.dropFirst()).parallelMap { index in
            var sink = sinks[index]
            let step = MigrationPlanner.plan(
                from: versions[index - 1], to: versions[index], sink: &sink, freshSchemas: freshSchemas)
            return (step: step, sink: sink)
        }
        for (index, entry) in zip(versions.indices.dropFirst(), planned) {
            diagnostics.versions[index] = entry.sink
        }
        guard !diagnostics.hasErrors else { return nil }
        return PlannedModel(name: first.graph.modelName, versions: versions, steps: planned.map(\.step))
    }
}
