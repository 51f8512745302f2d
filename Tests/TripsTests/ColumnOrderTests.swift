import Foundation
import ModelwrightGenerator
import ModelwrightSchema
import ModelwrightTestSupport
import Testing

@testable import Modelwright

/// Generated records encode and decode their properties in exactly the column order of the store's
/// own layout (`SchemaLayout`), composites taking as many columns as the layout gives them: for the
/// Trips model, for seeded random models whose entities inherit, hold composites and declare
/// relationships between their attributes, and (in `CorpusEndToEndTests`) for every corpus bundle.
@Suite(.heavy)
struct ColumnOrderTests {
    @Test func tripsRecordsFollowTheStoreLayout() throws {
        let root = GeneratedCodeTypeChecker.root
        let result = try Pipeline.run(modelAt: root.appendingPathComponent("Models/Trips").path, through: .render)
        let (model, files) = (try #require(result.model), result.files)
        let mismatches = try ColumnOrder.mismatches(files: files, model: model)
        #expect(mismatches.isEmpty, "\(mismatches)")
    }

    @Test(arguments: 0..<60)
    func randomModelRecordsFollowTheStoreLayout(_ index: Int) throws {
        var random = SplitMix64(seed: 0xC011_0D3E, index: index)
        let text = RandomModel.text(name: "Random\(index)", using: &random)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("column-order-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(text.utf8).write(to: folder.appendingPathComponent("Random\(index).v1.model"))
        let result = try Pipeline.run(modelAt: folder.path, through: .render)
        let (model, files) = (try #require(result.model, "\(result.diagnostics.prefix(3))\n\(text)"), result.files)
        let mismatches = try ColumnOrder.mismatches(files: files, model: model)
        #expect(mismatches.isEmpty, "\(mismatches)\n\(text)")
    }

    /// The check itself finds a record whose properties are out of the layout's order.
    @Test func aRecordOutOfOrderIsReported() throws {
        let root = GeneratedCodeTypeChecker.root
        let result = try Pipeline.run(
            Pipeline.Request(
                modelPath: root.appendingPathComponent("Models/Trips").path, goal: .render, config: GeneratorConfig()))
        let (model, files) = (try #require(result.model), result.files)
        let swapped = files.map { file in
            RenderedFile(
                name: file.name,
                contents: file.contents.replacingOccurrences(
                    of: "        try row.encode(givenName)\n        try row.encode(familyName)\n",
                    with: "        try row.encode(familyName)\n        try row.encode(givenName)\n"))
        }
        #expect(swapped != files)
        #expect(try ColumnOrder.mismatches(files: swapped, model: model).count == 1)
    }
}

/// Compares generated records with the runtime's layout of the same schema.
enum ColumnOrder {
    /// One line per record whose `encode(to:)` or `init(id:row:)` disagrees with the layout.
    static func mismatches(files: [RenderedFile], model: PlannedModel) throws -> [String] {
        let current = try #require(model.current)
        let records = try #require(files.first { $0.name.hasSuffix("+Records.swift") }).contents
        let generated = GeneratedRecords(records)
        let layout = try SchemaLayout(current.schema)
        var mismatches: [String] = []
        #expect(Set(generated.records.keys) == Set(current.graph.entities.map(\.name)))
        for entity in current.graph.entities {
            guard let record = generated.records[entity.name], let entityLayout = layout.entities[entity.name] else {
                continue
            }
            // The Swift property of each schema property: a to-one relationship's is its ID property.
            let lineage = current.graph.ancestors(of: entity) + [entity]
            var swiftName: [String: String] = [:]
            for member in lineage {
                for attribute in member.attributes { swiftName[attribute.name] = attribute.name }
                for relationship in member.relationships where relationship.cardinality == .toOne {
                    swiftName[relationship.name] = relationship.idProperty
                }
            }
            var expected: [(property: String, columns: Int)] = []
            for column in entityLayout.columns {
                let name = swiftName[column.property] ?? "?\(column.property)"
                if expected.last?.property == name {
                    expected[expected.count - 1].columns += 1
                } else {
                    expected.append((name, 1))
                }
            }
            let expectedNames = expected.map(\.property)
            if record.encoded != expectedNames || record.decoded != expectedNames {
                mismatches.append(
                    "\(entity.name): layout \(expectedNames), encode \(record.encoded), decode \(record.decoded)")
            }
            for (property, columns) in expected where columns > 1 || record.compositeTypes[property] != nil {
                let count = record.compositeTypes[property].flatMap { generated.compositeColumnCounts[$0] }
                if count != columns {
                    mismatches.append("\(entity.name).\(property): \(columns) columns, composite says \(count ?? 0)")
                }
            }
        }
        return mismatches
    }
}

/// What a generated `+Records.swift` says about each record's columns, read from its text.
private struct GeneratedRecords {
    struct Record {
        var encoded: [String] = []
        var decoded: [String] = []
        /// The composite type of each property encoded with `encodeComposite`.
        var compositeTypes: [String: String] = [:]
    }

    /// By entity name.
    var records: [String: Record] = [:]
    /// `columnCount` of each composite type.
    var compositeColumnCounts: [String: Int] = [:]

    init(_ text: String) {
        var entity: String?
        var composite: String?
        var propertyTypes: [String: String] = [:]
        var record = Record()
        var section: Section = .none
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("extension "), let name = line.split(separator: " ").dropFirst().first {
                composite = name.hasSuffix(":") ? String(name.dropLast()) : nil
            } else if let count = Self.value(after: "static let columnCount = ", in: trimmed), let composite {
                compositeColumnCounts[composite] = Int(count)
            } else if let name = Self.value(after: "static let entityName = ", in: trimmed) {
                entity = name.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            } else if line.hasPrefix("    ") && !line.hasPrefix("     "), !trimmed.hasPrefix("//"),
                trimmed.contains("let "),
                let declaration = trimmed.components(separatedBy: "let ").last,
                let colon = declaration.firstIndex(of: ":")
            {
                let type = declaration[declaration.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                propertyTypes[Self.bare(String(declaration[..<colon]))] =
                    type.hasSuffix("?") ? String(type.dropLast()) : type
            } else if trimmed.contains("func encode(to row: inout RowEncoder)") {
                section = .encode
            } else if trimmed.contains("init(id: ID, row: inout RowDecoder)") {
                section = .decode
            } else if line == "    }" {
                section = .none
            } else if line == "}" {
                if let entity { records[entity] = record }
                entity = nil
                record = Record()
                propertyTypes = [:]
            } else if section == .encode, trimmed.hasPrefix("try row.encode"), let open = trimmed.firstIndex(of: "(") {
                let property = Self.bare(String(trimmed[trimmed.index(after: open)...].dropLast()))
                record.encoded.append(property)
                if trimmed.hasPrefix("try row.encodeComposite(") {
                    record.compositeTypes[property] = propertyTypes[property]
                }
            } else if section == .decode, trimmed.hasPrefix("let "), let colon = trimmed.firstIndex(of: ":"),
                trimmed.contains(" = try row.decode")
            {
                // `let name: Type = try row.decode…()`: each column decoded into a local, in order.
                record.decoded.append(Self.bare(String(trimmed.dropFirst(4)[..<colon])))
            }
        }
    }

    private enum Section {
        case none, encode, decode
    }

    private static func value(after prefix: String, in line: String) -> String? {
        guard let range = line.range(of: prefix) else { return nil }
        return String(line[range.upperBound...])
    }

    /// The identifier without the backticks a keyword needs.
    private static func bare(_ identifier: String) -> String {
        identifier.trimmingCharacters(in: CharacterSet(charactersIn: "`"))
    }
}

/// Seeded random models: entities that inherit (some abstract), attributes of every kind, optional
/// or not, composites, and one-way to-one relationships declared between the attributes, so that
/// declaration order and column order differ.
private enum RandomModel {
    static func text(name: String, using random: inout SplitMix64) -> String {
        // Every built-in type, from the runtime's table, so a new one is generated and compiled here.
        let scalarTypes = ScalarType.all.map(\.schemaSpelling) + ["Codable<[String]>"]
        var lines = ["model \(name) version 1", ""]
        let compositeCount = random.next(below: 3)
        var composites: [String] = []
        for index in 0..<compositeCount {
            let fields = (0...random.next(below: 3)).map { field in
                "c\(index)f\(field): \(random.pick(Array(scalarTypes.dropLast())))\(random.chance(0.5) ? "?" : "")"
            }
            lines.append("composite Part\(index) { \(fields.joined(separator: "; ")) }")
            composites.append("Part\(index)")
        }
        let entityCount = 2 + random.next(below: 6)
        var member = 0
        for index in 0..<entityCount {
            let parent = index > 0 && random.chance(0.4) ? ": E\(random.next(below: index))" : ""
            lines.append("")
            lines.append("\(random.chance(0.2) ? "abstract " : "")entity E\(index)\(parent) {")
            for _ in 0..<random.next(below: 7) {
                member += 1
                let optional = random.chance(0.4) ? "?" : ""
                switch random.next(below: 6) {
                case 0:
                    lines.append("    r\(member): E\(random.next(below: entityCount))? @noInverse")
                case 1 where !composites.isEmpty:
                    lines.append("    a\(member): \(random.pick(composites))\(optional)")
                default:
                    lines.append("    a\(member): \(random.pick(scalarTypes))\(optional)")
                }
            }
            lines.append("}")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
