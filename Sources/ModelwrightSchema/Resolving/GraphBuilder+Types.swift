import Modelwright

/// Collects the enums and composites of a file and resolves them, before any entity uses them.
extension GraphBuilder {
    mutating func collectTypes(_ declarations: [AST.Declaration], modelName: String) {
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

    func isFirstDeclaration(_ name: AST.Name) -> Bool {
        types[name.text]?.name.range == name.range
    }

    mutating func resolve(_ enumeration: AST.Enumeration) -> EntityGraph.Enumeration? {
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
        var caseRanges: [String: SourceRange] = [:]
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
            caseRanges[name.text] = name.range
        }
        if cases.isEmpty {
            diagnostics.error("enum '\(enumeration.name.text)' has no cases", at: enumeration.name.range.start)
        }
        let resolved = EntityGraph.Enumeration(
            schemaDescription: EnumDescription(name: enumeration.name.text, rawType: rawType, cases: cases),
            doc: enumeration.doc,
            caseDocs: caseDocs,
            range: enumeration.range,
            caseRanges: caseRanges
        )
        enumerations[enumeration.name.text] = resolved
        enumerationTypes[enumeration.name.text] = .enumeration(resolved.schemaDescription)
        caseNames[enumeration.name.text] = Set(cases.map(\.name))
        return resolved
    }

    mutating func resolve(_ composite: AST.Composite) -> EntityGraph.Composite? {
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
}
