import Modelwright

extension EntityGraph {
    /// `@sync` on a root entity: its rows, and its subentities' rows, sync between devices and the
    /// server under the conflict rules of the runtime's `Sync` (see <doc:Sync>).
    package struct SyncMarking: Sendable {
        /// How the server resolves two rows that devices made offline with equal values of a
        /// uniqueness constraint: the runtime's own rule, which lowering hands to the entity's
        /// description (`EntityDescription.syncUniqueness`), so generated code carries it.
        package typealias UniqueResolution = SyncUniqueness

        /// The resolution `@sync(unique: …)` names; `nil` when none is written.
        package var unique: SyncUniqueness?
        /// Where `@sync` was written.
        package var range: SourceRange
    }
}

/// The checks of entities marked `@sync`: what would keep devices and the server from converging
/// on the same rows is a located error that says what to write instead. They run on one version's
/// graph once inverses are resolved, since a rule may read the delete rule of the inverse.
///
/// Every record already has a client-made UUID (``RecordID``), so no entity lacks a sync identity;
/// `Codable<T>` attributes merge as one value each and composites field by field, so neither is refused.
enum SyncRules {
    /// Reads `@sync` or `@sync(unique: merge|reject)` written on `entity`.
    static func marking(
        _ annotation: AST.Annotation, on entity: EntityGraph.Entity, diagnostics: inout DiagnosticSink
    ) -> EntityGraph.SyncMarking {
        var marking = EntityGraph.SyncMarking(unique: nil, range: annotation.range)
        if let parent = entity.parent {
            diagnostics.error(
                "'@sync' goes on the root of the hierarchy: '\(entity.name)' shares its rows' table with '\(parent)'; write '@sync' on its root entity, which syncs every subentity",
                at: annotation.range.start)
        }
        let choices = EntityGraph.SyncMarking.UniqueResolution.allCases.map(\.rawValue).joined(separator: "' or '")
        for argument in annotation.arguments ?? [] {
            guard argument.label?.text == "unique", argument.words.count == 1,
                let resolution = EntityGraph.SyncMarking.UniqueResolution(rawValue: argument.words[0].text)
            else {
                diagnostics.error(
                    "'@sync' takes one argument, 'unique:' with '\(choices)', as in '@sync(unique: merge)'",
                    at: argument.range.start)
                continue
            }
            if marking.unique != nil {
                diagnostics.error("'unique:' is written twice in '@sync'", at: argument.range.start)
            }
            marking.unique = resolution
        }
        if let arguments = annotation.arguments, arguments.isEmpty {
            diagnostics.error(
                "'@sync()' has empty parentheses: write '@sync', or '@sync(unique: merge)'", at: annotation.range.start)
        }
        return marking
    }

    /// Reports what keeps the synced entities of `graph` from converging.
    static func check(_ graph: EntityGraph, diagnostics: inout DiagnosticSink) {
        let roots = graph.entities.map { root(of: $0, in: graph) }
        let synced = Dictionary(
            zip(graph.entities.map(\.name), roots.map { graph.entity(named: $0)?.sync }),
            uniquingKeysWith: { a, _ in a })
        guard synced.values.contains(where: { $0 != nil }) else { return }
        for (entity, root) in zip(graph.entities, roots) where entity.name == root {
            guard let marking = entity.sync, let unique = marking.unique else { continue }
            let family = graph.entities.indices.filter { roots[$0] == root }.map { graph.entities[$0] }
            guard family.allSatisfy(\.uniquenessConstraints.isEmpty) else { continue }
            diagnostics.error(
                "'@sync(unique: \(unique.rawValue))' on '\(entity.name)' says how the server resolves rows that break a uniqueness constraint, and neither '\(entity.name)' nor its subentities has one: write '@sync', or mark the attribute the rows are unique by '@unique'",
                at: marking.range.start)
        }
        for entity in graph.entities {
            guard let marking = synced[entity.name] ?? nil else { continue }
            checkConstraints(of: entity, marking: marking, diagnostics: &diagnostics)
            for relationship in entity.relationships {
                checkRelationship(relationship, of: entity, in: graph, synced: synced, diagnostics: &diagnostics)
            }
        }
    }

    /// The root of `entity`'s hierarchy (the entity itself when it has no parent). A cycle, already
    /// reported, ends the walk.
    private static func root(of entity: EntityGraph.Entity, in graph: EntityGraph) -> String {
        var current = entity
        var steps = 0
        while let parent = current.parent, let next = graph.entity(named: parent), steps <= graph.entities.count {
            current = next
            steps += 1
        }
        return current.name
    }

    /// Two devices offline can insert rows with equal values of a constraint: the server needs a rule.
    private static func checkConstraints(
        of entity: EntityGraph.Entity, marking: EntityGraph.SyncMarking, diagnostics: inout DiagnosticSink
    ) {
        guard marking.unique == nil, let constraint = entity.uniquenessConstraints.first else { return }
        diagnostics.error(
            "'\(entity.name)' is synced and unique by (\(constraint.joined(separator: ", "))): two devices offline can each insert a row with the same values, and the server needs a rule to resolve them; write '@sync(unique: merge)' to merge such rows into one, or '@sync(unique: reject)' to keep the first to reach the server",
            at: entity.range.start,
            notes: [("'@sync' is written here", marking.range.start)])
    }

    private static func checkRelationship(
        _ relationship: EntityGraph.Relationship,
        of entity: EntityGraph.Entity,
        in graph: EntityGraph,
        synced: [String: EntityGraph.SyncMarking?],
        diagnostics: inout DiagnosticSink
    ) {
        let name = "'\(entity.name).\(relationship.name)'"
        guard graph.entity(named: relationship.destination) != nil else { return }
        if (synced[relationship.destination] ?? nil) == nil {
            diagnostics.error(
                "\(name) links a synced entity to '\(relationship.destination)', which is not synced: other devices would receive links to rows they never get; write '@sync' on '\(relationship.destination)' (or on its root entity)",
                at: relationship.range.start)
            return
        }
        if relationship.cardinality == .toMany, relationship.isOrdered {
            diagnostics.error(
                "\(name) is ordered, and the order of a synced relationship cannot be merged between devices: write 'Set<\(relationship.destination)>' and keep the order in an attribute of '\(relationship.destination)'",
                at: relationship.range.start)
        }
        if relationship.deleteRule == .deny {
            diagnostics.error(
                "\(name) has '@delete(deny)', which a synced store cannot enforce: a device offline can link a row while another deletes it; write '@delete(nullify)' or '@delete(cascade)'",
                at: relationship.range.start)
        }
        if relationship.cardinality == .toOne, let inverseName = relationship.inverse,
            let destination = graph.entity(named: relationship.destination),
            let inverse = inheritedRelationship(named: inverseName, from: destination, in: graph),
            inverse.cardinality == .toOne
        {
            // Each side keeps its link as an attribute of its own row, merged on its own: two
            // devices that pair one row with two partners leave both partners pointing at it.
            diagnostics.error(
                "\(name) and '\(relationship.destination).\(inverse.name)' are a one-to-one, which a synced store cannot keep: two devices offline can each pair a row with another partner, and the merge leaves two rows pointing at one; make one side to-many ('Set<\(entity.name)>' on '\(relationship.destination)') and keep at most one link in the app",
                at: relationship.range.start)
        }
        guard relationship.cardinality == .toOne, !relationship.isOptional else { return }
        let inverse = relationship.inverse.flatMap { inverseName in
            graph.entity(named: relationship.destination).flatMap { destination in
                inheritedRelationship(named: inverseName, from: destination, in: graph)
            }
        }
        guard inverse?.deleteRule != .cascade else { return }
        let fix =
            if let inverse {
                "give '\(relationship.destination).\(inverse.name)' '@delete(cascade)' so the row goes with its target, or make \(name) optional ('\(relationship.destination)?')"
            } else {
                "make it optional ('\(relationship.destination)?'), or give it an inverse on '\(relationship.destination)' with '@delete(cascade)' so the row goes with its target"
            }
        diagnostics.error(
            "\(name) is required, and in a synced store a device can delete its target while another links to it (the delete wins): \(fix)",
            at: relationship.range.start)
    }

    /// The relationship `name` of `entity` or one of its ancestors.
    private static func inheritedRelationship(
        named name: String, from entity: EntityGraph.Entity, in graph: EntityGraph
    ) -> EntityGraph.Relationship? {
        var current: EntityGraph.Entity? = entity
        var steps = 0
        while let candidate = current, steps <= graph.entities.count {
            if let found = candidate.relationships.first(where: { $0.name == name }) { return found }
            current = candidate.parent.flatMap(graph.entity(named:))
            steps += 1
        }
        return nil
    }
}
