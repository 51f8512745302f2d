import Foundation
import Modelwright
import ModelwrightSchema

/// What an imported version kept, by Core Data name: the next version's renaming identifiers are
/// checked against it, and a rename may only name something that was imported.
struct ImportedShape {
    /// An imported property.
    struct Property {
        var schemaName: String
        /// `elementID`, or the name when there is none: what Core Data matches across versions.
        var renamingID: String
    }

    /// An imported entity.
    struct Entity {
        var coreDataName: String
        var schemaName: String
        var renamingID: String
        var attributes: [String: Property]
        var relationships: [String: Property]
        /// Core Data names by renaming identifier; `nil` where two properties share one.
        var attributeIDs: [String: String?] = [:]
        var relationshipIDs: [String: String?] = [:]

        /// Fills the identifier indexes, so renames are found without scanning every property.
        mutating func index() {
            for (name, property) in attributes {
                attributeIDs[property.renamingID] = attributeIDs[property.renamingID] == nil ? .some(name) : .some(nil)
            }
            for (name, property) in relationships {
                relationshipIDs[property.renamingID] =
                    relationshipIDs[property.renamingID] == nil ? .some(name) : .some(nil)
            }
        }
    }

    /// The entities, by Core Data name.
    var entities: [String: Entity] = [:]
}

/// Translates one ``CoreDataModel`` version into the text of a schema file, reporting everything
/// the schema language cannot say as a warning at the element's line and column.
struct CoreDataVersionTranslator {
    /// The Transformable value transformer the exporter writes when `@coreData` names none.
    static let defaultTransformer = "NSSecureUnarchiveFromData"
    /// The built-in types by the Core Data attribute type they import from (the runtime's table,
    /// ``ScalarType/CoreDataType``).
    private static let importedTypes: [String: ScalarType] = Dictionary(
        ScalarType.all.filter(\.coreData.imports).map { ($0.coreData.name, $0) },
        uniquingKeysWith: { first, _ in first })

    private let model: CoreDataModel
    private let previous: ImportedShape?
    private var diagnostics: [Diagnostic] = []
    private var shape = ImportedShape()
    /// Importable entities by Core Data name, with their schema names.
    private var entityNames: [String: String] = [:]
    private var entities: [String: CoreDataModel.Entity] = [:]
    /// Relationships that will be imported, by Core Data entity name.
    private var relationships: [String: [CoreDataModel.Relationship]] = [:]
    /// Each entity's property names (Core Data → schema).
    private var propertyNames: [String: [String: String]] = [:]
    /// Each entity's attributes that will be imported, by Core Data name, with their schema type.
    private var attributeTypes: [String: [String: String]] = [:]
    private var parents: [String: String] = [:]
    /// Each entity's Transformable attributes, by Core Data name, with the doc comment of those
    /// imported as archived `Data` (`nil` for those imported as `Codable<T>`).
    private var transformables: [String: [String: String?]] = [:]

    /// The schema text of `model` as version `number` of `modelName`, the shape kept and the warnings.
    static func translate(
        _ model: CoreDataModel,
        modelName: String,
        number: Int,
        header: String,
        previous: ImportedShape?
    ) -> (text: String, shape: ImportedShape, diagnostics: [Diagnostic]) {
        var translator = CoreDataVersionTranslator(model: model, previous: previous)
        let text = translator.render(modelName: modelName, number: number, header: header)
        // In file order, as a compiler reports them; the sort is stable for several at one place.
        let diagnostics = translator.diagnostics.enumerated().sorted { lhs, rhs in
            let left = lhs.element.location ?? SourcePosition(line: 0, column: 0)
            let right = rhs.element.location ?? SourcePosition(line: 0, column: 0)
            return left == right ? lhs.offset < rhs.offset : left < right
        }.map(\.element)
        return (text, translator.shape, diagnostics)
    }

    private init(model: CoreDataModel, previous: ImportedShape?) {
        // Sorted once, into Xcode's order, so every later pass reads in the order it writes.
        var sorted = model
        var dropped: [(message: String, location: CoreDataLocation?)] = []
        sorted.entities = XcodeOrder.sorted(model.entities, by: \.name).map { entity in
            var entity = entity
            // Every later pass looks properties up by name, as Swift compares strings: two names
            // that are canonically equal (NFC and NFD) are one, so the second is left out here,
            // said so, rather than merged with the first and given its type.
            var seen: [String: String] = [:]
            func isFirst(_ name: String, location: CoreDataLocation?) -> Bool {
                guard let first = seen[name] else {
                    seen[name] = name
                    return true
                }
                let how =
                    first.unicodeScalars.elementsEqual(name.unicodeScalars)
                    ? "is declared twice"
                    : "is canonically equal to '\(first)' (the same text in another Unicode normalization), and names compare as Swift compares strings"
                dropped.append(
                    ("property '\(entity.name).\(name)' \(how); the second one is not imported", location))
                return false
            }
            entity.attributes = XcodeOrder.sorted(entity.attributes, by: \.name).filter {
                isFirst($0.name, location: $0.location)
            }
            entity.relationships = XcodeOrder.sorted(entity.relationships, by: \.name).filter {
                isFirst($0.name, location: $0.location)
            }
            return entity
        }
        self.model = sorted
        self.previous = previous
        for (message, location) in dropped { warn(message, at: location) }
    }

    // MARK: - The file

    private mutating func render(modelName: String, number: Int, header: String) -> String {
        reportModelLevel()
        collectEntities()
        var lines = ["/// \(SchemaText.commentText(header))", "model \(modelName) version \(number)"]
        for entity in model.entities
        where entityNames[entity.name] != nil {
            lines.append("")
            lines += render(entity)
        }
        var requests: [(line: Int, template: CoreDataModel.FetchRequest)] = []
        for template in model.fetchRequests {
            guard let line = render(template) else { continue }
            lines.append("")
            requests.append((lines.count, template))
            lines.append(line)
        }
        dropUnresolvedRequests(requests, from: &lines)
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: - Fetch request templates

    /// `request name: Entity where "predicate"` for a model-level fetch request template, or `nil`
    /// with a warning naming the template when its predicate is outside what requests can say.
    private mutating func render(_ template: CoreDataModel.FetchRequest) -> String? {
        let notImported = "fetch request template '\(template.name)' is not imported"
        guard let entity = entityNames[template.entity] else {
            warn("\(notImported): its entity '\(template.entity)' is not imported", at: template.location)
            return nil
        }
        reportOther(
            template.attributes, of: "fetch request template '\(template.name)'",
            ignoring: ["name", "entity", "predicateString"], at: template.location)
        var line = "request \(CoreDataNames.memberName(template.name)): \(entity)"
        if let text = template.predicateString {
            switch PredicateParser.parse(text) {
            case .failure(let problem):
                warn("\(notImported): its predicate cannot be read: \(problem.message)", at: template.location)
                return nil
            case .success(let predicate):
                line +=
                    " where " + quoted(schemaSpelling(of: text, predicate, on: template.entity), at: template.location)
            }
        }
        return line
    }

    /// The predicate's text with each key path name the import changed (`id` → `id_`) in its
    /// schema spelling, walking relationships from `entity`.
    private func schemaSpelling(of text: String, _ predicate: AST.Predicate, on entity: String) -> String {
        PredicateKeyPaths.respelled(text, predicate, from: entity) { name, entity in property(name, of: entity) }
    }

    /// The schema name of an imported property of `entity` or an ancestor, and a relationship's destination.
    private func property(_ name: String, of entity: String) -> (name: String, destination: String?)? {
        var owner: String? = entity
        var visited: Set<String> = []
        while let current = owner, visited.insert(current).inserted {
            if let schemaName = propertyNames[current]?[name] {
                return (schemaName, relationships[current]?.first { $0.name == name }?.destinationEntity)
            }
            owner = parents[current]
        }
        return nil
    }

    /// Resolves the version's text and removes each request whose predicate does not fit the model
    /// (a key path the schema names differently, a constant of the wrong type), with a warning
    /// naming the template: the imported model must validate.
    private mutating func dropUnresolvedRequests(
        _ requests: [(line: Int, template: CoreDataModel.FetchRequest)], from lines: inout [String]
    ) {
        guard !requests.isEmpty else { return }
        let file = SourceFile(path: model.path, text: lines.joined(separator: "\n") + "\n")
        let errors = ResolvedFile.compile(file).diagnostics.filter { $0.severity == .error }
        for request in requests.reversed() {
            guard let error = errors.first(where: { $0.location?.line == request.line + 1 }) else { continue }
            warn(
                "fetch request template '\(request.template.name)' is not imported: \(error.message)",
                at: request.template.location)
            lines.removeSubrange((request.line - 1)...request.line)
        }
    }

    private mutating func reportModelLevel() {
        for pair in model.rootAttributes where pair.name == "usedWithCloudKit" && pair.value == "YES" {
            warn(
                "'usedWithCloudKit' is not imported: Modelwright stores data in SQLite and does not sync with CloudKit",
                at: model.location)
        }
        for configuration in model.configurations {
            warn(
                "configuration '\(configuration.name)' is not imported: a Modelwright store holds every entity of its schema",
                at: configuration.location)
        }
        if !model.userInfo.isEmpty {
            warn(
                "the model's userInfo (\(model.userInfo.map(\.key).joined(separator: ", "))) is not imported: only entities and properties keep userInfo",
                at: model.location)
        }
        for element in model.unknownElements {
            warn("element <\(element.name)> is not imported: Modelwright does not know it", at: element.location)
        }
    }

    /// Decides the schema names of every entity and property, and what will be imported.
    private mutating func collectEntities() {
        var usedTypeNames: Set<String> = []
        for entity in model.entities {
            guard !entity.name.isEmpty else {
                warn("an entity without a name is not imported", at: entity.location)
                continue
            }
            guard entities[entity.name] == nil else {
                warn("entity '\(entity.name)' is declared twice; the second one is not imported", at: entity.location)
                continue
            }
            var name = CoreDataNames.typeName(entity.name)
            while usedTypeNames.contains(name) { name += "_" }
            usedTypeNames.insert(name)
            entityNames[entity.name] = name
            entities[entity.name] = entity
        }
        for (name, entity) in entities {
            if let parent = entity.parentEntity {
                if entities[parent] != nil {
                    parents[name] = parent
                } else {
                    warn(
                        "entity '\(name)' names the parent '\(parent)', which the model does not have; it is imported without a parent",
                        at: entity.location)
                }
            }
        }
        // A cycle of parents would make every later lookup loop: cut it where it closes.
        for name in parents.keys.sorted() {
            var seen: Set<String> = [name]
            var next = parents[name]
            while let current = next {
                if seen.contains(current) {
                    parents[name] = nil
                    warn(
                        "entity '\(name)' inherits from itself; it is imported without a parent",
                        at: entities[name]?.location)
                    break
                }
                seen.insert(current)
                next = parents[current]
            }
        }
        for (name, entity) in entities {
            var used: Set<String> = []
            var names: [String: String] = [:]
            var types: [String: String] = [:]
            for attribute in entity.attributes {
                guard let type = schemaType(of: attribute, in: name) else { continue }
                var schemaName = CoreDataNames.memberName(attribute.name)
                while used.contains(schemaName) { schemaName += "_" }
                used.insert(schemaName)
                names[attribute.name] = schemaName
                types[attribute.name] = type
            }
            var kept: [CoreDataModel.Relationship] = []
            for relationship in entity.relationships {
                guard entities[relationship.destinationEntity] != nil else {
                    warn(
                        "relationship '\(name).\(relationship.name)' is not imported: its destination '\(relationship.destinationEntity)' is not an entity of the model",
                        at: relationship.location)
                    continue
                }
                var schemaName = CoreDataNames.memberName(relationship.name)
                while used.contains(schemaName) { schemaName += "_" }
                used.insert(schemaName)
                names[relationship.name] = schemaName
                kept.append(relationship)
            }
            propertyNames[name] = names
            attributeTypes[name] = types
            relationships[name] = kept
        }
    }

    // MARK: - Entities

    private mutating func render(_ entity: CoreDataModel.Entity) -> [String] {
        let name = entity.name
        let schemaName = entityNames[name] ?? name
        let names = propertyNames[name] ?? [:]
        let types = attributeTypes[name] ?? [:]
        // Doc comments and the default sort an export kept in userInfo (ModelwrightUserInfo).
        let info = ModelwrightUserInfo.read(entity.userInfo)
        var lines: [String] = info.doc.map { "/// \(SchemaText.commentText($0))" }
        var head = (entity.isAbstract ? "abstract " : "") + "entity \(schemaName)"
        if let parent = parents[name], let parentName = entityNames[parent] { head += ": \(parentName)" }
        lines.append(head + " {")
        var recorded = ImportedShape.Entity(
            coreDataName: name, schemaName: schemaName, renamingID: entity.elementID ?? name, attributes: [:],
            relationships: [:])
        let previousEntity = matchingPreviousEntity(entity)
        if let previousEntity, previousEntity.schemaName != schemaName {
            if entityNames.values.contains(previousEntity.schemaName) {
                warn(
                    "the renaming identifier of entity '\(name)' names '\(previousEntity.coreDataName)' of the previous version, which this version still has; the rename is not imported",
                    at: entity.location)
            } else {
                lines.append("    @renamed(from: \(argument(previousEntity.schemaName)))")
            }
        }
        var details: [String] = []
        if schemaName != name { details.append("name: \(quoted(name, at: entity.location))") }
        switch entity.representedClassName {
        case nil: details.append("className: nil")
        case let className? where className != name:
            details.append("className: \(quoted(className, at: entity.location))")
        default: break
        }
        if let modifier = entity.versionHashModifier {
            details.append("versionHashModifier: \(quoted(modifier, at: entity.location))")
        }
        if let generation = entity.codeGenerationType {
            details.append("codeGeneration: \(quoted(generation, at: entity.location))")
        }
        if !details.isEmpty { lines.append("    @coreData(\(details.joined(separator: ", ")))") }
        // Attributes only, each once: a hand-edited entry must not make the imported file invalid.
        var sorted: Set<String> = []
        let sort = info.sort.compactMap { key -> String? in
            guard types[key.name] != nil, let schemaName = names[key.name], sorted.insert(schemaName).inserted
            else { return nil }
            return schemaName + (key.ascending ? "" : " descending")
        }
        if !sort.isEmpty { lines.append("    @sort(\(sort.joined(separator: ", ")))") }
        for entry in info.kept {
            lines.append("    " + userInfo(entry, at: entity.location))
        }
        reportOther(entity.otherAttributes, of: "entity '\(name)'", ignoring: ["syncable"], at: entity.location)
        for fetched in entity.fetchedProperties {
            warn(
                "fetched property '\(name).\(fetched.name)' is not imported: the schema language has no fetched properties; fetch '\(fetched.fetchRequest?.entity ?? "the destination")' with a request in code",
                at: fetched.location)
        }

        let singleUniques = Set(
            entity.uniquenessConstraints.filter { $0.count == 1 }.compactMap { constraint -> String? in
                guard types[constraint[0]] != nil, transformables[name]?[constraint[0]] == nil else { return nil }
                return constraint[0]
            })
        var uniqueWritten: Set<String> = []
        var indexed: [[String]] = []
        for attribute in entity.attributes {
            guard let type = types[attribute.name], let schemaName = names[attribute.name] else { continue }
            let attributeInfo = ModelwrightUserInfo.read(attribute.userInfo)
            var line = "    \(schemaName): \(type)\(attribute.isOptional ? "?" : "")"
            if attributeInfo.isNowDefault, type == "Date" {
                line += " = now"
            } else if let literal = defaultLiteral(of: attribute, type: type, in: name) {
                line += " = \(literal)"
            }
            if singleUniques.contains(attribute.name), !uniqueWritten.contains(attribute.name) {
                line += " @unique"
                uniqueWritten.insert(attribute.name)
            }
            if attribute.isIndexed {
                if transformables[name]?[attribute.name] != nil {
                    warn(
                        "the index on '\(name).\(attribute.name)' is not imported: a Transformable value cannot be indexed",
                        at: attribute.location)
                } else {
                    line += " @indexed"
                    indexed.append([schemaName])
                }
            }
            if let old = previousEntity.flatMap({
                renamedFrom(attribute.name, attribute.elementID, in: $0.attributes, index: $0.attributeIDs)
            }) {
                if names.values.contains(old) {
                    warn(
                        "the renaming identifier of '\(name).\(attribute.name)' names '\(old)', which this version still has; the rename is not imported",
                        at: attribute.location)
                } else {
                    line += " @renamed(from: \(argument(old)))"
                }
            }
            var details: [String] = []
            if schemaName != attribute.name {
                details.append("name: \(quoted(attribute.name, at: attribute.location))")
            }
            if attribute.attributeType == "Transformable" {
                details += transformerDetails(of: attribute, type: type)
            }
            if let modifier = attribute.versionHashModifier {
                details.append("versionHashModifier: \(quoted(modifier, at: attribute.location))")
            }
            if !details.isEmpty { line += " @coreData(\(details.joined(separator: ", ")))" }
            for entry in attributeInfo.kept { line += " " + userInfo(entry, at: attribute.location) }
            reportOther(
                attribute.otherAttributes, of: "attribute '\(name).\(attribute.name)'", ignoring: ["syncable"],
                at: attribute.location)
            recorded.attributes[attribute.name] = .init(
                schemaName: schemaName, renamingID: attribute.elementID ?? attribute.name)
            lines += attributeInfo.doc.map { "    /// \(SchemaText.commentText($0))" }
            if let documentation = transformables[name]?[attribute.name], let documentation {
                lines.append("    /// \(SchemaText.commentText(documentation))")
            }
            lines.append(line)
        }
        for relationship in relationships[name] ?? [] {
            guard let schemaName = names[relationship.name],
                let destination = entityNames[relationship.destinationEntity]
            else { continue }
            lines.append(
                render(
                    relationship, schemaName: schemaName, destination: destination, entity: name,
                    previous: previousEntity, names: names, indexed: &indexed))
            recorded.relationships[relationship.name] = .init(
                schemaName: schemaName, renamingID: relationship.elementID ?? relationship.name)
        }
        for members in pendingIndexes {
            lines.append("    @index(\(members.map(argument).joined(separator: ", ")))")
        }
        pendingIndexes = []
        for constraint in entity.uniquenessConstraints {
            if constraint.count == 1, uniqueWritten.contains(constraint[0]) { continue }
            guard
                let members = constraintMembers(
                    constraint, of: name, what: "uniqueness constraint", at: entity.location)
            else { continue }
            lines.append("    @unique(\(members.map(argument).joined(separator: ", ")))")
        }
        for index in entity.fetchIndexes {
            guard let members = fetchIndexMembers(index, of: name) else { continue }
            if indexed.contains(members) { continue }
            indexed.append(members)
            lines.append("    @index(\(members.map(argument).joined(separator: ", ")))")
        }
        lines.append("}")
        recorded.index()
        shape.entities[name] = recorded
        return lines
    }

    // MARK: - Relationships

    private mutating func render(
        _ relationship: CoreDataModel.Relationship,
        schemaName: String,
        destination: String,
        entity: String,
        previous: ImportedShape.Entity?,
        names: [String: String],
        indexed: inout [[String]]
    ) -> String {
        let qualified = "\(entity).\(relationship.name)"
        var line = "    \(schemaName): "
        if relationship.isToMany {
            line += relationship.isOrdered ? "[\(destination)]" : "Set<\(destination)>"
            if !relationship.isOptional {
                warn(
                    "to-many relationship '\(qualified)' is required in Core Data, which refuses to save without at least one destination; Modelwright's to-many relationships may be empty, so this is not enforced",
                    at: relationship.location)
            }
            if (relationship.minCount ?? 0) > 0 || (relationship.maxCount ?? 0) > 0 {
                warn(
                    "the count limits of '\(qualified)' (minimum \(relationship.minCount ?? 0), maximum \(relationship.maxCount.map(String.init) ?? "none")) are not imported: the schema language has no count limits",
                    at: relationship.location)
            }
        } else {
            line += destination + (relationship.isOptional ? "?" : "")
        }
        if let inverse = pairedInverse(of: relationship, in: entity) {
            line +=
                " @inverse(\(argument(propertyNames[inverse.owner]?[inverse.relationship.name] ?? inverse.relationship.name)))"
        } else {
            line += " @noInverse"
            if let named = relationship.inverseName {
                warn(
                    "the inverse of '\(qualified)', '\(relationship.inverseEntity ?? relationship.destinationEntity).\(named)', does not point back to it, so it is imported as one-way ('@noInverse'); Modelwright needs both sides of a pair to name each other and each other's entity",
                    at: relationship.location)
            }
        }
        switch relationship.deletionRule.map({ CoreDataModel.DeletionRule(rawValue: $0) }) {
        case nil, .nullify?: break
        case .cascade?: line += " @delete(cascade)"
        case .deny?: line += " @delete(deny)"
        case .noAction?: line += " @delete(noAction)"
        case nil?:
            warn(
                "unknown deletion rule '\(relationship.deletionRule ?? "")' on '\(qualified)'; imported as Nullify",
                at: relationship.location)
        }
        if relationship.isIndexed {
            if relationship.isToMany {
                warn(
                    "'indexed' on the to-many relationship '\(qualified)' is not imported: a to-many relationship has no column to index",
                    at: relationship.location)
            } else if !indexed.contains([schemaName]) {
                indexed.append([schemaName])
                // An index on a to-one relationship is an entity annotation; the caller writes it later.
                pendingIndexes.append([schemaName])
            }
        }
        if let old = previous.flatMap({
            renamedFrom(relationship.name, relationship.elementID, in: $0.relationships, index: $0.relationshipIDs)
        }) {
            if names.values.contains(old) {
                warn(
                    "the renaming identifier of '\(qualified)' names '\(old)', which this version still has; the rename is not imported",
                    at: relationship.location)
            } else {
                line += " @renamed(from: \(argument(old)))"
            }
        }
        var details: [String] = []
        if schemaName != relationship.name {
            details.append("name: \(quoted(relationship.name, at: relationship.location))")
        }
        if let modifier = relationship.versionHashModifier {
            details.append("versionHashModifier: \(quoted(modifier, at: relationship.location))")
        }
        if !details.isEmpty { line += " @coreData(\(details.joined(separator: ", ")))" }
        for entry in relationship.userInfo { line += " " + userInfo(entry, at: relationship.location) }
        reportOther(
            relationship.otherAttributes, of: "relationship '\(qualified)'", ignoring: ["syncable"],
            at: relationship.location)
        return line
    }

    private var pendingIndexes: [[String]] = []

    /// The relationship that pairs with `relationship` both ways, the only pairing the schema accepts:
    /// each names the other, and each one's destination is the other's entity.
    private func pairedInverse(
        of relationship: CoreDataModel.Relationship, in entity: String
    ) -> (owner: String, relationship: CoreDataModel.Relationship)? {
        let destination = relationship.destinationEntity
        if let named = relationship.inverseName {
            guard let inverse = relationships[destination]?.first(where: { $0.name == named }),
                inverse.destinationEntity == entity,
                inverse.inverseName == nil || inverse.inverseName == relationship.name
            else { return nil }
            if inverse.inverseName == nil {
                // A one-sided pair: it holds only if nothing else claims the same inverse.
                let claimants = (relationships[entity] ?? []).filter {
                    $0.destinationEntity == destination && $0.inverseName == named
                }
                guard claimants.count == 1 else { return nil }
            }
            return (destination, inverse)
        }
        let claimants = (relationships[destination] ?? []).filter {
            $0.destinationEntity == entity && $0.inverseName == relationship.name
        }
        guard claimants.count == 1 else { return nil }
        return (destination, claimants[0])
    }

    // MARK: - Renames

    /// The entity of the previous version this one continues: the one with the same renaming
    /// identifier, or else the one with the same name.
    private func matchingPreviousEntity(_ entity: CoreDataModel.Entity) -> ImportedShape.Entity? {
        guard let previous else { return nil }
        let identifier = entity.elementID ?? entity.name
        let matches = previous.entities.values.filter { $0.renamingID == identifier }
        if matches.count == 1 { return matches[0] }
        return previous.entities[entity.name]
    }

    /// The previous name of a property whose renaming identifier (or name) matches a different
    /// previous property; `nil` when it kept its name or is new.
    private func renamedFrom(
        _ name: String, _ elementID: String?, in previous: [String: ImportedShape.Property],
        index: [String: String?]
    ) -> String? {
        // The same name in the previous version means it is that property, whatever its identifier says.
        guard previous[name] == nil, let match = index[elementID ?? name], let match, match != name else {
            return nil
        }
        return previous[match]?.schemaName
    }

    // MARK: - Attributes

    /// The schema type of an attribute, or `nil` (with a warning) when it is not imported.
    private mutating func schemaType(of attribute: CoreDataModel.Attribute, in entity: String) -> String? {
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
            return "Data"
        }
    }

    /// The `@coreData` details a Transformable attribute needs to export as it was: its transformer
    /// unless it is the default, and its class unless the type imported is spelt the same.
    private func transformerDetails(of attribute: CoreDataModel.Attribute, type: String) -> [String] {
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
    private mutating func defaultLiteral(of attribute: CoreDataModel.Attribute, type: String, in entity: String)
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
        switch type {
        case "Int16", "Int32", "Int64":
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            let value = Int64(trimmed) ?? Double(trimmed).flatMap { $0.rounded() == $0 ? Int64(exactly: $0) : nil }
            guard let value else { return reject("it is not an integer") }
            let range: ClosedRange<Int64> =
                type == "Int16"
                ? Int64(Int16.min)...Int64(Int16.max)
                : type == "Int32" ? Int64(Int32.min)...Int64(Int32.max) : Int64.min...Int64.max
            guard range.contains(value) else { return reject("it does not fit in \(type)") }
            return String(value)
        case "Double", "Float":
            guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value.isFinite else {
                return reject("it is not a finite number")
            }
            if type == "Float", abs(value) > Double(Float.greatestFiniteMagnitude) {
                return reject("it does not fit in Float")
            }
            return "\(value)"
        case "Decimal":
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            guard Self.isNumberLiteral(trimmed), Decimal(string: trimmed) != nil else {
                return reject("it is not a decimal number")
            }
            return trimmed
        case "Bool":
            switch text {
            case "YES", "true", "1": return "true"
            case "NO", "false", "0": return "false"
            default: return reject("it is not YES or NO")
            }
        case "String":
            return SchemaText.stringLiteral(text)
        case "Date":
            return dateLiteral(ofInterval: text, of: attribute, type: type, in: entity)
        case "UUID":
            guard UUID(uuidString: text) != nil else { return reject("it is not a UUID") }
            return SchemaText.stringLiteral(text)
        case "URL":
            guard let url = URL(string: text), url.scheme != nil else { return reject("it is not an absolute URL") }
            return SchemaText.stringLiteral(text)
        default:
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
        guard type == "Date" else {
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
    private mutating func constraintMembers(
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

    private mutating func fetchIndexMembers(_ index: CoreDataModel.FetchIndex, of entity: String) -> [String]? {
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

    // MARK: - Text

    /// A string literal of the schema language: ``SchemaText/stringLiteral(_:)``, which writes
    /// every string exactly (control characters as escapes).
    private func quoted(_ text: String, at location: CoreDataLocation?) -> String {
        SchemaText.stringLiteral(text)
    }

    private mutating func userInfo(_ entry: UserInfoEntry, at location: CoreDataLocation?) -> String {
        "@userInfo(\(quoted(entry.key, at: location)), \(quoted(entry.value, at: location)))"
    }

    /// A name as an annotation argument: the words that read as values need backticks there.
    private func argument(_ name: String) -> String {
        ["true", "false", "nil", "now"].contains(name) ? "`\(name)`" : name
    }

    private mutating func reportOther(
        _ attributes: [CoreDataXMLAttribute], of what: String, ignoring: Set<String>, at location: CoreDataLocation?
    ) {
        for pair in attributes where !ignoring.contains(pair.name) {
            let reason =
                switch pair.name {
                case "minValueString", "maxValueString", "regularExpressionString":
                    "the schema language has no validation rules; check the value in code"
                case "allowsExternalBinaryDataStorage": "Modelwright keeps binary data in the store"
                case "preserveAfterDeletion": "Modelwright keeps no persistent-history tombstones"
                case "allowsCloudEncryption": "Modelwright does not sync with CloudKit"
                case "spotlightIndexingEnabled", "storedInTruthFile":
                    "Modelwright has no Spotlight or truth-file storage"
                case "fetchLimit", "fetchBatchSize", "resultType", "returnObjectsAsFaults", "returnDistinctResults",
                    "includesSubentities", "includesPendingChanges", "includesPropertyValues":
                    "a named request holds only a predicate; set limits on the request in code (`.limit(…)`)"
                default: "Modelwright does not know it"
                }
            warn("'\(pair.name)=\"\(pair.value)\"' on \(what) is not imported: \(reason)", at: location)
        }
    }

    private mutating func warn(_ message: String, at location: CoreDataLocation?) {
        diagnostics.append(
            Diagnostic(
                severity: .warning,
                message: message,
                path: model.path,
                location: location.map { SourcePosition(line: $0.line, column: $0.column) }
            )
        )
    }
}
