import Modelwright

/// One version of a model with every name resolved: relationship destinations and inverses,
/// parents, enum and composite types, defaults typed against their attributes.
///
/// Built from an ``AST/File`` by ``GraphBuilder``; lowered to the runtime's `SchemaDescription`
/// by ``SchemaLowering``. Keeps doc comments and source ranges for the generator and for diagnostics.
package struct EntityGraph: Sendable {
    /// The model's name.
    package var modelName: String
    /// The version number.
    package var version: Int
    /// The model's doc comment lines.
    package var doc: [String]
    /// Every entity, in declaration order.
    ///
    /// Setting it rebuilds the index of entities by name, so a change to many entities is best
    /// made on a copy of the array and assigned once.
    package var entities: [Entity] {
        didSet { entityPositions = Self.positions(of: entities) }
    }
    /// Every enum, in declaration order.
    package var enumerations: [Enumeration]
    /// Every composite type, in declaration order.
    package var composites: [Composite]
    /// What migrating from the previous version needs, when declared.
    package var migration: Migration?
    /// Named fetch requests, in declaration order.
    package var requests: [Request] = []
    /// Whether the store's namespace may be broken (a reserved or case-clashing table name, too
    /// many columns) and must be checked on the lowered description: resolving finds the
    /// suspicion, `StoreCheck`, which runs after resolving, lowers and checks.
    package var storeCheckDue = false
    /// Where the header names the model; problems with the whole version point here.
    package var headerRange: SourceRange
    /// The position of each entity in `entities` by name (the first, if names repeat), so that
    /// looking one up does not scan them all: every check that follows parents or destinations
    /// looked entities up that way, cubic in a deep inheritance chain.
    private var entityPositions: [String: Int]

    /// Creates a graph.
    init(
        modelName: String, version: Int, doc: [String], entities: [Entity], enumerations: [Enumeration],
        composites: [Composite], migration: Migration?, headerRange: SourceRange
    ) {
        self.modelName = modelName
        self.version = version
        self.doc = doc
        self.entities = entities
        self.enumerations = enumerations
        self.composites = composites
        self.migration = migration
        self.headerRange = headerRange
        self.entityPositions = Self.positions(of: entities)
    }

    private static func positions(of entities: [Entity]) -> [String: Int] {
        var positions: [String: Int] = [:]
        positions.reserveCapacity(entities.count)
        for (index, entity) in entities.enumerated() where positions[entity.name] == nil {
            positions[entity.name] = index
        }
        return positions
    }

    /// The entity with the given name.
    package func entity(named name: String) -> Entity? {
        entityPositions[name].map { entities[$0] }
    }

    /// The position in `entities` of the entity with the given name.
    func position(of name: String) -> Int? {
        entityPositions[name]
    }

    /// The entity's ancestors, nearest first; stops before any entity already seen, so a cycle
    /// (which the graph builder reports and breaks) cannot make it loop.
    package func ancestors(of entity: Entity) -> [Entity] {
        var result: [Entity] = []
        var seen: Set<String> = [entity.name]
        var next = entity.parent.flatMap(self.entity(named:))
        while let parent = next, seen.insert(parent.name).inserted {
            result.append(parent)
            next = parent.parent.flatMap(self.entity(named:))
        }
        return result
    }

    /// The entity's attributes, inherited ones first (outermost ancestor first).
    package func allAttributes(of entity: Entity) -> [Attribute] {
        ancestors(of: entity).reversed().flatMap(\.attributes) + entity.attributes
    }

    /// The entity's relationships, inherited ones first (outermost ancestor first).
    package func allRelationships(of entity: Entity) -> [Relationship] {
        ancestors(of: entity).reversed().flatMap(\.relationships) + entity.relationships
    }
}

extension EntityGraph {
    /// A resolved entity.
    package struct Entity: Sendable {
        /// Its name.
        package var name: String
        /// Its parent's name.
        package var parent: String?
        /// Whether it is abstract.
        package var isAbstract: Bool
        /// The attributes it declares.
        package var attributes: [Attribute]
        /// The relationships it declares.
        package var relationships: [Relationship]
        /// Compound uniqueness constraints, attribute-level `@unique` included.
        package var uniquenessConstraints: [[String]]
        /// Compound indexes, attribute-level `@indexed` included.
        package var indexes: [[String]]
        /// The attributes marked `@searchable`, in declaration order: the columns of its full-text index.
        package var searchableAttributes: [String] = []
        /// Where each uniqueness constraint was written (an attribute's `@unique`, or the entity's
        /// `@unique(…)`), by its names as written: what a frozen-version error points at.
        package var uniquenessRanges: [[String]: SourceRange] = [:]
        /// Where each index was written (an attribute's `@indexed`, or the entity's `@index(…)`),
        /// by its names as written.
        package var indexRanges: [[String]: SourceRange] = [:]
        /// The default sort order.
        package var defaultSort: [SortDescription]
        /// Its name in the previous version.
        package var renamedFrom: String?
        /// Where `@renamed(from:)` was written.
        package var renameRange: SourceRange?
        /// Its doc comment lines.
        package var doc: [String]
        /// Where it was declared.
        package var range: SourceRange
        /// Core Data's version hash modifier, from `@coreData(versionHashModifier:)`.
        package var versionHashModifier: String? = nil
        /// `@sync`, when written on this entity (see ``SyncRules``).
        package var sync: SyncMarking? = nil
    }

    /// A resolved attribute: the runtime's description of it (name, type, optionality, default,
    /// rename, hash modifier; read through as `attribute.name`) with what only the toolchain keeps.
    ///
    /// Each property of the description is forwarded by name, not through `@dynamicMemberLookup`:
    /// a key path is projected at run time, which cost the generator a fifth of a billion
    /// instructions at 1,000 entities (BENCHMARKS.md); a new property of the description needs
    /// its line here.
    package struct Attribute: Sendable {
        /// The runtime's description of the attribute, which lowering hands on as it is.
        package var schemaDescription: AttributeDescription
        /// Where `@renamed(from:)` was written.
        package var renameRange: SourceRange?
        /// Its doc comment lines.
        package var doc: [String]
        /// Where it was declared.
        package var range: SourceRange

        /// Its name.
        package var name: String {
            get { schemaDescription.name }
            set { schemaDescription.name = newValue }
        }

        /// Its type.
        package var type: AttributeType {
            get { schemaDescription.type }
            set { schemaDescription.type = newValue }
        }

        /// Whether it may be missing.
        package var isOptional: Bool {
            get { schemaDescription.isOptional }
            set { schemaDescription.isOptional = newValue }
        }

        /// Its default.
        package var defaultValue: DefaultValue? {
            get { schemaDescription.defaultValue }
            set { schemaDescription.defaultValue = newValue }
        }

        /// Its name in the previous version.
        package var renamedFrom: String? {
            get { schemaDescription.renamedFrom }
            set { schemaDescription.renamedFrom = newValue }
        }

        /// Core Data's version hash modifier.
        package var versionHashModifier: String? {
            get { schemaDescription.versionHashModifier }
            set { schemaDescription.versionHashModifier = newValue }
        }
    }

    /// A resolved relationship: the runtime's description of it (read through as
    /// `relationship.destination`) with what only the toolchain keeps. Its properties are
    /// forwarded by name, as ``Attribute``'s are.
    package struct Relationship: Sendable {
        /// The runtime's description of the relationship; its inverse is the explicit or inferred one.
        package var schemaDescription: RelationshipDescription
        /// Where `@renamed(from:)` was written.
        package var renameRange: SourceRange?
        /// Its doc comment lines.
        package var doc: [String]
        /// Where it was declared.
        package var range: SourceRange
        /// The Swift name of the ID property a to-one relationship generates on its record (see
        /// ``GeneratedNamespace/idProperty(ofRelationship:taken:)``); set by ``GeneratedNamespace``.
        package var idProperty: String = ""

        /// Its name.
        package var name: String {
            get { schemaDescription.name }
            set { schemaDescription.name = newValue }
        }

        /// The destination entity's name.
        package var destination: String {
            get { schemaDescription.destination }
            set { schemaDescription.destination = newValue }
        }

        /// The inverse relationship's name, explicit or inferred.
        package var inverse: String? {
            get { schemaDescription.inverse }
            set { schemaDescription.inverse = newValue }
        }

        /// To one or to many.
        package var cardinality: RelationshipDescription.Cardinality {
            get { schemaDescription.cardinality }
            set { schemaDescription.cardinality = newValue }
        }

        /// Whether a to-many relationship keeps an order.
        package var isOrdered: Bool {
            get { schemaDescription.isOrdered }
            set { schemaDescription.isOrdered = newValue }
        }

        /// Whether a to-one relationship may be missing.
        package var isOptional: Bool {
            get { schemaDescription.isOptional }
            set { schemaDescription.isOptional = newValue }
        }

        /// What deleting the source does to the destinations.
        package var deleteRule: RelationshipDescription.DeleteRule {
            get { schemaDescription.deleteRule }
            set { schemaDescription.deleteRule = newValue }
        }

        /// Its name in the previous version.
        package var renamedFrom: String? {
            get { schemaDescription.renamedFrom }
            set { schemaDescription.renamedFrom = newValue }
        }

        /// Core Data's version hash modifier.
        package var versionHashModifier: String? {
            get { schemaDescription.versionHashModifier }
            set { schemaDescription.versionHashModifier = newValue }
        }
    }

    /// A resolved enum.
    package struct Enumeration: Sendable {
        /// The runtime's description: name, raw type, cases with raw values.
        package var schemaDescription: EnumDescription
        /// The enum's doc comment lines.
        package var doc: [String]
        /// Each case's doc comment lines, by case name.
        package var caseDocs: [String: [String]]
        /// Where it was declared.
        package var range: SourceRange
        /// Where each case was declared, by case name: what a frozen-version error points at.
        package var caseRanges: [String: SourceRange] = [:]
    }

    /// A resolved composite type.
    package struct Composite: Sendable {
        /// Its name.
        package var name: String
        /// Its fields.
        package var fields: [Attribute]
        /// Its doc comment lines.
        package var doc: [String]
        /// Where it was declared.
        package var range: SourceRange

        /// The runtime's description of the composite.
        package var schemaDescription: CompositeDescription {
            CompositeDescription(name: name, fields: fields.map(\.schemaDescription))
        }
    }

    /// The stages migrating from the previous version needs.
    package struct Migration: Sendable {
        /// The version migrated from.
        package var fromVersion: Int
        /// Custom stages the app implements, in order.
        package var customStages: [CustomStage]
        /// Losses of data the step accepts.
        package var acceptedLosses: [AcceptedLoss]
        /// Where it was declared.
        package var range: SourceRange
    }

    /// `lossy Entity.property "why"`: data a version step may drop, by names of the previous version.
    package struct AcceptedLoss: Sendable {
        /// The entity's name in the previous version.
        package var entity: String
        /// The property's name in the previous version; `nil` for the whole entity.
        package var property: String?
        /// Why the loss is fine.
        package var reason: String?
        /// Where it was declared.
        package var range: SourceRange
    }

    /// A custom migration stage.
    package struct CustomStage: Sendable {
        /// Its name.
        package var name: String
        /// What it does, for people.
        package var label: String
        /// Its doc comment lines.
        package var doc: [String]
        /// Where it was declared.
        package var range: SourceRange
        /// The changes it declares it takes on (`covers Book.rating`), by the newer version's
        /// names; `nil` when it takes every change of its step no other stage covers.
        package var covers: [CoveredChange]? = nil
    }

    /// `Book.rating` in a stage's `covers` list.
    package struct CoveredChange: Sendable, Hashable {
        /// The entity, by its name in the newer version.
        package var entity: String
        /// The attribute or relationship; `nil` for a change of the entity itself (a new parent).
        package var property: String?
        /// Where it was written.
        package var range: SourceRange

        /// `Book.rating`, as written.
        package var text: String { [entity, property].compactMap { $0 }.joined(separator: ".") }
    }
}

extension EntityGraph {
    /// `request byTitle: Trip where "title == $title"`: a named fetch request with typed parameters.
    package struct Request: Sendable {
        /// Its name, a static function of the entity's record type in generated code.
        package var name: String
        /// The entity it fetches.
        package var entity: String
        /// The values a caller passes, one per `$variable`, in order of first use.
        package var parameters: [RequestParameter]
        /// The condition, typed; `nil` for every record.
        package var predicate: RequestPredicate?
        /// The predicate as written, in `NSPredicate` format.
        package var predicateText: String?
        /// Its doc comment lines.
        package var doc: [String]
        /// Where it was declared.
        package var range: SourceRange
    }

    /// One parameter of a named request: a `$variable` of its predicate.
    package struct RequestParameter: Sendable, Equatable {
        /// What a parameter holds.
        package enum Kind: Sendable, Equatable {
            /// A value of an attribute's type.
            case value(AttributeType)
            /// A list of values of an attribute's type, for `IN`.
            case list(AttributeType)
            /// The identity of a record of the named entity, for a to-one relationship.
            case id(entity: String)
            /// A number of records, for `@count`.
            case count
        }

        /// The Swift parameter name, made from the variable's (`$SITE_ID` → `siteID`).
        package var name: String
        /// The variable as written, without `$`.
        package var variable: String
        /// What it holds.
        package var kind: Kind
    }

    /// A named request's condition, with every key path resolved and every value typed.
    package indirect enum RequestPredicate: Sendable {
        /// `TRUEPREDICATE`, `FALSEPREDICATE`.
        case constant(Bool)
        /// The opposite.
        case not(RequestPredicate)
        /// All hold.
        case and([RequestPredicate])
        /// One holds.
        case or([RequestPredicate])
        /// `path <operation> values`. `path` follows to-one relationships to an attribute, a to-one
        /// relationship, or a to-many relationship's `@count`. `values` has one value, two for
        /// `BETWEEN`, and for `IN` one list parameter or the constants of the list.
        case comparison(RequestComparison)
        /// `ANY`, `ALL` or `NONE` of the destinations of the to-many relationship at the end of
        /// `path` (after to-one hops) satisfy the condition, which is resolved on the destination.
        case quantified(path: [String], quantifier: AST.PredicateQuantifier, condition: RequestPredicate)
    }

    /// One typed comparison of a named request.
    package struct RequestComparison: Sendable {
        /// What the key path ends at.
        package enum Target: Sendable, Equatable {
            /// An attribute of the given type.
            case attribute(AttributeType, isOptional: Bool)
            /// A to-one relationship to the named entity, whose generated ID field is `idProperty`.
            case toOne(entity: String, isOptional: Bool, idProperty: String)
            /// The number of destinations of a to-many relationship.
            case count
        }

        /// The property names from the request's entity; the last is `count`'s relationship for `@count`.
        package var path: [String]
        /// What the path ends at.
        package var target: Target
        /// The operator.
        package var operation: AST.PredicateOperator
        /// `[c]`.
        package var caseInsensitive: Bool
        /// `[d]`.
        package var diacriticInsensitive: Bool
        /// The values compared with.
        package var values: [RequestValue]
    }

    /// A value in a named request: a parameter or a typed constant.
    package enum RequestValue: Sendable, Equatable {
        /// The parameter with the given Swift name.
        case parameter(String)
        /// A constant of the compared attribute's type; `nil` for `NIL`.
        case constant(DefaultValue?)
    }
}
