import Foundation
import ModelwrightTestSupport
import Testing

@testable import ModelwrightSchema

/// Editing a frozen version's structure is an error located at the first declaration the edit
/// changed (an attribute's line, or the entity's for a removal), naming it, whatever the edit:
/// drawn over many random models and random edits.
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

    /// Changes one attribute line so that the entity's structure differs: what the error must say
    /// of the entity, and the line it must point at (`nil`: the entity's own line).
    private static func edit(_ entity: inout Entity, using generator: inout SplitMix64) -> (
        what: String, line: String?
    ) {
        let index = Int.random(in: 0..<entity.attributes.count, using: &generator)
        let line = entity.attributes[index]
        let name = String(line.split(separator: ":")[0])
        switch Int.random(in: 0..<4, using: &generator) {
        case 0:
            let added = "added\(entity.attributes.count): String?"
            entity.attributes.append(added)
            return ("attribute 'added\(entity.attributes.count - 1)' was added here", added)
        case 1 where entity.attributes.count > 1:
            entity.attributes.remove(at: index)
            return ("attribute '\(name)' was removed", nil)
        case 2:
            let parts = line.split(separator: ":")
            let type = parts[1].trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "?", with: "")
            let other = types.filter { $0 != type }.randomElement(using: &generator) ?? "String"
            entity.attributes[index] = "\(parts[0]): \(other)" + (line.hasSuffix("?") ? "?" : "")
        default:
            entity.attributes[index] = line.hasSuffix("?") ? String(line.dropLast()) : line + "?"
        }
        return ("attribute '\(name)' differs from the released one", entity.attributes[index])
    }

    @Test func theErrorNamesTheFirstChangedDeclarationAtItsLine() throws {
        var generator = SplitMix64(seed: 31)
        var cases = 0
        for _ in 0..<80 {
            let original = Self.randomModel(using: &generator)
            var edited = original
            // What the error must name: the first entity, in the edited file's order, that changed.
            var expected: (message: String, line: Int)
            var memberLine: String?
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
                var edits: [Int: (what: String, line: String?)] = [:]
                for index in chosen { edits[index] = Self.edit(&edited[index], using: &generator) }
                let first = chosen.min() ?? 0
                let change = edits[first] ?? ("", nil)
                expected = ("entity '\(edited[first].name)' changed: \(change.what)", 0)
                memberLine = change.line
            }
            let text = Self.text(edited)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            if let memberLine {
                // The first edited line of the entity the error names.
                let name = expected.message.split(separator: "'")[1]
                let start = lines.firstIndex { $0 == "entity \(name) {" } ?? 0
                expected.line = (lines[start...].firstIndex { $0 == "    " + memberLine } ?? -1) + 1
            } else if expected.line == 0 {
                let name = expected.message.split(separator: "'")[1]
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

    @Test func aLockFileWithoutDeclarationDigestsStillNamesTheEntity() throws {
        let original = "model Shop version 1\n\nentity Product {\n    title: String\n}\n"
        let lockFolder = try temporaryModelFolder(named: "Shop", files: ["Shop.v1.model": original])
        defer { try? FileManager.default.removeItem(at: lockFolder.deletingLastPathComponent()) }
        var lock = LockFile.freezing(try #require(FrontEnd.run(modelAt: lockFolder.path).model), through: 1)
        lock.frozen[0].members = nil
        let edited = original.replacingOccurrences(of: "title: String", with: "title: String?")
        let folder = try temporaryModelFolder(
            named: "Shop",
            files: ["Shop.v1.model": edited, LockFile.fileName: String(decoding: try lock.encoded(), as: UTF8.self)])
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let errors = FrontEnd.run(modelAt: folder.path).diagnostics.filter { $0.severity == .error }
        #expect(
            errors.count == 1 && errors[0].location?.line == 3
                && errors[0].message.contains("entity 'Product' changed: its structure differs"),
            "\(errors.map(\.description))")
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
