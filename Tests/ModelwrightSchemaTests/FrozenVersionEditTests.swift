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

    /// Enum cases, raw values and custom stages are outside the checksum but frozen by the lock:
    /// drawn over random enums and one random edit each (a case removed, added or renamed, a raw
    /// value changed, a stage renamed, added or removed), the edit is one error at the enum or the
    /// stage, naming it; a doc comment edit is none, and neither is an edit under a lock file
    /// written before enums and stages were recorded.
    @Test func enumCasesRawValuesAndStagesOfAFrozenVersionAreFrozen() throws {
        var random = SplitMix64(seed: 5)
        var cases = 0
        for round in 0..<60 {
            let isString = Bool.random(using: &random)
            var enumCases = (0..<Int.random(in: 2...5, using: &random)).map { index -> (String, String?) in
                let explicit = Int.random(in: 0..<3, using: &random) == 0
                return ("c\(index)", explicit ? (isString ? "\"r\(index)\"" : "\(index * 10 + 7)") : nil)
            }
            var stages = (0..<Int.random(in: 0...2, using: &random)).map { "stage\($0)" }
            func files(_ cases: [(String, String?)], _ stages: [String], doc: String = "") -> [String: String] {
                let body = cases.map { $0.0 + ($0.1.map { " = \($0)" } ?? "") }.joined(separator: ", ")
                let declarations =
                    "\(doc)enum Kind: \(isString ? "String" : "Int") { \(body) }\n\nentity Item {\n    kind: Kind?\n}\n"
                let migration =
                    stages.isEmpty
                    ? "" : "\nmigration from 1 {\n" + stages.map { "    custom \($0) \"Fill\"\n" }.joined() + "}\n"
                return [
                    "Shop.v1.model": "model Shop version 1\n\n" + declarations,
                    "Shop.v2.model": "model Shop version 2\n\n" + declarations + migration,
                ]
            }
            let original = files(enumCases, stages)
            let lockFolder = try temporaryModelFolder(named: "Shop", files: original)
            defer { try? FileManager.default.removeItem(at: lockFolder.deletingLastPathComponent()) }
            let loaded = FrontEnd.run(modelAt: lockFolder.path)
            let model = try #require(loaded.model, "\(loaded.diagnostics.map(\.description))")
            let lock = LockFile.freezing(model, through: 2)
            var expected: String
            switch Int.random(in: 0..<7, using: &random) {
            case 0:
                let removed = enumCases.remove(at: Int.random(in: 0..<enumCases.count, using: &random))
                expected = "case 'Kind.\(removed.0)' was removed"
            case 1:
                enumCases.append(("added", nil))
                expected = "case 'Kind.added' was added"
            case 2:
                let index = Int.random(in: 0..<enumCases.count, using: &random)
                // A rename is the old case removed, which is what stores on devices may hold.
                expected = "case 'Kind.\(enumCases[index].0)' was removed"
                enumCases[index].0 += "x"
            case 3:
                let index = Int.random(in: 0..<enumCases.count, using: &random)
                enumCases[index].1 = isString ? "\"changed\"" : "9999"
                expected = "the raw value of 'Kind.\(enumCases[index].0)' changed"
            case 4 where !stages.isEmpty:
                stages[0] += "Renamed"
                expected = "its custom stages changed"
            case 5:
                stages.append("extra")
                expected = stages.count == 1 ? "custom stage 'extra' was added" : "its custom stages changed"
            default:
                expected = ""
            }
            let doc = Bool.random(using: &random) ? "/// Edited doc comment.\n" : ""
            let edited = files(enumCases, stages, doc: doc)
            cases += 1
            for recordsEnums in [true, false] {
                var written = lock
                if !recordsEnums {
                    for index in written.frozen.indices {
                        written.frozen[index].enums = nil
                        written.frozen[index].stages = nil
                    }
                }
                var withLock = edited
                withLock[LockFile.fileName] = String(decoding: try written.encoded(), as: UTF8.self)
                let folder = try temporaryModelFolder(named: "Shop", files: withLock)
                defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
                let errors = FrontEnd.run(modelAt: folder.path).diagnostics.filter { $0.severity == .error }
                guard recordsEnums, !expected.isEmpty else {
                    #expect(
                        errors.isEmpty, "round \(round), records enums: \(recordsEnums): \(errors.map(\.description))")
                    continue
                }
                // Stage edits are in version 2 only; enum edits are in both files, each its own error.
                let isStage = expected.contains("stage")
                #expect(errors.count == (isStage ? 1 : 2), "round \(round): \(errors.map(\.description))")
                for error in errors {
                    #expect(error.message.contains(expected), "round \(round): expected \(expected): \(error)")
                    let lines = (edited["Shop.v2.model"] ?? "").split(separator: "\n", omittingEmptySubsequences: false)
                    let firstNew = lines.firstIndex { line in
                        line.hasPrefix("    custom ") && !original["Shop.v2.model", default: ""].contains(line)
                    }
                    let line = isStage ? (firstNew ?? -1) + 1 : (doc.isEmpty ? 3 : 4)
                    #expect(error.location?.line == line, "round \(round): \(error)")
                }
            }
        }
        #expect(cases == 60)
    }

    /// `@sync` decides what devices exchange, so the lock freezes it though the checksum leaves it
    /// out: drawn over random models of synced and unsynced entities and one random edit (`@sync`
    /// added, removed, or its unique rule swapped), the edit is one error at the entity naming
    /// both markings; under a lock file written before markings were recorded it is none.
    @Test func theSyncMarkingOfAFrozenVersionIsFrozen() throws {
        var random = SplitMix64(seed: 6)
        for round in 0..<40 {
            // nil: not synced; "": @sync; "merge" / "reject": @sync(unique: …) with a unique code.
            var markings: [String?] = (0..<Int.random(in: 1...4, using: &random)).map { _ in
                [nil, "", "merge", "reject"].randomElement(using: &random) ?? nil
            }
            func text(_ markings: [String?]) -> String {
                "model Shop version 1\n"
                    + markings.enumerated().map { index, marking in
                        let sync = marking.map { $0.isEmpty ? "    @sync\n" : "    @sync(unique: \($0))\n" } ?? ""
                        let code = marking.map { $0.isEmpty ? "" : "    code: String @unique\n" } ?? ""
                        return "\nentity E\(index) {\n\(sync)    title: String\n\(code)}\n"
                    }.joined()
            }
            let original = text(markings)
            let lockFolder = try temporaryModelFolder(named: "Shop", files: ["Shop.v1.model": original])
            defer { try? FileManager.default.removeItem(at: lockFolder.deletingLastPathComponent()) }
            let loaded = FrontEnd.run(modelAt: lockFolder.path)
            let model = try #require(loaded.model, "\(loaded.diagnostics.map(\.description))\n\(original)")
            let lock = LockFile.freezing(model, through: 1)
            let index = Int.random(in: 0..<markings.count, using: &random)
            switch markings[index] {
            case nil: markings[index] = ""
            case "": markings[index] = nil
            case "merge": markings[index] = "reject"
            default: markings[index] = "merge"
            }
            // A swapped rule keeps the structure; adding or removing `@sync` alone does too.
            let edited = text(markings)
            for recordsSync in [true, false] {
                var written = lock
                if !recordsSync { written.frozen[0].sync = nil }
                let folder = try temporaryModelFolder(
                    named: "Shop",
                    files: [
                        "Shop.v1.model": edited,
                        LockFile.fileName: String(decoding: try written.encoded(), as: UTF8.self),
                    ])
                defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
                let errors = FrontEnd.run(modelAt: folder.path).diagnostics.filter { $0.severity == .error }
                guard recordsSync else {
                    #expect(errors.isEmpty, "round \(round): \(errors.map(\.description))")
                    continue
                }
                #expect(errors.count == 1, "round \(round): \(errors.map(\.description))\n\(edited)")
                let lines = edited.split(separator: "\n", omittingEmptySubsequences: false)
                let entityLine = (lines.firstIndex { $0 == "entity E\(index) {" } ?? -1) + 1
                let line = markings[index] == nil ? entityLine : entityLine + 1
                #expect(
                    errors.first?.message.contains("entity 'E\(index)' was ") == true
                        && errors.first?.location?.line == line,
                    "round \(round): expected E\(index) at \(line): \(errors.map(\.description))")
            }
        }
    }
}
