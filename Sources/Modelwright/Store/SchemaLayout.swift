/// How a schema maps onto SQLite tables: the one place that decides table and column names.
///
/// **Inheritance** uses one table per hierarchy, as Core Data's SQLite store does: every entity
/// lives in its root entity's table, which has the columns of every entity below it and, when
/// the hierarchy has more than one entity, an `_entity` column naming each row's entity. A
/// fetch of a parent entity then returns its children's rows too, with no joins; the price is
/// that columns of child entities are nullable in SQL (the record types still enforce them).
///
/// **Columns** of an entity, in the order records encode them: for each entity from the root
/// down, its attributes (a composite as one column per field, `home.city`), then its to-one
/// relationships, each holding the destination's ID.
///
/// **To-many relationships** have no column of their own (see ``ToManyStorage``): one whose
/// inverse is to-one is read through that inverse's column (plus a position column when it is
/// ordered); a many-to-many or one-way to-many relationship lives in a join table.
package struct SchemaLayout: Sendable {
    let schema: SchemaDescription
    private(set) var entities: [String: EntityLayout] = [:]

    init(_ schema: SchemaDescription) throws {
        self.schema = schema
        let byName = Self.entitiesByName(schema)
        func chain(_ entity: EntityDescription) -> [EntityDescription] { Self.lineage(of: entity, byName: byName) }
        // Each entity's lineage once, then every entity's family and each hierarchy's size from
        // them: a long model history builds many layouts, so this stays linear in the entities.
        let lineages = schema.entities.map(chain)
        var families: [String: [String]] = [:]
        var hierarchySizes: [String: Int] = [:]
        for (entity, lineage) in zip(schema.entities, lineages) {
            for member in lineage where families[member.name]?.last != entity.name {
                families[member.name, default: []].append(entity.name)
            }
            hierarchySizes[lineage[0].name, default: 0] += 1
        }
        // Each hierarchy's columns get their SQL names first: entities of one table that declare
        // the same name with different meanings get a column each (see `ColumnNames`). Entities
        // are taken by name, not in declaration order: the checksum ignores that order, and a
        // store's layout must follow from its checksum alone.
        var names: [String: ColumnNames] = [:]
        var columnsByEntity: [String: [ColumnLayout]] = [:]
        for (entity, lineage) in zip(schema.entities, lineages).sorted(by: { $0.0.name < $1.0.name }) {
            var columns: [ColumnLayout] = []
            for member in lineage {
                columns += Self.columns(declaredBy: member, byName: byName, chain: chain)
            }
            columns = columns.map { names[lineage[0].name, default: ColumnNames()].assign($0) }
            columnsByEntity[entity.name] = columns
        }
        for (entity, lineage) in zip(schema.entities, lineages) {
            let root = lineage[0].name
            let family = families[entity.name] ?? [entity.name]
            let hierarchySize = hierarchySizes[root] ?? 1
            let columns = columnsByEntity[entity.name] ?? []
            // Built step by step: as one expression these took the type checker seconds.
            var owners: [String: String] = [:]
            var positionColumns: [String] = []
            for member in lineage {
                for relationship in member.relationships {
                    if owners[relationship.name] == nil { owners[relationship.name] = member.name }
                    guard relationship.cardinality == .toOne, let inverseName = relationship.inverse,
                        let destination = byName[relationship.destination]
                    else { continue }
                    let inverse = chain(destination).flatMap(\.relationships).first { $0.name == inverseName }
                    if let inverse, inverse.cardinality == .toMany, inverse.isOrdered,
                        let column = columns.first(where: { $0.key == relationship.name && $0.type == nil })
                    {
                        positionColumns.append(ToManyStorage.positionColumn(forInverse: column.name))
                    }
                }
            }
            entities[entity.name] = EntityLayout(
                name: entity.name,
                table: root,
                entityNames: family,
                hasDiscriminator: hierarchySize > 1,
                columns: columns,
                relationships: lineage.flatMap(\.relationships),
                relationshipOwners: owners,
                positionColumns: positionColumns,
                isAbstract: entity.isAbstract,
                selectList: "t0.\"id\"" + columns.map { ", t0." + quoted($0.name) }.joined(),
                uniqueKeys: Set(
                    ["id"] + lineage.flatMap(\.uniquenessConstraints).filter { $0.count == 1 }.map { $0[0] })
            )
        }
    }

    /// The schema's entities by name, the first of a name winning.
    private static func entitiesByName(_ schema: SchemaDescription) -> [String: EntityDescription] {
        Dictionary(schema.entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// `entity` and its ancestors, root first (a cycle stops at the first entity met again).
    private static func lineage(
        of entity: EntityDescription, byName: [String: EntityDescription]
    ) -> [EntityDescription] {
        var result = [entity]
        while let parent = result[0].parent.flatMap({ byName[$0] }),
            !result.contains(where: { $0.name == parent.name })
        {
            result.insert(parent, at: 0)
        }
        return result
    }

    /// A property that has columns, in the order of an entity's columns.
    private enum StoredProperty {
        /// An attribute: one column, or one per field of a composite.
        case attribute(AttributeDescription)
        /// A to-one relationship: one column, holding the destination's ID.
        case toOne(RelationshipDescription)

        /// The property's name, which its columns' `property` is.
        var name: String {
            switch self {
            case .attribute(let attribute): attribute.name
            case .toOne(let relationship): relationship.name
            }
        }
    }

    /// The properties `member` declares itself that have columns, in column order: its attributes,
    /// then its to-one relationships. The one rule of the column order: `columns(declaredBy:byName:chain:)`
    /// lays the columns out by it and `SchemaDescription.recordPropertyOrder()` reads it for the
    /// generator.
    private static func storedProperties(declaredBy member: EntityDescription) -> [StoredProperty] {
        member.attributes.map(StoredProperty.attribute)
            + member.relationships.filter { $0.cardinality == .toOne }.map(StoredProperty.toOne)
    }

    /// Each entity's stored properties, by entity name, from the root down: the names of its columns'
    /// properties in their order, a composite once. The columns' SQL names, the select lists and
    /// keys that a whole layout also builds are not needed for the order, so they are not built.
    static func propertyOrder(of schema: SchemaDescription) -> [String: [String]] {
        let byName = entitiesByName(schema)
        var order: [String: [String]] = [:]
        order.reserveCapacity(schema.entities.count)
        for entity in schema.entities {
            var properties: [String] = []
            for member in lineage(of: entity, byName: byName) {
                for property in storedProperties(declaredBy: member) where properties.last != property.name {
                    // A composite without fields has no column, so no place in the order.
                    if case .attribute(let attribute) = property, case .composite(let composite) = attribute.type,
                        composite.fields.isEmpty
                    {
                        continue
                    }
                    properties.append(property.name)
                }
            }
            order[entity.name] = properties
        }
        return order
    }

    /// The columns `member` declares itself, named by their keys (the SQL names come later), in
    /// the order of `storedProperties(declaredBy:)`.
    private static func columns(
        declaredBy member: EntityDescription, byName: [String: EntityDescription],
        chain: (EntityDescription) -> [EntityDescription]
    ) -> [ColumnLayout] {
        var columns: [ColumnLayout] = []
        for property in storedProperties(declaredBy: member) {
            switch property {
            case .attribute(let attribute):
                columns += attributeColumns(attribute, declaredBy: member)
            case .toOne(let relationship):
                columns.append(toOneColumn(relationship, declaredBy: member, byName: byName, chain: chain))
            }
        }
        return columns
    }

    /// The columns of an attribute: one, or one per field of a composite (`home.city`).
    private static func attributeColumns(
        _ attribute: AttributeDescription, declaredBy member: EntityDescription
    ) -> [ColumnLayout] {
        var columns: [ColumnLayout] = []
        if case .composite(let composite) = attribute.type {
            for field in composite.fields {
                let key = Self.compositeColumn(attribute: attribute.name, field: field.name)
                columns.append(
                    ColumnLayout(
                        name: key,
                        property: attribute.name,
                        isOptional: attribute.isOptional || field.isOptional,
                        storage: Self.storage(of: field.type),
                        references: nil,
                        isDecimal: field.type == .decimal,
                        defaultLiteral: field.defaultValue?.sqlLiteral(for: field.type),
                        type: field.type,
                        field: field.name,
                        isRequiredField: !field.isOptional,
                        declaringEntity: member.name
                    )
                )
            }
        } else {
            columns.append(
                ColumnLayout(
                    name: attribute.name,
                    property: attribute.name,
                    isOptional: attribute.isOptional,
                    storage: Self.storage(of: attribute.type),
                    references: nil,
                    isDecimal: attribute.type == .decimal,
                    defaultLiteral: attribute.defaultValue?.sqlLiteral(for: attribute.type),
                    type: attribute.type,
                    declaringEntity: member.name
                )
            )
        }
        return columns
    }

    /// The column of a to-one relationship, which holds the destination's ID.
    private static func toOneColumn(
        _ relationship: RelationshipDescription, declaredBy member: EntityDescription,
        byName: [String: EntityDescription], chain: (EntityDescription) -> [EntityDescription]
    ) -> ColumnLayout {
        // Without an inverse, or with the inverse's `noAction` rule, a delete may leave
        // this column pointing at a missing row (as in Core Data), so it gets no foreign key.
        let inverseRule = relationship.inverse.flatMap { inverse in
            byName[relationship.destination].flatMap { chain($0) }?.lazy
                .flatMap(\.relationships).first { $0.name == inverse }?.deleteRule
        }
        let destinationRoot = byName[relationship.destination].map { chain($0)[0].name }
        return ColumnLayout(
            name: relationship.name,
            property: relationship.name,
            isOptional: relationship.isOptional,
            storage: .uuid,
            references: inverseRule == nil || inverseRule == .noAction ? nil : destinationRoot,
            destination: relationship.destination,
            declaringEntity: member.name
        )
    }

    /// The column of a composite attribute's field: `home.city`.
    static func compositeColumn(attribute: String, field: String) -> String {
        "\(attribute).\(field)"
    }

    /// What a column of an attribute type stores; each engine's dialect declares it with its own type.
    static func storage(of type: AttributeType) -> ColumnStorage {
        switch type.kind {
        case .scalar(let scalar): scalar.columnStorage
        case .codable, .composite: .json
        case .enumeration(let description): description.rawType == .int ? .integer64 : .text
        }
    }

    /// The layout of an entity, or an error naming the unknown entity.
    func entity(_ name: String) throws -> EntityLayout {
        guard let layout = entities[name] else { throw StoreError.unknownEntity(name) }
        return layout
    }

    /// Where a to-many relationship of `entity` is stored.
    func storage(of relationship: RelationshipDescription, from entity: EntityLayout) throws -> ToManyStorage {
        let destination = try self.entity(relationship.destination)
        let inverse = relationship.inverse.flatMap { name in destination.relationships.first { $0.name == name } }
        if let inverse, inverse.cardinality == .toOne {
            let column = destination.columnName(inverse.name)
            return .inverseColumn(
                column,
                position: relationship.isOrdered ? ToManyStorage.positionColumn(forInverse: column) : nil
            )
        }
        let mine = (entity: entity.relationshipOwners[relationship.name] ?? entity.name, relationship: relationship)
        guard let inverse else {
            return .joinTable(
                "_\(mine.entity)_\(relationship.name)",
                source: "source",
                destination: "destination",
                position: relationship.isOrdered ? "position" : nil
            )
        }
        let theirs = (entity: destination.relationshipOwners[inverse.name] ?? destination.name, relationship: inverse)
        // One table serves both sides. It belongs to the ordered side when only one is ordered,
        // otherwise to the side whose `Entity_relationship` name sorts first.
        let mineOwns =
            mine.relationship.isOrdered != theirs.relationship.isOrdered
            ? mine.relationship.isOrdered
            : "\(mine.entity)_\(relationship.name)" <= "\(theirs.entity)_\(inverse.name)"
        let owner = mineOwns ? mine : theirs
        return .joinTable(
            "_\(owner.entity)_\(owner.relationship.name)",
            source: mineOwns ? "source" : "destination",
            destination: mineOwns ? "destination" : "source",
            position: mineOwns && relationship.isOrdered ? "position" : nil
        )
    }

    /// The entity a relationship of `entity` leads to.
    func destination(of relationship: String, from entity: EntityLayout) throws -> (
        RelationshipDescription, EntityLayout
    ) {
        guard let description = entity.relationships.first(where: { $0.name == relationship }) else {
            throw StoreError.unknownProperty(entity: entity.name, property: relationship)
        }
        return (description, try self.entity(description.destination))
    }
}

/// One entity's place in the store, built once per schema and shared: a class, so that each
/// request's lookup of its entity hands out a reference rather than copying eleven fields with a
/// retain and a release of each (1,000 lookups by ID: 18.85 M instructions as a struct, 18.36 M as
/// a class; BENCHMARKS.md, issue 30).
final class EntityLayout: Sendable {
    /// The entity's name.
    let name: String
    /// The table its rows live in (its root entity's name).
    let table: String
    /// The entity and every entity below it: the `_entity` values a fetch of this entity matches.
    let entityNames: [String]
    /// Whether the table has an `_entity` column (its hierarchy has more than one entity).
    let hasDiscriminator: Bool
    /// The record's columns, in encoding order (the ID and `_entity` are not among them).
    let columns: [ColumnLayout]
    /// Every relationship, inherited ones included.
    let relationships: [RelationshipDescription]
    /// The entity that declares each relationship (this one or an ancestor), by relationship name.
    let relationshipOwners: [String: String]
    /// Columns that keep the order of ordered to-many relationships whose inverse is one of this
    /// entity's to-one relationships; records do not encode them.
    let positionColumns: [String]
    /// Whether the entity is abstract (no rows of its own).
    let isAbstract: Bool
    /// `t0."id", t0."col", …`: the select list a fetch decodes, built once per entity (built per
    /// query, it was 46 % of a lookup by ID).
    let selectList: String
    /// The keys whose value picks at most one row: `id` and each single-key uniqueness constraint
    /// of the entity or an ancestor (whose column this entity shares). A lookup by one of them
    /// takes the fast path of ``ReadContext/fetchOne(_:)``.
    let uniqueKeys: Set<String>

    init(
        name: String, table: String, entityNames: [String], hasDiscriminator: Bool, columns: [ColumnLayout],
        relationships: [RelationshipDescription], relationshipOwners: [String: String], positionColumns: [String],
        isAbstract: Bool, selectList: String, uniqueKeys: Set<String>
    ) {
        self.name = name
        self.table = table
        self.entityNames = entityNames
        self.hasDiscriminator = hasDiscriminator
        self.columns = columns
        self.relationships = relationships
        self.relationshipOwners = relationshipOwners
        self.positionColumns = positionColumns
        self.isAbstract = isAbstract
        self.selectList = selectList
        self.uniqueKeys = uniqueKeys
    }

    /// The column whose key (attribute or to-one relationship name, `attribute.field` for a
    /// composite's field) is `key`.
    func column(forKey key: String) -> ColumnLayout? {
        columns.first { $0.key == key }
    }

    /// The SQL name of the column whose key is `key`; the key itself for a column the entity does
    /// not have (`id`, `_entity`, a position column), whose name is its key.
    func columnName(_ key: String) -> String {
        column(forKey: key)?.name ?? key
    }

    /// The key of the column named `name` in SQL; the name itself for a column that is not one of
    /// the record's (a position column).
    func key(ofColumn name: String) -> String {
        columns.first { $0.name == name }?.key ?? name
    }

    /// The condition restricting a table to this entity's rows, or `nil` when every row qualifies.
    func discriminatorSQL(alias: String) -> String? {
        guard hasDiscriminator else { return nil }
        let names = entityNames.map(SQLSyntax.string).joined(separator: ", ")
        return "\(alias).\"_entity\" IN (\(names))"
    }
}

/// One column of an entity.
struct ColumnLayout: Sendable {
    /// The column's name in SQL: its ``key``, unless another entity of the table declares the same
    /// key with another meaning (see `ColumnNames`).
    let name: String
    /// What requests and the schema call the column: the attribute or relationship name, or
    /// `attribute.field` for a composite's field.
    let key: String
    /// The attribute or relationship it stores.
    let property: String
    /// Whether it may hold NULL for rows of its entity.
    let isOptional: Bool
    /// What the column stores, which the dialect declares with its own type.
    let storage: ColumnStorage
    /// The table a to-one relationship's foreign key points at, when it has one.
    let references: String?
    /// Whether the column holds a `Decimal` as text, so comparisons must be numeric.
    let isDecimal: Bool
    /// The column's SQL `DEFAULT`, from the attribute's constant default value.
    let defaultLiteral: String?
    /// The attribute type of the values it holds (a composite's field type for its columns);
    /// `nil` for a to-one relationship's column, which holds a record's ID.
    let type: AttributeType?
    /// The composite field it stores, for a composite attribute's column.
    let field: String?
    /// Whether it stores a composite's required field: the composite is absent when it is NULL.
    let isRequiredField: Bool
    /// The destination entity, for a to-one relationship's column.
    let destination: String?
    /// The entity that declares the property (this one or an ancestor).
    let declaringEntity: String

    init(
        name: String, key: String? = nil, property: String, isOptional: Bool, storage: ColumnStorage,
        references: String?,
        isDecimal: Bool = false, defaultLiteral: String? = nil, type: AttributeType? = nil, field: String? = nil,
        isRequiredField: Bool = false, destination: String? = nil, declaringEntity: String = ""
    ) {
        self.name = name
        self.key = key ?? name
        self.property = property
        self.isOptional = isOptional
        self.storage = storage
        self.references = references
        self.isDecimal = isDecimal
        self.defaultLiteral = defaultLiteral
        self.type = type
        self.field = field
        self.isRequiredField = isRequiredField
        self.destination = destination
        self.declaringEntity = declaringEntity
    }

    /// The same column under another SQL name.
    func named(_ name: String) -> ColumnLayout {
        ColumnLayout(
            name: name, key: key, property: property, isOptional: isOptional, storage: storage,
            references: references, isDecimal: isDecimal, defaultLiteral: defaultLiteral, type: type, field: field,
            isRequiredField: isRequiredField, destination: destination, declaringEntity: declaringEntity)
    }

    /// What the column holds, as far as the table's definition and its readers are concerned: two
    /// entities of one table share a column exactly when their columns of one key agree on it.
    var meaning: ColumnMeaning {
        ColumnMeaning(
            storage: storage, type: type, references: references, defaultLiteral: defaultLiteral,
            destination: destination)
    }
}

/// What a column holds: its definition in SQL and the type its values are read as.
struct ColumnMeaning: Sendable, Equatable {
    let storage: ColumnStorage
    let type: AttributeType?
    let references: String?
    let defaultLiteral: String?
    let destination: String?
}

/// The SQL names of one table's columns.
///
/// Entities of one hierarchy share their root's table, so siblings and cousins that declare a
/// property of the same name would share its column. They do when they mean the same thing by it
/// (the same key and the same ``ColumnMeaning``); otherwise each meaning gets its own column, as
/// Core Data gives the second one a numeric suffix: the first meaning met (entities by name, each
/// from its root down) keeps the plain name, each other one is named `key@Entity`
/// after the first entity that declares it. `@` appears in no schema name, so these names meet no
/// other column. SQLite compares column names without case, and so does this: keys that differ
/// only in case never share a column, and the later one is suffixed.
struct ColumnNames: Sendable {
    private var meanings: [String: [(meaning: ColumnMeaning, name: String)]] = [:]
    private var taken: Set<String> = []

    /// `column` under its SQL name in this table.
    mutating func assign(_ column: ColumnLayout) -> ColumnLayout {
        let meaning = column.meaning
        if let known = meanings[column.key]?.first(where: { $0.meaning == meaning }) {
            return column.named(known.name)
        }
        var name = column.key
        var suffix = 1
        while taken.contains(name.lowercased()) {
            name = "\(column.key)@\(column.declaringEntity)\(suffix == 1 ? "" : String(suffix))"
            suffix += 1
        }
        taken.insert(name.lowercased())
        meanings[column.key, default: []].append((meaning, name))
        return column.named(name)
    }
}

/// Where the destinations of a to-many relationship are recorded.
enum ToManyStorage: Sendable, Equatable {
    /// The destination's to-one column (the inverse's, by its SQL name) holds the source's ID; an ordered
    /// relationship also keeps each destination's place in a position column beside it.
    case inverseColumn(String, position: String?)
    /// A join table with a column for the source's ID, one for the destination's, and a position
    /// column when the relationship is ordered.
    case joinTable(String, source: String, destination: String, position: String?)

    /// The column that orders the destinations of an ordered to-many relationship, on the
    /// destination's table, named after the column of the to-one inverse it goes with.
    static func positionColumn(forInverse inverse: String) -> String {
        "\(inverse)._position"
    }
}

extension SchemaDescription {
    /// The stored properties of each entity's records, by entity name, in the order the records
    /// encode and decode them: the attribute and relationship names of ``SchemaLayout``'s columns,
    /// a composite once for all its columns.
    ///
    /// The generator writes every record's `encode(to:)` and `init(id:row:)` in this order, so the
    /// column order is decided here alone and generated code cannot disagree with the store.
    ///
    /// It reads the layout's rule for the order (`SchemaLayout.propertyOrder(of:)`) without
    /// building the layout: the generator needs no SQL names, and building them cost it about 7% of
    /// its instructions at 1,000 entities.
    @_spi(Generated) public func recordPropertyOrder() throws -> [String: [String]] {
        SchemaLayout.propertyOrder(of: self)
    }
}
