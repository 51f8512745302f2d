import Modelwright

/// Resolving the changes into a step: which stage owes what, the located errors, and the
/// shadow check on synthetic rows.
extension MigrationPlanner {
    // MARK: - Shadow check

    /// The two versions cut down to the entities the step changes, with their hierarchies and
    /// the entities one relationship away (whose tables hold inverse columns and join tables):
    /// the shadow check then creates a handful of tables instead of a long history's every table.
    func reducedSchemas() -> (SchemaDescription, SchemaDescription) {
        let oldSchema = previous.schema
        let newSchema = next.schema
        let oldNames = Set(oldSchema.entities.map(\.name))
        let newNames = Set(newSchema.entities.map(\.name))
        let renamedFrom = Dictionary(
            newSchema.entities.map { ($0.name, $0.renamedFrom) }, uniquingKeysWith: { first, _ in first })
        let oldName = { (name: String) in (renamedFrom[name] ?? nil) ?? name }
        var keptNew = Set(changes.map(\.entity).filter(newNames.contains))
        var keptOld = Set(changes.map(\.entity).filter(oldNames.contains))
        keptOld.formUnion(keptNew.map(oldName).filter(oldNames.contains))
        keptNew.formUnion(Self.neighbours(of: keptNew, in: newSchema))
        keptOld.formUnion(Self.neighbours(of: keptOld, in: oldSchema))
        for _ in 0..<2 {
            keptOld.formUnion(keptNew.map(oldName).filter(oldNames.contains))
            keptNew.formUnion(newSchema.entities.filter { keptOld.contains(oldName($0.name)) }.map(\.name))
            keptNew = Self.hierarchies(of: keptNew, in: newSchema)
            keptOld = Self.hierarchies(of: keptOld, in: oldSchema)
        }
        var source = oldSchema
        source.entities = oldSchema.entities.filter { keptOld.contains($0.name) }
        var destination = newSchema
        destination.entities = newSchema.entities.filter { keptNew.contains($0.name) }
        return (source, destination)
    }

    /// The entities one relationship away from `names`, in either direction.
    static func neighbours(of names: Set<String>, in schema: SchemaDescription) -> Set<String> {
        var result = names
        for entity in schema.entities {
            let destinations = entity.relationships.map(\.destination)
            if names.contains(entity.name) { result.formUnion(destinations) }
            if destinations.contains(where: names.contains) { result.insert(entity.name) }
        }
        return result
    }

    /// `names` with every entity sharing a root with one of them (one table per hierarchy).
    static func hierarchies(of names: Set<String>, in schema: SchemaDescription) -> Set<String> {
        let parents = Dictionary(
            schema.entities.map { ($0.name, $0.parent) }, uniquingKeysWith: { first, _ in first })
        func root(_ name: String) -> String {
            var current = name
            var seen: Set<String> = [current]
            while let parent = parents[current] ?? nil, seen.insert(parent).inserted { current = parent }
            return current
        }
        let roots = Set(names.map(root))
        return names.union(schema.entities.map(\.name).filter { roots.contains(root($0)) })
    }

    // MARK: - Resolution

    func finish(sink: inout DiagnosticSink, freshSchemas: FreshSchemaCache) -> PlannedStep {
        let migration = new.migration
        let stages = migration?.customStages ?? []
        let accepted = migration?.acceptedLosses ?? []
        var used = Set<Int>()
        var resolved = changes
        var coversUsed = Set<EntityGraph.CoveredChange>()
        var obligations: [StageObligation] = []
        let oldFile = previous.path.split(separator: "/").last.map(String.init) ?? previous.path
        for (index, change) in changes.enumerated() {
            var resolution: String?
            switch change.kind {
            case .lightweight:
                break
            case .lossy:
                let need = lossesNeeded.first { $0.change == index }
                if let match = accepted.indices.first(where: { candidate in
                    accepted[candidate].entity == need?.entity
                        && (accepted[candidate].property == nil || accepted[candidate].property == need?.property)
                }) {
                    used.insert(match)
                    resolution = "accepted" + (accepted[match].reason.map { ": \($0)" } ?? "")
                }
            case .needsDefault, .needsCustomStage:
                if let (stage, cover) = Self.stage(covering: change, in: stages) {
                    if let cover { coversUsed.insert(cover) }
                    resolution = "custom stage " + stage.name
                    Self.record(change, owedBy: stage.name, in: &obligations)
                }
            }
            if change.kind != .lightweight && resolution == nil {
                var notes: [(String, Int)] = []
                if let hint = change.resolution { notes.append((hint, change.offset)) }
                switch change.kind {
                case .lossy:
                    let need = lossesNeeded.first { $0.change == index }
                    let target = [need?.entity, need?.property].compactMap { $0 }.joined(separator: ".")
                    notes.append(
                        (
                            "to accept the loss, write 'lossy \(target) \"why\"' in 'migration from \(previous.number) { … }'",
                            change.offset
                        ))
                default:
                    let subject = [change.entity, change.property].compactMap { $0 }.joined(separator: ".")
                    if let stage = stages.first {
                        notes.append(
                            (
                                "every custom stage of this step lists what it covers and none covers '\(subject)': add it to one ('custom \(stage.name) \"…\" covers …, \(subject)'), or declare a stage for it",
                                stage.range.start
                            ))
                    } else {
                        notes.append(
                            (
                                "declare one in 'migration from \(previous.number) { custom name \"what it does\" }'; the app then implements it",
                                change.offset
                            ))
                    }
                }
                sink.error(
                    "version \(next.number) cannot be migrated to from version \(previous.number) (\(oldFile)): \(change.summary) \(change.kind == .lossy ? "loses data" : change.kind.rawValue)",
                    at: change.offset, notes: notes)
            }
            resolved[index] = SchemaChange(
                summary: change.summary, kind: change.kind, entity: change.entity,
                resolution: change.kind == .lightweight ? nil : resolution, caution: change.caution,
                table: change.table, offset: change.offset, property: change.property, work: change.work)
        }
        for stage in stages {
            for cover in stage.covers ?? [] where !coversUsed.contains(cover) {
                sink.warning(
                    "custom stage '\(stage.name)' covers '\(cover.text)', but no change of this step to '\(cover.text)' needs a custom stage; remove it from the list",
                    at: cover.range.start)
            }
        }
        for (index, loss) in accepted.enumerated() where !used.contains(index) {
            let target = [loss.entity, loss.property].compactMap { $0 }.joined(separator: ".")
            sink.warning("'lossy \(target)' accepts a loss this step does not have; remove it", at: loss.range.start)
        }
        // A store of either version counts as both, so the runtime never runs this step: a
        // change only a stage or a loss can make would never be made.
        // The checksum leaves out the Swift type inside `Codable<…>` (adding it would change the
        // checksum of every released version with a Codable attribute, so existing stores and
        // locks would no longer match). Stores record their version number, so two versions that
        // differ only in a Codable spelling are told apart by it, and their step does run.
        // (The checksums, which hash both schemas, are compared only for a step with such a change.)
        if let change = changes.first(where: { $0.kind != .lightweight || $0.rewritesStoredValues }),
            previous.schema.checksum == next.schema.checksum,
            codableSpellings(of: previous.schema) == codableSpellings(of: next.schema)
        {
            let need =
                change.kind == .lightweight
                ? "rewrites stored values" : change.kind == .lossy ? "loses data" : change.kind.rawValue
            sink.error(
                "version \(next.number) has the same structure as version \(previous.number) (one checksum), so a store of either counts as both and this step never runs, but \(change.summary) \(need)",
                at: change.offset,
                notes: [
                    (
                        "give the versions different checksums: add '@coreData(versionHashModifier: \"…\")' to \([change.entity, change.property].compactMap { $0 }.joined(separator: "."))",
                        change.offset
                    )
                ])
        }
        var operations: [MigrationOperation] = []
        if !sink.hasErrors, !changes.isEmpty {
            // The step runs on synthetic rows that give every column and relationship a value,
            // with every obligation of its custom stages met by a stub (what the app must at
            // least do), so a step that would leave a value the next version cannot read, a
            // broken link or a changed kept value is found now, not on a device.
            // The losses the step declares, as the generated plan carries them to the runtime.
            let losses = accepted.map { MigrationStage.Loss($0.entity, $0.property) }
            let stage = { (source: SchemaDescription, destination: SchemaDescription) in
                PlannedStep.shadowStage(
                    from: source, to: destination, customStages: stages, obligations: obligations, losses: losses)
            }
            do {
                // The tables the step touches are enough to learn its cost; the whole schema is the
                // fallback when that smaller check fails, so only a real problem is reported.
                let (source, destination) = reducedSchemas()
                do {
                    operations = try stage(source, destination).operations(
                        freshSchemas: freshSchemas, syntheticRows: true)
                } catch {
                    operations = try stage(previous.schema, next.schema).operations(
                        freshSchemas: freshSchemas, syntheticRows: true)
                }
            } catch {
                let at = new.migration?.range.start ?? new.headerRange.start
                sink.error(
                    "the migration from version \(previous.number) fails on rows that give every column and relationship a value\(stages.isEmpty ? "" : ", with each custom stage's obligations met by a stub"): \(error)",
                    at: at,
                    notes: [
                        stages.isEmpty
                            ? (
                                "declare a custom stage in 'migration from \(previous.number) { custom name \"what it does\" }' that converts the values",
                                at
                            )
                            : (
                                "the stages' own code (didMigrate) must then repair what the stubs leave; cover the change in a stage ('covers Entity.property') so the app owes a value for it",
                                at
                            )
                    ])
            }
        }
        return PlannedStep(
            from: previous, to: next, changes: resolved, customStages: stages, obligations: obligations,
            losses: accepted.map { MigrationStage.Loss($0.entity, $0.property) }, operations: operations)
    }

    /// The stage that takes on `change`: the first whose `covers` list names its property (or
    /// its entity, which covers every change of the entity), else the first stage without a list,
    /// which takes every change no list names. Also returns the list entry that matched.
    static func stage(covering change: SchemaChange, in stages: [EntityGraph.CustomStage]) -> (
        EntityGraph.CustomStage, EntityGraph.CoveredChange?
    )? {
        for exact in [true, false] {
            for stage in stages {
                if let cover = stage.covers?.first(where: {
                    $0.entity == change.entity && (exact ? $0.property == change.property : $0.property == nil)
                }) {
                    return (stage, cover)
                }
            }
        }
        return stages.first { $0.covers == nil }.map { ($0, nil) }
    }

    /// Adds what `stage` owes for `change`, merged with what it already owes for the same entity
    /// or property (one requirement each): a value for every row outweighs one for the rows
    /// without a value, and a hook outweighs both.
    static func record(_ change: SchemaChange, owedBy stage: String, in obligations: inout [StageObligation]) {
        let work = change.work ?? .hook
        guard
            let index = obligations.firstIndex(where: {
                $0.stage == stage && $0.entity == change.entity && $0.property == change.property
            })
        else {
            obligations.append(
                StageObligation(
                    stage: stage, entity: change.entity, property: change.property, work: work,
                    changes: [change.summary]))
            return
        }
        let existing = obligations[index]
        let merged: StageObligation.Work =
            switch (existing.work, work) {
            case (.hook, _), (_, .hook): .hook
            case (.value(let type, let optional, let onlyMissing), .value(_, _, let otherOnlyMissing)):
                .value(type, isOptional: optional, onlyRowsWithoutValue: onlyMissing && otherOnlyMissing)
            }
        obligations[index] = StageObligation(
            stage: stage, entity: existing.entity, property: existing.property, work: merged,
            changes: existing.changes + [change.summary])
    }
}

/// The Swift type inside each `Codable<…>` of `schema`, by `Entity.attribute` (and
/// `Entity.attribute.field` inside composites): what the checksum leaves out but a step's custom
/// stage may convert, so two versions that differ only here do not have the same structure.
private func codableSpellings(of schema: SchemaDescription) -> [String: String] {
    var spellings: [String: String] = [:]
    func add(_ attribute: AttributeDescription, at path: String) {
        switch attribute.type {
        case .codable(let typeName): spellings[path] = typeName
        case .composite(let composite):
            for field in composite.fields { add(field, at: "\(path).\(field.name)") }
        default: break
        }
    }
    for entity in schema.entities {
        for attribute in entity.attributes { add(attribute, at: "\(entity.name).\(attribute.name)") }
    }
    return spellings
}
