import Foundation
import Testing

@testable import Modelwright

/// A custom stage's `didMigrate` reads the rows of an entity its version removes, as the
/// Migrations article promises, whatever the removed entity's storage: its own table, a table
/// or a sub-entity's rows in a table that continues; the removed rows are gone once the stage commits.
struct RemovedEntityReadTests {
    /// How the removed entity `Legacy` is stored in version 1, and what version 2 does.
    private enum Shape: CaseIterable {
        /// Its own table, dropped.
        case ownTable
        /// A sub-entity of `Note`, sharing `Note`'s table, which continues.
        case subEntity
    }

    private static func schemas(_ shape: Shape) -> (SchemaDescription, SchemaDescription) {
        let user = EntityDescription(
            name: "User",
            attributes: [
                AttributeDescription(name: "name", type: .string),
                AttributeDescription(name: "legacyCount", type: .int64, isOptional: true),
            ])
        let note = EntityDescription(name: "Note", attributes: [AttributeDescription(name: "text", type: .string)])
        let legacy = EntityDescription(
            name: "Legacy", parent: shape == .subEntity ? "Note" : nil,
            attributes: [AttributeDescription(name: "owner", type: .string)])
        let v1 = SchemaDescription(modelName: "Old", version: 1, entities: [user, note, legacy])
        let v2 = SchemaDescription(modelName: "Old", version: 2, entities: [user, note])
        return (v1, v2)
    }

    /// Every shape × 0 to 6 removed rows spread over 2 users: `didMigrate` counts each user's
    /// removed rows into `User.legacyCount`, which must match what was inserted.
    @Test func didMigrateReadsTheRowsOfARemovedEntity() throws {
        var cases = 0
        for shape in Shape.allCases {
            for count in 0...6 {
                cases += 1
                let (v1, v2) = Self.schemas(shape)
                let step = MigrationStage.CustomStep(name: "fold", label: "folds Legacy into User") { context in
                    let legacy = try context.rows(of: "Legacy")
                    for user in try context.rows(of: "User") {
                        let mine = legacy.filter { $0["owner"] == user["name"] }.count
                        try context.update("User", id: user.id, set: ["legacyCount": .integer(Int64(mine))])
                    }
                }
                let tester = try MigrationTester(
                    plan: MigrationPlan(
                        current: v2, stages: [.custom(from: v1, to: v2, steps: [step], lossy: [.init("Legacy")])]),
                    startingAt: v1)
                _ = try tester.insert("User", ["name": .text("a")])
                _ = try tester.insert("User", ["name": .text("b")])
                _ = try tester.insert("Note", ["text": .text("kept")])
                for index in 0..<count {
                    var values: [String: SQLValue] = ["owner": .text(index % 3 == 0 ? "a" : "b")]
                    if shape == .subEntity { values["text"] = .text("n\(index)") }
                    _ = try tester.insert("Legacy", values)
                }
                _ = try tester.migrate()
                let counts = Dictionary(
                    try tester.rows(of: "User").map { ($0["name"], $0["legacyCount"]) }, uniquingKeysWith: { a, _ in a }
                )
                let a = (0..<count).filter { $0 % 3 == 0 }.count
                #expect(counts[.text("a")] == .integer(Int64(a)), "\(shape), \(count): \(counts)")
                #expect(counts[.text("b")] == .integer(Int64(count - a)), "\(shape), \(count): \(counts)")
                #expect(try tester.rows(of: "Note").count == 1, "\(shape), \(count)")
            }
        }
        #expect(cases == 14)
    }
}
