import Modelwright

/// The migration from one version of a model to the next: what changed, how each change
/// migrates, and what the runtime will do to the store's tables.
package struct PlannedStep: Sendable {
    /// The version the step starts from.
    package let from: LoweredVersion
    /// The version it ends at.
    package let to: LoweredVersion
    /// Every change, in the order of the newer version's declarations, removals last.
    package let changes: [SchemaChange]
    /// The custom stages the newer version declares for this step.
    package let customStages: [EntityGraph.CustomStage]
    /// What the custom stages owe: one entry per entity or property whose changes only the app's
    /// code can make, in the order of the changes. The generated stage protocol requires each.
    package let obligations: [StageObligation]
    /// The losses the newer version's `lossy` lines declare for this step, by the older version's
    /// names: `plan` checks the step with them, and the generated plan gives the runtime the same.
    package let losses: [MigrationStage.Loss]
    /// What the runtime does to the tables, found by running the step on an empty in-memory
    /// store at generation time; empty when that could not be done.
    package let operations: [MigrationOperation]

    /// Whether the step is inferred from the schemas alone: every change is lightweight and no
    /// custom stage is declared.
    package var isLightweight: Bool {
        customStages.isEmpty && changes.allSatisfy { $0.kind == .lightweight }
    }

    /// The step's class as people read it, the one wording `plan` and the generated plan use:
    /// `lightweight`, `lossy (accepted)` or `custom stage a, b`.
    package var classification: String {
        if !customStages.isEmpty { return "custom stage " + customStages.map(\.name).joined(separator: ", ") }
        return isLightweight ? "lightweight" : "lossy (accepted)"
    }

    /// The cautions of its changes: lightweight changes a person should still look at, such as a
    /// default every existing row gets, or a conversion Core Data could not have inferred.
    package var cautions: [String] {
        changes.compactMap { change in change.caution.map { "\(change.summary): \($0)" } }
    }

    /// The step as the runtime's stage that tools run before any app implements its custom
    /// stages: each obligation met by a stub (what the app must at least do). `plan` runs it on an
    /// empty store to learn the step's operations, and on PostgreSQL to print its statements.
    package var shadowStage: MigrationStage {
        Self.shadowStage(
            from: from.schema, to: to.schema, customStages: customStages, obligations: obligations, losses: losses)
    }

    /// ``shadowStage`` between `source` and `destination` (the planner also runs it between
    /// schemas reduced to the tables the step touches).
    package static func shadowStage(
        from source: SchemaDescription, to destination: SchemaDescription, customStages: [EntityGraph.CustomStage],
        obligations: [StageObligation], losses: [MigrationStage.Loss]
    ) -> MigrationStage {
        let steps = customStages.map { stage in
            MigrationStage.CustomStep(
                name: stage.name, label: stage.label,
                obligations: obligations.filter { $0.stage == stage.name }.map { obligation in
                    let value: Bool? =
                        switch obligation.work {
                        case .value(_, _, let onlyRowsWithoutValue): onlyRowsWithoutValue
                        case .hook: nil
                        }
                    return .stubbed(of: obligation.entity, obligation.property, value: value)
                },
                didMigrate: { _ in })
        }
        return steps.isEmpty
            ? MigrationStage.lightweight(from: source, to: destination, lossy: losses)
            : MigrationStage.custom(from: source, to: destination, steps: steps, lossy: losses)
    }

    /// The tables the step visits row by row (rebuilds, updates, new indexes), which take time
    /// in proportion to their rows; tables the step creates are empty and left out.
    package var rewrittenTables: [String] {
        let created = Set(operations.compactMap { if case .createTable(let table) = $0 { table } else { nil } })
        return Set(operations.filter { !$0.isConstantTime }.map(\.table)).subtracting(created).sorted()
    }
}

/// One change between two versions, classified by how it migrates.
package struct SchemaChange: Sendable {
    /// How a change migrates.
    package enum Kind: String, Sendable, Codable {
        /// Inferred: nothing is lost and every row gets a value.
        case lightweight
        /// A required attribute appears (or becomes required) with no default: a custom stage
        /// must give existing rows a value.
        case needsDefault = "needs a default"
        /// Stored data is dropped: a removed entity, attribute or relationship, or a narrowing.
        case lossy
        /// The stored values cannot be converted without the app's code.
        case needsCustomStage = "needs a custom stage"
    }

    /// What changed, in words: `add attribute User.isVerified (Bool = false)`.
    package let summary: String
    /// How it migrates.
    package let kind: Kind
    /// The entity it belongs to, by its name in the newer version (the older one for removals).
    package let entity: String
    /// Why the change is acceptable even though it is not lightweight (an accepted loss, a
    /// custom stage), or `nil`.
    package let resolution: String?
    /// A caution that does not stop generation, such as a uniqueness constraint existing rows may break.
    package let caution: String?
    /// The table whose rows the change touches.
    package let table: String
    /// Where the change is declared, in the newer version's file (an offset).
    let offset: Int
    /// The attribute or relationship it changes, by its name in the newer version; `nil` for a
    /// change of a whole entity.
    package var property: String? = nil
    /// What a custom stage must do for it, when it needs one (``Kind/needsDefault`` or
    /// ``Kind/needsCustomStage``).
    package var work: StageObligation.Work? = nil
    /// Whether the runtime rewrites stored values for it though no table changes (an enum's cases
    /// that keep their names but move to other raw values): the step must run, so the two
    /// versions need different checksums.
    package var rewritesStoredValues = false
}

/// What a custom stage owes for the changes of one entity or property that only the app's code
/// can make. The generated stage protocol turns each into a requirement of its own, so an app
/// that forgets one does not compile; `plan` meets each with a synthetic stub to run the step on
/// rows before any device does.
package struct StageObligation: Sendable {
    /// The kind of code the app writes.
    package enum Work: Sendable, Equatable {
        /// A function from an existing row to the attribute's value in the newer version: for
        /// every row of the entity, or (`onlyRowsWithoutValue`) for the rows that hold none. A
        /// Codable attribute's function returns the app's type, so a retyped one cannot be
        /// forgotten or answered with the old type.
        case value(AttributeType, isOptional: Bool, onlyRowsWithoutValue: Bool)
        /// Code that runs with the migration context: relationships that change storage or
        /// become required, entities that change parent, composite values.
        case hook
    }

    /// The custom stage that owes it.
    package let stage: String
    /// The entity, by its name in the newer version.
    package let entity: String
    /// The attribute or relationship, by its name in the newer version; `nil` for the entity's own change.
    package let property: String?
    /// What the app writes.
    package let work: Work
    /// The changes it answers, in words.
    package let changes: [String]

    /// `Book.rating`: what a `covers` list names.
    package var subject: String { [entity, property].compactMap { $0 }.joined(separator: ".") }

    /// The name of the generated protocol's requirement (before any backticks): the stage, the
    /// entity and the property, `parseRatingsBookRating`.
    package var memberName: String {
        GeneratedNamespace.stageRequirement(ofStage: stage, entity: entity, property: property)
    }
}

extension PlannedStep {
    /// The members the generated stage protocol declares for this step, in order, each with its
    /// stage and what it is for: one per obligation, and each stage's `WillMigrate` and
    /// `DidMigrate` hooks. Their names are made by joining words, so two can coincide, across
    /// steps too; ``PlannedModel`` refuses that.
    package var protocolMembers: [(name: String, stage: EntityGraph.CustomStage, purpose: String)] {
        customStages.flatMap { stage in
            obligations.filter { $0.stage == stage.name }.map {
                ($0.memberName, stage, "the requirement for \($0.subject)")
            }
                + [
                    (
                        GeneratedNamespace.willMigrateHook(ofStage: stage.name), stage,
                        "the hook before the tables change"
                    ),
                    (GeneratedNamespace.didMigrateHook(ofStage: stage.name), stage, "the hook after the tables change"),
                ]
        }
    }
}
