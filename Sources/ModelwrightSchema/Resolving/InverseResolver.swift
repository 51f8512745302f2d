/// Pairs every relationship with its inverse: the one named by `@inverse(name)`, or else the only
/// relationship on the destination that points back. Reports inverses that do not exist, are
/// attributes, point elsewhere, disagree, are claimed twice or are ambiguous. A relationship with
/// no inverse is legal (Core Data allows it): unmarked it gets a warning; marked `@noInverse` it
/// is one-way on purpose, takes part in no inference and gets none.
enum InverseResolver {
    private struct Key: Hashable {
        let entity: String
        let relationship: String
    }

    static func resolve(
        _ graph: inout EntityGraph,
        explicitInverses: [String: [String: AST.Name]],
        withoutInverse: [String: Set<String>],
        diagnostics: inout DiagnosticSink
    ) {
        var resolved: [Key: Key] = [:]
        var failed: Set<Key> = []
        for entity in graph.entities where !entity.relationships.isEmpty {
            // Only for entities with relationships: walking every entity's ancestors was quadratic
            // in a deep inheritance chain.
            let sourceFamily = Set([entity.name] + graph.ancestors(of: entity).map(\.name))
            for relationship in entity.relationships {
                let key = Key(entity: entity.name, relationship: relationship.name)
                if withoutInverse[entity.name]?.contains(relationship.name) == true { continue }
                guard let destination = graph.entity(named: relationship.destination) else { continue }
                // Relationships on the destination (inherited ones included), with the entity declaring each.
                let candidates = ([destination] + graph.ancestors(of: destination)).flatMap { owner in
                    owner.relationships.map { (owner: owner.name, relationship: $0) }
                }
                if let named = explicitInverses[entity.name]?[relationship.name] {
                    guard let match = candidates.first(where: { $0.relationship.name == named.text }) else {
                        reportMissingExplicit(named, destination: destination, graph: graph, diagnostics: &diagnostics)
                        failed.insert(key)
                        continue
                    }
                    guard withoutInverse[match.owner]?.contains(named.text) != true else {
                        diagnostics.error(
                            "'\(destination.name).\(named.text)' is marked '@noInverse', so it cannot be the inverse of '\(entity.name).\(relationship.name)'",
                            at: named.range.start
                        )
                        failed.insert(key)
                        continue
                    }
                    guard sourceFamily.contains(match.relationship.destination) else {
                        diagnostics.error(
                            "inverse '\(destination.name).\(named.text)' points to '\(match.relationship.destination)', not back to '\(entity.name)'",
                            at: named.range.start,
                            notes: [("'\(named.text)' is declared here", match.relationship.range.start)]
                        )
                        failed.insert(key)
                        continue
                    }
                    resolved[key] = Key(entity: match.owner, relationship: named.text)
                    continue
                }
                let pointingBack = candidates.filter { candidate in
                    guard sourceFamily.contains(candidate.relationship.destination) else { return false }
                    if withoutInverse[candidate.owner]?.contains(candidate.relationship.name) == true { return false }
                    if candidate.owner == entity.name, candidate.relationship.name == relationship.name { return false }
                    let theirs = explicitInverses[candidate.owner]?[candidate.relationship.name]
                    return theirs == nil || theirs?.text == relationship.name
                }
                // A relationship that names this one as its inverse wins over any that name none.
                let claiming = pointingBack.filter {
                    explicitInverses[$0.owner]?[$0.relationship.name]?.text == relationship.name
                }
                if claiming.count == 1 {
                    resolved[key] = Key(entity: claiming[0].owner, relationship: claiming[0].relationship.name)
                    continue
                }
                switch pointingBack.count {
                case 1:
                    resolved[key] = Key(entity: pointingBack[0].owner, relationship: pointingBack[0].relationship.name)
                case 0:
                    diagnostics.warning(
                        "relationship '\(entity.name).\(relationship.name)' has no inverse; '\(destination.name)' has no relationship back to '\(entity.name)'",
                        at: relationship.range.start,
                        notes: [
                            (
                                "without an inverse, deleting a '\(destination.name)' leaves this reference dangling; add a relationship to '\(destination.name)' with '@inverse(\(relationship.name))', or mark this one '@noInverse' if it is one-way on purpose",
                                relationship.range.start
                            )
                        ]
                    )
                    failed.insert(key)
                default:
                    let names = pointingBack.map { "'\($0.relationship.name)'" }.joined(separator: ", ")
                    diagnostics.error(
                        "the inverse of '\(entity.name).\(relationship.name)' is ambiguous: \(names) on '\(destination.name)' all point back",
                        at: relationship.range.start,
                        notes: [
                            (
                                "add '@inverse(\(pointingBack[0].relationship.name))' to say which",
                                relationship.range.end
                            )
                        ]
                    )
                    failed.insert(key)
                }
            }
        }
        // Both sides must agree, and no relationship can be the inverse of two others. Changes go
        // to a copy of the entities, found by a map built once and assigned once.
        var positions: [Key: (entity: Int, relationship: Int)] = [:]
        for (entityIndex, entity) in graph.entities.enumerated() {
            for (index, relationship) in entity.relationships.enumerated() {
                let key = Key(entity: entity.name, relationship: relationship.name)
                if positions[key] == nil { positions[key] = (entityIndex, index) }
            }
        }
        var entities = graph.entities
        defer { graph.entities = entities }
        var claimedBy: [Key: Key] = [:]
        for (key, inverse) in resolved.sorted(by: {
            ($0.key.entity, $0.key.relationship) < ($1.key.entity, $1.key.relationship)
        }) {
            guard let position = positions[key] else { continue }
            let location = entities[position.entity].relationships[position.relationship].range
            if let other = claimedBy[inverse] {
                diagnostics.error(
                    "'\(inverse.entity).\(inverse.relationship)' is the inverse of both '\(other.entity).\(other.relationship)' and '\(key.entity).\(key.relationship)'",
                    at: location.start,
                    notes: [("give each relationship its own inverse with '@inverse(…)'", location.start)]
                )
                continue
            }
            claimedBy[inverse] = key
            if let back = resolved[inverse], back != key, inverse != key {
                diagnostics.error(
                    "'\(key.entity).\(key.relationship)' and '\(inverse.entity).\(inverse.relationship)' do not name each other as inverses ('\(inverse.relationship)' points back to '\(back.relationship)')",
                    at: location.start,
                    notes: [("make both '@inverse' annotations name each other", location.start)]
                )
                continue
            }
            if failed.contains(inverse) { continue }
            entities[position.entity].relationships[position.relationship].inverse = inverse.relationship
        }
    }

    private static func reportMissingExplicit(
        _ named: AST.Name,
        destination: EntityGraph.Entity,
        graph: EntityGraph,
        diagnostics: inout DiagnosticSink
    ) {
        let attributes = graph.allAttributes(of: destination)
        if attributes.contains(where: { $0.name == named.text }) {
            diagnostics.error(
                "inverse '\(destination.name).\(named.text)' is an attribute, not a relationship",
                at: named.range.start
            )
            return
        }
        var notes: [(String, Int)] = []
        if let owner = graph.entities.first(where: { $0.relationships.contains { $0.name == named.text } }) {
            notes.append(
                (
                    "'\(named.text)' is a relationship of '\(owner.name)', not of '\(destination.name)'",
                    named.range.start
                ))
        } else if let suggestion = Suggestions.closest(
            to: named.text,
            among: graph.allRelationships(of: destination).map(\.name)
        ) {
            notes.append(("did you mean '\(suggestion)'?", named.range.start))
        }
        diagnostics.error(
            "'\(destination.name)' has no relationship '\(named.text)' to be the inverse",
            at: named.range.start,
            notes: notes
        )
    }
}
