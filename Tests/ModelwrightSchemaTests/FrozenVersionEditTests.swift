import Foundation
import ModelwrightTestSupport
import Testing

@testable import ModelwrightSchema

/// Editing a frozen version's structure is an error located at the first entity the edit
/// changed, naming it, whatever the edit: drawn over many random models and random edits.
struct FrozenVersionEditTests {
    private static let types = [
        "String", "Int16", "Int32", "Int64", "Double", "Bool", "Date", "UUID", "Data", "Decimal",
    ]

    /// An entity of the generated model: its name and its attributes as `name: Type` lines.
    private struct Entity {
        var name: String
        var attributes: [String]
    }

    private static func text(_ entities: [Entity]) -> String {
        "model Shop version 1\n\n"
            + entities.map { entity in
                "entity \(entity.name) {\n" + entity.attributes.map { "    \($0)\n" }.joined() + "}\n"
            }.joined(separator: "\n")
    }

    private static func randomModel(using generator: inout SplitMix64) -> [Entity] {
        (0..<Int.random(in: 2...6, using: &generator)).map { index in
            Entity(
                name: "E\(index)x\(Int.random(in: 0...99, using: &generator))",
                attributes: (0..<Int.random(in: 1...5, using: &generator)).map { attribute in
                    "a\(attribute): \(types.randomElement(using: &generator) ?? "String")"
                        + (Bool.random(using: &generator) ? "?" : "")
                })
        }
    }

    /// Changes one attribute line so that the entity's structure differs.
    private static func edit(_ entity: inout Entity, using generator: inout SplitMix64) {
        let index = Int.random(in: 0..<entity.attributes.count, using: &generator)
        let line = entity.attributes[index]
        switch Int.random(in: 0..<4, using: &generator) {
        case 0:
            entity.attributes.append("added\(entity.attributes.count): String?")
        case 1 where entity.attributes.count > 1:
            entity.attributes.remove(at: index)
        case 2:
            let parts = line.split(separator: ":")
            let type = parts[1].trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "?", with: "")
            let other = types.filter { $0 != type }.randomElement(using: &generator) ?? "String"
            entity.attributes[index] = "\(parts[0]): \(other)" + (line.hasSuffix("?") ? "?" : "")
        default:
            entity.attributes[index] = line.hasSuffix("?") ? String(line.dropLast()) : line + "?"
        }
    }

    @Test func theErrorNamesTheFirstChangedEntityAtItsLine() throws {
        var generator = SplitMix64(seed: 31)
        var cases = 0
        for _ in 0..<80 {
            let original = Self.randomModel(using: &generator)
            var edited = original
            // What the error must name: the first entity, in the edited file's order, that changed.
            var expected: (message: String, line: Int)
            switch Int.random(in: 0..<8, using: &generator) {
            case 0:
                let position = Int.random(in: 0...edited.count, using: &generator)
                edited.insert(Entity(name: "Added", attributes: ["title: String"]), at: position)
                expected = ("entity 'Added' was added", 0)
            case 1:
                let removed = edited.remove(at: Int.random(in: 0..<edited.count, using: &generator))
                expected = ("entity '\(removed.name)' was removed", 1)
            default:
                let count = Int.random(in: 1...edited.count, using: &generator)
                let chosen = Array(edited.indices.shuffled(using: &generator).prefix(count))
                for index in chosen { Self.edit(&edited[index], using: &generator) }
                expected = ("entity '\(edited[chosen.min() ?? 0].name)' changed", 0)
            }
            let text = Self.text(edited)
            if expected.line == 0 {
                let name = expected.message.split(separator: "'")[1]
                let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
                expected.line = (lines.firstIndex { $0 == "entity \(name) {" } ?? -1) + 1
            }

            let lockFolder = try temporaryModelFolder(named: "Shop", files: ["Shop.v1.model": Self.text(original)])
            defer { try? FileManager.default.removeItem(at: lockFolder.deletingLastPathComponent()) }
            let model = try #require(FrontEnd.run(modelAt: lockFolder.path).model)
            let lock = String(decoding: try LockFile.freezing(model, through: 1).encoded(), as: UTF8.self)
            let folder = try temporaryModelFolder(
                named: "Shop", files: ["Shop.v1.model": text, LockFile.fileName: lock])
            defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
            let errors = FrontEnd.run(modelAt: folder.path).diagnostics.filter { $0.severity == .error }
            cases += 1
            #expect(errors.count == 1, "\(errors.map(\.description))\n\(text)")
            let error = try #require(errors.first)
            #expect(
                error.message.contains(expected.message) && error.location?.line == expected.line
                    && error.path.hasSuffix("Shop.v1.model"),
                "expected \(expected), got \(error.description)\n\(text)")
        }
        #expect(cases == 80)
    }

    @Test func aLockFileWithoutEntityDigestsStillRefusesTheEditAtTheHeader() throws {
        let original = "model Shop version 1\n\nentity Product {\n    title: String\n}\n"
        let lock = """
            {"model": "Shop", "frozen": [{"version": 1, "checksum": "\(String(repeating: "0", count: 64))"}]}
            """
        let folder = try temporaryModelFolder(
            named: "Shop", files: ["Shop.v1.model": original, LockFile.fileName: lock])
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let errors = FrontEnd.run(modelAt: folder.path).diagnostics.filter { $0.severity == .error }
        #expect(errors.count == 1 && errors[0].location?.line == 1 && errors[0].message.contains("is frozen"))
    }

    @Test func aMissingFrozenFileNamesTheLockFileAndBothWaysOut() throws {
        let v1 = "model Shop version 1\n\nentity Product {\n    title: String\n}\n"
        let v2 = v1.replacingOccurrences(of: "version 1", with: "version 2")
        let lockFolder = try temporaryModelFolder(named: "Shop", files: ["Shop.v1.model": v1, "Shop.v2.model": v2])
        defer { try? FileManager.default.removeItem(at: lockFolder.deletingLastPathComponent()) }
        let model = try #require(FrontEnd.run(modelAt: lockFolder.path).model)
        let lock = String(decoding: try LockFile.freezing(model, through: 2).encoded(), as: UTF8.self)
        let folder = try temporaryModelFolder(named: "Shop", files: ["Shop.v1.model": v1, LockFile.fileName: lock])
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let errors = FrontEnd.run(modelAt: folder.path).diagnostics.filter { $0.severity == .error }
        #expect(errors.count == 1, "\(errors.map(\.description))")
        let message = errors.first?.message ?? ""
        #expect(
            message.contains("frozen in \(LockFile.fileName)") && message.contains("'Shop.v2.model' is missing")
                && message.contains("restore the file") && message.contains("remove its entry"), "\(message)")
    }
}
