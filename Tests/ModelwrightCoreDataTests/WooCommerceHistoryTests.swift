import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright
@testable import ModelwrightCoreData
@testable import ModelwrightSchema

/// WooCommerce's 117 Core Data versions, imported and planned: the plan matches the steps the app
/// itself mapped by hand. (`CorpusEndToEndTests` migrates a populated store through all of them
/// with the generated code and reads every row back.)
@Suite(
    .heavy,
    .serialized,
    .enabled(if: CoreDataTestSupport.corpusIsAvailable, "../shared/corpus is not present beside the package"))
struct WooCommerceHistoryTests {
    static let bundle = CoreDataTestSupport.corpus
        .appendingPathComponent("woocommerce+woocommerce-ios/WooCommerce.xcdatamodeld").path

    /// The steps WooCommerce migrated with hand-written mapping models (the corpus README's list).
    static let mappedSteps = [10, 27, 29, 32, 33, 40, 43, 46, 75, 112]

    /// One test, so the 117 versions are imported and planned once (about 20 s in a debug build).
    @Test func importsAndPlansEveryVersion() throws {
        let imported = try CoreDataTestSupport.importModel(Self.bundle)
        defer { try? FileManager.default.removeItem(at: imported.folder) }
        let model = try #require(imported.loaded.model, "\(imported.loaded.diagnostics.prefix(3))")
        try planCoversEveryStep(model)
    }

    func planCoversEveryStep(_ model: PlannedModel) throws {
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
}
