import Foundation
import Modelwright
import ModelwrightSchema

extension CoreDataVersionTranslator {
    // MARK: - Entities

    /// The lines of an entity's declaration: attributes, relationships, constraints and indexes.
    mutating func render(_ entity: CoreDataModel.Entity) -> [String] {
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
        // `@sync` as export recorded it; the schema's own checks judge a hand-edited entry.
        if let sync = info.sync {
            lines.append("    @sync" + (sync.isEmpty ? "" : "(\(sync))"))
        }
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
            if let kept = enums[type] {
                if let name = attributeInfo.enumDefault, kept.cases.contains(name) { line += " = .\(name)" }
            } else if attributeInfo.isNowDefault, case .instant? = ScalarType.bySchemaSpelling[type]?.literal {
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

    /// A relationship's declaration line, with its inverse, delete rule and annotations.
    mutating func render(
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
            let ordered = keepsOrder(relationship, schemaName: schemaName, entity: entity)
            line += ordered ? "[\(destination)]" : "Set<\(destination)>"
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

    /// The relationship that pairs with `relationship` both ways, the only pairing the schema accepts:
    /// each names the other, and each one's destination is the other's entity.
    /// Whether the to-many `relationship` of `entity` is imported ordered. Core Data keeps both
    /// orders of a many-to-many ordered on both sides; the store keeps one (see
    /// ``InverseResolver/orderedSideKept(_:inverse:)``), so the other side is imported as a `Set`
    /// with a warning that names the side that keeps its order.
    private mutating func keepsOrder(
        _ relationship: CoreDataModel.Relationship, schemaName: String, entity: String
    ) -> Bool {
        guard relationship.isOrdered else { return false }
        guard let inverse = pairedInverse(of: relationship, in: entity),
            inverse.relationship.isToMany, inverse.relationship.isOrdered,
            let inverseName = propertyNames[inverse.owner]?[inverse.relationship.name]
        else { return true }
        let mine = (entity: entityNames[entity] ?? entity, name: schemaName)
        let theirs = (entity: entityNames[inverse.owner] ?? inverse.owner, name: inverseName)
        if InverseResolver.orderedSideKept(mine, inverse: theirs) == mine { return true }
        warn(
            "'\(entity).\(relationship.name)' and its inverse '\(inverse.owner).\(inverse.relationship.name)' are both ordered; Modelwright keeps the order of one side of a many-to-many, so '\(entity).\(relationship.name)' is imported unordered ('Set<…>') and '\(inverse.owner).\(inverse.relationship.name)' keeps its order; read '\(mine.entity).\(mine.name)' through a sorted request where its order matters",
            at: relationship.location)
        return false
    }

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
}
