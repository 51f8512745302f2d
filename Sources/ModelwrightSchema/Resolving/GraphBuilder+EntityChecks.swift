import Modelwright

/// Checks what involves a whole entity: inheritance, repeated values, sort orders, constraints and indexes.
extension GraphBuilder {
    mutating func checkInheritance(_ declarations: [AST.Entity], in graph: inout EntityGraph) {
        var entities = graph.entities
        defer { graph.entities = entities }
        for (index, declaration) in declarations.enumerated() {
            guard let parent = declaration.parent else { continue }
            switch types[parent.text] {
            case .entity?:
                break
            case nil:
                diagnostics.error(
                    "unknown parent entity '\(parent.text)'",
                    at: parent.range.start,
                    suggesting: Suggestion(for: parent.text, among: entityNames, at: parent.range.start)
                )
                entities[index].parent = nil
            case .enumeration?, .composite?:
                diagnostics.error(
                    "'\(parent.text)' is not an entity; an entity can only inherit from an entity",
                    at: parent.range.start
                )
                entities[index].parent = nil
            }
        }
        // A cycle: following parents from an entity comes back to it. Each entity is walked
        // through once: a path ends at an entity already finished, or at one on the path itself,
        // which closes a cycle; the cycle's first entity in declaration order is reported.
        let parents = entities.map { entity in entity.parent.flatMap(graph.position(of:)) }
        var state = [UInt8](repeating: 0, count: entities.count)  // 0 new, 1 on the path, 2 finished
        for start in entities.indices where state[start] == 0 {
            var path: [Int] = []
            var next: Int? = start
            while let index = next, state[index] == 0 {
                state[index] = 1
                path.append(index)
                next = parents[index]
            }
            if let index = next, state[index] == 1, let cycleStart = path.firstIndex(of: index),
                let first = path[cycleStart...].min(), let parent = declarations[first].parent
            {
                diagnostics.error(
                    "inheritance cycle: '\(declarations[first].name.text)' inherits from itself through '\(parent.text)'",
                    at: parent.range.start
                )
                entities[first].parent = nil
            }
            for index in path { state[index] = 2 }
        }
    }

    /// Reports the entity's properties that an ancestor already declares.
    /// One error when the records would repeat more than ``maximumRepeatedValues`` values, at
    /// the root whose records (its own and its subentities') repeat the most.
    mutating func checkRepeatedValues(
        _ valuesByRoot: [(root: Int, values: Int, subentities: Int)], _ declarations: [AST.Entity]
    ) {
        let total = valuesByRoot.reduce(0) { $0 + $1.values }
        guard total > Self.maximumRepeatedValues,
            let worst = valuesByRoot.max(by: { ($0.values, $1.root) < ($1.values, $0.root) })
        else { return }
        let name = declarations[worst.root].name
        let family =
            worst.subentities == 0 ? "'\(name.text)'" : "'\(name.text)' and its \(worst.subentities) subentities"
        diagnostics.error(
            "the records of \(family) repeat \(worst.values) inherited properties and composite fields (\(total) in this version; at most \(Self.maximumRepeatedValues)): each record stores its ancestors' properties and every field of its composites",
            at: name.range.start,
            notes: [
                (
                    "move properties that only some subentities use into those subentities, give unrelated subentities a parent of their own, or store a wide composite as one 'Codable<…>' attribute",
                    name.range.start
                )
            ]
        )
    }

    mutating func checkInheritedDuplicates(_ declaration: AST.Entity, inherited: InheritedMembers) {
        for property in declaration.properties {
            if let owner = inherited.nearestOwner(of: property.name.text) {
                diagnostics.error(
                    "property '\(property.name.text)' is already inherited from '\(owner)'",
                    at: property.name.range.start
                )
            }
        }
    }

    /// Resolves `@renamed`, `@unique`, `@index`, `@sort`, `@sync` and the Core Data annotations of an
    /// entity; `visible` holds the entity's own and inherited properties.
    mutating func resolveEntityAnnotations(
        _ declaration: AST.Entity, entity: inout EntityGraph.Entity, visible: InheritedMembers
    ) {
        guard !declaration.annotations.isEmpty else { return }
        var renameSeen = false
        var coreDataSeen = false
        for annotation in declaration.annotations {
            let name = annotation.name.text
            switch name {
            case "renamed":
                if renameSeen {
                    diagnostics.error("'@renamed' is written twice", at: annotation.range.start)
                }
                renameSeen = true
                entity.renamedFrom = renamedFrom(annotation)
                entity.renameRange = annotation.range
            case "sync":
                if entity.sync != nil {
                    diagnostics.error("'@sync' is written twice", at: annotation.range.start)
                }
                entity.sync = SyncRules.marking(annotation, on: entity, diagnostics: &diagnostics)
            case "coreData", "userInfo":
                reportCoreDataAnnotation(annotation, onEntity: true, repeated: &coreDataSeen)
                if let modifier = CoreDataAnnotations.details(in: [annotation])["versionHashModifier"] ?? nil {
                    entity.versionHashModifier = modifier
                }
            case "unique", "index", "sort":
                guard let arguments = annotation.arguments, !arguments.isEmpty else {
                    diagnostics.error(
                        "'@\(name)' on an entity lists properties, as in '@\(name)(\(visible.firstAttributeName ?? "name"))'",
                        at: annotation.range.start
                    )
                    continue
                }
                var names: [String] = []
                var sort: [SortDescription] = []
                for argument in arguments {
                    guard argument.label == nil, let property = argument.words.first else {
                        diagnostics.error("expected a property name", at: argument.range.start)
                        continue
                    }
                    var ascending = true
                    if name == "sort", argument.words.count == 2,
                        ["ascending", "descending"].contains(argument.words[1].text)
                    {
                        ascending = argument.words[1].text == "ascending"
                    } else if argument.words.count != 1 {
                        diagnostics.error(
                            name == "sort"
                                ? "expected 'name', 'name ascending' or 'name descending'"
                                : "expected one property name per argument",
                            at: argument.words[1].range.start
                        )
                        continue
                    }
                    guard
                        checkConstraintMember(
                            property, annotation: name, entity: entity, visible: visible)
                    else { continue }
                    if names.contains(property.text) {
                        diagnostics.error("'\(property.text)' is listed twice in '@\(name)'", at: property.range.start)
                        continue
                    }
                    names.append(property.text)
                    sort.append(SortDescription(attribute: property.text, ascending: ascending))
                }
                switch name {
                case "unique":
                    entity.uniquenessConstraints.append(names)
                    entity.uniquenessRanges[names] = entity.uniquenessRanges[names] ?? annotation.range
                case "index":
                    entity.indexes.append(names)
                    entity.indexRanges[names] = entity.indexRanges[names] ?? annotation.range
                default:
                    if !entity.defaultSort.isEmpty {
                        diagnostics.error(
                            "an entity has one default sort; merge the '@sort' annotations", at: annotation.range.start)
                    }
                    entity.defaultSort = sort
                }
            default:
                var notes: [(String, Int)] = []
                if Self.propertyAnnotations.contains(name) {
                    notes.append(
                        (
                            "'@\(name)' is a property annotation: write it after the property's type, on the same line",
                            annotation.range.start
                        ))
                } else if let suggestion = Suggestions.closest(to: name, among: Self.entityAnnotations) {
                    notes.append(("did you mean '@\(suggestion)'?", annotation.name.range.start))
                }
                diagnostics.error("unknown entity annotation '@\(name)'", at: annotation.range.start, notes: notes)
            }
        }
    }

    /// Whether a property named in `@unique`, `@index` or `@sort` exists and can be used there.
    private mutating func checkConstraintMember(
        _ property: AST.Name,
        annotation: String,
        entity: EntityGraph.Entity,
        visible: InheritedMembers
    ) -> Bool {
        switch visible.member(named: property.text) {
        case .attribute(let attribute)?:
            switch attribute.type {
            case .composite, .codable:
                diagnostics.error(
                    "'@\(annotation)' cannot use '\(property.text)': \(DefaultValueChecker.typeName(attribute.type)) values are not comparable columns",
                    at: property.range.start
                )
                return false
            default:
                return true
            }
        case .relationship(let relationship)?:
            if relationship.cardinality == .toMany {
                diagnostics.error(
                    "'@\(annotation)' cannot use the to-many relationship '\(property.text)'; only attributes and to-one relationships have a column",
                    at: property.range.start
                )
                return false
            }
            if annotation == "sort" {
                diagnostics.error(
                    "'@sort' needs an attribute, and '\(property.text)' is a relationship", at: property.range.start)
                return false
            }
            return true
        case nil:
            break
        }
        // The names cost as much as the entity inherits: listed only if the error is reported.
        diagnostics.error(
            "'@\(annotation)' names '\(property.text)', which is not a property of '\(entity.name)'",
            at: property.range.start,
            suggesting: Suggestion(for: property.text, among: visible.names.sorted(), at: property.range.start)
        )
        return false
    }

    /// `@coreData(…)` and `@userInfo(…)` only carry Core Data details for the exporter; check their shape.
    /// `seen` tells whether an earlier `@coreData` was written on the same entity or property: a
    /// second one would silently override the first's labels, so it is an error.
    mutating func reportCoreDataAnnotation(
        _ annotation: AST.Annotation, onEntity: Bool, repeated seen: inout Bool
    ) {
        for (message, offset) in CoreDataAnnotations.problems(with: annotation, onEntity: onEntity) {
            diagnostics.error(message, at: offset)
        }
        guard annotation.name.text == "coreData" else { return }
        if seen {
            diagnostics.error(
                "'@coreData' is written twice on this \(onEntity ? "entity" : "property"); put every label in one",
                at: annotation.range.start)
        }
        seen = true
    }
}
