import Modelwright

/// Diffs two adjacent versions into ``SchemaChange``s, classifies each one, and reports as an
/// error, at the offending declaration, every change the newer version does not account for:
/// a lossy change without `lossy …`, a change that needs a default or a custom stage without a
/// `custom` stage. Renames are never guessed: a removal beside an addition of the same type
/// gets a note suggesting `@renamed(from:)`.
///
/// The step is then run on an empty in-memory store (a shadow database), which both checks that
/// the runtime can perform it and tells which tables it rebuilds.
package struct MigrationPlanner {
    package let previous: LoweredVersion
    package let next: LoweredVersion
    private var changes: [SchemaChange] = []
    private var old: EntityGraph { previous.graph }
    private var new: EntityGraph { next.graph }
    /// The entities of each version by name: a long history diffs thousands of entity pairs.
    private let oldEntities: [String: EntityGraph.Entity]
    private let newEntities: [String: EntityGraph.Entity]
    /// The older version's entities that declare each attribute name, for finding attributes that
    /// moved up without a search of every entity per attribute.
    private let oldDeclarers: [String: [EntityGraph.Entity]]

    package init(from previous: LoweredVersion, to next: LoweredVersion) {
        self.previous = previous
        self.next = next
        oldEntities = Self.byName(previous.graph.entities)
        newEntities = Self.byName(next.graph.entities)
        var declarers: [String: [EntityGraph.Entity]] = [:]
        for entity in previous.graph.entities {
            for name in Set(entity.attributes.map(\.name)) { declarers[name, default: []].append(entity) }
        }
        oldDeclarers = declarers
    }

    /// Elements by name; the first wins, as `first(where:)` would find it.
    private static func byName<Element>(_ elements: [Element], name: (Element) -> String) -> [String: Element] {
        Dictionary(elements.map { (name($0), $0) }, uniquingKeysWith: { first, _ in first })
    }

    private static func byName(_ entities: [EntityGraph.Entity]) -> [String: EntityGraph.Entity] {
        byName(entities) { $0.name }
    }

    /// Plans the step, reporting unaccounted changes into `sink` (the newer version's file);
    /// `freshSchemas`, shared by the steps of one model, spares the shadow checks recreating
    /// the tables that do not change from one version to the next.
    package static func plan(
        from previous: LoweredVersion, to next: LoweredVersion, sink: inout DiagnosticSink,
        freshSchemas: FreshSchemaCache = FreshSchemaCache()
    ) -> PlannedStep {
        var planner = MigrationPlanner(from: previous, to: next)
        planner.diff()
        return planner.finish(sink: &sink, freshSchemas: freshSchemas)
    }

    /// The changes from `previous` to `next` that need a `lossy` line or a custom stage, each with
    /// the entity and property (previous version's names) a `lossy` line would name.
    package static func unaccounted(from previous: LoweredVersion, to next: LoweredVersion) -> [(
        change: SchemaChange, lost: (entity: String, property: String?)?
    )] {
        var planner = MigrationPlanner(from: previous, to: next)
        planner.diff()
        return planner.changes.enumerated().compactMap { index, change in
            guard change.kind != .lightweight else { return nil }
            let lost = planner.lossesNeeded.first { $0.change == index }.map { ($0.entity, $0.property) }
            return (change, lost)
        }
    }

    // MARK: - Diff

    private mutating func diff() {
        var continued: Set<String> = []
        for entity in new.entities {
            let oldName = entity.renamedFrom ?? entity.name
            guard let oldEntity = oldEntities[oldName] else {
                add(.lightweight, "add entity \(entity.name)", entity, at: entity.range.start)
                continue
            }
            continued.insert(oldName)
            if oldName != entity.name {
                add(
                    .lightweight, "rename entity \(oldName) to \(entity.name)", entity,
                    at: entity.renameRange?.start ?? entity.range.start)
            }
            diffEntity(oldEntity, entity)
        }
        for entity in old.entities where !continued.contains(entity.name) {
            let suggestion = new.entities.first { candidate in
                old.entity(named: candidate.renamedFrom ?? candidate.name) == nil
                    && Set(candidate.attributes.map(\.name)) == Set(entity.attributes.map(\.name))
            }
            add(
                .lossy, "remove entity \(entity.name)", entityName: entity.name, table: rootTable(entity.name, in: old),
                at: new.migration?.range.start ?? new.headerRange.start, lost: (entity.name, nil),
                hint: suggestion.map {
                    "if '\(entity.name)' became '\($0.name)', write '@renamed(from: \(entity.name))' on it"
                }
            )
        }
    }

    private mutating func diffEntity(_ oldEntity: EntityGraph.Entity, _ entity: EntityGraph.Entity) {
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
                if attribute.isOptional || attribute.defaultValue != nil {
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
    private func movedUp(_ name: String, to oldEntity: EntityGraph.Entity, named newName: String) -> (
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

    private mutating func diffAttribute(
        _ oldAttribute: EntityGraph.Attribute, _ attribute: EntityGraph.Attribute, of entity: EntityGraph.Entity,
        oldEntity: EntityGraph.Entity
    ) {
        let name = "\(entity.name).\(attribute.name)"
        if let (kind, reason) = Self.typeChange(from: oldAttribute.type, to: attribute.type) {
            let converts = kind == .lightweight && Self.rewritesValues(from: oldAttribute.type, to: attribute.type)
            let remaps = kind == .lightweight && Self.movesEnumCases(from: oldAttribute.type, to: attribute.type)
            add(
                kind,
                "change the type of \(name) from \(describe(oldAttribute.type)) to \(describe(attribute.type))\(reason.map { " (\($0))" } ?? "")",
                entity, at: attribute.range.start, lost: kind == .lossy ? (oldEntity.name, oldAttribute.name) : nil,
                property: attribute.name,
                work: kind == .needsCustomStage || kind == .needsDefault
                    ? Self.work(for: attribute, onlyRowsWithoutValue: false) : nil,
                caution: converts
                    ? "every stored value is converted by SQLite (CAST); Core Data's lightweight migration cannot infer this change, so a Core Data app needed a mapping model here"
                    : remaps
                        ? "each row keeps its case by name: the stored raw values are rewritten; Core Data's lightweight migration would not, so a Core Data app needed a mapping model here"
                        : nil)
            if remaps { changes[changes.count - 1].rewritesStoredValues = true }
        }
        if oldAttribute.isOptional && !attribute.isOptional {
            if attribute.defaultValue != nil {
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

    private mutating func diffRelationships(_ oldEntity: EntityGraph.Entity, _ entity: EntityGraph.Entity) {
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
            if oldRelationship.cardinality == .toOne, relationship.cardinality == .toMany {
                // A widening: the migrator carries each link into the new storage (`KeptLinks`).
                add(
                    .lightweight, "change \(name) from to-one to to-many (every link is kept)", entity, at: at)
            } else if oldRelationship.cardinality != relationship.cardinality {
                add(
                    .needsCustomStage,
                    "change \(name) from \(oldRelationship.cardinality == .toOne ? "to-one to to-many" : "to-many to to-one")",
                    entity, at: at, property: relationship.name, work: .hook)
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

    private mutating func diffConstraints(_ oldEntity: EntityGraph.Entity, _ entity: EntityGraph.Entity) {
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
    }

    /// Whether a lightweight type change rewrites the stored values (SQLite's CAST) rather than
    /// keeping them as they are.
    package static func rewritesValues(from old: AttributeType, to new: AttributeType) -> Bool {
        guard let old = old.scalar, let new = new.scalar else { return false }
        return old.conversion(to: new)?.rewritesValues ?? false
    }

    /// Whether an enum (an attribute's, or a composite field's) keeps cases by name at other raw
    /// values, which the migrator rewrites though no table changes.
    static func movesEnumCases(from old: AttributeType, to new: AttributeType) -> Bool {
        switch (old, new) {
        case (.enumeration(let before), .enumeration(let after)):
            return before.rawValueChanges(to: after)?.isEmpty == false
        case (.composite(let before), .composite(let after)):
            return after.fields.contains { field in
                before.fields.first { $0.name == field.name }.map { movesEnumCases(from: $0.type, to: field.type) }
                    ?? false
            }
        default:
            return false
        }
    }

    /// How a type change migrates, with a reason for people; `nil` when the stored form is unchanged.
    package static func typeChange(from old: AttributeType, to new: AttributeType) -> (SchemaChange.Kind, String?)? {
        switch (old, new) {
        case _ where old == new: return nil
        case (.enumeration(let before), .enumeration(let after)):
            guard before.rawType == after.rawType else { return (.needsCustomStage, "the raw type changes") }
            // Rows keep their case by name: the migrator rewrites the raw values of kept cases
            // that moved (see `EnumDescription.rawValueChanges(to:)`).
            guard let moves = before.rawValueChanges(to: after) else {
                return (.needsCustomStage, "cases change raw values while others are removed or renamed")
            }
            if !moves.isEmpty {
                let names = Dictionary(
                    before.cases.map { ($0.rawValue, $0.name) }, uniquingKeysWith: { first, _ in first })
                let list = moves.map { "\(names[$0.from] ?? $0.from) \($0.from) → \($0.to)" }
                return (.lightweight, "stored raw values are mapped by case name: " + list.joined(separator: ", "))
            }
            let kept = Set(after.cases.map(\.rawValue))
            let dropped = before.cases.filter { !kept.contains($0.rawValue) }.map(\.name)
            return dropped.isEmpty
                ? nil : (.needsCustomStage, "rows holding \(dropped.joined(separator: ", ")) cannot be read")
        case (.composite(let before), .composite(let after)):
            let beforeFields = Dictionary(before.fields.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            let afterFields = Dictionary(after.fields.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            if beforeFields.keys.contains(where: { afterFields[$0] == nil }) { return (.lossy, "fields are removed") }
            for (name, field) in afterFields {
                guard let previous = beforeFields[name] else {
                    if !field.isOptional && field.defaultValue == nil {
                        return (.needsDefault, "field \(name) is new and required")
                    }
                    continue
                }
                // An enum field whose cases only move is mapped by the migrator, as an attribute's is.
                if case .enumeration = previous.type, case .enumeration = field.type,
                    (typeChange(from: previous.type, to: field.type)?.0 ?? .lightweight) == .lightweight
                {
                    continue
                }
                if previous.type != field.type { return (.needsCustomStage, "field \(name) changes type") }
            }
            return (.lightweight, nil)
        case (.codable, .codable): return (.needsCustomStage, "the JSON must be re-encoded")
        default: break
        }
        // The one conversion rule, the runtime's: the migrator converts by the same facts.
        if let old = old.scalar, let new = new.scalar, let conversion = old.conversion(to: new) {
            return (conversion.isLossless ? .lightweight : .lossy, conversion.reason)
        }
        return (.needsCustomStage, "no lossless conversion")
    }

    // MARK: - Shadow check

    /// The two versions cut down to the entities the step changes, with their hierarchies and
    /// the entities one relationship away (whose tables hold inverse columns and join tables):
    /// the shadow check then creates a handful of tables instead of a long history's every table.
    private func reducedSchemas() -> (SchemaDescription, SchemaDescription) {
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
    private static func neighbours(of names: Set<String>, in schema: SchemaDescription) -> Set<String> {
        var result = names
        for entity in schema.entities {
            let destinations = entity.relationships.map(\.destination)
            if names.contains(entity.name) { result.formUnion(destinations) }
            if destinations.contains(where: names.contains) { result.insert(entity.name) }
        }
        return result
    }

    /// `names` with every entity sharing a root with one of them (one table per hierarchy).
    private static func hierarchies(of names: Set<String>, in schema: SchemaDescription) -> Set<String> {
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

    // MARK: - Recording

    private mutating func add(
        _ kind: SchemaChange.Kind, _ summary: String, _ entity: EntityGraph.Entity, at offset: Int,
        lost: (entity: String, property: String?)? = nil, hint: String? = nil, property: String? = nil,
        work: StageObligation.Work? = nil, caution: String? = nil
    ) {
        add(
            kind, summary, entityName: entity.name, table: rootTable(entity.name, in: new), at: offset, lost: lost,
            hint: hint, property: property, work: work, caution: caution)
    }

    private mutating func add(
        _ kind: SchemaChange.Kind, _ summary: String, entityName: String, table: String, at offset: Int,
        lost: (entity: String, property: String?)? = nil, hint: String? = nil, property: String? = nil,
        work: StageObligation.Work? = nil, caution: String? = nil
    ) {
        changes.append(
            SchemaChange(
                summary: summary, kind: kind, entity: entityName, resolution: hint, caution: caution, table: table,
                offset: offset, property: property, work: work))
        if let lost { lossesNeeded.append((changes.count - 1, lost.entity, lost.property)) }
    }

    private var lossesNeeded: [(change: Int, entity: String, property: String?)] = []

    /// What the app writes for an attribute only its code can fill: a function returning the new
    /// value, for the types a stage can return as one column's value (an enum as its raw value, a
    /// Codable value as the app's own type, which the store keeps as JSON), and a hook for a
    /// composite value, which spans columns.
    private static func work(for attribute: EntityGraph.Attribute, onlyRowsWithoutValue: Bool) -> StageObligation.Work {
        switch attribute.type {
        case .composite: .hook
        default: .value(attribute.type, isOptional: attribute.isOptional, onlyRowsWithoutValue: onlyRowsWithoutValue)
        }
    }

    private func rootTable(_ entity: String, in graph: EntityGraph) -> String {
        guard let found = graph.entity(named: entity) else { return entity }
        return graph.ancestors(of: found).last?.name ?? found.name
    }

    private func describe(_ attribute: EntityGraph.Attribute) -> String {
        describe(attribute.type) + (attribute.isOptional ? "?" : "")
            + (attribute.defaultValue.map { " = \(describe($0))" } ?? "")
    }

    private func describe(_ type: AttributeType) -> String { DefaultValueChecker.typeName(type) }

    private func describe(_ value: DefaultValue) -> String {
        switch value {
        case .bool(let value): "\(value)"
        case .integer(let value): "\(value)"
        case .floatingPoint(let value): "\(value)"
        case .decimal(let text): text
        case .string(let text): "\"\(text)\""
        case .date(let seconds): "date \(seconds)"
        case .now: "now"
        case .enumCase(let name): ".\(name)"
        }
    }

    // MARK: - Resolution

    private func finish(sink: inout DiagnosticSink, freshSchemas: FreshSchemaCache) -> PlannedStep {
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
        if previous.schema.checksum == next.schema.checksum,
            let change = changes.first(where: { $0.kind != .lightweight || $0.rewritesStoredValues })
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
            let steps = stages.map { stage in
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
            let stage = { (source: SchemaDescription, destination: SchemaDescription) in
                steps.isEmpty
                    ? MigrationStage.lightweight(from: source, to: destination)
                    : MigrationStage.custom(from: source, to: destination, steps: steps)
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
            operations: operations)
    }

    /// The stage that takes on `change`: the first whose `covers` list names its property (or
    /// its entity, which covers every change of the entity), else the first stage without a list,
    /// which takes every change no list names. Also returns the list entry that matched.
    private static func stage(covering change: SchemaChange, in stages: [EntityGraph.CustomStage]) -> (
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
    private static func record(_ change: SchemaChange, owedBy stage: String, in obligations: inout [StageObligation]) {
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
