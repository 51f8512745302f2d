import Modelwright

/// Resolves one version's ``AST/File`` into an ``EntityGraph``, reporting every semantic problem:
/// unknown or duplicate names, bad parents, annotations that do not fit, defaults of the wrong type,
/// and (through ``InverseResolver``) inverses that are missing, ambiguous or do not point back.
package struct GraphBuilder {
    /// The built-in attribute types, by their schema spelling.
    package static let scalarTypes: [String: AttributeType] = ScalarType.bySchemaSpelling.mapValues(
        AttributeType.init)

    private static let propertyAnnotations = ["unique", "indexed", "renamed", "inverse", "noInverse", "delete"]
    private static let entityAnnotations = ["sort", "unique", "index", "renamed"]

    private enum TypeDeclaration {
        case entity(AST.Entity)
        case enumeration(AST.Enumeration)
        case composite(AST.Composite)

        var name: AST.Name {
            switch self {
            case .entity(let entity): entity.name
            case .enumeration(let enumeration): enumeration.name
            case .composite(let composite): composite.name
            }
        }
    }

    private var diagnostics: DiagnosticSink
    private var types: [String: TypeDeclaration] = [:]
    private var enumerations: [String: EntityGraph.Enumeration] = [:]
    private var composites: [String: EntityGraph.Composite] = [:]
    /// Each composite's and enum's runtime description, built once: every attribute of the type
    /// shares it, where building it per attribute cost fields × attributes (2,000 fields used by
    /// 1,600 attributes: 3 million field descriptions, 320 MB).
    private var compositeTypes: [String: AttributeType] = [:]
    private var enumerationTypes: [String: AttributeType] = [:]
    /// Each enum's case names, so checking a default is a lookup, not a scan of the cases.
    private var caseNames: [String: Set<String>] = [:]
    /// Explicit `@inverse(name)` annotations, by entity and relationship name.
    private var explicitInverses: [String: [String: AST.Name]] = [:]
    /// Relationships marked `@noInverse`, by entity.
    private var withoutInverse: [String: Set<String>] = [:]
    /// The names a misspelt type may have meant, sorted once per file: an error's hint request
    /// then costs nothing unless the error is reported (see ``DiagnosticSink``).
    private var entityNames: [String] = []
    private var typeNames: [String] = []
    private var valueTypeNames: [String] = []

    private init(diagnostics: DiagnosticSink) {
        self.diagnostics = diagnostics
    }

    /// The graph of a parsed file; `nil` when the file has no usable header.
    /// How deep entities may inherit: Core Data models nest a few levels.
    package static let maximumInheritanceDepth = 64

    /// How many values the records of one version may store beyond those the schema declares
    /// once each. A record is a flat struct holding its ancestors' properties as its own (its
    /// memberwise initializer, `with(…)`, coding and query fields list each), and a composite
    /// attribute's fields are columns of the entity and of every subentity: so a parent's
    /// properties are written again for each subentity (300 properties under 1,000 empty
    /// subentities, 21 KB of schema, made 98 MB of Swift and 681 MB of memory), and a wide
    /// composite once per attribute of its type (2,000 fields used by 40 attributes took 6 s and
    /// 590 MB to validate). Bounding the repeats keeps the generated code and the store's layout
    /// linear in the schema (a schema of plain entities repeats nothing, however large); Core
    /// Data models repeat a few hundred at most (the corpus: 14).
    package static let maximumRepeatedValues = 10_000

    package static func build(_ file: AST.Root, diagnostics: inout DiagnosticSink) -> EntityGraph? {
        guard let header = file.header else { return nil }
        var builder = GraphBuilder(diagnostics: diagnostics)
        let graph = builder.build(file, header: header)
        diagnostics = builder.diagnostics
        return graph
    }

    private mutating func build(_ file: AST.Root, header: AST.Header) -> EntityGraph {
        checkTypeName(header.name)
        if NameRules.reservedTypeNames.contains(header.name.text) {
            diagnostics.error(
                "'\(header.name.text)' cannot name a model: the generated code names Swift's or the runtime's type of that name; choose another name",
                at: header.name.range.start)
        }
        collectTypes(file.declarations, modelName: header.name.text)
        entityNames = types.compactMap { if case .entity = $0.value { $0.key } else { nil } }.sorted()
        typeNames = (Array(Self.scalarTypes.keys) + types.keys).sorted()
        var graph = EntityGraph(
            modelName: header.name.text,
            version: header.version,
            doc: header.doc,
            entities: [],
            enumerations: [],
            composites: [],
            migration: nil,
            headerRange: header.name.range
        )
        for declaration in file.declarations {
            switch declaration {
            case .enumeration(let enumeration):
                if let resolved = resolve(enumeration) { graph.enumerations.append(resolved) }
            default: break
            }
        }
        valueTypeNames = (Array(Self.scalarTypes.keys) + enumerations.keys).sorted()
        for declaration in file.declarations {
            if case .composite(let composite) = declaration, let resolved = resolve(composite) {
                graph.composites.append(resolved)
            }
        }
        let entityDeclarations = file.declarations.compactMap { declaration -> AST.Entity? in
            if case .entity(let entity) = declaration, isFirstDeclaration(entity.name) { return entity }
            return nil
        }
        graph.entities = resolveInParallel(entityDeclarations)
        checkInheritance(entityDeclarations, in: &graph)
        // Parents before children, with what each inherits kept as the walk goes: linear in the
        // number of properties however deep the inheritance. Changes go to a copy of the array,
        // assigned once, since assigning rebuilds the graph's index by name.
        var entities = graph.entities
        var inherited = InheritedMembers()
        let parents = entities.map { entity in entity.parent.flatMap(graph.position(of:)) }
        var depth = 0
        var tooDeep = false
        // What the records of each root and its subentities repeat, for the bound on their size.
        var valuesByRoot: [(root: Int, values: Int, subentities: Int)] = []
        for step in InheritedMembers.walk(parents: parents) {
            switch step {
            case .enter(let index):
                depth += 1
                if depth == 1 { valuesByRoot.append((index, 0, -1)) }
                if depth == Self.maximumInheritanceDepth + 1, let parent = entityDeclarations[index].parent {
                    tooDeep = true
                    // Each record holds every ancestor's properties, so the generated code and the
                    // store's layout grow with depth times entities: the bound keeps them linear.
                    diagnostics.error(
                        "'\(entityDeclarations[index].name.text)' inherits through more than \(Self.maximumInheritanceDepth) levels; entities may nest at most \(Self.maximumInheritanceDepth) deep",
                        at: parent.range.start)
                }
                checkInheritedDuplicates(entityDeclarations[index], inherited: inherited)
                inherited.enter(entities[index])
                valuesByRoot[valuesByRoot.count - 1].values +=
                    inherited.storedValues - entities[index].attributes.count
                    - entities[index].relationships.count { $0.cardinality == .toOne }
                valuesByRoot[valuesByRoot.count - 1].subentities += 1
                resolveEntityAnnotations(entityDeclarations[index], entity: &entities[index], visible: inherited)
            case .leave(let index):
                depth -= 1
                inherited.leave(entities[index])
            }
        }
        graph.entities = entities
        // Too deep a chain is reported as such; its copies follow from the depth.
        if !tooDeep { checkRepeatedValues(valuesByRoot, entityDeclarations) }
        InverseResolver.resolve(
            &graph,
            explicitInverses: explicitInverses,
            withoutInverse: withoutInverse,
            diagnostics: &diagnostics
        )
        GeneratedNamespace.check(&graph, diagnostics: &diagnostics)
        graph.migration = resolveMigration(file.declarations)
        let requests = file.declarations.compactMap { declaration -> AST.Request? in
            if case .request(let request) = declaration { return request }
            return nil
        }
        graph.requests = RequestResolver.resolve(requests, in: graph, diagnostics: &diagnostics)
        return graph
    }

    // MARK: - Types

    private mutating func collectTypes(_ declarations: [AST.Declaration], modelName: String) {
        for declaration in declarations {
            let type: TypeDeclaration
            switch declaration {
            case .entity(let entity): type = .entity(entity)
            case .enumeration(let enumeration): type = .enumeration(enumeration)
            case .composite(let composite): type = .composite(composite)
            case .migration, .request: continue
            }
            let name = type.name
            checkTypeName(name)
            if Self.scalarTypes[name.text] != nil || name.text == "Set" || name.text == "Codable" {
                diagnostics.error("'\(name.text)' is a built-in type; choose another name", at: name.range.start)
            } else if NameRules.reservedTypeNames.contains(name.text) {
                diagnostics.error(
                    "'\(name.text)' cannot name a type of the schema: the generated code names Swift's or the runtime's type of that name; choose another name",
                    at: name.range.start)
            } else if name.text == modelName || name.text == modelName + "Migrations" {
                diagnostics.error(
                    "'\(name.text)' cannot name a type of the schema: the generated code declares it for the model '\(modelName)'; choose another name",
                    at: name.range.start)
            } else if let first = types[name.text] {
                diagnostics.error(
                    "duplicate declaration of '\(name.text)'",
                    at: name.range.start,
                    notes: [("'\(name.text)' is first declared here", first.name.range.start)]
                )
            } else {
                types[name.text] = type
            }
        }
    }

    private func isFirstDeclaration(_ name: AST.Name) -> Bool {
        types[name.text]?.name.range == name.range
    }

    private mutating func resolve(_ enumeration: AST.Enumeration) -> EntityGraph.Enumeration? {
        guard isFirstDeclaration(enumeration.name) else { return nil }
        let rawType: EnumDescription.RawType
        switch enumeration.rawType?.text {
        case "String": rawType = .string
        case "Int": rawType = .int
        case nil: rawType = .string  // the parser reported the missing raw type
        case let other?:
            diagnostics.error(
                "enum raw type must be 'String' or 'Int', not '\(other)'",
                at: enumeration.rawType?.range.start ?? enumeration.name.range.start
            )
            rawType = .string
        }
        var cases: [EnumDescription.Case] = []
        var caseDocs: [String: [String]] = [:]
        var seenNames: [String: AST.Name] = [:]
        var seenRawValues: [String: AST.Name] = [:]
        var nextInteger: Int64 = 0
        for enumCase in enumeration.cases {
            let name = enumCase.name
            if let problem = NameRules.problem(withMemberName: name.text, kind: "enum case") {
                diagnostics.error(problem, at: name.range.start)
            }
            guard isFirst(name, in: &seenNames, described: "case", of: "enum '\(enumeration.name.text)'") else {
                continue
            }
            var rawValue: String
            switch (rawType, enumCase.rawValue?.kind) {
            case (.string, nil):
                rawValue = name.text
            case (.string, .string(let text)?):
                rawValue = text
            case (.int, nil):
                rawValue = String(nextInteger)
            case (.int, .integer(let text)?) where Int64(text) != nil:
                rawValue = text
            default:
                diagnostics.error(
                    "raw value of case '\(name.text)' must be \(rawType == .string ? "a string" : "an integer")",
                    at: enumCase.rawValue?.range.start ?? name.range.start
                )
                rawValue = name.text
            }
            if rawType == .int, let value = Int64(rawValue) {
                rawValue = String(value)
                let (next, overflow) = value.addingReportingOverflow(1)
                nextInteger = next
                if overflow, enumCase.name.text != enumeration.cases.last?.name.text {
                    diagnostics.error(
                        "case '\(name.text)' has the largest Int64 raw value, so the next case has none; give it an explicit raw value",
                        at: name.range.start
                    )
                }
            }
            if let first = seenRawValues[rawValue] {
                diagnostics.error(
                    "cases '\(first.text)' and '\(name.text)' of enum '\(enumeration.name.text)' share the raw value \(rawType == .string ? "\"\(rawValue)\"" : rawValue)",
                    at: name.range.start,
                    notes: [("'\(first.text)' is declared here", first.range.start)]
                )
            }
            seenRawValues[rawValue] = name
            cases.append(EnumDescription.Case(name: name.text, rawValue: rawValue))
            caseDocs[name.text] = enumCase.doc
        }
        if cases.isEmpty {
            diagnostics.error("enum '\(enumeration.name.text)' has no cases", at: enumeration.name.range.start)
        }
        let resolved = EntityGraph.Enumeration(
            schemaDescription: EnumDescription(name: enumeration.name.text, rawType: rawType, cases: cases),
            doc: enumeration.doc,
            caseDocs: caseDocs,
            range: enumeration.range
        )
        enumerations[enumeration.name.text] = resolved
        enumerationTypes[enumeration.name.text] = .enumeration(resolved.schemaDescription)
        caseNames[enumeration.name.text] = Set(cases.map(\.name))
        return resolved
    }

    private mutating func resolve(_ composite: AST.Composite) -> EntityGraph.Composite? {
        guard isFirstDeclaration(composite.name) else { return nil }
        var fields: [EntityGraph.Attribute] = []
        var seen: [String: AST.Name] = [:]
        for field in composite.fields {
            checkPropertyName(field.name)
            guard isFirst(field.name, in: &seen, described: "field", of: "composite '\(composite.name.text)'") else {
                continue
            }
            for annotation in field.annotations {
                diagnostics.error(
                    "composite fields take no annotations; put '@\(annotation.name.text)' on an entity's attribute",
                    at: annotation.range.start
                )
            }
            guard case .named(let typeName) = field.type.kind,
                let type = Self.scalarTypes[typeName.text] ?? enumerationTypes[typeName.text]
            else {
                reportUnknownOrUnsupported(field.type, what: "a composite field", allowed: "built-in types and enums")
                continue
            }
            fields.append(
                attribute(field, type: type)
            )
        }
        let resolved = EntityGraph.Composite(
            name: composite.name.text,
            fields: fields,
            doc: composite.doc,
            range: composite.range
        )
        composites[composite.name.text] = resolved
        compositeTypes[composite.name.text] = .composite(resolved.schemaDescription)
        return resolved
    }

    // MARK: - Entities

    /// Resolves entities concurrently: each reads only the types collected before, so each gets a
    /// copy of the builder with its own sink, and the results merge in declaration order, giving
    /// the diagnostics a sequential run gives. Half the time of building a large graph went here.
    private mutating func resolveInParallel(_ declarations: [AST.Entity]) -> [EntityGraph.Entity] {
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

    private mutating func resolve(_ declaration: AST.Entity) -> EntityGraph.Entity {
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

    private mutating func resolve(_ property: AST.Property, into entity: inout EntityGraph.Entity) {
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
            } else {
                entity.indexes.append([property.name.text])
            }
        }
        var resolved = attribute(property, type: type)
        resolved.renamedFrom = renamedFrom(annotations["renamed"])
        resolved.renameRange = annotations["renamed"]?.range
        entity.attributes.append(resolved)
    }

    /// An attribute with its default typed; reports a default that does not fit.
    private mutating func attribute(_ property: AST.Property, type: AttributeType) -> EntityGraph.Attribute {
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
            name: property.name.text,
            type: type,
            isOptional: property.type.isOptional,
            defaultValue: defaultValue,
            renamedFrom: nil,
            renameRange: nil,
            doc: property.doc,
            range: SourceRange(start: property.name.range.start, end: property.type.range.end),
            versionHashModifier: CoreDataAnnotations.details(in: property.annotations)["versionHashModifier"] ?? nil
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
            diagnostics.error("a relationship cannot have a default value", at: literal.range.start)
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
                name: property.name.text,
                destination: destination.text,
                inverse: nil,
                cardinality: cardinality,
                isOrdered: isOrdered,
                isOptional: cardinality == .toMany || property.type.isOptional,
                deleteRule: deleteRule,
                renamedFrom: renamedFrom(annotations["renamed"]),
                renameRange: annotations["renamed"]?.range,
                doc: property.doc,
                range: SourceRange(start: property.name.range.start, end: property.type.range.end),
                versionHashModifier: CoreDataAnnotations.details(in: property.annotations)["versionHashModifier"] ?? nil
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
            if name == "unique" || name == "indexed" || name == "noInverse", annotation.arguments != nil {
                diagnostics.error(
                    name == "noInverse"
                        ? "'@noInverse' takes no arguments"
                        : "property annotation '@\(name)' takes no arguments; for a compound constraint write '@\(name == "unique" ? "unique" : "index")(a, b)' on its own line in the entity",
                    at: annotation.range.start
                )
                continue
            }
            result[name] = annotation
        }
        return result
    }

    private mutating func renamedFrom(_ annotation: AST.Annotation?) -> String? {
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

    private mutating func reportUnknownOrUnsupported(_ type: AST.TypeReference, what: String, allowed: String?) {
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

    // MARK: - Inheritance and entity annotations

    private mutating func checkInheritance(_ declarations: [AST.Entity], in graph: inout EntityGraph) {
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
    private mutating func checkRepeatedValues(
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

    private mutating func checkInheritedDuplicates(_ declaration: AST.Entity, inherited: InheritedMembers) {
        for property in declaration.properties {
            if let owner = inherited.nearestOwner(of: property.name.text) {
                diagnostics.error(
                    "property '\(property.name.text)' is already inherited from '\(owner)'",
                    at: property.name.range.start
                )
            }
        }
    }

    /// Resolves `@renamed`, `@unique`, `@index`, `@sort` and the Core Data annotations of an
    /// entity; `visible` holds the entity's own and inherited properties.
    private mutating func resolveEntityAnnotations(
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
                case "unique": entity.uniquenessConstraints.append(names)
                case "index": entity.indexes.append(names)
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
    private mutating func reportCoreDataAnnotation(
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

    // MARK: - Migration

    private mutating func resolveMigration(_ declarations: [AST.Declaration]) -> EntityGraph.Migration? {
        var result: EntityGraph.Migration?
        for declaration in declarations {
            guard case .migration(let migration) = declaration else { continue }
            if let first = result {
                diagnostics.error(
                    "a version declares one migration block; merge the stages into the first",
                    at: migration.range.start,
                    notes: [("the first migration block", first.range.start)]
                )
                continue
            }
            var seen: [String: AST.Name] = [:]
            var stages: [EntityGraph.CustomStage] = []
            for stage in migration.customStages {
                if let problem = NameRules.problem(withMemberName: stage.name.text, kind: "custom stage") {
                    diagnostics.error(problem, at: stage.name.range.start)
                }
                guard isFirst(stage.name, in: &seen, described: "custom stage", of: "this migration") else { continue }
                stages.append(
                    EntityGraph.CustomStage(
                        name: stage.name.text,
                        label: stage.label,
                        doc: stage.doc,
                        range: stage.name.range,
                        covers: stage.covers?.map {
                            EntityGraph.CoveredChange(
                                entity: $0.entity.text, property: $0.property?.text,
                                range: SourceRange(
                                    start: $0.entity.range.start, end: ($0.property ?? $0.entity).range.end))
                        }
                    )
                )
            }
            let losses = migration.acceptedLosses.map {
                EntityGraph.AcceptedLoss(
                    entity: $0.entity.text, property: $0.property?.text, reason: $0.reason, range: $0.range)
            }
            result = EntityGraph.Migration(
                fromVersion: migration.fromVersion, customStages: stages, acceptedLosses: losses,
                range: migration.range)
        }
        return result
    }

    // MARK: - Names

    /// Records `name` in `seen`, or reports it as a duplicate of the first declaration there.
    private mutating func isFirst(
        _ name: AST.Name,
        in seen: inout [String: AST.Name],
        described kind: String,
        of container: @autoclosure () -> String
    ) -> Bool {
        if let first = seen[name.text] {
            diagnostics.error(
                "duplicate \(kind) '\(name.text)' in \(container())",
                at: name.range.start,
                notes: [("'\(name.text)' is first declared here", first.range.start)]
            )
            return false
        }
        seen[name.text] = name
        return true
    }

    private mutating func checkTypeName(_ name: AST.Name) {
        guard let problem = NameRules.problem(withTypeName: name.text) else { return }
        let fixed = NameRules.recased(name.text, uppercase: true)
        diagnostics.error(
            problem,
            at: name.range.start,
            notes: NameRules.problem(withTypeName: fixed) == nil ? [("did you mean '\(fixed)'?", name.range.start)] : []
        )
    }

    private mutating func checkPropertyName(_ name: AST.Name) {
        if NameRules.reservedPropertyNames.contains(name.text) {
            diagnostics.error(
                name.text == "id"
                    ? "'id' is reserved for the record's identifier; choose another name"
                    : "'\(name.text)' cannot name a property: generated records already use it; choose another name",
                at: name.range.start
            )
        } else if let problem = NameRules.problem(withMemberName: name.text, kind: "property") {
            let fixed = NameRules.recased(name.text, uppercase: false)
            let isFixable = NameRules.problem(withMemberName: fixed, kind: "property") == nil
            diagnostics.error(
                problem,
                at: name.range.start,
                notes: isFixable ? [("did you mean '\(fixed)'?", name.range.start)] : []
            )
        }
    }
}
