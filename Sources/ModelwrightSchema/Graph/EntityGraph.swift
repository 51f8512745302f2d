import Modelwright

/// One version of a model with every name resolved: relationship destinations and inverses,
/// parents, enum and composite types, defaults typed against their attributes.
///
/// Built from an ``AST/File`` by ``GraphBuilder``; lowered to the runtime's `SchemaDescription`
/// by ``SchemaLowering``. Keeps doc comments and source ranges for the generator and for diagnostics.
public struct EntityGraph: Sendable {
    /// The model's name.
    public var modelName: String
    /// The version number.
    public var version: Int
    /// The model's doc comment lines.
    public var doc: [String]
    /// Every entity, in declaration order.
    ///
    /// Setting it rebuilds the index of entities by name, so a change to many entities is best
    /// made on a copy of the array and assigned once.
    public var entities: [Entity] {
        didSet { entityPositions = Self.positions(of: entities) }
    }
    /// Every enum, in declaration order.
    public var enumerations: [Enumeration]
    /// Every composite type, in declaration order.
    public var composites: [Composite]
    /// What migrating from the previous version needs, when declared.
    public var migration: Migration?
    /// Named fetch requests, in declaration order.
    public var requests: [Request] = []
    /// Where the header names the model; problems with the whole version point here.
    public var headerRange: SourceRange
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
    public func entity(named name: String) -> Entity? {
        entityPositions[name].map { entities[$0] }
    }

    /// The position in `entities` of the entity with the given name.
    func position(of name: String) -> Int? {
        entityPositions[name]
    }

    /// The entity's ancestors, nearest first; stops before any entity already seen, so a cycle
    /// (which the graph builder reports and breaks) cannot make it loop.
    public func ancestors(of entity: Entity) -> [Entity] {
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
    public func allAttributes(of entity: Entity) -> [Attribute] {
        ancestors(of: entity).reversed().flatMap(\.attributes) + entity.attributes
    }

    /// The entity's relationships, inherited ones first (outermost ancestor first).
    public func allRelationships(of entity: Entity) -> [Relationship] {
        ancestors(of: entity).reversed().flatMap(\.relationships) + entity.relationships
    }
}

extension EntityGraph {
    /// A resolved entity.
    public struct Entity: Sendable {
        /// Its name.
        public var name: String
        /// Its parent's name.
        public var parent: String?
        /// Whether it is abstract.
        public var isAbstract: Bool
        /// The attributes it declares.
        public var attributes: [Attribute]
        /// The relationships it declares.
        public var relationships: [Relationship]
        /// Compound uniqueness constraints, attribute-level `@unique` included.
        public var uniquenessConstraints: [[String]]
        /// Compound indexes, attribute-level `@indexed` included.
        public var indexes: [[String]]
        /// The default sort order.
        public var defaultSort: [SortDescription]
        /// Its name in the previous version.
        public var renamedFrom: String?
        /// Where `@renamed(from:)` was written.
        public var renameRange: SourceRange?
        /// Its doc comment lines.
        public var doc: [String]
        /// Where it was declared.
        public var range: SourceRange
        /// Core Data's version hash modifier, from `@coreData(versionHashModifier:)`.
        public var versionHashModifier: String? = nil
    }

    /// A resolved attribute.
    public struct Attribute: Sendable {
        /// Its name.
        public var name: String
        /// Its type.
        public var type: AttributeType
        /// Whether it may be `nil`.
        public var isOptional: Bool
        /// Its default value.
        public var defaultValue: DefaultValue?
        /// Its name in the previous version.
        public var renamedFrom: String?
        /// Where `@renamed(from:)` was written.
        public var renameRange: SourceRange?
        /// Its doc comment lines.
        public var doc: [String]
        /// Where it was declared.
        public var range: SourceRange
        /// Core Data's version hash modifier, from `@coreData(versionHashModifier:)`.
        public var versionHashModifier: String? = nil
    }

    /// A resolved relationship.
    public struct Relationship: Sendable {
        /// Its name.
        public var name: String
        /// The destination entity's name.
        public var destination: String
        /// The inverse relationship's name on the destination, explicit or inferred.
        public var inverse: String?
        /// To-one or to-many.
        public var cardinality: RelationshipDescription.Cardinality
        /// Whether a to-many relationship is ordered.
        public var isOrdered: Bool
        /// Whether a to-one relationship may be empty.
        public var isOptional: Bool
        /// What deleting the source does.
        public var deleteRule: RelationshipDescription.DeleteRule
        /// Its name in the previous version.
        public var renamedFrom: String?
        /// Where `@renamed(from:)` was written.
        public var renameRange: SourceRange?
        /// Its doc comment lines.
        public var doc: [String]
        /// Where it was declared.
        public var range: SourceRange
        /// Core Data's version hash modifier, from `@coreData(versionHashModifier:)`.
        public var versionHashModifier: String? = nil
        /// The Swift name of the ID property a to-one relationship generates on its record (see
        /// ``NameRules/foreignKeyProperty(of:taken:)``); set by ``GeneratedNamespace``.
        public var idProperty: String = ""
    }

    /// A resolved enum.
    public struct Enumeration: Sendable {
        /// The runtime's description: name, raw type, cases with raw values.
        public var schemaDescription: EnumDescription
        /// The enum's doc comment lines.
        public var doc: [String]
        /// Each case's doc comment lines, by case name.
        public var caseDocs: [String: [String]]
        /// Where it was declared.
        public var range: SourceRange
    }

    /// A resolved composite type.
    public struct Composite: Sendable {
        /// Its name.
        public var name: String
        /// Its fields.
        public var fields: [Attribute]
        /// Its doc comment lines.
        public var doc: [String]
        /// Where it was declared.
        public var range: SourceRange

        /// The runtime's description of the composite.
        public var schemaDescription: CompositeDescription {
            CompositeDescription(name: name, fields: fields.map(\.schemaDescription))
        }
    }

    /// The stages migrating from the previous version needs.
    public struct Migration: Sendable {
        /// The version migrated from.
        public var fromVersion: Int
        /// Custom stages the app implements, in order.
        public var customStages: [CustomStage]
        /// Losses of data the step accepts.
        public var acceptedLosses: [AcceptedLoss]
        /// Where it was declared.
        public var range: SourceRange
    }

    /// `lossy Entity.property "why"`: data a version step may drop, by names of the previous version.
    public struct AcceptedLoss: Sendable {
        /// The entity's name in the previous version.
        public var entity: String
        /// The property's name in the previous version; `nil` for the whole entity.
        public var property: String?
        /// Why the loss is fine.
        public var reason: String?
        /// Where it was declared.
        public var range: SourceRange
    }

    /// A custom migration stage.
    public struct CustomStage: Sendable {
        /// Its name.
        public var name: String
        /// What it does, for people.
        public var label: String
        /// Its doc comment lines.
        public var doc: [String]
        /// Where it was declared.
        public var range: SourceRange
    }
}

extension EntityGraph {
    /// `request byTitle: Trip where "title == $title"`: a named fetch request with typed parameters.
    public struct Request: Sendable {
        /// Its name, a static function of the entity's record type in generated code.
        public var name: String
        /// The entity it fetches.
        public var entity: String
        /// The values a caller passes, one per `$variable`, in order of first use.
        public var parameters: [RequestParameter]
        /// The condition, typed; `nil` for every record.
        public var predicate: RequestPredicate?
        /// The predicate as written, in `NSPredicate` format.
        public var predicateText: String?
        /// Its doc comment lines.
        public var doc: [String]
        /// Where it was declared.
        public var range: SourceRange
    }

    /// One parameter of a named request: a `$variable` of its predicate.
    public struct RequestParameter: Sendable, Equatable {
        /// What a parameter holds.
        public enum Kind: Sendable, Equatable {
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
        public var name: String
        /// The variable as written, without `$`.
        public var variable: String
        /// What it holds.
        public var kind: Kind
    }

    /// A named request's condition, with every key path resolved and every value typed.
    public indirect enum RequestPredicate: Sendable {
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
    public struct RequestComparison: Sendable {
        /// What the key path ends at.
        public enum Target: Sendable, Equatable {
            /// An attribute of the given type.
            case attribute(AttributeType, isOptional: Bool)
            /// A to-one relationship to the named entity.
            case toOne(entity: String, isOptional: Bool)
            /// The number of destinations of a to-many relationship.
            case count
        }

        /// The property names from the request's entity; the last is `count`'s relationship for `@count`.
        public var path: [String]
        /// What the path ends at.
        public var target: Target
        /// The operator.
        public var operation: AST.PredicateOperator
        /// `[c]`.
        public var caseInsensitive: Bool
        /// `[d]`.
        public var diacriticInsensitive: Bool
        /// The values compared with.
        public var values: [RequestValue]
    }

    /// A value in a named request: a parameter or a typed constant.
    public enum RequestValue: Sendable, Equatable {
        /// The parameter with the given Swift name.
        case parameter(String)
        /// A constant of the compared attribute's type; `nil` for `NIL`.
        case constant(DefaultValue?)
    }
}

extension EntityGraph.Attribute {
    /// The runtime's description of the attribute.
    public var schemaDescription: AttributeDescription {
        AttributeDescription(
            name: name,
            type: type,
            isOptional: isOptional,
            defaultValue: defaultValue,
            renamedFrom: renamedFrom,
            versionHashModifier: versionHashModifier
        )
    }
}
