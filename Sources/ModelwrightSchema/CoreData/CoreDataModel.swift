/// One version of a Core Data model, as its `contents` XML says it: the boundary type between
/// ``CoreDataReader`` (XML → value) and ``CoreDataImporter`` (value → schema text), and between
/// ``CoreDataExporter`` (model → value) and ``CoreDataWriter`` (value → XML).
///
/// Names are Core Data's, unchanged. Every element keeps where it was read, so the importer can
/// point at anything it cannot carry over; values built by the exporter have no location.
public struct CoreDataModel: Sendable, Equatable {
    /// The `contents` file it was read from, for diagnostics; empty for an exported model.
    public var path: String
    /// The `<model>` element's attributes, such as `lastSavedToolsVersion`, in the order read.
    public var rootAttributes: [CoreDataXMLAttribute]
    /// Every `<entity>`, in the order written.
    public var entities: [Entity]
    /// Model-level `<fetchRequest>` templates.
    public var fetchRequests: [FetchRequest]
    /// `<configuration>` elements: named groups of entities.
    public var configurations: [Configuration]
    /// The model's own `<userInfo>` entries.
    public var userInfo: [UserInfoEntry]
    /// Elements the reader does not know, which the importer reports.
    public var unknownElements: [UnknownElement]
    /// Where `<model>` was written.
    public var location: CoreDataLocation?

    /// Creates a model.
    public init(
        path: String = "",
        rootAttributes: [CoreDataXMLAttribute] = [],
        entities: [Entity] = [],
        fetchRequests: [FetchRequest] = [],
        configurations: [Configuration] = [],
        userInfo: [UserInfoEntry] = [],
        unknownElements: [UnknownElement] = [],
        location: CoreDataLocation? = nil
    ) {
        self.path = path
        self.rootAttributes = rootAttributes
        self.entities = entities
        self.fetchRequests = fetchRequests
        self.configurations = configurations
        self.userInfo = userInfo
        self.unknownElements = unknownElements
        self.location = location
    }

    /// The entity with the given name.
    public func entity(named name: String) -> Entity? {
        entities.first { $0.name == name }
    }
}

/// A place in a `contents` file: line and column from 1, the column pointing at the element's `<`.
public struct CoreDataLocation: Sendable, Hashable, CustomStringConvertible {
    /// The line, from 1.
    public var line: Int
    /// The column, from 1, in UTF-8 bytes.
    public var column: Int

    /// The location of a byte offset in `file`: one line table serves schema and XML files.
    init(of offset: Int, in file: SourceFile) {
        let position = file.location(of: max(offset, 0))
        self.init(line: position.line, column: position.column)
    }

    /// Creates a location.
    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    public var description: String { "\(line):\(column)" }
}

/// One `name="value"` pair of an XML element, kept in the order written.
public struct CoreDataXMLAttribute: Sendable, Equatable {
    /// The XML attribute's name.
    public var name: String
    /// Its value, with entities decoded.
    public var value: String

    /// Creates a pair.
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// One `<entry key=… value=…/>` of a `<userInfo>` dictionary.
public struct UserInfoEntry: Sendable, Equatable {
    /// The key.
    public var key: String
    /// The value.
    public var value: String

    /// Creates an entry.
    public init(key: String, value: String) {
        self.key = key
        self.value = value
    }
}

/// An element the reader does not recognise, with where it was.
public struct UnknownElement: Sendable, Equatable {
    /// The element's name.
    public var name: String
    /// Where it was written.
    public var location: CoreDataLocation?
}

extension CoreDataModel {
    /// `<entity>`: a record type.
    public struct Entity: Sendable, Equatable {
        /// Its name.
        public var name: String
        /// `representedClassName`: the `NSManagedObject` subclass.
        public var representedClassName: String?
        /// `parentEntity`.
        public var parentEntity: String?
        /// `isAbstract="YES"`.
        public var isAbstract = false
        /// `elementID`: the renaming identifier.
        public var elementID: String?
        /// `versionHashModifier`.
        public var versionHashModifier: String?
        /// `codeGenerationType`, such as `class`.
        public var codeGenerationType: String?
        /// Its `<attribute>`s.
        public var attributes: [Attribute] = []
        /// Its `<relationship>`s.
        public var relationships: [Relationship] = []
        /// Its `<fetchedProperty>`s.
        public var fetchedProperties: [FetchedProperty] = []
        /// `<uniquenessConstraints>`: each constraint's property names.
        public var uniquenessConstraints: [[String]] = []
        /// `<fetchIndex>`es.
        public var fetchIndexes: [FetchIndex] = []
        /// `<userInfo>` entries.
        public var userInfo: [UserInfoEntry] = []
        /// XML attributes the reader does not map, such as `syncable`.
        public var otherAttributes: [CoreDataXMLAttribute] = []
        /// Where it was written.
        public var location: CoreDataLocation?

        /// Creates an entity.
        public init(name: String) {
            self.name = name
        }
    }

    /// `<attribute>`: a stored (or transient, or derived) value.
    public struct Attribute: Sendable, Equatable {
        /// Its name.
        public var name: String
        /// `attributeType`, as spelt in the file: `Integer 64`, `String`, `Transformable`, …
        public var attributeType: String
        /// `optional="YES"`.
        public var isOptional = false
        /// `transient="YES"`: not stored.
        public var isTransient = false
        /// `derived="YES"`: computed by the store.
        public var isDerived = false
        /// `derivationExpression`.
        public var derivationExpression: String?
        /// `defaultValueString`.
        public var defaultValueString: String?
        /// `defaultDateTimeInterval`: a Date attribute's default, in seconds since 2001-01-01 UTC.
        public var defaultDateTimeInterval: String?
        /// `usesScalarValueType`: `YES`, `NO`, or absent.
        public var usesScalarValueType: Bool?
        /// `indexed="YES"` (deprecated by Core Data in favour of fetch indexes).
        public var isIndexed = false
        /// `valueTransformerName`, for Transformable attributes; `""` when written empty.
        public var valueTransformerName: String?
        /// `customClassName`, for Transformable attributes.
        public var customClassName: String?
        /// `elementID`: the renaming identifier.
        public var elementID: String?
        /// `versionHashModifier`.
        public var versionHashModifier: String?
        /// `<userInfo>` entries.
        public var userInfo: [UserInfoEntry] = []
        /// XML attributes the reader does not map (validation rules, storage hints, …).
        public var otherAttributes: [CoreDataXMLAttribute] = []
        /// Where it was written.
        public var location: CoreDataLocation?

        /// Creates an attribute.
        public init(name: String, attributeType: String) {
            self.name = name
            self.attributeType = attributeType
        }
    }

    /// `deletionRule`.
    public enum DeletionRule: String, Sendable, Equatable {
        /// `Nullify`.
        case nullify = "Nullify"
        /// `Cascade`.
        case cascade = "Cascade"
        /// `Deny`.
        case deny = "Deny"
        /// `No Action`.
        case noAction = "No Action"
    }

    /// `<relationship>`.
    public struct Relationship: Sendable, Equatable {
        /// Its name.
        public var name: String
        /// `destinationEntity`.
        public var destinationEntity: String
        /// `inverseName`.
        public var inverseName: String?
        /// `inverseEntity`.
        public var inverseEntity: String?
        /// `optional="YES"`.
        public var isOptional = false
        /// `toMany="YES"`.
        public var isToMany = false
        /// `ordered="YES"`.
        public var isOrdered = false
        /// `minCount`.
        public var minCount: Int?
        /// `maxCount`.
        public var maxCount: Int?
        /// `deletionRule`, as spelt; `nil` when absent (Core Data's default is Nullify).
        public var deletionRule: String?
        /// `indexed="YES"`.
        public var isIndexed = false
        /// `elementID`: the renaming identifier.
        public var elementID: String?
        /// `versionHashModifier`.
        public var versionHashModifier: String?
        /// `<userInfo>` entries.
        public var userInfo: [UserInfoEntry] = []
        /// XML attributes the reader does not map.
        public var otherAttributes: [CoreDataXMLAttribute] = []
        /// Where it was written.
        public var location: CoreDataLocation?

        /// Creates a relationship.
        public init(name: String, destinationEntity: String) {
            self.name = name
            self.destinationEntity = destinationEntity
        }
    }

    /// `<fetchedProperty>`: a stored fetch request evaluated lazily on an object.
    public struct FetchedProperty: Sendable, Equatable {
        /// Its name.
        public var name: String
        /// The fetch request it runs.
        public var fetchRequest: FetchRequest?
        /// Where it was written.
        public var location: CoreDataLocation?
    }

    /// `<fetchRequest>`: a model-level fetch request template, or a fetched property's request.
    public struct FetchRequest: Sendable, Equatable {
        /// Its name.
        public var name: String
        /// `entity`.
        public var entity: String
        /// `predicateString`, with `$VARIABLES`.
        public var predicateString: String?
        /// Every XML attribute, in the order written (fetch limit, result type, …).
        public var attributes: [CoreDataXMLAttribute]
        /// Where it was written.
        public var location: CoreDataLocation?
    }

    /// `<configuration>`: a named subset of entities, usually one per store.
    public struct Configuration: Sendable, Equatable {
        /// Its name.
        public var name: String
        /// `<memberEntity name=…>` names.
        public var memberEntities: [String]
        /// `usedWithCloudKit`.
        public var attributes: [CoreDataXMLAttribute]
        /// Where it was written.
        public var location: CoreDataLocation?
    }

    /// `<fetchIndex>`: a named, possibly compound, index.
    public struct FetchIndex: Sendable, Equatable {
        /// One `<fetchIndexElement>`.
        public struct Element: Sendable, Equatable {
            /// `property`, or `nil` for an expression element.
            public var property: String?
            /// `expression`, for an expression element.
            public var expression: String?
            /// `type`: `Binary` (a B-tree) or `RTree`.
            public var type: String
            /// `order`: `ascending` or `descending`.
            public var order: String
        }

        /// Its name.
        public var name: String
        /// Its elements, in column order.
        public var elements: [Element]
        /// Where it was written.
        public var location: CoreDataLocation?
    }
}
