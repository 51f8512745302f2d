import ModelwrightSchema

/// One version of a Core Data model, as its `contents` XML says it: the boundary type between
/// ``CoreDataReader`` (XML → value) and ``CoreDataImporter`` (value → schema text), and between
/// ``CoreDataExporter`` (model → value) and ``CoreDataWriter`` (value → XML).
///
/// Names are Core Data's, unchanged. Every element keeps where it was read, so the importer can
/// point at anything it cannot carry over; values built by the exporter have no location.
package struct CoreDataModel: Sendable, Equatable {
    /// The `contents` file it was read from, for diagnostics; empty for an exported model.
    package var path: String
    /// The `<model>` element's attributes, such as `lastSavedToolsVersion`, in the order read.
    package var rootAttributes: [CoreDataXMLAttribute]
    /// Every `<entity>`, in the order written.
    package var entities: [Entity]
    /// Model-level `<fetchRequest>` templates.
    package var fetchRequests: [FetchRequest]
    /// `<configuration>` elements: named groups of entities.
    package var configurations: [Configuration]
    /// The model's own `<userInfo>` entries.
    package var userInfo: [UserInfoEntry]
    /// Elements the reader does not know, which the importer reports.
    package var unknownElements: [UnknownElement]
    /// Where `<model>` was written.
    package var location: CoreDataLocation?

    /// Creates a model.
    package init(
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
    package func entity(named name: String) -> Entity? {
        entities.first { $0.name == name }
    }
}

/// A place in a `contents` file: line and column from 1, the column pointing at the element's `<`.
package struct CoreDataLocation: Sendable, Hashable, CustomStringConvertible {
    /// The line, from 1.
    package var line: Int
    /// The column, from 1, in UTF-8 bytes.
    package var column: Int

    /// The location of a byte offset in `file`: one line table serves schema and XML files.
    init(of offset: Int, in file: SourceFile) {
        let position = file.location(of: max(offset, 0))
        self.init(line: position.line, column: position.column)
    }

    /// Creates a location.
    package init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    package var description: String { "\(line):\(column)" }
}

/// One `name="value"` pair of an XML element, kept in the order written.
package struct CoreDataXMLAttribute: Sendable, Equatable {
    /// The XML attribute's name.
    package var name: String
    /// Its value, with entities decoded.
    package var value: String

    /// Creates a pair.
    package init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// An element the reader does not recognise, with where it was.
package struct UnknownElement: Sendable, Equatable {
    /// The element's name.
    package var name: String
    /// Where it was written.
    package var location: CoreDataLocation?
}

extension CoreDataModel {
    /// `<entity>`: a record type.
    package struct Entity: Sendable, Equatable {
        /// Its name.
        package var name: String
        /// `representedClassName`: the `NSManagedObject` subclass.
        package var representedClassName: String?
        /// `parentEntity`.
        package var parentEntity: String?
        /// `isAbstract="YES"`.
        package var isAbstract = false
        /// `elementID`: the renaming identifier.
        package var elementID: String?
        /// `versionHashModifier`.
        package var versionHashModifier: String?
        /// `codeGenerationType`, such as `class`.
        package var codeGenerationType: String?
        /// Its `<attribute>`s.
        package var attributes: [Attribute] = []
        /// Its `<relationship>`s.
        package var relationships: [Relationship] = []
        /// Its `<fetchedProperty>`s.
        package var fetchedProperties: [FetchedProperty] = []
        /// `<uniquenessConstraints>`: each constraint's property names.
        package var uniquenessConstraints: [[String]] = []
        /// `<fetchIndex>`es.
        package var fetchIndexes: [FetchIndex] = []
        /// `<userInfo>` entries.
        package var userInfo: [UserInfoEntry] = []
        /// XML attributes the reader does not map, such as `syncable`.
        package var otherAttributes: [CoreDataXMLAttribute] = []
        /// Where it was written.
        package var location: CoreDataLocation?

        /// Creates an entity.
        package init(name: String) {
            self.name = name
        }
    }

    /// `<attribute>`: a stored (or transient, or derived) value.
    package struct Attribute: Sendable, Equatable {
        /// Its name.
        package var name: String
        /// `attributeType`, as spelt in the file: `Integer 64`, `String`, `Transformable`, …
        package var attributeType: String
        /// `optional="YES"`.
        package var isOptional = false
        /// `transient="YES"`: not stored.
        package var isTransient = false
        /// `derived="YES"`: computed by the store.
        package var isDerived = false
        /// `derivationExpression`.
        package var derivationExpression: String?
        /// `defaultValueString`.
        package var defaultValueString: String?
        /// `defaultDateTimeInterval`: a Date attribute's default, in seconds since 2001-01-01 UTC.
        package var defaultDateTimeInterval: String?
        /// `usesScalarValueType`: `YES`, `NO`, or absent.
        package var usesScalarValueType: Bool?
        /// `indexed="YES"` (deprecated by Core Data in favour of fetch indexes).
        package var isIndexed = false
        /// `valueTransformerName`, for Transformable attributes; `""` when written empty.
        package var valueTransformerName: String?
        /// `customClassName`, for Transformable attributes.
        package var customClassName: String?
        /// `elementID`: the renaming identifier.
        package var elementID: String?
        /// `versionHashModifier`.
        package var versionHashModifier: String?
        /// `<userInfo>` entries.
        package var userInfo: [UserInfoEntry] = []
        /// XML attributes the reader does not map (validation rules, storage hints, …).
        package var otherAttributes: [CoreDataXMLAttribute] = []
        /// Where it was written.
        package var location: CoreDataLocation?

        /// Creates an attribute.
        package init(name: String, attributeType: String) {
            self.name = name
            self.attributeType = attributeType
        }
    }

    /// `deletionRule`.
    package enum DeletionRule: String, Sendable, Equatable {
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
    package struct Relationship: Sendable, Equatable {
        /// Its name.
        package var name: String
        /// `destinationEntity`.
        package var destinationEntity: String
        /// `inverseName`.
        package var inverseName: String?
        /// `inverseEntity`.
        package var inverseEntity: String?
        /// `optional="YES"`.
        package var isOptional = false
        /// `toMany="YES"`.
        package var isToMany = false
        /// `ordered="YES"`.
        package var isOrdered = false
        /// `minCount`.
        package var minCount: Int?
        /// `maxCount`.
        package var maxCount: Int?
        /// `deletionRule`, as spelt; `nil` when absent (Core Data's default is Nullify).
        package var deletionRule: String?
        /// `indexed="YES"`.
        package var isIndexed = false
        /// `elementID`: the renaming identifier.
        package var elementID: String?
        /// `versionHashModifier`.
        package var versionHashModifier: String?
        /// `<userInfo>` entries.
        package var userInfo: [UserInfoEntry] = []
        /// XML attributes the reader does not map.
        package var otherAttributes: [CoreDataXMLAttribute] = []
        /// Where it was written.
        package var location: CoreDataLocation?

        /// Creates a relationship.
        package init(name: String, destinationEntity: String) {
            self.name = name
            self.destinationEntity = destinationEntity
        }
    }

    /// `<fetchedProperty>`: a stored fetch request evaluated lazily on an object.
    package struct FetchedProperty: Sendable, Equatable {
        /// Its name.
        package var name: String
        /// The fetch request it runs.
        package var fetchRequest: FetchRequest?
        /// Where it was written.
        package var location: CoreDataLocation?
    }

    /// `<fetchRequest>`: a model-level fetch request template, or a fetched property's request.
    package struct FetchRequest: Sendable, Equatable {
        /// Its name.
        package var name: String
        /// `entity`.
        package var entity: String
        /// `predicateString`, with `$VARIABLES`.
        package var predicateString: String?
        /// Every XML attribute, in the order written (fetch limit, result type, …).
        package var attributes: [CoreDataXMLAttribute]
        /// Where it was written.
        package var location: CoreDataLocation?
    }

    /// `<configuration>`: a named subset of entities, usually one per store.
    package struct Configuration: Sendable, Equatable {
        /// Its name.
        package var name: String
        /// `<memberEntity name=…>` names.
        package var memberEntities: [String]
        /// `usedWithCloudKit`.
        package var attributes: [CoreDataXMLAttribute]
        /// Where it was written.
        package var location: CoreDataLocation?
    }

    /// `<fetchIndex>`: a named, possibly compound, index.
    package struct FetchIndex: Sendable, Equatable {
        /// One `<fetchIndexElement>`.
        package struct Element: Sendable, Equatable {
            /// `property`, or `nil` for an expression element.
            package var property: String?
            /// `expression`, for an expression element.
            package var expression: String?
            /// `type`: `Binary` (a B-tree) or `RTree`.
            package var type: String
            /// `order`: `ascending` or `descending`.
            package var order: String
        }

        /// Its name.
        package var name: String
        /// Its elements, in column order.
        package var elements: [Element]
        /// Where it was written.
        package var location: CoreDataLocation?
    }
}
