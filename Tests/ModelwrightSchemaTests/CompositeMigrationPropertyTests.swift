import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright
@testable import ModelwrightSchema

/// The migration property of ``MigrationPropertyTests`` for composites, on seeded random steps: a
/// composite attribute added or removed (optional or required, its fields optional or required,
/// with or without defaults), or a field added to one. `plan` accepts exactly the steps that need
/// no value from the app (a new optional composite always: existing rows do not have it), and
/// migrating rows with the composite present and absent keeps every row readable, an absent
/// composite absent, and a present one's fields.
struct CompositeMigrationPropertyTests {
    private struct Field {
        var name: String
        var type: String
        var optional: Bool
        var defaultValue: String?

        var line: String { "    \(name): \(type)\(optional ? "?" : "")" + (defaultValue.map { " = \($0)" } ?? "") }
    }

    private static let types: [(name: String, defaultValue: String, stored: SQLValue)] = [
        ("Int32", "4", .integer(-3)), ("String", "\"d\"", .text("s")), ("Bool", "true", .integer(0)),
        ("Double", "1.5", .real(0.25)),
    ]

    private static func randomField(_ name: String, using random: inout SplitMix64) -> Field {
        let type = types.randomElement(using: &random) ?? types[0]
        return Field(
            name: name, type: type.name, optional: Bool.random(using: &random),
            defaultValue: Bool.random(using: &random) ? type.defaultValue : nil)
    }

    private static func text(version: Int, fields: [Field]?, optional: Bool, lossy: Bool) -> String {
        var text = "model Pairs version \(version)\n\n"
        if let fields {
            text += "composite Size {\n" + fields.map { $0.line + "\n" }.joined() + "}\n\n"
        }
        text += "entity Item {\n    title: String\n"
        if fields != nil { text += "    size: Size\(optional ? "?" : "")\n" }
        text += "}\n"
        if lossy { text += "\nmigration from 1 {\n    lossy Item.size \"gone\"\n}\n" }
        return text
    }

    @Test func compositesAddedOrRemovedMigrateWithoutFalseRefusal() throws {
        var random = SplitMix64(seed: 77)
        var accepted = 0
        var counts: [String: Int] = [:]
        for round in 0..<40 {
            var fields = (0..<Int.random(in: 1...3, using: &random)).map { Self.randomField("f\($0)", using: &random) }
            let optional = Bool.random(using: &random)
            let kind = ["added", "removed", "field added"][round % 3]
            counts[kind, default: 0] += 1
            let before = kind == "added" ? nil : fields
            var shouldAccept: Bool
            switch kind {
            case "added":
                shouldAccept = optional || fields.allSatisfy { $0.optional || $0.defaultValue != nil }
            case "removed":
                shouldAccept = true
            default:
                let added = Self.randomField("g", using: &random)
                fields.append(added)
                shouldAccept = added.optional || added.defaultValue != nil
            }
            let v1 = Self.text(version: 1, fields: before, optional: optional, lossy: false)
            let v2 = Self.text(
                version: 2, fields: kind == "removed" ? nil : fields, optional: optional, lossy: kind == "removed")
            let failure = "round \(round), \(kind)\n\(v1)\n\(v2)"
            let folder = try temporaryModelFolder(
                named: "Pairs", files: ["Pairs.v1.model": v1, "Pairs.v2.model": v2])
            defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
            let loaded = FrontEnd.run(modelAt: folder.path)
            let errors = loaded.diagnostics.filter { $0.severity == .error }
            guard let model = loaded.model, errors.isEmpty else {
                #expect(!shouldAccept, "refused: \(errors.map(\.description))\n\(failure)")
                // A refusal is located at the declaration that needs the value, not the header.
                #expect(errors.allSatisfy { ($0.location?.line ?? 1) > 1 }, "\(errors.map(\.description))\n\(failure)")
                continue
            }
            #expect(shouldAccept, "accepted a step that needs values: \(failure)")
            accepted += 1
            let (schema1, schema2) = (model.versions[0].schema, model.versions[1].schema)
            let tester = try MigrationTester(
                plan: MigrationPlan(
                    current: schema2,
                    stages: [.lightweight(from: schema1, to: schema2, lossy: model.steps[0].losses)]),
                startingAt: schema1)
            // Row 0 holds every field; row 1 holds the composite's required fields only, or, when
            // the composite is optional, no composite at all.
            var stored: [SQLValue: [String: SQLValue]] = [:]
            var firstID = SQLValue.null
            for row in 0..<2 {
                var values: [String: SQLValue] = ["title": .text("t\(row)")]
                // As a record writes it: every column of the composite, NULL where there is no value.
                for field in before ?? [] {
                    values["size.\(field.name)"] =
                        row == 0 || (!optional && !field.optional)
                        ? Self.types.first { $0.name == field.type }?.stored ?? .null : .null
                }
                let id = try tester.insert("Item", values)
                stored[id] = values
                if row == 0 { firstID = id }
            }
            #expect(throws: Never.self, "\(failure)") { _ = try tester.migrate() }
            for row in try tester.rows(of: "Item") {
                let values = stored[row.id] ?? [:]
                // A composite without a required field reads as present whatever its columns hold.
                let hadComposite =
                    before != nil && (!optional || row.id == firstID || !(before ?? []).contains { !$0.optional })
                let absent = optional && !hadComposite && fields.contains { !$0.optional }
                for field in kind == "removed" ? [] : fields {
                    let value = row["size.\(field.name)"]
                    if let original = values["size.\(field.name)"], original != .null || absent {
                        #expect(value == original, "size.\(field.name) changed: \(failure)")
                    } else if absent {
                        #expect(value == .null, "an absent composite got size.\(field.name) = \(value): \(failure)")
                    } else if !field.optional {
                        #expect(value != .null, "a present composite lacks size.\(field.name): \(failure)")
                    }
                }
            }
        }
        #expect(accepted >= 10, "only \(accepted) of 40 steps were accepted")
        #expect(counts.values.allSatisfy { $0 >= 13 })
    }
}
