import Foundation

/// What a Core Data model said, version by version, that its SQLite store depends on: the names,
/// types and flags its entity version hashes are made of, and where each Core Data entity and
/// property went in the Modelwright model.
///
/// `modelwright import-coredata` writes it beside the schema files, as
/// `<Model>.coredata-store.json`; the app bundles that file and hands it to
/// ``CoreDataStoreImport`` at first launch, so the importer needs nothing of the toolchain:
///
/// ```swift
/// let data = try Data(contentsOf: Bundle.main.url(forResource: "Trips.coredata-store", withExtension: "json")!)
/// let model = try JSONDecoder().decode(CoreDataStoreModel.self, from: data)
/// ```
///
/// Every entity and property of each Core Data version is here, those the import left out too
/// (a derived attribute, an entity without a destination): a version hash covers them all.
///
/// ## Topics
///
/// ### Versions
/// - ``versions``
/// - ``Version``
/// - ``Entity``
/// - ``Attribute``
/// - ``Relationship``
public struct CoreDataStoreModel: Sendable, Equatable, Codable {
    /// Each imported Core Data version, oldest first.
    public var versions: [Version]

    /// Creates a model.
    public init(versions: [Version]) {
        self.versions = versions
    }

    // MARK: - Codable

    // Most entities are the same in most versions (WooCommerce has 117 versions of some 88
    // entities), so each distinct entity is written once and versions list theirs by index.
    private enum CodingKeys: String, CodingKey {
        case entities, versions
    }

    private struct StoredVersion: Codable {
        var name: String
        var schemaVersion: Int
        var entities: [Int]
    }

    /// Reads a model written by ``encode(to:)``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let entities = try container.decode([Entity].self, forKey: .entities)
        versions = try container.decode([StoredVersion].self, forKey: .versions).map { stored in
            Version(
                name: stored.name, schemaVersion: stored.schemaVersion,
                entities: try stored.entities.map { index in
                    guard entities.indices.contains(index) else {
                        throw DecodingError.dataCorruptedError(
                            forKey: .versions, in: container,
                            debugDescription: "version '\(stored.name)' names entity \(index), which is not in the list"
                        )
                    }
                    return entities[index]
                })
        }
    }

    /// Writes each distinct entity once, and each version as the indexes of its entities.
    public func encode(to encoder: any Encoder) throws {
        var entities: [Entity] = []
        var indexes: [Entity: Int] = [:]
        let stored = versions.map { version in
            StoredVersion(
                name: version.name, schemaVersion: version.schemaVersion,
                entities: version.entities.map { entity in
                    if let index = indexes[entity] { return index }
                    indexes[entity] = entities.count
                    entities.append(entity)
                    return entities.count - 1
                })
        }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(entities, forKey: .entities)
        try container.encode(stored, forKey: .versions)
    }

    /// One Core Data model version, and the Modelwright version it was imported as.
    public struct Version: Sendable, Equatable, Codable {
        /// The `.xcdatamodel`'s name, such as `Model 37`.
        public var name: String
        /// The Modelwright schema version it became (``SchemaDescription/version``).
        public var schemaVersion: Int
        /// Every entity, as the model declares it.
        public var entities: [Entity]

        /// Creates a version.
        public init(name: String, schemaVersion: Int, entities: [Entity]) {
            self.name = name
            self.schemaVersion = schemaVersion
            self.entities = entities
        }

        /// The entity named `name` in Core Data.
        public func entity(named name: String) -> Entity? {
            entities.first { $0.name == name }
        }

        /// Core Data's 32-byte entity version hashes of this version, by entity name: what a store
        /// written by it holds as `NSStoreModelVersionHashes` in its metadata, and what
        /// ``CoreDataStoreImport`` matches a store against.
        public var versionHashes: [String: Data] {
            CoreDataVersionHashes.hashes(of: self)
        }
    }

    /// A Core Data entity.
    public struct Entity: Sendable, Hashable, Codable {
        /// Its Core Data name.
        public var name: String
        /// The entity it became in the schema, or `nil` when it was not imported.
        public var schemaName: String?
        /// Its parent entity's Core Data name.
        public var parent: String?
        /// Whether it is abstract.
        public var isAbstract: Bool
        /// Its renaming identifier (`elementID`), when it has one.
        public var renamingIdentifier: String?
        /// Its version hash modifier.
        public var versionHashModifier: String?
        /// Its own uniqueness constraints, each a list of property names.
        public var uniquenessConstraints: [[String]]
        /// The attributes it declares itself.
        public var attributes: [Attribute]
        /// The relationships it declares itself.
        public var relationships: [Relationship]

        /// Creates an entity.
        public init(
            name: String, schemaName: String?, parent: String? = nil, isAbstract: Bool = false,
            renamingIdentifier: String? = nil, versionHashModifier: String? = nil,
            uniquenessConstraints: [[String]] = [], attributes: [Attribute] = [], relationships: [Relationship] = []
        ) {
            self.name = name
            self.schemaName = schemaName
            self.parent = parent
            self.isAbstract = isAbstract
            self.renamingIdentifier = renamingIdentifier
            self.versionHashModifier = versionHashModifier
            self.uniquenessConstraints = uniquenessConstraints
            self.attributes = attributes
            self.relationships = relationships
        }
    }

    /// A Core Data attribute.
    public struct Attribute: Sendable, Hashable, Codable {
        /// Its Core Data name.
        public var name: String
        /// The attribute it became in the schema, or `nil` when it was not imported.
        public var schemaName: String?
        /// Core Data's attribute type code: 100 (Integer 16) … 1800 (Transformable).
        public var typeCode: Int
        /// `optional="YES"`.
        public var isOptional: Bool
        /// `transient="YES"`: no column, and not in the hash.
        public var isTransient: Bool
        /// Its version hash modifier.
        public var versionHashModifier: String?
        /// `allowsExternalBinaryDataStorage="YES"`: the column holds a marker byte first.
        public var allowsExternalStorage: Bool
        /// `preserveAfterDeletion="YES"`.
        public var preservesValueInHistoryOnDeletion: Bool

        /// Creates an attribute.
        public init(
            name: String, schemaName: String?, typeCode: Int, isOptional: Bool = false, isTransient: Bool = false,
            versionHashModifier: String? = nil, allowsExternalStorage: Bool = false,
            preservesValueInHistoryOnDeletion: Bool = false
        ) {
            self.name = name
            self.schemaName = schemaName
            self.typeCode = typeCode
            self.isOptional = isOptional
            self.isTransient = isTransient
            self.versionHashModifier = versionHashModifier
            self.allowsExternalStorage = allowsExternalStorage
            self.preservesValueInHistoryOnDeletion = preservesValueInHistoryOnDeletion
        }

        /// Core Data's type code for the spelling the model file uses (`Integer 64`, `Transformable`),
        /// or `nil` for a spelling it does not have.
        public static func typeCode(of spelling: String) -> Int? {
            typeCodes[spelling]
        }

        private static let typeCodes: [String: Int] = [
            "Undefined": 0, "Integer 16": 100, "Integer 32": 200, "Integer 64": 300, "Decimal": 400, "Double": 500,
            "Float": 600, "String": 700, "Boolean": 800, "Date": 900, "Binary": 1000, "UUID": 1100, "URI": 1200,
            "Transformable": 1800, "ObjectID": 2000, "Composite": 2100,
        ]
    }

    /// A Core Data relationship.
    public struct Relationship: Sendable, Hashable, Codable {
        /// Its Core Data name.
        public var name: String
        /// The relationship it became in the schema, or `nil` when it was not imported.
        public var schemaName: String?
        /// The destination entity's Core Data name.
        public var destination: String
        /// The inverse relationship's name, when the model names one.
        public var inverse: String?
        /// `optional="YES"`.
        public var isOptional: Bool
        /// `transient="YES"`.
        public var isTransient: Bool
        /// `toMany="YES"`.
        public var isToMany: Bool
        /// `ordered="YES"`.
        public var isOrdered: Bool
        /// `minCount`, 0 when absent.
        public var minCount: Int
        /// `maxCount`: 1 for a to-one, 0 (no limit) by default for a to-many.
        public var maxCount: Int
        /// Its version hash modifier.
        public var versionHashModifier: String?

        /// Creates a relationship.
        public init(
            name: String, schemaName: String?, destination: String, inverse: String? = nil, isOptional: Bool = true,
            isTransient: Bool = false, isToMany: Bool = false, isOrdered: Bool = false, minCount: Int = 0,
            maxCount: Int? = nil, versionHashModifier: String? = nil
        ) {
            self.name = name
            self.schemaName = schemaName
            self.destination = destination
            self.inverse = inverse
            self.isOptional = isOptional
            self.isTransient = isTransient
            self.isToMany = isToMany
            self.isOrdered = isOrdered
            self.minCount = minCount
            self.maxCount = maxCount ?? (isToMany ? 0 : 1)
            self.versionHashModifier = versionHashModifier
        }
    }
}
