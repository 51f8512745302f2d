import Foundation
import Modelwright
import ModelwrightSchema

extension CoreDataVersionTranslator {
    // MARK: - Attributes

    /// The schema type of an attribute, or `nil` (with a warning) when it is not imported.
    mutating func schemaType(of attribute: CoreDataModel.Attribute, in entity: String) -> String? {
        let qualified = "\(entity).\(attribute.name)"
        if attribute.name.isEmpty {
            warn("an attribute without a name in '\(entity)' is not imported", at: attribute.location)
            return nil
        }
        if attribute.isDerived {
            warn(
                "derived attribute '\(qualified)' (\(attribute.derivationExpression.map { "'\($0)'" } ?? "no expression")) is not imported: the schema language has no derived attributes; compute it with a request (a count, say) instead",
                at: attribute.location)
            return nil
        }
        if attribute.isTransient {
            warn(
                "transient attribute '\(qualified)' is not imported: it is not stored; keep it as a property of your own type",
                at: attribute.location)
            return nil
        }
        if let scalar = Self.importedTypes[attribute.attributeType] { return scalar.schemaSpelling }
        switch attribute.attributeType {
        case "Transformable":
            return transformableType(of: attribute, in: entity)
        case "Composite":
            // The schema language's composites could hold its elements, but nothing the mapping
            // needs is confirmed on a real model or store: how the XML names the composite an
            // attribute uses, the element columns Core Data flattens it into, and how its elements
            // enter the entity's version hash (without which no store of the version matches).
            warn(
                "composite attribute '\(qualified)' is not imported: Core Data's composite attributes (iOS 17) are read neither from the model nor from a store, as their model form, store columns and version hash are not confirmed; declare a 'composite' with its elements in the schema and fill it in a custom migration stage",
                at: attribute.location)
            return nil
        default:
            warn(
                "attribute '\(qualified)' of type '\(attribute.attributeType)' is not imported: the schema language has no such type",
                at: attribute.location)
            return nil
        }
    }

    /// The schema type of a Transformable attribute: `Codable<T>` for a standard Codable type, or
    /// else `Data` holding the archived bytes, with a warning and a doc comment that say so.
    private mutating func transformableType(of attribute: CoreDataModel.Attribute, in entity: String) -> String {
        let className = attribute.customClassName.flatMap { $0.isEmpty ? nil : $0 }
        let transformer = attribute.valueTransformerName
        transformables[entity, default: [:]][attribute.name] = .some(nil)
        switch CoreDataTransformable.mapping(className: className, transformer: transformer) {
        case .codable(let type):
            return "Codable<\(type)>"
        case .archivedData:
            let holds = className.map { "holds '\($0)'" } ?? "names no class"
            let through =
                transformer.flatMap { $0.isEmpty ? nil : "value transformer '\($0)'" }
                ?? "Core Data's default value transformer"
            warn(
                "Transformable attribute '\(entity).\(attribute.name)' \(holds) (\(through)), which is not a standard Swift Codable type; imported as 'Data' holding the archived bytes, for the app to decode with that transformer",
                at: attribute.location)
            transformables[entity, default: [:]][attribute.name] = CoreDataTransformable.documentation(
                className: className, transformer: transformer)
            return ScalarType.data.schemaSpelling
        }
    }

    /// The `@coreData` details a Transformable attribute needs to export as it was: its transformer
    /// unless it is the default, and its class unless the type imported is spelt the same.
    func transformerDetails(of attribute: CoreDataModel.Attribute, type: String) -> [String] {
        var details: [String] = []
        if attribute.valueTransformerName != Self.defaultTransformer {
            details.append(
                "transformer: \(attribute.valueTransformerName.map { quoted($0, at: attribute.location) } ?? "nil")")
        }
        let className = attribute.customClassName.flatMap { $0.isEmpty ? nil : $0 }
        if type != "Codable<\(className ?? "")>" {
            details.append("className: \(className.map { quoted($0, at: attribute.location) } ?? "nil")")
        }
        return details
    }

    /// The schema literal of an attribute's default (`defaultDateTimeInterval`, or else
    /// `defaultValueString`), or `nil` (with a warning when one was written) when there is none
    /// the schema accepts.
    mutating func defaultLiteral(of attribute: CoreDataModel.Attribute, type: String, in entity: String)
        -> String?
    {
        if let interval = attribute.defaultDateTimeInterval {
            return dateLiteral(ofInterval: interval, of: attribute, type: type, in: entity)
        }
        guard let text = attribute.defaultValueString else { return nil }
        let qualified = "\(entity).\(attribute.name)"
        func reject(_ reason: String) -> String? {
            warn("the default value \"\(text)\" of '\(qualified)' is not imported: \(reason)", at: attribute.location)
            return nil
        }
        // Which literals a type takes is the runtime's table (`ScalarType.literal`); Core Data's
        // text of a value is read into the literal the rule takes.
        switch ScalarType.bySchemaSpelling[type]?.literal ?? .none {
        case .integer:
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            let value = Int64(trimmed) ?? Double(trimmed).flatMap { $0.rounded() == $0 ? Int64(exactly: $0) : nil }
            guard let value else { return reject("it is not an integer") }
            let range = ScalarType.bySchemaSpelling[type]?.integerRange ?? Int64.min...Int64.max
            guard range.contains(value) else { return reject("it does not fit in \(type)") }
            return String(value)
        case .floatingPoint(let isFloat):
            guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value.isFinite else {
                return reject("it is not a finite number")
            }
            if isFloat, abs(value) > Double(Float.greatestFiniteMagnitude) {
                return reject("it does not fit in Float")
            }
            return "\(value)"
        case .decimal:
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            guard Self.isNumberLiteral(trimmed), Decimal(string: trimmed) != nil else {
                return reject("it is not a decimal number")
            }
            return trimmed
        case .bool:
            switch text {
            case "YES", "true", "1": return "true"
            case "NO", "false", "0": return "false"
            default: return reject("it is not YES or NO")
            }
        case .instant:
            return dateLiteral(ofInterval: text, of: attribute, type: type, in: entity)
        case .text(let rule):
            // Written as Core Data has it; the front end normalises it by the same rule.
            guard rule.parse(text) != nil else {
                let problem = rule.problem(text)
                return reject("\(problem.message); \(problem.hint)")
            }
            return SchemaText.stringLiteral(text)
        case .none:
            return reject("a \(type) attribute takes no default value in the schema language")
        }
    }

    /// The ISO 8601 literal of a date default written as seconds since 2001, or `nil` with a
    /// warning when it is not a date the schema can write; a value finer than a millisecond is
    /// rounded, with a warning.
    private mutating func dateLiteral(
        ofInterval text: String, of attribute: CoreDataModel.Attribute, type: String, in entity: String
    ) -> String? {
        let qualified = "\(entity).\(attribute.name)"
        guard case .instant? = ScalarType.bySchemaSpelling[type]?.literal else {
            warn(
                "the date default \"\(text)\" of '\(qualified)' is not imported: it is a \(type) attribute",
                at: attribute.location)
            return nil
        }
        switch CoreDataDateDefault.literal(ofInterval: text) {
        case .failure(let problem):
            warn(
                "the default date \"\(text)\" of '\(qualified)' is not imported: \(problem.message)",
                at: attribute.location)
            return nil
        case .success(let literal):
            if literal.isRounded {
                warn(
                    "the default date \"\(text)\" of '\(qualified)' is imported as \(literal.text), to the millisecond: the schema's ISO 8601 dates hold no finer digits",
                    at: attribute.location)
            }
            return literal.text
        }
    }

    private static func isNumberLiteral(_ text: String) -> Bool {
        var rest = Substring(text)
        if rest.first == "-" { rest = rest.dropFirst() }
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty else { return false }
        rest = rest.dropFirst(digits.count)
        if rest.first == "." {
            let fraction = rest.dropFirst().prefix { $0.isASCII && $0.isNumber }
            guard !fraction.isEmpty else { return false }
            rest = rest.dropFirst(1 + fraction.count)
        }
        if rest.first == "e" || rest.first == "E" {
            rest = rest.dropFirst()
            if rest.first == "+" || rest.first == "-" { rest = rest.dropFirst() }
            let exponent = rest.prefix { $0.isASCII && $0.isNumber }
            guard !exponent.isEmpty else { return false }
            rest = rest.dropFirst(exponent.count)
        }
        return rest.isEmpty
    }

    // MARK: - Constraints and indexes

    /// The schema names of a constraint's or index's properties, when every one can take part.
    mutating func constraintMembers(
        _ properties: [String], of entity: String, what: String, at location: CoreDataLocation?
    ) -> [String]? {
        var members: [String] = []
        for property in properties {
            var owner: String? = entity
            var found: String?
            var visited: Set<String> = []
            while let current = owner, found == nil, !visited.contains(current) {
                visited.insert(current)
                if attributeTypes[current]?[property] != nil {
                    guard transformables[current]?[property] == nil else {
                        warn(
                            "the \(what) on '\(entity)' (\(properties.joined(separator: ", "))) is not imported: '\(property)' is Transformable",
                            at: location)
                        return nil
                    }
                    found = propertyNames[current]?[property]
                } else if let relationship = relationships[current]?.first(where: { $0.name == property }) {
                    guard !relationship.isToMany else {
                        warn(
                            "the \(what) on '\(entity)' (\(properties.joined(separator: ", "))) is not imported: '\(property)' is a to-many relationship",
                            at: location)
                        return nil
                    }
                    found = propertyNames[current]?[property]
                }
                owner = parents[current]
            }
            guard let found else {
                warn(
                    "the \(what) on '\(entity)' (\(properties.joined(separator: ", "))) is not imported: '\(property)' is not an imported property of '\(entity)'",
                    at: location)
                return nil
            }
            if !members.contains(found) { members.append(found) }
        }
        return members.isEmpty ? nil : members
    }

    /// The schema names of a fetch index's properties, when it is one the schema can write.
    mutating func fetchIndexMembers(_ index: CoreDataModel.FetchIndex, of entity: String) -> [String]? {
        var properties: [String] = []
        for element in index.elements {
            guard let property = element.property else {
                warn(
                    "fetch index '\(entity).\(index.name)' is not imported: its element '\(element.expression ?? "")' is an expression; Modelwright indexes list properties",
                    at: index.location)
                return nil
            }
            properties.append(property)
            if element.order != "ascending" {
                warn(
                    "fetch index '\(entity).\(index.name)' is imported as ascending: Modelwright indexes have no order ('\(property)' is \(element.order))",
                    at: index.location)
            }
            if element.type != "Binary" {
                warn(
                    "fetch index '\(entity).\(index.name)' is imported as an ordinary index: Modelwright has no \(element.type) indexes",
                    at: index.location)
            }
        }
        return constraintMembers(properties, of: entity, what: "fetch index '\(index.name)'", at: index.location)
    }
}
