import Modelwright

/// Resolves one version's ``AST/File`` into an ``EntityGraph``, reporting every semantic problem:
/// unknown or duplicate names, bad parents, annotations that do not fit, defaults of the wrong type,
/// and (through ``InverseResolver``) inverses that are missing, ambiguous or do not point back.
///
/// One concern per file, as extensions: this file holds the state and the order of the steps,
/// `GraphBuilder+Types` the enums and composites, `GraphBuilder+Properties` entities and their
/// properties, `GraphBuilder+EntityChecks` inheritance and entity annotations, and
/// `GraphBuilder+Migration` the migration block. The state and the steps the files share are
/// therefore visible in the module rather than `private`; what one file alone uses stays `private`.
package struct GraphBuilder {
    /// The built-in attribute types, by their schema spelling.
    package static let scalarTypes: [String: AttributeType] = ScalarType.bySchemaSpelling.mapValues(
        AttributeType.init)

    static let propertyAnnotations = ["unique", "indexed", "searchable", "renamed", "inverse", "noInverse", "delete"]
    static let entityAnnotations = ["sort", "unique", "index", "renamed", "sync"]

    enum TypeDeclaration {
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

    var diagnostics: DiagnosticSink
    var types: [String: TypeDeclaration] = [:]
    var enumerations: [String: EntityGraph.Enumeration] = [:]
    var composites: [String: EntityGraph.Composite] = [:]
    /// Each composite's and enum's runtime description, built once: every attribute of the type
    /// shares it, where building it per attribute cost fields × attributes (2,000 fields used by
    /// 1,600 attributes: 3 million field descriptions, 320 MB).
    var compositeTypes: [String: AttributeType] = [:]
    var enumerationTypes: [String: AttributeType] = [:]
    /// Each enum's case names, so checking a default is a lookup, not a scan of the cases.
    var caseNames: [String: Set<String>] = [:]
    /// Explicit `@inverse(name)` annotations, by entity and relationship name.
    var explicitInverses: [String: [String: AST.Name]] = [:]
    /// Relationships marked `@noInverse`, by entity.
    var withoutInverse: [String: Set<String>] = [:]
    /// The names a misspelt type may have meant, sorted once per file: an error's hint request
    /// then costs nothing unless the error is reported (see ``DiagnosticSink``).
    var entityNames: [String] = []
    var typeNames: [String] = []
    var valueTypeNames: [String] = []

    init(diagnostics: DiagnosticSink) {
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

    mutating func build(_ file: AST.Root, header: AST.Header) -> EntityGraph {
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
        InverseResolver.checkOrderedPairs(graph, diagnostics: &diagnostics)
        GeneratedNamespace.check(&graph, diagnostics: &diagnostics)
        SyncRules.check(graph, diagnostics: &diagnostics)
        graph.migration = resolveMigration(file.declarations)
        let requests = file.declarations.compactMap { declaration -> AST.Request? in
            if case .request(let request) = declaration { return request }
            return nil
        }
        graph.requests = RequestResolver.resolve(requests, in: graph, diagnostics: &diagnostics)
        return graph
    }

    // MARK: - Names

    /// Records `name` in `seen`, or reports it as a duplicate of the first declaration there.
    mutating func isFirst(
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

    mutating func checkTypeName(_ name: AST.Name) {
        guard let problem = NameRules.problem(withTypeName: name.text) else { return }
        let fixed = NameRules.recased(name.text, uppercase: true)
        diagnostics.error(
            problem,
            at: name.range.start,
            notes: NameRules.problem(withTypeName: fixed) == nil ? [("did you mean '\(fixed)'?", name.range.start)] : []
        )
    }

    mutating func checkPropertyName(_ name: AST.Name) {
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
