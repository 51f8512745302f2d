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
        checkProtocolMembers(
            zip(versions.indices.dropFirst(), planned).map { ($0, versions[$0].number, $1.step) },
            diagnostics: &diagnostics)
        guard !diagnostics.hasErrors else { return nil }
        return PlannedModel(name: first.graph.modelName, versions: versions, steps: planned.map(\.step))
    }

    /// Reports a member of the generated stage protocol whose name another member already has
    /// (`parse` owing `Did.migrate` makes `parseDidMigrate`, the name of `parse`'s own hook; stage
    /// `a` owing `BookRating.x` and stage `aBook` owing `Rating.x` both make `aBookRatingX`), at the
    /// later stage's name, with the earlier one as a note: the protocol would not compile.
    private static func checkProtocolMembers(
        _ steps: [(index: Int, version: Int, step: PlannedStep)], diagnostics: inout ModelDiagnostics
    ) {
        var taken: [String: (stage: String, version: Int, purpose: String)] = [:]
        for (index, version, step) in steps {
            for member in step.protocolMembers {
                guard let other = taken[member.name] else {
                    taken[member.name] = (member.stage.name, version, member.purpose)
                    continue
                }
                diagnostics.versions[index].error(
                    "custom stage '\(member.stage.name)' generates '\(member.name)' (\(member.purpose)), which custom stage '\(other.stage)' of version \(other.version) already generates (\(other.purpose)); rename one of the stages",
                    at: member.stage.range.start)
            }
        }
    }
}
