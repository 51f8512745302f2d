import Foundation
import Testing

@testable import Modelwright
@testable import ModelwrightSchema

/// WooCommerce's 117 Core Data versions, imported, planned and migrated end to end.
@Suite(
    .serialized,
    .enabled(if: CoreDataTestSupport.corpusIsAvailable, "../shared/corpus is not present beside the package"))
struct WooCommerceHistoryTests {
    static let bundle = CoreDataTestSupport.corpus
        .appendingPathComponent("woocommerce+woocommerce-ios/WooCommerce.xcdatamodeld").path

    /// The steps WooCommerce migrated with hand-written mapping models (the corpus README's list).
    static let mappedSteps = [10, 27, 29, 32, 33, 40, 43, 46, 75, 112]

    /// One test, so the 117 versions are imported and planned once (about 20 s in a debug build).
    @Test func importsPlansAndMigratesEveryVersion() throws {
        let imported = try CoreDataTestSupport.importModel(Self.bundle)
        defer { try? FileManager.default.removeItem(at: imported.folder) }
        let model = try #require(imported.loaded.model, "\(imported.loaded.diagnostics.prefix(3))")
        try planCoversEveryStep(model)
        try aStoreAtTheFirstVersionMigratesThroughEveryVersion(model)
    }

    func planCoversEveryStep(_ model: Model) throws {
        #expect(model.versions.count == 117)
        #expect(model.steps.count == 116)
        let step10 = try #require(model.steps.first { $0.to.number == 10 })
        #expect(step10.rewrittenTables.contains("Order"))
        #expect(step10.customStages.map(\.name) == ["toVersion10"])
        for number in Self.mappedSteps {
            let step = try #require(model.steps.first { $0.to.number == number })
            #expect(
                !step.isLightweight || !step.cautions.isEmpty,
                "step \(number - 1) → \(number) is planned as plain lightweight: \(step.changes.map(\.summary))")
        }
        // The planner checks each step on the tables it touches; for these steps, checking on the
        // whole schema finds the same tables rewritten.
        for number in Self.mappedSteps + [97] {
            let step = try #require(model.steps.first { $0.to.number == number })
            let full = try MigrationStage.lightweight(from: step.from.schema, to: step.to.schema).operations()
            let created = Set(full.compactMap { if case .createTable(let table) = $0 { table } else { nil } })
            let rewritten = Set(full.filter { !$0.isConstantTime }.map(\.table)).subtracting(created).sorted()
            #expect(step.rewrittenTables == rewritten, "step \(number - 1) → \(number)")
        }
        // Model 96 → 97 only changed transformers, marked with versionHashModifier: a new checksum.
        let step97 = try #require(model.steps.first { $0.to.number == 97 })
        #expect(step97.from.schema.checksum != step97.to.schema.checksum)
        #expect(!step97.isLightweight)
    }

    func aStoreAtTheFirstVersionMigratesThroughEveryVersion(_ model: Model) throws {
        // Custom stages are stubbed: they give every required column left empty a placeholder.
        let stages = model.steps.map { step -> MigrationStage in
            guard !step.customStages.isEmpty else { return .lightweight(from: step.from.schema, to: step.to.schema) }
            let destination = step.to.schema
            return .custom(
                from: step.from.schema, to: destination,
                steps: step.customStages.map { stage in
                    MigrationStage.CustomStep(name: stage.name, label: stage.label) { context in
                        try Self.fillRequiredColumns(destination, context)
                    }
                })
        }
        let plan = MigrationPlan(current: try #require(model.current).schema, stages: stages)
        let first = try #require(model.versions.first).schema
        let tester = try MigrationTester(plan: plan, startingAt: first)
        var inserted: [String: Int] = [:]
        var ids: [String: SQLValue] = [:]
        // Entities with a required to-one relationship go after the rows they point at.
        let ordered = first.entities.filter { !$0.isAbstract }.sorted { lhs, _ in !Self.needsParent(lhs) }
        for entity in ordered {
            var links: [String: SQLValue] = [:]
            for relationship in entity.relationships
            where relationship.cardinality == .toOne && !relationship.isOptional {
                links[relationship.name] = ids[relationship.destination]
            }
            guard links.count == entity.relationships.filter({ $0.cardinality == .toOne && !$0.isOptional }).count,
                !links.values.contains(.null)
            else { continue }
            for index in 0..<3 {
                ids[entity.name] = try tester.insert(
                    entity.name, Self.placeholderRow(entity, index: index).merging(links) { _, link in link })
                inserted[entity.name, default: 0] += 1
            }
        }
        #expect(inserted.count >= 4, "rows go into several entities")
        let commits = Locked()
        _ = try tester.migrate { if $0.event == .stageCommitted { commits.add() } }
        #expect(commits.count == 116)
        #expect(try tester.schemaDifferences() == [])
        for (entity, count) in inserted where plan.current.entity(named: entity) != nil {
            #expect(try tester.rows(of: entity).count == count, "\(entity) kept its rows")
        }
        // Every row of every entity reads back with the runtime's decoding of the last version.
        var decoded = 0
        for entity in plan.current.entities where !entity.isAbstract {
            let attributes = TableMapping.lineage(of: entity, in: plan.current).flatMap(\.attributes)
            for row in try tester.rows(of: entity.name)
            where row["_entity"] == .null || row["_entity"] == .text(entity.name) {
                for attribute in attributes {
                    let value = row[attribute.name]
                    guard value != .null else {
                        #expect(attribute.isOptional, "\(entity.name).\(attribute.name) is empty")
                        continue
                    }
                    #expect(throws: Never.self, "\(entity.name).\(attribute.name) = \(value)") {
                        try decodeStored(value, as: attribute.type)
                    }
                    decoded += 1
                }
            }
        }
        #expect(decoded > 50, "rows of several entities were read back")
    }

    static func needsParent(_ entity: EntityDescription) -> Bool {
        entity.relationships.contains { $0.cardinality == .toOne && !$0.isOptional }
    }

    /// A row whose required attributes hold a placeholder of their type.
    static func placeholderRow(_ entity: EntityDescription, index: Int) -> [String: SQLValue] {
        var row: [String: SQLValue] = [:]
        for attribute in entity.attributes where !attribute.isOptional {
            row[attribute.name] = placeholder(for: attribute.type, index: index)
        }
        return row
    }

    static func placeholder(for type: AttributeType, index: Int) -> SQLValue {
        switch type {
        case .bool, .int16, .int32, .int64, .int: .integer(Int64(index))
        case .double, .float, .date: .real(Double(index))
        case .data, .uuid: .blob(Data(repeating: UInt8(index), count: 16))
        case .enumeration(let description):
            description.rawType == .int ? .integer(0) : .text(description.cases.first?.rawValue ?? "")
        default: .text("value \(index)")
        }
    }

    @Sendable static func fillRequiredColumns(_ schema: SchemaDescription, _ context: MigrationContext) throws {
        for entity in schema.entities where entity.parent == nil {
            for attribute in entity.attributes where !attribute.isOptional && attribute.defaultValue == nil {
                guard case .text = placeholder(for: attribute.type, index: 0) else {
                    try context.execute(
                        "UPDATE \"\(entity.name)\" SET \"\(attribute.name)\" = ? WHERE \"\(attribute.name)\" IS NULL",
                        [placeholder(for: attribute.type, index: 0)])
                    continue
                }
                try context.execute(
                    "UPDATE \"\(entity.name)\" SET \"\(attribute.name)\" = '' WHERE \"\(attribute.name)\" IS NULL")
            }
        }
    }
}

private final class Locked: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func add() { lock.withLock { value += 1 } }
    var count: Int { lock.withLock { value } }
}
