import Modelwright

/// Diffing one entity: its parent, abstractness and attributes (moved up or down a level too).
extension MigrationPlanner {
    /// Whether rows that did not have `attribute` get a value from the schema: its own default, or
    /// for a composite, a default for each of its required fields (the columns' defaults fill them).
    private static func hasDefault(_ attribute: EntityGraph.Attribute) -> Bool {
        if attribute.defaultValue != nil { return true }
        guard case .composite(let composite) = attribute.type else { return false }
        return composite.fields.allSatisfy { $0.isOptional || $0.defaultValue != nil }
    }

    mutating func diffEntity(_ oldEntity: EntityGraph.Entity, _ entity: EntityGraph.Entity) {
        let oldParent = oldEntity.parent
        let newParentOldName = entity.parent.map { newEntities[$0]?.renamedFrom ?? $0 }
        if oldParent != newParentOldName {
            add(
                .needsCustomStage,
                "move entity \(entity.name) from parent \(oldParent ?? "none") to \(entity.parent ?? "none"): its rows move tables with their IDs and links",
                entity, at: entity.range.start, work: .hook)
        }
        if oldEntity.isAbstract != entity.isAbstract {
            add(
                entity.isAbstract ? .lossy : .lightweight,
                "make entity \(entity.name) \(entity.isAbstract ? "abstract (its own rows are dropped)" : "concrete")",
                entity, at: entity.range.start, lost: entity.isAbstract ? (oldEntity.name, nil) : nil)
        }
        var continued: Set<String> = []
        let oldAttributes = Self.byName(oldEntity.attributes) { $0.name }
        let oldAncestors = old.ancestors(of: oldEntity)
        for attribute in entity.attributes {
            let oldName = attribute.renamedFrom ?? attribute.name
            // Declared on an ancestor before: the store keeps it in the same column of the
            // hierarchy's table, so it is classified as the same attribute changing, whatever
            // else the step does to the ancestor's declaration.
            if oldAttributes[oldName] == nil,
                let ancestor = oldAncestors.first(where: { $0.attributes.contains { $0.name == oldName } }),
                let moved = ancestor.attributes.first(where: { $0.name == oldName })
            {
                add(
                    .lightweight, "move attribute \(ancestor.name).\(oldName) down to \(entity.name).\(attribute.name)",
                    entity, at: attribute.range.start)
                diffAttribute(moved, attribute, of: entity, oldEntity: ancestor)
                continue
            }
            // Declared on one sub-entity before: its rows keep their values in the same column of
            // the hierarchy's table; the other entities' rows get what a new attribute gets.
            if oldAttributes[oldName] == nil,
                let (descendant, moved) = movedUp(oldName, to: oldEntity, named: entity.name)
            {
                let summary = "move attribute \(descendant.name).\(oldName) up to \(entity.name).\(attribute.name)"
                if attribute.isOptional || Self.hasDefault(attribute) {
                    add(
                        .lightweight, summary, entity, at: attribute.range.start,
                        caution: attribute.isOptional
                            ? nil
                            : "rows of \(entity.name) that are not \(descendant.name) get its default")
                } else {
                    add(
                        .needsDefault, summary + " (rows that are not \(descendant.name) have no value)", entity,
                        at: attribute.range.start,
                        hint: "give it a default ('= …'), make it optional, or declare a custom stage that fills it",
                        property: attribute.name,
                        work: Self.work(for: attribute, onlyRowsWithoutValue: true))
                }
                diffAttribute(moved, attribute, of: entity, oldEntity: descendant)
                continue
            }
            guard let oldAttribute = oldAttributes[oldName] else {
                let summary = "add attribute \(entity.name).\(attribute.name) (\(describe(attribute)))"
                if attribute.isOptional {
                    add(.lightweight, summary, entity, at: attribute.range.start)
                } else if let value = attribute.defaultValue {
                    add(
                        .lightweight, summary, entity, at: attribute.range.start,
                        caution:
                            "every existing \(entity.name) gets \(describe(value)); if rows need their own values (what a Core Data mapping model would set), declare a custom stage"
                    )
                } else if Self.hasDefault(attribute) {
                    add(
                        .lightweight, summary, entity, at: attribute.range.start,
                        caution:
                            "every existing \(entity.name) gets the defaults of \(attribute.name)'s fields; if rows need their own values, declare a custom stage"
                    )
                } else {
                    add(
                        .needsDefault, summary, entity, at: attribute.range.start,
                        hint: "give it a default ('= …'), make it optional, or declare a custom stage that fills it",
                        property: attribute.name,
                        work: Self.work(for: attribute, onlyRowsWithoutValue: false))
                }
                continue
            }
            continued.insert(oldName)
            if oldName != attribute.name {
                add(
                    .lightweight, "rename attribute \(entity.name).\(oldName) to \(attribute.name)", entity,
                    at: attribute.renameRange?.start ?? attribute.range.start)
            }
            diffAttribute(oldAttribute, attribute, of: entity, oldEntity: oldEntity)
        }
        let added = entity.attributes.filter { oldAttributes[$0.renamedFrom ?? $0.name] == nil }
        let newAncestors = new.ancestors(of: entity)
        for attribute in oldEntity.attributes where !continued.contains(attribute.name) {
            // Moved up to an ancestor: classified there (see `movedUp`).
            if let ancestor = newAncestors.first(where: { ancestor in
                ancestor.attributes.contains { ($0.renamedFrom ?? $0.name) == attribute.name }
            }), let oldAncestor = oldEntities[ancestor.renamedFrom ?? ancestor.name],
                movedUp(attribute.name, to: oldAncestor, named: ancestor.name)?.descendant.name == oldEntity.name
            {
                continue
            }
            let twin = added.first { $0.type == attribute.type }
            add(
                .lossy, "remove attribute \(entity.name).\(attribute.name)", entity, at: entity.range.start,
                lost: (oldEntity.name, attribute.name),
                hint: twin.map {
                    "if '\(attribute.name)' became '\($0.name)', write '@renamed(from: \(attribute.name))' on '\($0.name)'"
                }
            )
        }
        diffRelationships(oldEntity, entity)
        diffConstraints(oldEntity, entity)
    }

    /// The one entity below `oldEntity` (called `newName` in the newer version) in the older
    /// version that declared `name`, with its declaration, when the entity continues in the newer
    /// version below the same entity without declaring it: the attribute moved up to the entity.
    /// Two or more such entities (siblings whose attributes merge) are not a move: their columns
    /// may differ.
    func movedUp(_ name: String, to oldEntity: EntityGraph.Entity, named newName: String) -> (
        descendant: EntityGraph.Entity, attribute: EntityGraph.Attribute
    )? {
        guard !old.ancestors(of: oldEntity).contains(where: { $0.attributes.contains { $0.name == name } }) else {
            return nil
        }
        let declaring = (oldDeclarers[name] ?? []).filter { candidate in
            old.ancestors(of: candidate).contains { $0.name == oldEntity.name }
        }
        guard declaring.count == 1, let descendant = declaring.first,
            let attribute = descendant.attributes.first(where: { $0.name == name }),
            let continued = newEntities[descendant.name].flatMap({ $0.renamedFrom == nil ? $0 : nil })
                ?? new.entities.first(where: { $0.renamedFrom == descendant.name }),
            !continued.attributes.contains(where: { ($0.renamedFrom ?? $0.name) == name })
        else { return nil }
        // Still below the entity the attribute moved to.
        guard new.ancestors(of: continued).contains(where: { $0.name == newName }) else { return nil }
        return (descendant, attribute)
    }

    mutating func diffAttribute(
        _ oldAttribute: EntityGraph.Attribute, _ attribute: EntityGraph.Attribute, of entity: EntityGraph.Entity,
        oldEntity: EntityGraph.Entity
    ) {
        let name = "\(entity.name).\(attribute.name)"
        if var (kind, reason) = Self.typeChange(from: oldAttribute.type, to: attribute.type) {
            // Values the new type cannot hold take the default, or NULL when it is optional: a
            // required attribute without a default has neither, and the step could not complete
            // (an `Int64` of 2^40 narrowed to a required `Int32`, a `Double` of 1e300 to a `Float`).
            var hint: String?
            if kind == .lossy, !attribute.isOptional, attribute.defaultValue == nil,
                let old = oldAttribute.type.scalar, let new = attribute.type.scalar,
                old.conversion(to: new)?.clearsValues == true
            {
                kind = .needsDefault
                reason = "narrowing: values \(describe(attribute.type)) cannot hold have no default to take"
                hint =
                    "give \(name) a default ('= …') for the values \(describe(attribute.type)) cannot hold, make it optional, or declare a custom stage that converts them"
            }
            let converts = kind == .lightweight && Self.rewritesValues(from: oldAttribute.type, to: attribute.type)
            let remaps = kind == .lightweight && Self.movesEnumCases(from: oldAttribute.type, to: attribute.type)
            add(
                kind,
                "change the type of \(name) from \(describe(oldAttribute.type)) to \(describe(attribute.type))\(reason.map { " (\($0))" } ?? "")",
                entity, at: attribute.range.start, lost: kind == .lossy ? (oldEntity.name, oldAttribute.name) : nil,
                hint: hint, property: attribute.name,
                work: kind == .needsCustomStage || kind == .needsDefault
                    ? Self.work(for: attribute, onlyRowsWithoutValue: false) : nil,
                caution: converts
                    ? "every stored value is converted by SQLite (CAST); Core Data's lightweight migration cannot infer this change, so a Core Data app needed a mapping model here"
                    : remaps
                        ? "each row keeps its case by name: the stored raw values are rewritten; Core Data's lightweight migration would not, so a Core Data app needed a mapping model here"
                        : nil)
            if remaps { changes[changes.count - 1].rewritesStoredValues = true }
        }
        if case .composite(let before) = oldAttribute.type, case .composite(let after) = attribute.type,
            attribute.isOptional,
            let field = after.fields.first(where: { field in
                !field.isOptional && field.defaultValue != nil
                    && before.fields.contains { $0.name == field.name && $0.isOptional }
            })
        {
            // An optional composite's columns are all nullable, so nothing marks which rows lack the
            // field: the migrator fills no default, and a row holding the composite without it would
            // read as absent, its other fields lost.
            add(
                .needsCustomStage, "make field \(field.name) of \(name) required", entity, at: attribute.range.start,
                hint:
                    "declare a custom stage that gives \(name).\(field.name) a value where \(name) is present, or keep the field optional",
                property: attribute.name, work: Self.work(for: attribute, onlyRowsWithoutValue: false))
        }
        if oldAttribute.isOptional && !attribute.isOptional {
            // Its own constraints, its ancestors' and its descendants' (which share the table).
            let descendants = new.entities.filter { other in
                new.ancestors(of: other).contains { $0.name == entity.name }
            }
            let unique = ([entity] + new.ancestors(of: entity) + descendants).contains { owner in
                owner.uniquenessConstraints.contains { $0.contains(attribute.name) }
            }
            if attribute.defaultValue != nil, unique {
                // Every row without a value would take the one default, which @unique allows once.
                add(
                    .needsCustomStage, "make \(name) required", entity, at: attribute.range.start,
                    hint:
                        "rows without a value would all take its default, which @unique allows only once: declare a custom stage that gives each its own value, or keep it optional",
                    property: attribute.name, work: Self.work(for: attribute, onlyRowsWithoutValue: true))
            } else if attribute.defaultValue != nil {
                add(
                    .lightweight, "make \(name) required; rows without a value get its default", entity,
                    at: attribute.range.start,
                    caution: "rows without a value get the default; a custom stage can give them their own")
            } else {
                add(
                    .needsDefault, "make \(name) required", entity, at: attribute.range.start,
                    hint:
                        "give it a default ('= …') for rows without a value, or declare a custom stage that fills them",
                    property: attribute.name, work: Self.work(for: attribute, onlyRowsWithoutValue: true))
            }
        } else if !oldAttribute.isOptional && attribute.isOptional {
            add(.lightweight, "make \(name) optional", entity, at: attribute.range.start)
        }
        if oldAttribute.defaultValue != attribute.defaultValue {
            add(.lightweight, "change the default of \(name)", entity, at: attribute.range.start)
        }
    }
}
