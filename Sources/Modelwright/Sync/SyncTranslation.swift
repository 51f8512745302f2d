import Foundation

/// How the messages of a device at an older model version map onto the server's version, through
/// the lightweight stages of the migration plan between them: names follow renames, and what one
/// side's version does not have is left out.
///
/// A chain of stages translates when each stage is lightweight and changes only what a name or an
/// absence answers, so no value is ever converted:
///
/// | In a stage | Translated |
/// |---|---|
/// | an entity, attribute or relationship renamed (`@renamed(from:)`) | yes: the device's names go up, the server's come down |
/// | an entity added | yes: its rows are not sent to the older device |
/// | an attribute added (optional, or with a default) or a to-many relationship added | yes: the older device does not send it; a row it inserts takes the default, as the server's store fills it |
/// | an optional to-one relationship added | yes, as an attribute |
/// | an entity, attribute or relationship removed | yes: the older device's writes of it are dropped, as the migration drops its data |
/// | anything else: a type, an enum's cases or a composite's fields changed, optionality changed, a required to-one added, an entity moved in its hierarchy, a custom stage | no: ``SyncError/schemaVersionUnsupported(device:server:)`` ("update the app") |
struct SyncTranslation: Sendable {
    /// Per entity, by the device's name: the server's name and its properties' names (device's to server's).
    private var up: [String: (entity: String, properties: [String: String])] = [:]
    /// The same, the other way.
    private var down: [String: (entity: String, properties: [String: String])] = [:]
    /// Per entity, by the server's name: its attributes the device's version lacks whose default
    /// is `now`. No column default holds "now", so the server fills them into the device's
    /// inserts, as of the insert's stamp, as a device of its version would have.
    private var nowDefaults: [String: [String]] = [:]

    /// The translation from the first schema of `chain` (the device's) to its last (the server's),
    /// one lightweight stage per adjacent pair; `nil` when a stage changes more than names and
    /// absences (see the table above).
    init?(chain: [SchemaDescription]) {
        guard let first = chain.first, let last = chain.last else { return nil }
        // Start with the identity of the device's version, then follow each stage.
        var map: [String: (entity: String, properties: [String: String])] = [:]
        for entity in first.entities {
            let names = Self.propertyNames(of: entity, in: first)
            map[entity.name] = (entity.name, Dictionary(uniqueKeysWithValues: names.map { ($0, $0) }))
        }
        for (source, destination) in zip(chain, chain.dropFirst()) {
            guard let step = Self.step(from: source, to: destination) else { return nil }
            var next: [String: (entity: String, properties: [String: String])] = [:]
            for (deviceName, current) in map {
                guard let mapped = step[current.entity] else { continue }
                var properties: [String: String] = [:]
                for (deviceProperty, currentProperty) in current.properties {
                    if let renamed = mapped.properties[currentProperty] { properties[deviceProperty] = renamed }
                }
                next[deviceName] = (mapped.entity, properties)
            }
            map = next
        }
        up = map
        for (deviceName, mapped) in map {
            down[mapped.entity] = (
                deviceName, Dictionary(uniqueKeysWithValues: mapped.properties.map { ($0.value, $0.key) })
            )
            guard let entity = last.entity(named: mapped.entity) else { continue }
            let held = Set(mapped.properties.values)
            for attribute in Self.attributes(of: entity, in: last) where !held.contains(attribute.name) {
                if attribute.defaultValue == .now { nowDefaults[entity.name, default: []].append(attribute.name) }
                // A composite added with a field that defaults to now: nothing fills the field.
                if case .composite(let composite) = attribute.type,
                    composite.fields.contains(where: { $0.defaultValue == .now })
                {
                    return nil
                }
            }
        }
    }

    /// An entity and its ancestors, nearest first.
    private static func lineage(of entity: EntityDescription, in schema: SchemaDescription) -> [EntityDescription] {
        var result = [entity]
        while let parent = result.last?.parent, let next = schema.entity(named: parent),
            !result.contains(where: { $0.name == next.name })
        {
            result.append(next)
        }
        return result
    }

    /// An entity's attributes, its ancestors' included (a row's values name them all).
    private static func attributes(of entity: EntityDescription, in schema: SchemaDescription) -> [AttributeDescription]
    {
        lineage(of: entity, in: schema).flatMap(\.attributes)
    }

    /// An entity's relationships, its ancestors' included.
    private static func relationships(
        of entity: EntityDescription, in schema: SchemaDescription
    ) -> [RelationshipDescription] {
        lineage(of: entity, in: schema).flatMap(\.relationships)
    }

    /// The names of an entity's attributes and relationships, its ancestors' included.
    private static func propertyNames(of entity: EntityDescription, in schema: SchemaDescription) -> [String] {
        attributes(of: entity, in: schema).map(\.name) + relationships(of: entity, in: schema).map(\.name)
    }

    /// The name in the previous version of what is named `name` in the new one and renamed from
    /// `renamedFrom`; `nil` when it is new: a name another's `@renamed(from:)` claims is new, even
    /// where the previous version had something by that name.
    private static func previousName(_ name: String, renamedFrom: String?, claimed: Set<String>) -> String? {
        renamedFrom ?? (claimed.contains(name) ? nil : name)
    }

    /// One stage's renames (source entity → destination entity and properties), or `nil` when it
    /// changes more than names and absences.
    private static func step(
        from source: SchemaDescription, to destination: SchemaDescription
    ) -> [String: (entity: String, properties: [String: String])]? {
        let claimedEntities = Set(destination.entities.compactMap(\.renamedFrom))
        func previous(_ entity: EntityDescription) -> EntityDescription? {
            previousName(entity.name, renamedFrom: entity.renamedFrom, claimed: claimedEntities)
                .flatMap { source.entity(named: $0) }
        }
        var entities: [String: String] = [:]
        for entity in destination.entities {
            if let old = previous(entity) { entities[old.name] = entity.name }
        }
        var result: [String: (entity: String, properties: [String: String])] = [:]
        for target in destination.entities {
            guard let old = previous(target) else {
                continue  // added: an older device has none of its rows
            }
            guard old.parent.map({ entities[$0] }) == target.parent.map({ Optional($0) }),
                old.isAbstract == target.isAbstract
            else { return nil }
            let targetAttributes = attributes(of: target, in: destination)
            let targetRelationships = relationships(of: target, in: destination)
            let claimed = Set(
                targetAttributes.compactMap(\.renamedFrom) + targetRelationships.compactMap(\.renamedFrom))
            let oldAttributes = attributes(of: old, in: source)
            let oldRelationships = relationships(of: old, in: source)
            var properties: [String: String] = [:]
            for attribute in targetAttributes {
                let name = previousName(attribute.name, renamedFrom: attribute.renamedFrom, claimed: claimed)
                guard let before = oldAttributes.first(where: { $0.name == name }) else {
                    // Added: the older device never sends it; a row it inserts needs a value.
                    guard attribute.isOptional || attribute.defaultValue != nil else { return nil }
                    continue
                }
                guard before.type == attribute.type, before.isOptional == attribute.isOptional else { return nil }
                properties[before.name] = attribute.name
            }
            for relationship in targetRelationships {
                let name = previousName(relationship.name, renamedFrom: relationship.renamedFrom, claimed: claimed)
                guard let before = oldRelationships.first(where: { $0.name == name }) else {
                    guard relationship.cardinality == .toMany || relationship.isOptional else { return nil }
                    continue
                }
                guard before.cardinality == relationship.cardinality, before.isOptional == relationship.isOptional,
                    entities[before.destination] == relationship.destination,
                    ownsJoinTable(before, of: old.name, in: source)
                        == ownsJoinTable(relationship, of: target.name, in: destination)
                else { return nil }
                properties[before.name] = relationship.name
            }
            result[old.name] = (target.name, properties)
        }
        return result
    }

    /// Whether `relationship` of `entity`, a many-to-many one, is the side whose rows' records
    /// hold the links (the join table's owner, as the store's layout picks it); `nil` for any other
    /// relationship. Records keep links under the owner's relationship, so a rename that moves the
    /// table to the other side does not translate.
    private static func ownsJoinTable(
        _ relationship: RelationshipDescription, of entity: String, in schema: SchemaDescription
    ) -> Bool? {
        guard relationship.cardinality == .toMany, let name = relationship.inverse,
            let inverse = schema.entity(named: relationship.destination)?.relationships.first(where: { $0.name == name }
            ),
            inverse.cardinality == .toMany
        else { return nil }
        if relationship.isOrdered != inverse.isOrdered { return relationship.isOrdered }
        return "\(entity)_\(relationship.name)" <= "\(relationship.destination)_\(inverse.name)"
    }

    // MARK: - Device to server

    /// A row's key in the server's names; `nil` for an entity the server's version does not have.
    func up(_ key: RowKey) -> RowKey? {
        up[key.entity].map { RowKey(entity: $0.entity, id: key.id) }
    }

    /// A device's change in the server's names, without what the server's version does not have;
    /// an insert gains the attributes defaulting to `now` its version lacks, as of its stamp.
    func up(_ change: RowChange) -> RowChange? {
        guard var translated = translate(change, by: up) else { return nil }
        if let inserted = change.inserted, let names = nowDefaults[translated.key.entity] {
            let now = SyncValue.date(Date(timeIntervalSince1970: Double(inserted.milliseconds) / 1_000))
            let values = Dictionary(uniqueKeysWithValues: names.map { ($0, now) })
            translated.merge(.update(translated.key, values: values, at: inserted))
        }
        return translated
    }

    // MARK: - Server to device

    /// A row's key in the device's names; `nil` for an entity the device's version does not have.
    func down(_ key: RowKey) -> RowKey? {
        down[key.entity].map { RowKey(entity: $0.entity, id: key.id) }
    }

    /// A server's change in the device's names, without what the device's version does not have.
    func down(_ change: RowChange) -> RowChange? {
        translate(change, by: down)
    }

    /// The hidden links of a row the device holds, in its names.
    func down(_ hidden: HiddenLinks) -> HiddenLinks? {
        guard let entity = down[hidden.row.entity], let row = down(hidden.row) else { return nil }
        let attributes = hidden.attributes.compactMap { property(of: $0, in: entity.properties) }
        return attributes.isEmpty ? nil : HiddenLinks(row: row, attributes: attributes)
    }

    /// A resolution in the device's names; `nil` for an entity the device's version does not have.
    func down(_ resolution: ConstraintResolution) -> ConstraintResolution? {
        func names(_ entity: String, _ constraint: [String]) -> (String, [String])? {
            guard let mapped = down[entity] else { return nil }
            return (mapped.entity, constraint.map { property(of: $0, in: mapped.properties) ?? $0 })
        }
        switch resolution {
        case .merged(let entity, let constraint, let merged, let survivor):
            return names(entity, constraint).map {
                .merged(entity: $0.0, constraint: $0.1, merged: merged, survivor: survivor)
            }
        case .rejected(let entity, let constraint, let row, let kept):
            return names(entity, constraint).map { .rejected(entity: $0.0, constraint: $0.1, row: row, kept: kept) }
        case .refused(let entity, let constraint, let row):
            return names(entity, constraint).map { .refused(entity: $0.0, constraint: $0.1, row: row) }
        }
    }

    /// A refusal naming a row, in the device's names (a row its version does not have keeps the server's name).
    func down(_ error: SyncError) -> SyncError {
        switch error {
        case .outOfScope(let row): .outOfScope(row: down(row) ?? row)
        case .changeRefused(let row, let reason): .changeRefused(row: down(row) ?? row, reason: reason)
        default: error
        }
    }

    // MARK: - Names

    private func translate(
        _ change: RowChange, by map: [String: (entity: String, properties: [String: String])]
    ) -> RowChange? {
        guard let entity = map[change.key.entity] else { return nil }
        var attributes: [String: StampedValue] = [:]
        for (key, value) in change.attributes {
            if let mapped = property(of: key, in: entity.properties) { attributes[mapped] = value }
        }
        var links: [LinkKey: LinkStamps] = [:]
        for (link, stamps) in change.links {
            if let relationship = entity.properties[link.relationship] {
                links[LinkKey(relationship: relationship, target: link.target)] = stamps
            }
        }
        return RowChange(
            key: RowKey(entity: entity.entity, id: change.key.id), inserted: change.inserted, deleted: change.deleted,
            attributes: attributes, links: links)
    }

    /// An attribute key (`name`, or `composite.field`) mapped by its property's name; `nil` when
    /// the other version does not have the property.
    private func property(of key: String, in properties: [String: String]) -> String? {
        guard let dot = key.firstIndex(of: ".") else { return properties[key] }
        return properties[String(key[..<dot])].map { $0 + key[dot...] }
    }
}
