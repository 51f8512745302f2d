/// Pairs every relationship with its inverse: the one named by `@inverse(name)`, or else the only
/// relationship on the destination that points back. Reports inverses that do not exist, are
/// attributes, point elsewhere, disagree, are claimed twice or are ambiguous. A relationship with
/// no inverse is legal (Core Data allows it): unmarked it gets a warning; marked `@noInverse` it
/// is one-way on purpose, takes part in no inference and gets none.
package enum InverseResolver {
    private struct Key: Hashable {
        let entity: String
        let relationship: String
    }

    /// A relationship on a destination's lineage that may be an inverse, with the entity
    /// declaring it and its place in the order the destination's relationships are searched (the
    /// destination's own first, then its parent's, and so on).
    private struct Candidate {
        let owner: String
        let relationship: EntityGraph.Relationship
        let order: Int
    }

    /// The relationships of one destination, indexed so that finding a relationship's inverse
    /// costs lookups, not a scan: a model where every relationship has an inverse would otherwise
    /// be quadratic in the relationships between two entities.
    private struct DestinationIndex {
        /// The first relationship of each name, as `@inverse(name)` finds it.
        var byName: [String: Candidate] = [:]
        /// Relationships that may pair with any relationship pointing at them: no `@inverse` of
        /// their own, not `@noInverse`; by the entity they point to, in search order.
        var open: [String: [Candidate]] = [:]
        var openKeys: Set<Key> = []
        /// Relationships whose `@inverse(name)` names a relationship: by that name and the entity
        /// they point to, in search order.
        var claims: [Key: [Candidate]] = [:]
        /// Every relationship name, in search order, outermost ancestor first (for hints).
        var relationshipNames: [String] = []
        var attributeNames: Set<String> = []

        init(
            _ destination: EntityGraph.Entity, in graph: EntityGraph,
            explicitInverses: [String: [String: AST.Name]], withoutInverse: [String: Set<String>]
        ) {
            let lineage = [destination] + graph.ancestors(of: destination)
            var order = 0
            for owner in lineage {
                for relationship in owner.relationships {
                    let candidate = Candidate(owner: owner.name, relationship: relationship, order: order)
                    order += 1
                    if byName[relationship.name] == nil { byName[relationship.name] = candidate }
                    if withoutInverse[owner.name]?.contains(relationship.name) == true { continue }
                    if let theirs = explicitInverses[owner.name]?[relationship.name] {
                        claims[Key(entity: relationship.destination, relationship: theirs.text), default: []]
                            .append(candidate)
                    } else {
                        open[relationship.destination, default: []].append(candidate)
                        openKeys.insert(Key(entity: owner.name, relationship: relationship.name))
                    }
                }
            }
            relationshipNames = lineage.reversed().flatMap { $0.relationships.map(\.name) }
            attributeNames = Set(lineage.flatMap { $0.attributes.map(\.name) })
        }
    }

    /// How many ambiguous candidates an error names before saying how many more there are.
    private static let listedCandidates = 8

    static func resolve(
        _ graph: inout EntityGraph,
        explicitInverses: [String: [String: AST.Name]],
        withoutInverse: [String: Set<String>],
        diagnostics: inout DiagnosticSink
    ) {
        var resolved: [Key: Key] = [:]
        var failed: Set<Key> = []
        var indexes: [String: DestinationIndex] = [:]
        // Built on the first relationship that names one, for errors: which entity declares it.
        var ownerOfRelationship: [String: String]?
        for entity in graph.entities where !entity.relationships.isEmpty {
            // Only for entities with relationships: walking every entity's ancestors was quadratic
            // in a deep inheritance chain.
            let family = [entity.name] + graph.ancestors(of: entity).map(\.name)
            for relationship in entity.relationships {
                let key = Key(entity: entity.name, relationship: relationship.name)
                if withoutInverse[entity.name]?.contains(relationship.name) == true { continue }
                guard let destination = graph.entity(named: relationship.destination) else { continue }
                let index =
                    indexes[destination.name]
                    ?? DestinationIndex(
                        destination, in: graph, explicitInverses: explicitInverses, withoutInverse: withoutInverse)
                indexes[destination.name] = index
                if let named = explicitInverses[entity.name]?[relationship.name] {
                    guard let match = index.byName[named.text] else {
                        if index.attributeNames.contains(named.text) {
                            diagnostics.error(
                                "inverse '\(destination.name).\(named.text)' is an attribute, not a relationship",
                                at: named.range.start)
                        } else {
                            if ownerOfRelationship == nil {
                                var owners: [String: String] = [:]
                                for entity in graph.entities {
                                    for relationship in entity.relationships where owners[relationship.name] == nil {
                                        owners[relationship.name] = entity.name
                                    }
                                }
                                ownerOfRelationship = owners
                            }
                            let owner = ownerOfRelationship?[named.text]
                            diagnostics.error(
                                "'\(destination.name)' has no relationship '\(named.text)' to be the inverse",
                                at: named.range.start,
                                notes: owner.map {
                                    [
                                        (
                                            "'\(named.text)' is a relationship of '\($0)', not of '\(destination.name)'",
                                            named.range.start
                                        )
                                    ]
                                } ?? [],
                                suggesting: owner == nil
                                    ? Suggestion(for: named.text, among: index.relationshipNames, at: named.range.start)
                                    : nil
                            )
                        }
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
                    guard family.contains(match.relationship.destination) else {
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
                // A relationship that names this one as its inverse wins over any that name none.
                var claiming: [Candidate] = []
                var claimingCount = 0
                var open: [Candidate] = []
                var openCount = 0
                let isOpen = index.openKeys.contains(key)
                for member in family {
                    let claims = index.claims[Key(entity: member, relationship: relationship.name)] ?? []
                    claimingCount += claims.count
                    claiming += claims.prefix(listedCandidates + 1)
                    let others = index.open[member] ?? []
                    openCount += others.count
                    // This relationship itself, when its destination's lineage holds it, is no inverse.
                    open += others.prefix(listedCandidates + 2).filter {
                        !($0.owner == entity.name && $0.relationship.name == relationship.name)
                    }
                }
                if isOpen, family.contains(relationship.destination) { openCount -= 1 }
                if claimingCount == 1 {
                    resolved[key] = Key(entity: claiming[0].owner, relationship: claiming[0].relationship.name)
                    continue
                }
                let pointingBack = (claiming + open).sorted { $0.order < $1.order }
                switch claimingCount + openCount {
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
                case let count:
                    let listed = pointingBack.prefix(listedCandidates).map { "'\($0.relationship.name)'" }
                    let more = count > listed.count ? " and \(count - listed.count) more" : ""
                    diagnostics.error(
                        "the inverse of '\(entity.name).\(relationship.name)' is ambiguous: \(listed.joined(separator: ", "))\(more) on '\(destination.name)' all point back",
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
}

extension InverseResolver {
    /// Whether `relationship` (declared on `entity`) is the side of a both-sides-ordered
    /// many-to-many pair whose order the store does not keep: the store keeps one position per
    /// link, that of the side whose `Entity_relationship` name sorts first (see the runtime's
    /// `SchemaLayout`), so the other side's order would be lost silently. `nil` when the pair
    /// is not ordered on both sides; otherwise the side whose order is kept.
    package static func orderedSideKept(
        _ relationship: (entity: String, name: String),
        inverse: (entity: String, name: String)
    ) -> (entity: String, name: String) {
        "\(relationship.entity)_\(relationship.name)" <= "\(inverse.entity)_\(inverse.name)"
            ? relationship : inverse
    }

    /// Reports each many-to-many pair ordered on both sides, at the side whose order the store
    /// would not keep, with the fix: declare that side a `Set`.
    static func checkOrderedPairs(_ graph: EntityGraph, diagnostics: inout DiagnosticSink) {
        for entity in graph.entities {
            for relationship in entity.relationships
            where relationship.cardinality == .toMany && relationship.isOrdered {
                guard let inverseName = relationship.inverse,
                    let destination = graph.entity(named: relationship.destination)
                else { continue }
                let lineage = [destination] + graph.ancestors(of: destination)
                guard
                    let owner = lineage.first(where: { candidate in
                        candidate.relationships.contains { $0.name == inverseName }
                    }),
                    let inverse = owner.relationships.first(where: { $0.name == inverseName }),
                    inverse.cardinality == .toMany, inverse.isOrdered
                else { continue }
                let mine = (entity: entity.name, name: relationship.name)
                let kept = orderedSideKept(mine, inverse: (entity: owner.name, name: inverse.name))
                if kept == mine { continue }
                // A rule newer than released versions: a frozen one gets a warning (see `FrontEnd`).
                diagnostics.errorUnlessReleased(
                    "'\(entity.name).\(relationship.name)' and '\(owner.name).\(inverse.name)' are both ordered; the store keeps the order of one side of a many-to-many, so the order of '\(entity.name).\(relationship.name)' would be lost",
                    at: relationship.range.start,
                    notes: [
                        (
                            "order one side: declare '\(relationship.name): Set<\(relationship.destination)>'; '\(owner.name).\(inverse.name)' keeps its order, and '\(entity.name).\(relationship.name)' is read sorted by a request ('.sorted { … }') where an order matters",
                            relationship.range.start
                        )
                    ]
                )
            }
        }
    }
}
