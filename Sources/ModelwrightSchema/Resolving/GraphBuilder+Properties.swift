import Modelwright

/// Resolves entities and their attributes and relationships: types, annotations, renames.
extension GraphBuilder {
    /// Resolves entities concurrently: each reads only the types collected before, so each gets a
    /// copy of the builder with its own sink, and the results merge in declaration order, giving
    /// the diagnostics a sequential run gives. Half the time of building a large graph went here.
    mutating func resolveInParallel(_ declarations: [AST.Entity]) -> [EntityGraph.Entity] {
        var template = self
        template.diagnostics = DiagnosticSink(file: diagnostics.file, defersSuggestions: true)
        let resolved = declarations.parallelMap { [template] declaration in
            var builder = template
            return (entity: builder.resolve(declaration), builder: builder)
        }
        for (_, builder) in resolved {
            diagnostics.append(builder.diagnostics)
            explicitInverses.merge(builder.explicitInverses) { $1 }
            withoutInverse.merge(builder.withoutInverse) { $1 }
        }
        return resolved.map(\.entity)
    }

    mutating func resolve(_ declaration: AST.Entity) -> EntityGraph.Entity {
        var entity = EntityGraph.Entity(
            name: declaration.name.text,
            parent: declaration.parent?.text,
            isAbstract: declaration.isAbstract,
            attributes: [],
            relationships: [],
            uniquenessConstraints: [],
            indexes: [],
            defaultSort: [],
            renamedFrom: nil,
            renameRange: nil,
            doc: declaration.doc,
            range: declaration.range
        )
        var seen: [String: AST.Name] = [:]
        for property in declaration.properties {
            checkPropertyName(property.name)
            guard isFirst(property.name, in: &seen, described: "property", of: "entity '\(entity.name)'") else {
                continue
            }
            resolve(property, into: &entity)
        }
        return entity
    }

    mutating func resolve(_ property: AST.Property, into entity: inout EntityGraph.Entity) {
        let annotations = checkedAnnotations(of: property)
        switch property.type.kind {
        case .named(let name):
            let type: AttributeType
            if let scalar = Self.scalarTypes[name.text] {
                type = scalar
            } else {
                switch types[name.text] {
                case .enumeration?:
                    guard let enumeration = enumerationTypes[name.text] else { return }
                    type = enumeration
                case .composite?:
                    guard let composite = compositeTypes[name.text] else { return }
                    type = composite
                case .entity?:
                    addRelationship(
                        property, destination: name, cardinality: .toOne, annotations: annotations, to: &entity)
                    return
                case nil:
                    reportUnknownOrUnsupported(property.type, what: "a property", allowed: nil)
                    return
                }
            }
            addAttribute(property, type: type, annotations: annotations, to: &entity)
        case .set(let name), .array(let name):
            guard case .entity? = types[name.text] else {
                let isArray = if case .array = property.type.kind { true } else { false }
                let isKnown = Self.scalarTypes[name.text] != nil || types[name.text] != nil
                diagnostics.error(
                    "'\(isArray ? "[\(name.text)]" : "Set<\(name.text)>")' is a to-many relationship, but '\(name.text)' is not an entity",
                    at: name.range.start,
                    notes: isKnown
                        ? [
                            (
                                "to store a collection of values, use 'Codable<[\(name.text)]>'",
                                property.type.range.start
                            )
                        ]
                        : [],
                    suggesting: isKnown ? nil : Suggestion(for: name.text, among: entityNames, at: name.range.start)
                )
                return
            }
            if property.type.isOptional {
                diagnostics.error(
                    "a to-many relationship cannot be optional: an empty collection means 'none'",
                    at: property.type.range.end - 1,
                    notes: [("remove the '?'", property.type.range.end - 1)]
                )
            }
            let isOrdered = if case .array = property.type.kind { true } else { false }
            addRelationship(
                property,
                destination: name,
                cardinality: .toMany,
                isOrdered: isOrdered,
                annotations: annotations,
                to: &entity
            )
        case .codable(let swiftType):
            addAttribute(property, type: .codable(typeName: swiftType), annotations: annotations, to: &entity)
        }
    }

    private mutating func addAttribute(
        _ property: AST.Property,
        type: AttributeType,
        annotations: [String: AST.Annotation],
        to entity: inout EntityGraph.Entity
    ) {
        for name in ["inverse", "noInverse", "delete"] {
            if let annotation = annotations[name] {
                diagnostics.error(
                    "'@\(name)' applies to relationships, and '\(property.name.text)' is an attribute",
                    at: annotation.range.start
                )
            }
        }
        for name in ["unique", "indexed"] {
            guard let annotation = annotations[name] else { continue }
            if case .composite = type {
                diagnostics.error(
                    "a composite attribute cannot be '@\(name)': it is stored in several columns",
                    at: annotation.range.start)
            } else if case .codable = type {
                diagnostics.error(
                    "a Codable attribute cannot be '@\(name)': it is stored as JSON", at: annotation.range.start)
            } else if name == "unique" {
                entity.uniquenessConstraints.append([property.name.text])
                entity.uniquenessRanges[[property.name.text]] = annotation.range
            } else {
                entity.indexes.append([property.name.text])
                entity.indexRanges[[property.name.text]] = annotation.range
            }
        }
        if let annotation = annotations["searchable"] {
            if type == .string {
                entity.searchableAttributes.append(property.name.text)
            } else {
                diagnostics.error(
                    "'@searchable' applies to String attributes, and '\(property.name.text)' is \(type.schemaSpelling): "
                        + "a full-text index reads text",
                    at: annotation.range.start,
                    notes: [("remove '@searchable', or make the attribute a String", annotation.range.start)])
            }
        }
        var resolved = attribute(property, type: type)
        resolved.renamedFrom = renamedFrom(annotations["renamed"])
        resolved.renameRange = annotations["renamed"]?.range
        entity.attributes.append(resolved)
    }

    /// An attribute with its default typed; reports a default that does not fit.
    mutating func attribute(_ property: AST.Property, type: AttributeType) -> EntityGraph.Attribute {
        var defaultValue: DefaultValue?
        if let literal = property.defaultValue {
            let cases = caseNames
            switch DefaultValueChecker.check(
                literal, for: type, isOptional: property.type.isOptional,
                isCase: { enumeration, name in cases[enumeration]?.contains(name) })
            {
            case .success(let value):
                defaultValue = value
            case .failure(let problem):
                diagnostics.error(
                    problem.message,
                    at: literal.range.start,
                    notes: problem.hint.map { [($0, literal.range.start)] } ?? [],
                    suggesting: problem.suggestion?(literal.range.start)
                )
            }
        }
        return EntityGraph.Attribute(
            schemaDescription: AttributeDescription(
                name: property.name.text,
                type: type,
                isOptional: property.type.isOptional,
                defaultValue: defaultValue,
                versionHashModifier: CoreDataAnnotations.details(in: property.annotations)["versionHashModifier"] ?? nil
            ),
            renameRange: nil,
            doc: property.doc,
            range: SourceRange(start: property.name.range.start, end: property.type.range.end)
        )
    }

    private mutating func addRelationship(
        _ property: AST.Property,
        destination: AST.Name,
        cardinality: RelationshipDescription.Cardinality,
        isOrdered: Bool = false,
        annotations: [String: AST.Annotation],
        to entity: inout EntityGraph.Entity
    ) {
        if let literal = property.defaultValue {
            if case .bareWord(let word) = literal.kind {
                diagnostics.error(
                    "expected a value, found `\(word)`", at: literal.range.start,
                    notes: [("a relationship takes no default value: remove '= \(word)'", literal.range.start)])
            } else {
                diagnostics.error("a relationship cannot have a default value", at: literal.range.start)
            }
        }
        if let annotation = annotations["searchable"] {
            diagnostics.error(
                "'@searchable' applies to String attributes, and '\(property.name.text)' is a relationship: "
                    + "remove '@searchable', and search the destination's own String attribute",
                at: annotation.range.start)
        }
        for name in ["unique", "indexed"] {
            if let annotation = annotations[name] {
                diagnostics.error(
                    "'@\(name)' applies to attributes, and '\(property.name.text)' is a relationship; use '@\(name == "unique" ? "unique" : "index")(\(property.name.text), …)' on the entity for a to-one relationship",
                    at: annotation.range.start
                )
            }
        }
        var deleteRule = RelationshipDescription.DeleteRule.nullify
        if let annotation = annotations["delete"], let word = singleWord(of: annotation, expecting: "a delete rule") {
            if let rule = RelationshipDescription.DeleteRule(rawValue: word.text) {
                deleteRule = rule
            } else {
                let rules = ["nullify", "cascade", "deny", "noAction"]
                let suggestion = Suggestions.closest(to: word.text, among: rules)
                diagnostics.error(
                    "unknown delete rule '\(word.text)'",
                    at: word.range.start,
                    notes: [
                        (
                            suggestion.map { "did you mean '\($0)'?" }
                                ?? "the rules are \(rules.joined(separator: ", "))", word.range.start
                        )
                    ]
                )
            }
        }
        if let annotation = annotations["inverse"],
            let word = singleWord(of: annotation, expecting: "the inverse relationship's name")
        {
            explicitInverses[entity.name, default: [:]][property.name.text] = word
        }
        if let annotation = annotations["noInverse"] {
            if annotations["inverse"] != nil {
                diagnostics.error(
                    "a relationship cannot have both '@inverse(…)' and '@noInverse'", at: annotation.range.start)
            } else if annotation.arguments != nil {
                diagnostics.error("'@noInverse' takes no arguments", at: annotation.range.start)
            } else {
                withoutInverse[entity.name, default: []].insert(property.name.text)
            }
        }
        entity.relationships.append(
            EntityGraph.Relationship(
                schemaDescription: RelationshipDescription(
                    name: property.name.text,
                    destination: destination.text,
                    inverse: nil,
                    cardinality: cardinality,
                    isOrdered: isOrdered,
                    isOptional: cardinality == .toMany || property.type.isOptional,
                    deleteRule: deleteRule,
                    renamedFrom: renamedFrom(annotations["renamed"]),
                    versionHashModifier: CoreDataAnnotations.details(in: property.annotations)["versionHashModifier"]
                        ?? nil
                ),
                renameRange: annotations["renamed"]?.range,
                doc: property.doc,
                range: SourceRange(start: property.name.range.start, end: property.type.range.end)
            )
        )
    }

    /// The property's annotations by name, after reporting unknown and repeated ones.
    private mutating func checkedAnnotations(of property: AST.Property) -> [String: AST.Annotation] {
        var result: [String: AST.Annotation] = [:]
        var coreDataSeen = false
        for annotation in property.annotations {
            let name = annotation.name.text
            if CoreDataAnnotations.names.contains(name) {
                reportCoreDataAnnotation(annotation, onEntity: false, repeated: &coreDataSeen)
                continue
            }
            guard Self.propertyAnnotations.contains(name) else {
                var notes: [(String, Int)] = []
                if Self.entityAnnotations.contains(name) {
                    notes.append(
                        (
                            "'@\(name)(…)' is an entity annotation: write it on its own line in the entity",
                            annotation.range.start
                        ))
                } else if let suggestion = Suggestions.closest(to: name, among: Self.propertyAnnotations) {
                    notes.append(("did you mean '@\(suggestion)'?", annotation.name.range.start))
                }
                diagnostics.error("unknown property annotation '@\(name)'", at: annotation.range.start, notes: notes)
                continue
            }
            if let first = result[name] {
                diagnostics.error(
                    "'@\(name)' is written twice",
                    at: annotation.range.start,
                    notes: [("first written here", first.range.start)]
                )
                continue
            }
            if name == "unique" || name == "indexed" || name == "noInverse" || name == "searchable",
                annotation.arguments != nil
            {
                diagnostics.error(
                    name == "noInverse" || name == "searchable"
                        ? "'@\(name)' takes no arguments: remove the parentheses"
                        : "property annotation '@\(name)' takes no arguments; for a compound constraint write '@\(name == "unique" ? "unique" : "index")(a, b)' on its own line in the entity",
                    at: annotation.range.start
                )
                continue
            }
            result[name] = annotation
        }
        return result
    }

    mutating func renamedFrom(_ annotation: AST.Annotation?) -> String? {
        guard let annotation else { return nil }
        guard let arguments = annotation.arguments, arguments.count == 1, arguments[0].label?.text == "from",
            arguments[0].words.count == 1
        else {
            diagnostics.error(
                "expected '@renamed(from: oldName)'",
                at: annotation.range.start
            )
            return nil
        }
        return arguments[0].words[0].text
    }

    private mutating func singleWord(of annotation: AST.Annotation, expecting what: String) -> AST.Name? {
        guard let arguments = annotation.arguments, arguments.count == 1, arguments[0].label == nil,
            arguments[0].words.count == 1
        else {
            diagnostics.error("'@\(annotation.name.text)(…)' takes one argument: \(what)", at: annotation.range.start)
            return nil
        }
        return arguments[0].words[0]
    }

    mutating func reportUnknownOrUnsupported(_ type: AST.TypeReference, what: String, allowed: String?) {
        guard case .named(let name) = type.kind else {
            diagnostics.error("\(what) must have one of the \(allowed ?? "known types")", at: type.range.start)
            return
        }
        if types[name.text] != nil, let allowed {
            diagnostics.error(
                "'\(name.text)' cannot be the type of \(what); use one of the \(allowed)", at: name.range.start)
            return
        }
        diagnostics.error(
            "unknown type '\(name.text)'",
            at: name.range.start,
            suggesting: Suggestion(
                for: name.text, among: allowed == nil ? typeNames : valueTypeNames, at: name.range.start)
        )
    }
}
