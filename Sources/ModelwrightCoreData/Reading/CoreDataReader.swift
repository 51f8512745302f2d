import Foundation
import ModelwrightSchema

/// Reads a Core Data model's `contents` XML into a ``CoreDataModel``, keeping the line and column
/// of every element so the importer can point at what it cannot carry over.
///
/// The XML is read by ``XMLReader``, which checks the bytes (size, UTF-8, the declaration, the
/// depth, no document type) before reading any element, and reports every problem as a located
/// error. `<elements>` (the diagram's layout) is read past: it means nothing to the model.
package enum CoreDataReader {
    /// Why a `contents` file could not be read.
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The file.
        package var path: String
        /// What is wrong.
        package var message: String
        /// Where, when the problem is at a place in the file rather than with the whole file.
        package var location: CoreDataLocation?

        package var description: String {
            "\(DiagnosticText.escapedPath(path))\(location.map { ":\($0)" } ?? ""): error: \(message)"
        }
    }

    /// Reads the `contents` file at `path`, refusing a file that is not a regular file or is larger
    /// than ``BoundedFile/maximumSize``.
    package static func read(path: String) throws(Failure) -> CoreDataModel {
        // The file itself is never read through a link.
        try read(path: path) { () throws(BoundedFile.Failure) in
            try ConfinedFolder.readFile(atPath: path, limit: BoundedFile.maximumSize)
        }
    }

    /// Reads the `contents` of a bundle's `version`, reached from the folder the user named one
    /// component at a time without following a link (the version folder included), so nothing
    /// outside the bundle is read however its folders are swapped while it runs.
    package static func read(_ version: CoreDataBundle.Version) throws(Failure) -> CoreDataModel {
        try read(path: version.contentsPath) { () throws(BoundedFile.Failure) in
            try version.readContents(limit: BoundedFile.maximumSize)
        }
    }

    private static func read(
        path: String, _ readBytes: () throws(BoundedFile.Failure) -> [UInt8]
    ) throws(Failure) -> CoreDataModel {
        let bytes: [UInt8]
        do {
            bytes = try readBytes()
        } catch {
            switch error {
            case .cannotOpen, .cannotRead:
                throw Failure(path: path, message: "cannot read the file", location: nil)
            case .symbolicLink:
                throw Failure(
                    path: path,
                    message:
                        "is a symbolic link; a Core Data bundle holds its own files, so Modelwright does not follow links in it: replace the link with the file",
                    location: nil)
            case .hardLink:
                throw Failure(
                    path: path,
                    message:
                        "has more than one name (a hard link), so it may be a file from elsewhere; Modelwright reads only a bundle's own files: replace it with a copy",
                    location: nil)
            case .notARegularFile:
                throw Failure(
                    path: path,
                    message:
                        "not a regular file (a folder, a FIFO or a device); a Core Data version's 'contents' is an XML file",
                    location: nil)
            case .tooLarge(let size):
                throw Failure(
                    path: path,
                    message:
                        "the file is \(size) bytes, over the limit of \(BoundedFile.maximumSize) bytes (32 MiB) for a Core Data model",
                    location: CoreDataLocation(line: 1, column: 1))
            }
        }
        return try read(bytes: bytes, path: path)
    }

    /// Reads `contents` XML held in memory; `path` is used in diagnostics.
    package static func read(_ data: Data, path: String) throws(Failure) -> CoreDataModel {
        try read(bytes: [UInt8](data), path: path)
    }

    /// Reads `contents` XML bytes; `path` is used in diagnostics.
    static func read(bytes: [UInt8], path: String) throws(Failure) -> CoreDataModel {
        let lines = SourceFile(path: path, bytes: bytes)
        var builder = Builder(path: path)
        func located(_ error: XMLReader.SyntaxError) -> Failure {
            Failure(path: path, message: error.message, location: CoreDataLocation(of: error.offset, in: lines))
        }
        var reader: XMLReader
        do {
            reader = try XMLReader(bytes: bytes)
        } catch {
            throw located(error)
        }
        while true {
            let event: XMLReader.Event?
            do {
                event = try reader.next()
            } catch {
                throw located(error)
            }
            switch event {
            case nil:
                break
            case .start(let name, let attributes, let offset)?:
                try builder.start(name, attributes: attributes, at: CoreDataLocation(of: offset, in: lines))
                continue
            case .end(let name)?:
                builder.end(name)
                continue
            case .text?:
                continue
            }
            break
        }
        guard let model = builder.model else {
            throw Failure(
                path: path, message: "not a Core Data model: the file has no <model> element",
                location: CoreDataLocation(line: 1, column: 1))
        }
        return model
    }

    /// Builds the model element by element from the reader's events.
    private struct Builder {
        let path: String
        var model: CoreDataModel?
        /// The open elements' names, outermost first.
        private var stack: [String] = []
        /// How many of the open elements are `<elements>`, whose content is skipped.
        private var openLayoutBlocks = 0
        private var entity: CoreDataModel.Entity?
        private var attribute: CoreDataModel.Attribute?
        private var relationship: CoreDataModel.Relationship?
        private var fetchedProperty: CoreDataModel.FetchedProperty?
        private var configuration: CoreDataModel.Configuration?
        private var fetchIndex: CoreDataModel.FetchIndex?
        private var constraint: [String]?
        private var userInfo: [UserInfoEntry]?

        init(path: String) {
            self.path = path
        }

        mutating func start(
            _ elementName: String, attributes: [CoreDataXMLAttribute], at here: CoreDataLocation
        ) throws(Failure) {
            defer {
                stack.append(elementName)
                if elementName == "elements" { openLayoutBlocks += 1 }
            }
            if openLayoutBlocks > 0 { return }
            // Sorted by name, as the importer has always listed them, so output is deterministic.
            let pairs = attributes.sorted { $0.name < $1.name }
            let attributeDict = Attributes(pairs)
            switch (stack.last, elementName) {
            case (nil, "model"):
                model = CoreDataModel(path: path, rootAttributes: pairs, location: here)
            case (nil, _):
                throw Failure(
                    path: path, message: "not a Core Data model: the root element is <\(elementName)>", location: here)
            case ("model", "entity"):
                var new = CoreDataModel.Entity(name: attributeDict["name"] ?? "")
                new.location = here
                for pair in pairs {
                    switch pair.name {
                    case "name": break
                    case "representedClassName": new.representedClassName = pair.value
                    case "parentEntity": new.parentEntity = pair.value
                    case "isAbstract": new.isAbstract = pair.value == "YES"
                    case "elementID": new.elementID = pair.value
                    case "versionHashModifier": new.versionHashModifier = pair.value
                    case "codeGenerationType": new.codeGenerationType = pair.value
                    default: new.otherAttributes.append(pair)
                    }
                }
                entity = new
            case ("entity", "attribute"):
                var new = CoreDataModel.Attribute(
                    name: attributeDict["name"] ?? "", attributeType: attributeDict["attributeType"] ?? "Undefined")
                new.location = here
                for pair in pairs {
                    switch pair.name {
                    case "name", "attributeType": break
                    case "optional": new.isOptional = pair.value == "YES"
                    case "transient": new.isTransient = pair.value == "YES"
                    case "derived": new.isDerived = pair.value == "YES"
                    case "derivationExpression": new.derivationExpression = pair.value
                    case "defaultValueString": new.defaultValueString = pair.value
                    case "defaultDateTimeInterval": new.defaultDateTimeInterval = pair.value
                    case "usesScalarValueType": new.usesScalarValueType = pair.value == "YES"
                    case "indexed": new.isIndexed = pair.value == "YES"
                    case "valueTransformerName": new.valueTransformerName = pair.value
                    case "customClassName": new.customClassName = pair.value
                    case "elementID": new.elementID = pair.value
                    case "versionHashModifier": new.versionHashModifier = pair.value
                    default: new.otherAttributes.append(pair)
                    }
                }
                attribute = new
            case ("entity", "relationship"):
                var new = CoreDataModel.Relationship(
                    name: attributeDict["name"] ?? "", destinationEntity: attributeDict["destinationEntity"] ?? "")
                new.location = here
                for pair in pairs {
                    switch pair.name {
                    case "name", "destinationEntity": break
                    case "inverseName": new.inverseName = pair.value
                    case "inverseEntity": new.inverseEntity = pair.value
                    case "optional": new.isOptional = pair.value == "YES"
                    case "toMany": new.isToMany = pair.value == "YES"
                    case "ordered": new.isOrdered = pair.value == "YES"
                    case "minCount": new.minCount = Int(pair.value)
                    case "maxCount": new.maxCount = Int(pair.value)
                    case "deletionRule": new.deletionRule = pair.value
                    case "indexed": new.isIndexed = pair.value == "YES"
                    case "elementID": new.elementID = pair.value
                    case "versionHashModifier": new.versionHashModifier = pair.value
                    default: new.otherAttributes.append(pair)
                    }
                }
                relationship = new
            case ("entity", "fetchedProperty"):
                fetchedProperty = CoreDataModel.FetchedProperty(
                    name: attributeDict["name"] ?? "", fetchRequest: nil, location: here)
            case ("fetchedProperty", "fetchRequest"), ("model", "fetchRequest"):
                let request = CoreDataModel.FetchRequest(
                    name: attributeDict["name"] ?? "",
                    entity: attributeDict["entity"] ?? "",
                    predicateString: attributeDict["predicateString"],
                    attributes: pairs,
                    location: here
                )
                if stack.last == "model" {
                    model?.fetchRequests.append(request)
                } else {
                    fetchedProperty?.fetchRequest = request
                }
            case ("entity", "uniquenessConstraints"), ("model", "elements"):
                break
            case ("uniquenessConstraints", "uniquenessConstraint"):
                constraint = []
            case ("uniquenessConstraint", "constraint"):
                constraint?.append(attributeDict["value"] ?? "")
            case ("entity", "fetchIndex"):
                fetchIndex = CoreDataModel.FetchIndex(name: attributeDict["name"] ?? "", elements: [], location: here)
            case ("fetchIndex", "fetchIndexElement"):
                fetchIndex?.elements.append(
                    CoreDataModel.FetchIndex.Element(
                        property: attributeDict["property"],
                        expression: attributeDict["expression"],
                        type: attributeDict["type"] ?? "Binary",
                        order: attributeDict["order"] ?? "ascending"
                    )
                )
            case ("model", "configuration"):
                configuration = CoreDataModel.Configuration(
                    name: attributeDict["name"] ?? "",
                    memberEntities: [],
                    attributes: pairs.filter { $0.name != "name" },
                    location: here
                )
            case ("configuration", "memberEntity"):
                configuration?.memberEntities.append(attributeDict["name"] ?? "")
            case (_, "userInfo"):
                userInfo = []
            case ("userInfo", "entry"):
                userInfo?.append(UserInfoEntry(key: attributeDict["key"] ?? "", value: attributeDict["value"] ?? ""))
            default:
                model?.unknownElements.append(UnknownElement(name: elementName, location: here))
            }
        }

        mutating func end(_ elementName: String) {
            stack.removeLast()
            if elementName == "elements" { openLayoutBlocks -= 1 }
            if openLayoutBlocks > 0 { return }
            switch elementName {
            case "entity":
                if let entity, stack.last == "model" { model?.entities.append(entity) }
                entity = nil
            case "attribute":
                if let attribute { entity?.attributes.append(attribute) }
                attribute = nil
            case "relationship":
                if let relationship { entity?.relationships.append(relationship) }
                relationship = nil
            case "fetchedProperty":
                if let fetchedProperty { entity?.fetchedProperties.append(fetchedProperty) }
                fetchedProperty = nil
            case "uniquenessConstraint":
                if let constraint { entity?.uniquenessConstraints.append(constraint) }
                constraint = nil
            case "fetchIndex":
                if let fetchIndex { entity?.fetchIndexes.append(fetchIndex) }
                fetchIndex = nil
            case "configuration":
                if let configuration { model?.configurations.append(configuration) }
                configuration = nil
            case "userInfo":
                let entries = userInfo ?? []
                userInfo = nil
                switch stack.last {
                case "attribute": attribute?.userInfo += entries
                case "relationship": relationship?.userInfo += entries
                case "entity": entity?.userInfo += entries
                case "model": model?.userInfo += entries
                default: break
                }
            default:
                break
            }
        }
    }

    /// An element's attributes looked up by name.
    private struct Attributes {
        let pairs: [CoreDataXMLAttribute]

        init(_ pairs: [CoreDataXMLAttribute]) {
            self.pairs = pairs
        }

        subscript(_ name: String) -> String? {
            pairs.first { $0.name == name }?.value
        }
    }
}
