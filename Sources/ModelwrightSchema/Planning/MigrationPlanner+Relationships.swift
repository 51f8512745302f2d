import Modelwright

/// Diffing one entity's relationships and constraints.
extension MigrationPlanner {
    mutating func diffRelationships(_ oldEntity: EntityGraph.Entity, _ entity: EntityGraph.Entity) {
        var continued: Set<String> = []
        for relationship in entity.relationships {
            let oldName = relationship.renamedFrom ?? relationship.name
            let name = "\(entity.name).\(relationship.name)"
            guard let oldRelationship = oldEntity.relationships.first(where: { $0.name == oldName }) else {
                if relationship.cardinality == .toOne && !relationship.isOptional {
                    add(
                        .needsCustomStage, "add required relationship \(name)", entity, at: relationship.range.start,
                        hint: "make it optional, or declare a custom stage that links every existing row",
                        property: relationship.name, work: .hook)
                } else {
                    add(
                        .lightweight, "add relationship \(name) to \(relationship.destination)", entity,
                        at: relationship.range.start)
                }
                continue
            }
            continued.insert(oldName)
            let at = relationship.range.start
            if oldName != relationship.name {
                add(
                    .lightweight, "rename relationship \(entity.name).\(oldName) to \(relationship.name)", entity,
                    at: relationship.renameRange?.start ?? at)
            }
            let oldDestination = newEntities[relationship.destination]?.renamedFrom ?? relationship.destination
            if oldDestination != oldRelationship.destination {
                add(
                    .needsCustomStage,
                    "change the destination of \(name) from \(oldRelationship.destination) to \(relationship.destination)",
                    entity, at: at, property: relationship.name, work: .hook)
            }
            if let leaving = leavingDestination(oldRelationship, relationship) {
                add(
                    .lossy,
                    "drop the links of \(name) to rows of \(leaving), which are not \(relationship.destination) after",
                    entity, at: at, lost: (oldEntity.name, oldRelationship.name),
                    hint:
                        "to keep them, keep \(leaving) below \(relationship.destination), or give \(name) a destination that covers \(leaving)"
                )
            }
            if oldRelationship.cardinality == .toOne, relationship.cardinality == .toMany {
                // A widening: the migrator carries each link into the new storage (`KeptLinks`).
                add(
                    .lightweight, "change \(name) from to-one to to-many (every link is kept)", entity, at: at)
            } else if oldRelationship.cardinality != relationship.cardinality {
                add(
                    .needsCustomStage,
                    "change \(name) from \(oldRelationship.cardinality == .toOne ? "to-one to to-many" : "to-many to to-one")",
                    entity, at: at,
                    hint: narrowing(oldEntity, oldRelationship, entity, relationship).map(Self.narrowingAdvice),
                    property: relationship.name, work: .hook)
            } else if oldRelationship.isOrdered != relationship.isOrdered {
                add(
                    relationship.isOrdered ? .lightweight : .lossy,
                    relationship.isOrdered
                        ? "make \(name) ordered (existing links keep an arbitrary order)"
                        : "make \(name) unordered (the order is dropped)",
                    entity, at: at, lost: relationship.isOrdered ? nil : (oldEntity.name, oldRelationship.name))
            }
            let oldInverse = oldRelationship.inverse
            let newInverseOldName = relationship.inverse.flatMap { inverse in
                newEntities[relationship.destination]?.relationships.first { $0.name == inverse }.map {
                    $0.renamedFrom ?? $0.name
                }
            }
            if oldInverse != newInverseOldName {
                add(
                    .needsCustomStage,
                    "change the inverse of \(name) from \(oldInverse ?? "none") to \(relationship.inverse ?? "none"): the links may move to other storage",
                    entity, at: at, property: relationship.name, work: .hook)
            }
            // By construction: a pair whose either side can hold fewer links than before is never
            // lightweight, whichever of the changes above (or none) caught it.
            if let narrowed = narrowing(oldEntity, oldRelationship, entity, relationship),
                !changes.contains(where: {
                    $0.entity == entity.name && $0.property == relationship.name && $0.kind != .lightweight
                })
            {
                add(
                    .needsCustomStage, "narrow \(narrowed.pair) from \(narrowed.before) to \(narrowed.after)", entity,
                    at: at, hint: Self.narrowingAdvice(narrowed), property: relationship.name, work: .hook)
            }
            if oldRelationship.cardinality == .toOne, oldRelationship.isOptional, !relationship.isOptional {
                add(
                    .needsCustomStage, "make \(name) required", entity, at: at,
                    hint: "declare a custom stage that links every row, or keep it optional",
                    property: relationship.name, work: .hook)
            } else if oldRelationship.isOptional != relationship.isOptional {
                add(.lightweight, "make \(name) \(relationship.isOptional ? "optional" : "required")", entity, at: at)
            }
            if oldRelationship.deleteRule != relationship.deleteRule {
                add(
                    .lightweight,
                    "change the delete rule of \(name) from \(oldRelationship.deleteRule.rawValue) to \(relationship.deleteRule.rawValue)",
                    entity, at: at)
            }
        }
        for relationship in oldEntity.relationships where !continued.contains(relationship.name) {
            let twin = entity.relationships.first { candidate in
                candidate.destination == relationship.destination
                    && !oldEntity.relationships.contains { $0.name == (candidate.renamedFrom ?? candidate.name) }
            }
            add(
                .lossy, "remove relationship \(entity.name).\(relationship.name)", entity, at: entity.range.start,
                lost: (oldEntity.name, relationship.name),
                hint: twin.map {
                    "if '\(relationship.name)' became '\($0.name)', write '@renamed(from: \(relationship.name))' on '\($0.name)'"
                })
        }
    }

    /// The concrete entities (by their newer names, joined by ", ") whose rows `oldRelationship`
    /// can link in the older version and `relationship` cannot in the newer one, because the
    /// entity no longer descends from the destination (a parent removed or changed); `nil` when
    /// none leaves. Their links have nowhere to go.
    func leavingDestination(
        _ oldRelationship: EntityGraph.Relationship, _ relationship: EntityGraph.Relationship
    ) -> String? {
        func covers(_ graph: EntityGraph, _ destination: String, _ entity: EntityGraph.Entity) -> Bool {
            entity.name == destination || graph.ancestors(of: entity).contains { $0.name == destination }
        }
        let leaving = new.entities.filter { entity in
            guard let before = oldEntities[entity.renamedFrom ?? entity.name], !before.isAbstract else { return false }
            return covers(old, oldRelationship.destination, before)
                && !covers(new, relationship.destination, entity)
        }
        return leaving.isEmpty ? nil : leaving.map(\.name).sorted().joined(separator: ", ")
    }

    /// A relationship pair whose one side can hold fewer links after the step than before.
    struct Narrowing {
        /// Both sides under their newer names: `Person.pets ↔ Animal.owner`.
        let pair: String
        /// The pair's shape before and after: `many-to-one`, `one-to-one`.
        let before: String
        let after: String
        /// The entity whose rows may hold several links now and one at most after, and the side it holds.
        let crowded: String
        let side: String
    }

    /// Whether `relationship` or its inverse (declared, or the implied one a relationship
    /// without an inverse has, which holds any number of links) goes from to-many to to-one.
    /// Synthetic rows never share a link, so the shadow check cannot see this: only the shapes can.
    func narrowing(
        _ oldEntity: EntityGraph.Entity, _ oldRelationship: EntityGraph.Relationship, _ entity: EntityGraph.Entity,
        _ relationship: EntityGraph.Relationship
    ) -> Narrowing? {
        func inverse(of relationship: EntityGraph.Relationship, in entities: [String: EntityGraph.Entity])
            -> EntityGraph.Relationship?
        {
            guard let name = relationship.inverse else { return nil }
            var current = entities[relationship.destination]
            var seen: Set<String> = []
            while let candidate = current, seen.insert(candidate.name).inserted {
                if let found = candidate.relationships.first(where: { $0.name == name }) { return found }
                current = candidate.parent.flatMap { entities[$0] }
            }
            return nil
        }
        let oldInverse = inverse(of: oldRelationship, in: oldEntities)
        let newInverse = inverse(of: relationship, in: newEntities)
        let oldBack = oldInverse?.cardinality ?? .toMany
        let newBack = newInverse?.cardinality ?? .toMany
        let forwardNarrows = oldRelationship.cardinality == .toMany && relationship.cardinality == .toOne
        let backNarrows = oldBack == .toMany && newBack == .toOne
        guard forwardNarrows || backNarrows else { return nil }
        func word(_ cardinality: RelationshipDescription.Cardinality) -> String {
            cardinality == .toOne ? "one" : "many"
        }
        let inverseName = "\(relationship.destination).\(relationship.inverse ?? "(no inverse)")"
        return Narrowing(
            pair: "\(entity.name).\(relationship.name) ↔ \(inverseName)",
            before: "\(word(oldBack))-to-\(word(oldRelationship.cardinality))",
            after: "\(word(newBack))-to-\(word(relationship.cardinality))",
            crowded: forwardNarrows ? entity.name : relationship.destination,
            side: forwardNarrows ? "\(entity.name).\(relationship.name)" : inverseName)
    }

    /// What to do about a narrowing, in words that work.
    static func narrowingAdvice(_ narrowed: Narrowing) -> String {
        "a \(narrowed.crowded) may hold several links of \(narrowed.pair) now and one at most after: declare a custom stage whose code chooses the one link each \(narrowed.crowded) keeps and sets both sides (\(narrowed.side) and its inverse), or keep \(narrowed.side) to-many"
    }

    mutating func diffConstraints(_ oldEntity: EntityGraph.Entity, _ entity: EntityGraph.Entity) {
        // Constraints name properties; compare them under the newer names.
        var renames: [String: String] = [:]
        for attribute in entity.attributes { renames[attribute.renamedFrom ?? attribute.name] = attribute.name }
        for relationship in entity.relationships {
            renames[relationship.renamedFrom ?? relationship.name] = relationship.name
        }
        let rename = { (names: [String]) in names.map { renames[$0] ?? $0 } }
        let oldUnique = Set(oldEntity.uniquenessConstraints.map { rename($0).sorted() })
        let newUnique = Set(entity.uniquenessConstraints.map { $0.sorted() })
        for constraint in newUnique.subtracting(oldUnique).sorted(by: { "\($0)" < "\($1)" }) {
            add(
                .lightweight, "add uniqueness constraint \(entity.name)(\(constraint.joined(separator: ", ")))", entity,
                at: entity.range.start,
                caution:
                    "the migration fails if existing rows of \(entity.name) share values of (\(constraint.joined(separator: ", "))); a custom stage can merge them first"
            )
        }
        for constraint in oldUnique.subtracting(newUnique).sorted(by: { "\($0)" < "\($1)" }) {
            add(
                .lightweight, "remove uniqueness constraint \(entity.name)(\(constraint.joined(separator: ", ")))",
                entity, at: entity.range.start)
        }
        let oldIndexes = Set(oldEntity.indexes.map(rename))
        let newIndexes = Set(entity.indexes)
        for index in newIndexes.subtracting(oldIndexes).sorted(by: { "\($0)" < "\($1)" }) {
            add(
                .lightweight, "add index \(entity.name)(\(index.joined(separator: ", ")))", entity,
                at: entity.range.start)
        }
        for index in oldIndexes.subtracting(newIndexes).sorted(by: { "\($0)" < "\($1)" }) {
            add(
                .lightweight, "remove index \(entity.name)(\(index.joined(separator: ", ")))", entity,
                at: entity.range.start)
        }
        diffSearchIndex(oldEntity, entity, renamed: rename)
    }

    /// A full-text index is rebuilt from the rows whenever its attributes change, or its table or
    /// one of its columns is renamed (the store names the index and its triggers after them).
    private mutating func diffSearchIndex(
        _ oldEntity: EntityGraph.Entity, _ entity: EntityGraph.Entity, renamed rename: ([String]) -> [String]
    ) {
        let old = rename(oldEntity.searchableAttributes)
        let new = entity.searchableAttributes
        let names = new.joined(separator: ", ")
        if new.isEmpty {
            guard !old.isEmpty else { return }
            add(
                .lightweight, "remove full-text index \(entity.name)(\(old.joined(separator: ", ")))", entity,
                at: entity.range.start)
        } else if old.isEmpty {
            add(
                .lightweight, "add full-text index \(entity.name)(\(names))", entity, at: entity.range.start,
                caution: "indexes the text of every row of \(entity.name)")
        } else if Set(old) != Set(new) || old != oldEntity.searchableAttributes || oldEntity.name != entity.name {
            add(
                .lightweight, "rebuild full-text index \(entity.name)(\(names))", entity, at: entity.range.start,
                caution: "indexes the text of every row of \(entity.name) again")
        }
    }
}
