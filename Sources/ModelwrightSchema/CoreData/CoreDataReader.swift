import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Reads a Core Data model's `contents` XML into a ``CoreDataModel``, keeping the line and column
/// of every element so the importer can point at what it cannot carry over.
///
/// Uses Foundation's `XMLParser` (libxml2 on Linux). `<elements>` (the diagram's layout) is read
/// past: it means nothing to the model.
public enum CoreDataReader {
    /// Why a `contents` file could not be read.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The file.
        public var path: String
        /// What is wrong.
        public var message: String
        /// Where, when the parser knows.
        public var location: CoreDataLocation?

        public var description: String {
            "\(path)\(location.map { ":\($0)" } ?? ""): error: \(message)"
        }
    }

    /// Reads the `contents` file at `path`.
    public static func read(path: String) throws(Failure) -> CoreDataModel {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Failure(path: path, message: "cannot read the file", location: nil)
        }
        return try read(data, path: path)
    }

    /// Reads `contents` XML held in memory; `path` is used in diagnostics.
    public static func read(_ data: Data, path: String) throws(Failure) -> CoreDataModel {
        let delegate = Delegate(path: path, bytes: [UInt8](data))
        let parser = XMLParser(data: data)
        parser.delegate = delegate
        parser.shouldProcessNamespaces = false
        parser.shouldResolveExternalEntities = false
        let parsed = parser.parse()
        if let failure = delegate.failure { throw failure }
        guard parsed else {
            let message = parser.parserError.map { "not a well-formed XML file (\($0.localizedDescription))" }
            throw Failure(
                path: path,
                message: message ?? "not a well-formed XML file",
                location: CoreDataLocation(line: max(parser.lineNumber, 1), column: max(parser.columnNumber, 1))
            )
        }
        guard let model = delegate.model else {
            throw Failure(
                path: path, message: "not a Core Data model: the file has no <model> element", location: nil)
        }
        return model
    }

    /// The SAX callbacks: builds the model element by element, on the calling thread only.
    private final class Delegate: NSObject, XMLParserDelegate {
        let path: String
        /// Byte offsets of line starts, to turn XMLParser's position (after the tag) into the tag's `<`.
        private let lineStarts: [Int]
        private let bytes: [UInt8]
        var model: CoreDataModel?
        var failure: Failure?
        /// The open elements' names, outermost first.
        private var stack: [String] = []
        private var entity: CoreDataModel.Entity?
        private var attribute: CoreDataModel.Attribute?
        private var relationship: CoreDataModel.Relationship?
        private var fetchedProperty: CoreDataModel.FetchedProperty?
        private var configuration: CoreDataModel.Configuration?
        private var fetchIndex: CoreDataModel.FetchIndex?
        private var constraint: [String]?
        private var userInfo: [UserInfoEntry]?

        init(path: String, bytes: [UInt8]) {
            self.path = path
            self.bytes = bytes
            var starts = [0]
            for (offset, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") {
                starts.append(offset + 1)
            }
            lineStarts = starts
        }

        /// The start of the tag that ends at the parser's current position.
        private func location(_ parser: XMLParser) -> CoreDataLocation {
            let line = max(parser.lineNumber, 1)
            guard line <= lineStarts.count else { return CoreDataLocation(line: line, column: 1) }
            let start = lineStarts[line - 1]
            let end = line < lineStarts.count ? lineStarts[line] : bytes.count
            var offset = min(start + max(parser.columnNumber - 1, 0), end)
            if offset > start, offset <= bytes.count {
                offset -= 1
                while offset > start, bytes[offset] != UInt8(ascii: "<") { offset -= 1 }
            }
            return CoreDataLocation(line: line, column: offset - start + 1)
        }

        func parser(
            _ parser: XMLParser,
            didStartElement elementName: String,
            namespaceURI: String?,
            qualifiedName: String?,
            attributes attributeDict: [String: String] = [:]
        ) {
            defer { stack.append(elementName) }
            if stack.contains("elements") { return }
            let here = location(parser)
            // XMLParser hands attributes over as a dictionary; sort them so output is deterministic.
            let pairs = attributeDict.sorted { $0.key < $1.key }.map { CoreDataXMLAttribute($0.key, $0.value) }
            switch (stack.last, elementName) {
            case (nil, "model"):
                model = CoreDataModel(path: path, rootAttributes: pairs, location: here)
            case (nil, _):
                failure = Failure(
                    path: path, message: "not a Core Data model: the root element is <\(elementName)>", location: here)
                parser.abortParsing()
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

        func parser(
            _ parser: XMLParser,
            didEndElement elementName: String,
            namespaceURI: String?,
            qualifiedName: String?
        ) {
            stack.removeLast()
            if stack.contains("elements") { return }
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

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
            guard failure == nil else { return }
            failure = Failure(
                path: path,
                message: "not a well-formed XML file (\(parseError.localizedDescription))",
                location: CoreDataLocation(line: max(parser.lineNumber, 1), column: max(parser.columnNumber, 1))
            )
        }
    }
}
