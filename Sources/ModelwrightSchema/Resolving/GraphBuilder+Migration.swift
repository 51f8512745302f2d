import Modelwright

/// Resolves a version's migration block: custom stages and accepted losses.
extension GraphBuilder {
    mutating func resolveMigration(_ declarations: [AST.Declaration]) -> EntityGraph.Migration? {
        var result: EntityGraph.Migration?
        for declaration in declarations {
            guard case .migration(let migration) = declaration else { continue }
            if let first = result {
                diagnostics.error(
                    "a version declares one migration block; merge the stages into the first",
                    at: migration.range.start,
                    notes: [("the first migration block", first.range.start)]
                )
                continue
            }
            var seen: [String: AST.Name] = [:]
            var stages: [EntityGraph.CustomStage] = []
            for stage in migration.customStages {
                if let problem = NameRules.problem(withMemberName: stage.name.text, kind: "custom stage") {
                    diagnostics.error(problem, at: stage.name.range.start)
                }
                guard isFirst(stage.name, in: &seen, described: "custom stage", of: "this migration") else { continue }
                stages.append(
                    EntityGraph.CustomStage(
                        name: stage.name.text,
                        label: stage.label,
                        doc: stage.doc,
                        range: stage.name.range,
                        covers: stage.covers?.map {
                            EntityGraph.CoveredChange(
                                entity: $0.entity.text, property: $0.property?.text,
                                range: SourceRange(
                                    start: $0.entity.range.start, end: ($0.property ?? $0.entity).range.end))
                        }
                    )
                )
            }
            let losses = migration.acceptedLosses.map {
                EntityGraph.AcceptedLoss(
                    entity: $0.entity.text, property: $0.property?.text, reason: $0.reason, range: $0.range)
            }
            result = EntityGraph.Migration(
                fromVersion: migration.fromVersion, customStages: stages, acceptedLosses: losses,
                range: migration.range)
        }
        return result
    }
}
