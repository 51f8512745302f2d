import Foundation
import Testing

@testable import Modelwright

/// A custom stage that writes a `Codable` value of the wrong shape fails at that stage, checked
/// against the archived schema of the version it reaches (the app has no Swift type of that
/// middle version), before it commits; a value of the right shape passes.
struct StageJSONShapeTests {
    /// Declared type spellings, with JSON that fits each and JSON that does not.
    private static let cases: [(type: String, good: [String], bad: [String])] = [
        ("[String]", ["[]", "[\"a\",\"b\"]"], ["{\"a\":1}", "[1]", "\"a\"", "[\"a\",null]"]),
        ("[String: Int]", ["{}", "{\"a\":1,\"b\":2}"], ["[\"a\"]", "{\"a\":\"1\"}", "{\"a\":1.5}", "{\"a\":true}"]),
        ("Set<Int>?", ["null", "[1,2]"], ["[\"x\"]", "{}"]),
        ("[[Double]]", ["[[1,2.5],[]]"], ["[1]", "[[\"a\"]]"]),
        ("Dictionary<String, [Bool]>", ["{\"x\":[true]}"], ["{\"x\":[1]}", "{\"x\":true}"]),
        ("[Date: String]", ["[]"], ["oops"]),
    ]

    /// The shapes read from type spellings: app-defined types (as values or keys) have none; a
    /// dictionary keyed by another standard scalar has one (a flat array of keys and values).
    @Test func spellingsWithAppTypesHaveNoShape() {
        #expect(JSONShape(spelling: "Address") == nil)
        #expect(JSONShape(spelling: "[Address]") == nil)
        #expect(JSONShape(spelling: "[Address: Int]") == nil)
        #expect(JSONShape(spelling: "[Date: String]") == .dictionary(key: .date, value: .scalar(.string)))
        #expect(JSONShape(spelling: "[String: Int]?") == .optional(.dictionary(key: .string, value: .scalar(.int))))
        #expect(JSONShape(spelling: "Array<Set<UUID>>") == .array(.array(.scalar(.uuid))))
    }

    /// Every case × every value × the stage's position (1→2 of 1→2→3, or 2→3): a wrong shape
    /// fails the stage that wrote it, naming it, and the store stays at the version before; a right
    /// one migrates to the end.
    @Test func aWrongShapeFailsTheStageThatWroteIt() throws {
        var checked = 0
        for (type, good, bad) in Self.cases {
            let shape = JSONShape(spelling: type)
            for (json, fits) in good.map({ ($0, true) }) + bad.map({ ($0, false) }) {
                for writer in [1, 2] {
                    checked += 1
                    let schemas = (1...3).map { version in
                        SchemaDescription(
                            modelName: "Shapes", version: version,
                            entities: [
                                EntityDescription(
                                    name: "Box",
                                    attributes: [
                                        AttributeDescription(name: "label", type: .string),
                                        AttributeDescription(
                                            name: version == 1 ? "raw" : "value",
                                            type: version == 1 ? .string : .codable(typeName: type), isOptional: true),
                                    ]
                                        + (version == 3
                                            ? [AttributeDescription(name: "n", type: .int64, isOptional: true)] : []))
                            ])
                    }
                    let write = MigrationStage.CustomStep(name: "write", label: "writes the value") { context in
                        for box in try context.rows(of: "Box") {
                            try context.update("Box", id: box.id, set: ["value": .text(json)])
                        }
                    }
                    let stages: [MigrationStage] = [
                        writer == 1
                            ? .custom(from: schemas[0], to: schemas[1], steps: [write], lossy: [.init("Box", "raw")])
                            : .lightweight(from: schemas[0], to: schemas[1], lossy: [.init("Box", "raw")]),
                        writer == 2
                            ? .custom(from: schemas[1], to: schemas[2], steps: [write])
                            : .lightweight(from: schemas[1], to: schemas[2]),
                    ]
                    let tester = try MigrationTester(
                        plan: MigrationPlan(current: schemas[2], stages: stages), startingAt: schemas[0])
                    _ = try tester.insert("Box", ["label": .text("b")])
                    let failure = "\(type), \(json), written by stage \(writer)"
                    // A value that is not JSON at all fails the store's own check of the column.
                    let wellFormed =
                        (try? JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed)) != nil
                    if fits || (shape == nil && wellFormed) {
                        _ = try tester.migrate()
                        #expect(try tester.rows(of: "Box").first?["value"] == .text(json), "\(failure)")
                        continue
                    }
                    do {
                        _ = try tester.migrate()
                        Issue.record("\(failure): migrated")
                    } catch let error as MigrationError {
                        switch error {
                        case .wrongJSONShape(let stage, let entity, let attribute, _, let declared, _):
                            #expect(stage == "from version \(writer) to \(writer + 1)", "\(failure): \(error)")
                            #expect(entity == "Box" && attribute == "value", "\(failure): \(error)")
                            #expect(declared.contains(type), "\(failure): \(error)")
                        case .unreadableValues(let stage, _, _, _):
                            #expect(
                                !wellFormed && stage == "from version \(writer) to \(writer + 1)",
                                "\(failure): \(error)")
                        default:
                            Issue.record("\(failure): \(error)")
                        }
                    }
                    // Nothing of the failing stage committed: a later opening still sees the version before it.
                    let connection = try SQLiteConnection(path: tester.url.path, readOnly: true)
                    #expect(try StoreMetadata.storedVersion(on: connection) == writer, "\(failure)")
                }
            }
        }
        #expect(checked == 48)
    }
}
