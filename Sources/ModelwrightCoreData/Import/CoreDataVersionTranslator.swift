import Foundation
import Modelwright
import ModelwrightSchema

/// Translates one ``CoreDataModel`` version into the text of a schema file, reporting everything
/// the schema language cannot say as a warning at the element's line and column.
///
/// One translator, a file per concern (as swift-openapi-generator splits its translator): this file
/// holds the state, the file's outline, the names decided for every entity and property, and the
/// text helpers; `+Entities` writes an entity and its relationships (and renames),
/// `+Attributes` an attribute's type, default and constraints, `+Requests` the fetch request
/// templates. What a built-in type is and which literals it takes come from the runtime's table
/// (``ScalarType``), never from a list of type names here.
struct CoreDataVersionTranslator {
    /// The Transformable value transformer the exporter writes when `@coreData` names none.
    static let defaultTransformer = "NSSecureUnarchiveFromData"
    /// The built-in types by the Core Data attribute type they import from (the runtime's table,
    /// ``ScalarType/CoreDataType``).
    static let importedTypes: [String: ScalarType] = Dictionary(
        ScalarType.all.filter(\.coreData.imports).map { ($0.coreData.name, $0) },
        uniquingKeysWith: { first, _ in first })

    /// The version, its entities and properties sorted into Xcode's order.
    let model: CoreDataModel
    /// What the previous version kept, which renaming identifiers are checked against.
    let previous: ImportedShape?
    private var diagnostics: [Diagnostic] = []
    /// What this version keeps, for the next one.
    var shape = ImportedShape()
    /// Importable entities by Core Data name, with their schema names.
    var entityNames: [String: String] = [:]
    /// Importable entities by Core Data name.
    var entities: [String: CoreDataModel.Entity] = [:]
    /// Relationships that will be imported, by Core Data entity name.
    var relationships: [String: [CoreDataModel.Relationship]] = [:]
    /// Each entity's property names (Core Data → schema).
    var propertyNames: [String: [String: String]] = [:]
    /// Each entity's attributes that will be imported, by Core Data name, with their schema type.
    var attributeTypes: [String: [String: String]] = [:]
    /// Each entity's parent, by Core Data name, with cycles cut.
    var parents: [String: String] = [:]
    /// Each entity's Transformable attributes, by Core Data name, with the doc comment of those
    /// imported as archived `Data` (`nil` for those imported as `Codable<T>`).
    var transformables: [String: [String: String?]] = [:]

    /// The enums an export kept in the model's `userInfo`, by name: raw type (`String` or `Int`)
    /// and case names.
    var enums: [String: (rawType: String, cases: Set<String>)] = [:]
    /// What Modelwright's entries in the model's `userInfo` held.
    private var modelInfo = ModelwrightUserInfo.Read()

    /// Indexes the relationships rendered so far asked for (a to-one relationship Core Data indexes),
    /// written with the entity's other indexes.
    var pendingIndexes: [[String]] = []

    /// The schema text of `model` as version `number` of `modelName`, the shape kept and the warnings.
    static func translate(
        _ model: CoreDataModel,
        modelName: String,
        number: Int,
        header: String,
        previous: ImportedShape?
    ) -> (text: String, shape: ImportedShape, diagnostics: [Diagnostic]) {
        var translator = CoreDataVersionTranslator(model: model, previous: previous)
        let text = translator.render(modelName: modelName, number: number, header: header)
        // In file order, as a compiler reports them; the sort is stable for several at one place.
        let diagnostics = translator.diagnostics.enumerated().sorted { lhs, rhs in
            let left = lhs.element.location ?? SourcePosition(line: 0, column: 0)
            let right = rhs.element.location ?? SourcePosition(line: 0, column: 0)
            return left == right ? lhs.offset < rhs.offset : left < right
        }.map(\.element)
        return (text, translator.shape, diagnostics)
    }

    private init(model: CoreDataModel, previous: ImportedShape?) {
        // Sorted once, into Xcode's order, so every later pass reads in the order it writes.
        var sorted = model
        var dropped: [(message: String, location: CoreDataLocation?)] = []
        sorted.entities = XcodeOrder.sorted(model.entities, by: \.name).map { entity in
            var entity = entity
            // Every later pass looks properties up by name, as Swift compares strings: two names
            // that are canonically equal (NFC and NFD) are one, so the second is left out here,
            // said so, rather than merged with the first and given its type.
            var seen: [String: String] = [:]
            func isFirst(_ name: String, location: CoreDataLocation?) -> Bool {
                guard let first = seen[name] else {
                    seen[name] = name
                    return true
                }
                let how =
                    first.unicodeScalars.elementsEqual(name.unicodeScalars)
                    ? "is declared twice"
                    : "is canonically equal to '\(first)' (the same text in another Unicode normalization), and names compare as Swift compares strings"
                dropped.append(
                    ("property '\(entity.name).\(name)' \(how); the second one is not imported", location))
                return false
            }
            entity.attributes = XcodeOrder.sorted(entity.attributes, by: \.name).filter {
                isFirst($0.name, location: $0.location)
            }
            entity.relationships = XcodeOrder.sorted(entity.relationships, by: \.name).filter {
                isFirst($0.name, location: $0.location)
            }
            return entity
        }
        self.model = sorted
        self.previous = previous
        for (message, location) in dropped { warn(message, at: location) }
    }

    // MARK: - The file

    mutating func render(modelName: String, number: Int, header: String) -> String {
        modelInfo = ModelwrightUserInfo.read(model.userInfo)
        reportModelLevel()
        let enumsText = keptEnums(number: number)
        collectEntities()
        var lines = ["/// \(SchemaText.commentText(header))", "model \(modelName) version \(number)"]
        if let enumsText {
            lines.append("")
            lines.append(enumsText)
        }
        for entity in model.entities
        where entityNames[entity.name] != nil {
            lines.append("")
            lines += render(entity)
        }
        var requests: [(line: Int, template: CoreDataModel.FetchRequest)] = []
        for template in model.fetchRequests {
            guard let line = render(template) else { continue }
            lines.append("")
            requests.append((lines.count, template))
            lines.append(line)
        }
        dropUnresolvedRequests(requests, from: &lines)
        if let migration = keptMigration(number: number) {
            lines.append("")
            lines.append(migration)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The declarations of a schema text an export kept in the model's `userInfo`, when it parses
    /// without errors as a part of version `number`; `nil` with a warning otherwise.
    private mutating func keptDeclarations(_ text: String, key: String, number: Int) -> [AST.Declaration]? {
        let file = SourceFile(path: key, text: "model M version \(number)\n" + text)
        var sink = DiagnosticSink(file: file)
        let root = Parser.parse(file, diagnostics: &sink)
        guard !sink.hasErrors else {
            warn("the model's userInfo entry '\(key)' is not imported: it is not valid schema text", at: model.location)
            return nil
        }
        return root.declarations
    }

    /// The enum declarations an export kept, recorded in ``enums``; `nil` when there are none.
    private mutating func keptEnums(number: Int) -> String? {
        guard let text = modelInfo.enums,
            let declarations = keptDeclarations(text, key: ModelwrightUserInfo.enums, number: number)
        else { return nil }
        var found: [String: (rawType: String, cases: Set<String>)] = [:]
        for declaration in declarations {
            guard case .enumeration(let enumeration) = declaration else {
                warn(
                    "the model's userInfo entry '\(ModelwrightUserInfo.enums)' is not imported: it holds more than enum declarations",
                    at: model.location)
                return nil
            }
            found[enumeration.name.text] = (
                enumeration.rawType?.text ?? "", Set(enumeration.cases.map(\.name.text))
            )
        }
        enums = found
        return found.isEmpty ? nil : text
    }

    /// The migration block an export kept, when it is one block from the previous version.
    private mutating func keptMigration(number: Int) -> String? {
        guard let text = modelInfo.migration,
            let declarations = keptDeclarations(text, key: ModelwrightUserInfo.migration, number: number)
        else { return nil }
        guard declarations.count == 1, case .migration(let migration) = declarations[0],
            migration.fromVersion == number - 1
        else {
            warn(
                "the model's userInfo entry '\(ModelwrightUserInfo.migration)' is not imported: it is not one migration block from version \(number - 1)",
                at: model.location)
            return nil
        }
        return text
    }

    /// Warns of what the model has above its entities that is not imported.
    private mutating func reportModelLevel() {
        for pair in model.rootAttributes where pair.name == "usedWithCloudKit" && pair.value == "YES" {
            warn(
                "'usedWithCloudKit' is not imported: Modelwright stores data in SQLite and does not sync with CloudKit",
                at: model.location)
        }
        for configuration in model.configurations {
            warn(
                "configuration '\(configuration.name)' is not imported: a Modelwright store holds every entity of its schema",
                at: configuration.location)
        }
        if !modelInfo.kept.isEmpty {
            warn(
                "the model's userInfo (\(modelInfo.kept.map(\.key).joined(separator: ", "))) is not imported: only entities and properties keep userInfo",
                at: model.location)
        }
        for element in model.unknownElements {
            warn("element <\(element.name)> is not imported: Modelwright does not know it", at: element.location)
        }
    }

    /// Decides the schema names of every entity and property, and what will be imported.
    private mutating func collectEntities() {
        var usedTypeNames: Set<String> = []
        for entity in model.entities {
            guard !entity.name.isEmpty else {
                warn("an entity without a name is not imported", at: entity.location)
                continue
            }
            guard entities[entity.name] == nil else {
                warn("entity '\(entity.name)' is declared twice; the second one is not imported", at: entity.location)
                continue
            }
            var name = CoreDataNames.typeName(entity.name)
            while usedTypeNames.contains(name) { name += "_" }
            usedTypeNames.insert(name)
            entityNames[entity.name] = name
            entities[entity.name] = entity
        }
        for (name, entity) in entities {
            if let parent = entity.parentEntity {
                if entities[parent] != nil {
                    parents[name] = parent
                } else {
                    warn(
                        "entity '\(name)' names the parent '\(parent)', which the model does not have; it is imported without a parent",
                        at: entity.location)
                }
            }
        }
        // A cycle of parents would make every later lookup loop: cut it where it closes.
        for name in parents.keys.sorted() {
            var seen: Set<String> = [name]
            var next = parents[name]
            while let current = next {
                if seen.contains(current) {
                    parents[name] = nil
                    warn(
                        "entity '\(name)' inherits from itself; it is imported without a parent",
                        at: entities[name]?.location)
                    break
                }
                seen.insert(current)
                next = parents[current]
            }
        }
        for (name, entity) in entities {
            var used: Set<String> = []
            var names: [String: String] = [:]
            var types: [String: String] = [:]
            for attribute in entity.attributes {
                guard var type = schemaType(of: attribute, in: name) else { continue }
                // An enum an export kept, when the raw values Core Data holds are of its raw type.
                if let enumName = ModelwrightUserInfo.read(attribute.userInfo).enumName,
                    let kept = enums[enumName],
                    (kept.rawType, type) == ("String", ScalarType.string.schemaSpelling)
                        || (kept.rawType, type) == ("Int", ScalarType.int64.schemaSpelling)
                {
                    type = enumName
                }
                var schemaName = CoreDataNames.memberName(attribute.name)
                while used.contains(schemaName) { schemaName += "_" }
                used.insert(schemaName)
                names[attribute.name] = schemaName
                types[attribute.name] = type
            }
            var kept: [CoreDataModel.Relationship] = []
            for relationship in entity.relationships {
                guard entities[relationship.destinationEntity] != nil else {
                    warn(
                        "relationship '\(name).\(relationship.name)' is not imported: its destination '\(relationship.destinationEntity)' is not an entity of the model",
                        at: relationship.location)
                    continue
                }
                var schemaName = CoreDataNames.memberName(relationship.name)
                while used.contains(schemaName) { schemaName += "_" }
                used.insert(schemaName)
                names[relationship.name] = schemaName
                kept.append(relationship)
            }
            propertyNames[name] = names
            attributeTypes[name] = types
            relationships[name] = kept
        }
    }

    // MARK: - Text

    /// A string literal of the schema language: ``SchemaText/stringLiteral(_:)``, which writes
    /// every string exactly (control characters as escapes).
    func quoted(_ text: String, at location: CoreDataLocation?) -> String {
        SchemaText.stringLiteral(text)
    }

    /// A `@userInfo` annotation.
    mutating func userInfo(_ entry: UserInfoEntry, at location: CoreDataLocation?) -> String {
        "@userInfo(\(quoted(entry.key, at: location)), \(quoted(entry.value, at: location)))"
    }

    /// A name as an annotation argument: the words that read as values need backticks there.
    func argument(_ name: String) -> String {
        ["true", "false", "nil", "now"].contains(name) ? "`\(name)`" : name
    }

    /// Warns of each Core Data setting on an element that the translation does not carry over.
    mutating func reportOther(
        _ attributes: [CoreDataXMLAttribute], of what: String, ignoring: Set<String>, at location: CoreDataLocation?
    ) {
        for pair in attributes where !ignoring.contains(pair.name) {
            let reason =
                switch pair.name {
                case "minValueString", "maxValueString", "regularExpressionString":
                    "the schema language has no validation rules; check the value in code"
                case "allowsExternalBinaryDataStorage": "Modelwright keeps binary data in the store"
                case "preserveAfterDeletion": "Modelwright keeps no persistent-history tombstones"
                case "allowsCloudEncryption": "Modelwright does not sync with CloudKit"
                case "spotlightIndexingEnabled", "storedInTruthFile":
                    "Modelwright has no Spotlight or truth-file storage"
                case "fetchLimit", "fetchBatchSize", "resultType", "returnObjectsAsFaults", "returnDistinctResults",
                    "includesSubentities", "includesPendingChanges", "includesPropertyValues":
                    "a named request holds only a predicate; set limits on the request in code (`.limit(…)`)"
                default: "Modelwright does not know it"
                }
            warn("'\(pair.name)=\"\(pair.value)\"' on \(what) is not imported: \(reason)", at: location)
        }
    }

    /// Reports what is not imported, at the element's line and column.
    mutating func warn(_ message: String, at location: CoreDataLocation?) {
        diagnostics.append(
            Diagnostic(
                severity: .warning,
                message: message,
                path: model.path,
                location: location.map { SourcePosition(line: $0.line, column: $0.column) }
            )
        )
    }
}
