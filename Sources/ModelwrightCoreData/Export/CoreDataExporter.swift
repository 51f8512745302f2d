import Foundation
import Modelwright
import ModelwrightSchema

/// Exports every version of a model as a Core Data model bundle: `<Name> <N>.xcdatamodel/contents`
/// per version, and `.xccurrentversion` naming the newest, which is Modelwright's current one.
///
/// ```swift
/// let model = FrontEnd.run(modelAt: "Models/Trips").model!
/// let result = CoreDataExporter.export(model, bundleName: "Trips")
/// try CoreDataExporter.write(result, to: "Trips.xcdatamodeld")
/// ```
///
/// Renames become renaming identifiers (`elementID`), carried forward from version to version as
/// Xcode does when it copies a version, so Core Data's inferred migration matches them. Details
/// kept by `@coreData(…)` and `@userInfo(…)` are written back; doc comments, default sort orders
/// and `now` defaults go into `userInfo` (``ModelwrightUserInfo``), which import reads back; what
/// Core Data cannot hold (enums, composites, custom stages; a default sort or `now` for Core Data
/// itself) is reported.
package enum CoreDataExporter {
    /// One file of the bundle.
    package struct ExportedFile: Sendable, Equatable {
        /// Its path inside the bundle, such as `Trips 2.xcdatamodel/contents`.
        package var path: String
        /// Its bytes.
        package var data: Data
    }

    /// What an export gave.
    package struct ExportedBundle: Sendable {
        /// The files, `.xccurrentversion` last.
        package var files: [ExportedFile]
        /// The Core Data model of each version, oldest first.
        package var models: [CoreDataModel]
        /// Everything that could not be exported.
        package var diagnostics: [Diagnostic]
    }

    /// The name of version `number`'s folder in a bundle called `bundleName`.
    package static func versionName(bundleName: String, number: Int) -> String {
        "\(bundleName) \(number)"
    }

    /// Exports `model` as the files of a bundle called `bundleName`.
    package static func export(_ model: PlannedModel, bundleName: String) -> ExportedBundle {
        var files: [ExportedFile] = []
        var models: [CoreDataModel] = []
        // Per version, so that a warning every version repeats (an enum exported as its raw
        // values, say) is reported once, naming the other versions, as import reports them.
        var perVersion: [[Diagnostic]] = []
        var previous: RenamingIdentifiers?
        for version in model.versions {
            var translator = VersionExport(version: version)
            let coreData = translator.export(previous: previous)
            previous = translator.identifiers
            var found = translator.diagnostics
            models.append(coreData)
            let name = versionName(bundleName: bundleName, number: version.number)
            do {
                let xml = try CoreDataWriter.xml(coreData)
                files.append(ExportedFile(path: "\(name).xcdatamodel/contents", data: Data(xml.utf8)))
            } catch {
                found.append(unwritable(error, in: version.path))
            }
            perVersion.append(found)
        }
        var diagnostics = CoreDataWarningGroups.grouped(
            perVersion, versionNames: model.versions.map { ($0.path as NSString).lastPathComponent })
        if let last = model.versions.last {
            let current: String
            do {
                current = try XMLAttributeText.escaped(
                    versionName(bundleName: bundleName, number: last.number) + ".xcdatamodel")
            } catch {
                diagnostics.append(unwritable(error, in: bundleName))
                return ExportedBundle(files: [], models: models, diagnostics: diagnostics)
            }
            let plist = """
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <plist version="1.0">
                <dict>
                \t<key>_XCCurrentVersionName</key>
                \t<string>\(current)</string>
                </dict>
                </plist>

                """
            files.append(ExportedFile(path: ".xccurrentversion", data: Data(plist.utf8)))
        }
        guard !diagnostics.contains(where: { $0.severity == .error }) else {
            return ExportedBundle(files: [], models: models, diagnostics: diagnostics)
        }
        return ExportedBundle(files: files, models: models, diagnostics: diagnostics)
    }

    /// The error for a value holding a character XML 1.0 cannot carry, at its first occurrence
    /// in the schema file (raw, or as a `\u{…}` escape) when it can be found there.
    private static func unwritable(_ error: XMLAttributeText.Unwritable, in path: String) -> Diagnostic {
        var location: SourcePosition?
        if let data = try? ConfinedFolder.readFile(atPath: path, limit: SourceFile.maximumSize) {
            let file = SourceFile(path: path, bytes: data)
            let hex = String(error.scalar.value, radix: 16)
            let needles = [String(error.scalar), "\\u{\(hex.uppercased())}", "\\u{\(hex)}"].map { Array($0.utf8) }
            for needle in needles {
                if let offset = firstIndex(of: needle, in: file.bytes) {
                    location = file.location(of: offset)
                    break
                }
            }
        }
        return Diagnostic(
            severity: .error,
            message:
                "the value \(SchemaText.stringLiteral(error.value)) holds \(XMLReader.hex(error.scalar.value)), which a Core Data model cannot hold (XML 1.0 has no way to write it); remove it",
            path: path, location: location)
    }

    private static func firstIndex(of needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard !needle.isEmpty, needle.count <= bytes.count else { return nil }
        var start = 0
        while start + needle.count <= bytes.count {
            if bytes[start] == needle[0], Array(bytes[start..<(start + needle.count)]) == needle { return start }
            start += 1
        }
        return nil
    }

    /// Writes `result` into the bundle at `path`, creating it, and rewriting only files whose bytes
    /// change. Returns the paths written and the version folders in the bundle the export did not make.
    /// Version folders are opened without following links, so a bundle whose version folder is a
    /// link elsewhere is refused rather than written through.
    package static func write(_ result: ExportedBundle, to path: String) throws(ConfinedFolder.Failure) -> (
        written: [String], stale: [String]
    ) {
        let bundle = try ConfinedFolder.open(path, for: .writing)
        let written = try bundle.write(result.files.map { ConfinedFolder.OutputFile(path: $0.path, data: $0.data) })
        let made = Set(result.files.map { $0.path.split(separator: "/").first.map(String.init) ?? $0.path })
        let stale = try bundle.names().filter {
            $0.hasSuffix(".xcdatamodel") && !made.contains($0)
        }.sorted()
        return (written, stale)
    }
}

/// Each entity's and property's renaming identifier in one version, by schema name: what the next
/// version's identifiers continue.
struct RenamingIdentifiers {
    var entities: [String: String] = [:]
    var properties: [String: [String: String]] = [:]
}

/// Exports one version: ``EntityGraph`` plus the `@coreData` details of its file → ``CoreDataModel``.
private struct VersionExport {
    let version: LoweredVersion
    var diagnostics: [Diagnostic] = []
    var identifiers = RenamingIdentifiers()
    private let file: SourceFile?
    private var entityDetails: [String: CoreDataAnnotations.Details] = [:]
    private var propertyDetails: [String: [String: CoreDataAnnotations.Details]] = [:]
    /// The enum declarations and the migration block as written, for the model's `userInfo`.
    private var enumsText: [String] = []
    private var migrationText: String?

    init(version: LoweredVersion) {
        self.version = version
        // Read again as the pipeline read it: never through a link.
        let data = try? ConfinedFolder.readFile(atPath: version.path, limit: SourceFile.maximumSize)
        file = data.map { SourceFile(path: version.path, bytes: $0) }
        guard let file else { return }
        var sink = DiagnosticSink(file: file)
        for declaration in Parser.parse(file, diagnostics: &sink).declarations {
            switch declaration {
            case .enumeration(let enumeration):
                let doc = enumeration.doc.map { "/// " + $0 + "\n" }.joined()
                enumsText.append(doc + Self.text(of: enumeration.range, in: file))
            case .migration(let migration):
                migrationText = Self.text(of: migration.range, in: file)
            default: break
            }
            guard case .entity(let entity) = declaration else { continue }
            entityDetails[entity.name.text] = CoreDataAnnotations.details(in: entity.annotations)
            var properties: [String: CoreDataAnnotations.Details] = [:]
            for property in entity.properties {
                properties[property.name.text] = CoreDataAnnotations.details(in: property.annotations)
            }
            propertyDetails[entity.name.text] = properties
        }
    }

    private var graph: EntityGraph { version.graph }

    /// The source text of a declaration, as written.
    private static func text(of range: SourceRange, in file: SourceFile) -> String {
        let bounds = max(0, range.start)..<min(file.bytes.count, max(range.start, range.end))
        return String(decoding: file.bytes[bounds], as: UTF8.self)
    }

    private func coreDataName(ofEntity name: String) -> String {
        entityDetails[name]?["name"].flatMap { $0 } ?? name
    }

    private func coreDataName(ofProperty name: String, in entity: String) -> String {
        propertyDetails[entity]?[name]?["name"].flatMap { $0 } ?? name
    }

    mutating func export(previous: RenamingIdentifiers?) -> CoreDataModel {
        var model = CoreDataModel()
        for entity in graph.entities {
            model.entities.append(export(entity, previous: previous))
        }
        model.entities = XcodeOrder.sorted(model.entities, by: \.name)
        // Named requests are Core Data's fetch request templates, which Xcode keeps in name order.
        let requests = graph.requests.map { request in
            let entity = coreDataName(ofEntity: request.entity)
            var attributes = [CoreDataXMLAttribute("name", request.name), CoreDataXMLAttribute("entity", entity)]
            let predicate = request.predicateText.map { coreDataSpelling(of: $0, on: request.entity) }
            if let predicate { attributes.append(.init("predicateString", predicate)) }
            return CoreDataModel.FetchRequest(
                name: request.name, entity: entity, predicateString: predicate, attributes: attributes, location: nil)
        }
        model.fetchRequests = XcodeOrder.sorted(requests, by: \.name)
        if let migration = graph.migration {
            for stage in migration.customStages {
                warn(
                    "custom stage '\(stage.name)' is kept only in the model's userInfo, for import: Core Data runs custom steps from a mapping model, which Modelwright does not write",
                    at: stage.range)
            }
        }
        model.userInfo = ModelwrightUserInfo.modelEntries(
            enums: enumsText.joined(separator: "\n\n"), migration: migrationText)
        return model
    }

    /// A request's predicate with the key path names Core Data spells differently (`id_` is `id`).
    private func coreDataSpelling(of text: String, on entity: String) -> String {
        guard case .success(let predicate) = PredicateParser.parse(text) else { return text }
        return PredicateKeyPaths.respelled(text, predicate, from: entity) { name, entityName in
            guard let entity = graph.entity(named: entityName) else { return nil }
            if graph.allAttributes(of: entity).contains(where: { $0.name == name }) {
                return (coreDataName(ofProperty: name, in: owner(of: name, from: entity)), nil)
            }
            guard let relationship = graph.allRelationships(of: entity).first(where: { $0.name == name }) else {
                return nil
            }
            return (coreDataName(ofProperty: name, in: owner(of: name, from: entity)), relationship.destination)
        }
    }

    private mutating func export(_ entity: EntityGraph.Entity, previous: RenamingIdentifiers?) -> CoreDataModel.Entity {
        let name = coreDataName(ofEntity: entity.name)
        let details = entityDetails[entity.name] ?? .init()
        var result = CoreDataModel.Entity(name: name)
        switch details["className"] {
        case nil: result.representedClassName = name
        case .some(let className): result.representedClassName = className
        }
        result.parentEntity = entity.parent.map { coreDataName(ofEntity: $0) }
        result.isAbstract = entity.isAbstract
        result.versionHashModifier = details["versionHashModifier"].flatMap { $0 }
        result.codeGenerationType = details["codeGeneration"].flatMap { $0 }
        result.userInfo =
            details.userInfo
            + ModelwrightUserInfo.entries(
                doc: entity.doc,
                sort: entity.defaultSort.map {
                    .init(
                        name: coreDataName(ofProperty: $0.attribute, in: owner(of: $0.attribute, from: entity)),
                        ascending: $0.ascending)
                },
                sync: entity.sync.map { marking in marking.unique.map { "unique: \($0.rawValue)" } ?? "" })
        // Core Data matches versions by renaming identifier: continue the previous version's.
        let previousName = entity.renamedFrom ?? entity.name
        let identifier = previous?.entities[previousName] ?? name
        identifiers.entities[entity.name] = identifier
        result.elementID = identifier == name ? nil : identifier
        let previousProperties = previous?.properties[previousName] ?? [:]
        var propertyIdentifiers: [String: String] = [:]
        func identify(_ property: String, renamedFrom: String?) -> String? {
            let coreData = coreDataName(ofProperty: property, in: entity.name)
            let identifier = previousProperties[renamedFrom ?? property] ?? coreData
            propertyIdentifiers[property] = identifier
            return identifier == coreData ? nil : identifier
        }

        for attribute in entity.attributes {
            guard var exported = export(attribute, of: entity) else { continue }
            exported.elementID = identify(attribute.name, renamedFrom: attribute.renamedFrom)
            result.attributes.append(exported)
        }
        for relationship in entity.relationships {
            var exported = export(relationship, of: entity)
            exported.elementID = identify(relationship.name, renamedFrom: relationship.renamedFrom)
            result.relationships.append(exported)
        }
        identifiers.properties[entity.name] = propertyIdentifiers
        result.attributes = XcodeOrder.sorted(result.attributes, by: \.name)
        result.relationships = XcodeOrder.sorted(result.relationships, by: \.name)
        result.uniquenessConstraints = entity.uniquenessConstraints.map { constraint in
            constraint.map { coreDataName(ofProperty: $0, in: owner(of: $0, from: entity)) }
        }
        var indexNames: Set<String> = []
        for index in entity.indexes {
            let names = index.map { coreDataName(ofProperty: $0, in: owner(of: $0, from: entity)) }
            var indexName = "by" + names.map { NameRules.recased($0, uppercase: true) }.joined() + "Index"
            var counter = 2
            while indexNames.contains(indexName) {
                indexName = "by" + names.map { NameRules.recased($0, uppercase: true) }.joined() + "Index\(counter)"
                counter += 1
            }
            indexNames.insert(indexName)
            result.fetchIndexes.append(
                CoreDataModel.FetchIndex(
                    name: indexName,
                    elements: names.map { .init(property: $0, expression: nil, type: "Binary", order: "ascending") },
                    location: nil
                ))
        }
        if !entity.defaultSort.isEmpty {
            warn(
                "the default sort of '\(entity.name)' is kept only in the entity's userInfo, for import: a Core Data entity has no default sort order; sort its fetch requests",
                at: entity.range)
        }
        return result
    }

    /// The entity (the given one or an ancestor) that declares `property`.
    private func owner(of property: String, from entity: EntityGraph.Entity) -> String {
        for candidate in [entity] + graph.ancestors(of: entity)
        where candidate.attributes.contains(where: { $0.name == property })
            || candidate.relationships.contains(where: { $0.name == property })
        {
            return candidate.name
        }
        return entity.name
    }

    private mutating func export(
        _ attribute: EntityGraph.Attribute, of entity: EntityGraph.Entity
    ) -> CoreDataModel.Attribute? {
        let details = propertyDetails[entity.name]?[attribute.name] ?? .init()
        let qualified = "\(entity.name).\(attribute.name)"
        let type: String
        var scalar: Bool?
        switch attribute.type.kind {
        // A `Data` attribute with a `className` was a Transformable holding archived bytes.
        case .scalar(.data) where details["className"] != nil: type = "Transformable"
        case .scalar(let scalarType):
            (type, scalar) = (scalarType.coreData.name, scalarType.coreData.usesScalarValueType)
        case .codable: type = "Transformable"
        case .enumeration(let enumeration):
            (type, scalar) = enumeration.rawType == .string ? ("String", nil) : ("Integer 64", true)
            warn(
                "enum attribute '\(qualified)' is exported as its raw values (\(type)), its enum kept in userInfo for import: Core Data has no enums",
                at: attribute.range)
        case .composite:
            warn(
                "composite attribute '\(qualified)' is not exported: write it as separate attributes for Core Data",
                at: attribute.range)
            return nil
        }
        var result = CoreDataModel.Attribute(
            name: coreDataName(ofProperty: attribute.name, in: entity.name), attributeType: type)
        result.isOptional = attribute.isOptional
        result.usesScalarValueType = scalar
        if type == "Transformable" {
            switch details["className"] {
            case nil:
                if case .codable(let typeName) = attribute.type { result.customClassName = typeName }
            case .some(let className): result.customClassName = className
            }
            switch details["transformer"] {
            case nil: result.valueTransformerName = CoreDataVersionTranslator.defaultTransformer
            case .some(let transformer): result.valueTransformerName = transformer
            }
        }
        result.versionHashModifier = details["versionHashModifier"].flatMap { $0 }
        let isNow: Bool
        if case .now? = attribute.defaultValue { isNow = true } else { isNow = false }
        var enumName: String?
        if case .enumeration(let enumeration) = attribute.type.kind { enumName = enumeration.name }
        var enumDefault: String?
        if case .enumCase(let name)? = attribute.defaultValue { enumDefault = name }
        result.userInfo =
            details.userInfo
            + ModelwrightUserInfo.entries(
                doc: attribute.doc, isNowDefault: isNow, enumName: enumName, enumDefault: enumDefault)
        switch attribute.defaultValue {
        case nil: break
        case .bool(let value)?: result.defaultValueString = value ? "YES" : "NO"
        case .integer(let value)?: result.defaultValueString = String(value)
        case .floatingPoint(let value)?: result.defaultValueString = "\(value)"
        case .decimal(let text)?, .string(let text)?: result.defaultValueString = text
        case .date(let seconds)?:
            result.defaultDateTimeInterval = CoreDataDateDefault.interval(secondsSince1970: seconds)
        case .enumCase(let name)?:
            if case .enumeration(let enumeration) = attribute.type {
                result.defaultValueString = enumeration.cases.first { $0.name == name }?.rawValue
            }
        case .now?:
            warn(
                "the default 'now' of '\(qualified)' is kept only in the attribute's userInfo, for import: Core Data defaults are fixed values; set it in awakeFromInsert()",
                at: attribute.range)
        }
        return result
    }

    private func export(
        _ relationship: EntityGraph.Relationship, of entity: EntityGraph.Entity
    ) -> CoreDataModel.Relationship {
        let details = propertyDetails[entity.name]?[relationship.name] ?? .init()
        var result = CoreDataModel.Relationship(
            name: coreDataName(ofProperty: relationship.name, in: entity.name),
            destinationEntity: coreDataName(ofEntity: relationship.destination)
        )
        result.isOptional = relationship.isOptional
        result.isToMany = relationship.cardinality == .toMany
        result.isOrdered = relationship.isOrdered
        if relationship.cardinality == .toOne { result.maxCount = 1 }
        result.deletionRule =
            switch relationship.deleteRule {
            case .nullify: CoreDataModel.DeletionRule.nullify.rawValue
            case .cascade: CoreDataModel.DeletionRule.cascade.rawValue
            case .deny: CoreDataModel.DeletionRule.deny.rawValue
            case .noAction: CoreDataModel.DeletionRule.noAction.rawValue
            }
        if let inverse = relationship.inverse, let destination = graph.entity(named: relationship.destination) {
            let owner =
                ([destination] + graph.ancestors(of: destination)).first {
                    $0.relationships.contains { $0.name == inverse }
                }?.name ?? destination.name
            result.inverseName = coreDataName(ofProperty: inverse, in: owner)
            result.inverseEntity = coreDataName(ofEntity: owner)
        }
        result.versionHashModifier = details["versionHashModifier"].flatMap { $0 }
        result.userInfo = details.userInfo
        return result
    }

    private mutating func warn(_ message: String, at range: SourceRange) {
        diagnostics.append(
            Diagnostic(
                severity: .warning, message: message, path: version.path,
                location: file?.location(of: range.start)))
    }
}
