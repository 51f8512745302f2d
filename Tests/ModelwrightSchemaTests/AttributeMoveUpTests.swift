import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright
@testable import ModelwrightSchema

/// An attribute moved up the hierarchy (`Cat.lives` becomes `Animal.lives`) keeps the values of
/// the rows that had it; the other rows get the default, `NULL` when it is optional, or the
/// value a custom stage gives them when it is required without a default (an obligation for the
/// rows without a value). Drawn: the type, optionality, default, how far up (one or two levels),
/// whether the root is abstract, and whether a stage is declared.
struct AttributeMoveUpTests {
    private static let types: [(type: String, value: SQLValue, defaultText: String, defaultValue: SQLValue)] = [
        ("Int16", .integer(-7), "9", .integer(9)), ("String", .text("kept"), "\"d\"", .text("d")),
        ("Bool", .integer(1), "false", .integer(0)), ("Double", .real(-2.5), "1.5", .real(1.5)),
        ("Decimal", .text("3.25"), "2.5", .text("2.5")),
    ]

    @Test func aMovedUpAttributeKeepsItsValuesAndTheOtherRowsGetWhatANewOneGets() throws {
        let count = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 400 : 20
        var kinds: [String: Int] = [:]
        for seed in 1...UInt64(count) {
            var random = SplitMix64(seed: seed)
            func roll(_ count: Int) -> Int { Int(random.next() % UInt64(count)) }
            let drawn = Self.types[roll(Self.types.count)]
            let optional = roll(3) == 0
            let hasDefault = !optional && roll(2) == 0
            let target = roll(2) == 0 ? "Animal" : "Feline"
            let abstractRoot = roll(3) == 0
            let stage = roll(2) == 0
            let declaration = "lives: \(drawn.type)\(optional ? "?" : "")\(hasDefault ? " = \(drawn.defaultText)" : "")"
            func body(_ entity: String, _ own: String, version: Int) -> String {
                let declares = version == 1 ? entity == "Cat" : entity == target
                return [own, declares ? declaration : ""].filter { !$0.isEmpty }.joined(separator: "; ")
            }
            func text(_ version: Int) -> String {
                """
                model Zoo version \(version)
                \(abstractRoot ? "abstract " : "")entity Animal { \(body("Animal", "name: String", version: version)) }
                entity Feline: Animal { \(body("Feline", "", version: version)) }
                entity Cat: Feline { \(body("Cat", "", version: version)) }
                entity Dog: Animal { \(body("Dog", "barks: Bool", version: version)) }
                \(version == 2 && stage ? "migration from 1 {\n    custom fillLives \"Lives for the others\"\n}" : "")

                """
            }
            let failure = "seed \(seed)\n\(text(1))\n\(text(2))"
            let folder = try temporaryModelFolder(
                named: "Zoo", files: ["Zoo.v1.model": text(1), "Zoo.v2.model": text(2)])
            defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
            let loaded = FrontEnd.run(modelAt: folder.path)
            let errors = loaded.diagnostics.filter { $0.severity == .error }
            let needsStage = !optional && !hasDefault
            guard let model = loaded.model else {
                // Refused only when the other rows need a value no one gives, at the declaration.
                #expect(needsStage && !stage, "\(failure)\n\(errors.map(\.message))")
                #expect(errors.first?.message.contains("move attribute Cat.lives up to \(target).lives") == true)
                #expect(errors.first?.location?.line == (target == "Animal" ? 2 : 3), "\(failure)")
                kinds["refused", default: 0] += 1
                continue
            }
            let step = model.steps[0]
            #expect(step.changes.contains { $0.summary.hasPrefix("move attribute Cat.lives up to \(target).lives") })
            #expect(!step.changes.contains { $0.kind == .lossy }, "\(failure)")
            // The app's stage gives the rows without a value the drawn value.
            let steps = step.customStages.map { stage in
                MigrationStage.CustomStep(
                    name: stage.name, label: stage.label,
                    obligations: step.obligations.map { obligation in
                        .value(of: obligation.entity, obligation.property ?? "", onlyRowsWithoutValue: true) { _ in
                            Stored(sqlValue: drawn.value)
                        }
                    }, didMigrate: { _ in })
            }
            let (v1, v2) = (model.versions[0].schema, model.versions[1].schema)
            let tester = try MigrationTester(
                plan: MigrationPlan(
                    current: v2,
                    stages: [steps.isEmpty ? .lightweight(from: v1, to: v2) : .custom(from: v1, to: v2, steps: steps)]),
                startingAt: v1)
            let cat = try tester.insert("Cat", ["name": .text("c"), "lives": drawn.value])
            let others = try ["Feline", "Dog", "Animal"].filter { !(abstractRoot && $0 == "Animal") }.map { entity in
                (
                    entity,
                    try tester.insert(
                        entity,
                        ["name": .text(entity), "barks": .integer(0)].filter { key, _ in
                            key == "name" || entity == "Dog"
                        })
                )
            }
            #expect(throws: Never.self, "\(failure)") { _ = try tester.migrate() }
            let rows = try tester.rows(of: "Animal")
            #expect(rows.first { $0.id == cat }?["lives"] == drawn.value, "the Cat row lost its value: \(failure)")
            for (entity, id) in others {
                let value = rows.first { $0.id == id }?["lives"]
                // Rows above the level the attribute moved to do not have it (their column may hold
                // its SQL default, which no record reads).
                guard target == "Animal" || entity == "Feline" else { continue }
                let expected: SQLValue = optional ? .null : hasDefault ? drawn.defaultValue : drawn.value
                #expect(value == expected, "\(entity) row holds \(value.map { "\($0)" } ?? "nothing"): \(failure)")
            }
            kinds[optional ? "optional" : hasDefault ? "default" : "stage", default: 0] += 1
        }
        // Every outcome is drawn.
        #expect(kinds.count == 4, "\(kinds)")
    }

    /// A value the test's stage returns, as the store keeps it.
    private struct Stored: ColumnValue {
        let sqlValue: SQLValue
    }
}
