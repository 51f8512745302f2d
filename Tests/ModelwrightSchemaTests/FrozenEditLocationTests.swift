import Foundation
import ModelwrightTestSupport
import Testing

@testable import ModelwrightSchema

/// Every kind of edit to a frozen version is one error at the line of the declaration it changed
/// (an attribute, the attribute holding an added `@indexed` or `@unique`, an enum case, a
/// relationship, a migration block clause), naming it; a doc comment edit, or a reorder of a
/// String enum's cases, is none. Drawn over random models, with one random edit of every kind each.
struct FrozenEditLocationTests {
    private static let types = ["String", "Int16", "Int32", "Int64", "Double", "Bool"]

    private static func defaultValue(of type: String) -> String {
        switch type {
        case "String": "\"x\""
        case "Double": "1.5"
        case "Bool": "true"
        default: "1"
        }
    }

    /// Version 2 of a random model: an enum used by a default, two entities joined by a to-one
    /// relationship, and a migration block with an accepted loss and a custom stage.
    private static func version2(using random: inout SplitMix64) -> (lines: [String], isIntEnum: Bool) {
        let isInt = Bool.random(using: &random)
        var lines = ["model Shop version 2", "", "enum Kind: \(isInt ? "Int" : "String") {"]
        lines += (0..<Int.random(in: 3...5, using: &random)).map { "    k\($0)" }
        lines += ["}", "", "entity E0 {"]
        func attributes(_ prefix: String) -> [String] {
            (0..<Int.random(in: 1...4, using: &random)).map { index in
                let type = types.randomElement(using: &random) ?? "String"
                let optional = Bool.random(using: &random) ? "?" : ""
                let value = Bool.random(using: &random) ? " = \(defaultValue(of: type))" : ""
                return "    \(prefix)\(index): \(type)\(optional)\(value)"
            }
        }
        lines += attributes("a")
        lines += ["    kind: Kind = .k0", "    added: String?", "    rel: E1? @inverse(back) @delete(nullify)", "}"]
        lines += ["", "entity E1 {"] + attributes("b") + ["    back: Set<E0> @delete(nullify)", "}"]
        lines += ["", "migration from 1 {", "    lossy E0.old \"gone\"", "    custom fill \"Fill\"", "}"]
        return (lines, isInt)
    }

    /// Version 1: version 2 with `old` instead of `added`, and no migration block.
    private static func version1(of lines: [String]) -> String {
        let body = lines.prefix { $0 != "migration from 1 {" }
        return
            body.map {
                $0 == "model Shop version 2"
                    ? "model Shop version 1" : $0 == "    added: String?" ? "    old: String?" : $0
            }
            .joined(separator: "\n") + "\n"
    }

    private static let kinds = [
        "type", "default", "optional", "index", "unique", "case added", "case removed", "cases reordered",
        "delete rule", "covers", "lossy", "doc comment",
    ]

    /// Applies one edit of `kind` to `lines`: what the error must say and the index of the line it
    /// must point at, or `nil` when the edit is allowed.
    private static func edit(
        _ kind: String, _ lines: inout [String], isIntEnum: Bool, using random: inout SplitMix64
    ) -> (what: String, line: Int)? {
        let attributeLines = lines.indices.filter { lines[$0].wholeMatch(of: #/ {4}[ab][0-9]+:.*/#) != nil }
        let caseLines = lines.indices.filter { lines[$0].wholeMatch(of: #/ {4}k[0-9]+/#) != nil }
        let pick = attributeLines.randomElement(using: &random) ?? 0
        let name = String(lines[pick].dropFirst(4).prefix { $0 != ":" })
        let type = String(lines[pick].split(separator: " ")[1].prefix { $0.isLetter || $0.isNumber })
        let differs = ("attribute '\(name)' differs from the released one", pick)
        switch kind {
        case "type":
            let other = types.filter { $0 != type }.randomElement(using: &random) ?? "String"
            // The default goes with the type, so the new type still accepts it.
            lines[pick] = "    \(name): \(other)" + (lines[pick].contains("?") ? "?" : "")
            return differs
        case "default":
            if let equals = lines[pick].range(of: " = ") {
                lines[pick] = String(lines[pick][..<equals.lowerBound])
            } else {
                lines[pick] += " = \(defaultValue(of: type))"
            }
            return differs
        case "optional":
            lines[pick] =
                lines[pick].contains("?")
                ? lines[pick].replacingOccurrences(of: "?", with: "")
                : lines[pick].replacingOccurrences(of: ": \(type)", with: ": \(type)?")
            return differs
        case "index":
            lines[pick] += " @indexed"
            return ("the index (\(name)) was added here", pick)
        case "unique":
            lines[pick] += " @unique"
            return ("the uniqueness constraint (\(name)) was added here", pick)
        case "case added":
            let position = caseLines.randomElement(using: &random).map { $0 + Int.random(in: 0...1, using: &random) }
            lines.insert("    kNew", at: position ?? 0)
            return ("case 'Kind.kNew' was added here", position ?? 0)
        case "case removed":
            // Not k0: the attribute's default names it.
            let removed = caseLines.dropFirst().randomElement(using: &random) ?? 0
            let caseName = lines[removed].trimmingCharacters(in: .whitespaces)
            lines.remove(at: removed)
            return ("case 'Kind.\(caseName)' was removed", lines.firstIndex { $0.hasPrefix("enum Kind") } ?? 0)
        case "cases reordered":
            let first = caseLines[Int.random(in: 0..<(caseLines.count - 1), using: &random)]
            lines.swapAt(first, first + 1)
            // An Int enum numbers its cases in order: the first moved case has a new raw value.
            guard isIntEnum else { return nil }
            let caseName = lines[first].trimmingCharacters(in: .whitespaces)
            return ("the raw value of 'Kind.\(caseName)' changed", first)
        case "delete rule":
            let line = lines.firstIndex { $0.hasPrefix("    rel:") } ?? 0
            lines[line] = lines[line].replacingOccurrences(of: "@delete(nullify)", with: "@delete(deny)")
            return ("relationship 'rel' differs from the released one", line)
        case "covers":
            let line = lines.firstIndex { $0.hasPrefix("    custom fill") } ?? 0
            lines[line] += " covers E0.added"
            return ("'covers fill E0.added' was added to its migration block", line)
        case "lossy":
            let line = lines.firstIndex { $0.hasPrefix("    lossy") } ?? 0
            lines.insert("    lossy E1.\(name) \"also gone\"", at: line + 1)
            return ("'lossy E1.\(name)' was added to its migration block", line + 1)
        default:
            let line =
                ([pick] + caseLines
                + lines.indices.filter { lines[$0].hasPrefix("entity") || lines[$0].hasPrefix("enum") })
                .randomElement(using: &random) ?? 0
            let indent = String(lines[line].prefix { $0 == " " })
            lines.insert(indent + "/// An edited doc comment.", at: line)
            return nil
        }
    }

    @Test func everyKindOfEditIsReportedAtTheDeclarationItChanged() throws {
        var random = SplitMix64(seed: 41)
        var checked: [String: Int] = [:]
        for round in 0..<12 {
            let (lines, isInt) = Self.version2(using: &random)
            let original = [
                "Shop.v1.model": Self.version1(of: lines), "Shop.v2.model": lines.joined(separator: "\n") + "\n",
            ]
            let lockFolder = try temporaryModelFolder(named: "Shop", files: original)
            defer { try? FileManager.default.removeItem(at: lockFolder.deletingLastPathComponent()) }
            let loaded = FrontEnd.run(modelAt: lockFolder.path)
            let model = try #require(loaded.model, "\(loaded.diagnostics.map(\.description))\n\(original)")
            let lock = String(decoding: try LockFile.freezing(model, through: 2).encoded(), as: UTF8.self)
            for kind in Self.kinds {
                var edited = lines
                let expected = Self.edit(kind, &edited, isIntEnum: isInt, using: &random)
                let text = edited.joined(separator: "\n") + "\n"
                let folder = try temporaryModelFolder(
                    named: "Shop",
                    files: [
                        "Shop.v1.model": original["Shop.v1.model"] ?? "", "Shop.v2.model": text,
                        LockFile.fileName: lock,
                    ])
                defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
                let errors = FrontEnd.run(modelAt: folder.path).diagnostics.filter { $0.severity == .error }
                checked[kind, default: 0] += 1
                guard let expected else {
                    #expect(errors.isEmpty, "round \(round), \(kind): \(errors.map(\.description))\n\(text)")
                    continue
                }
                #expect(errors.count == 1, "round \(round), \(kind): \(errors.map(\.description))\n\(text)")
                let error = try #require(errors.first)
                #expect(
                    error.message.contains(expected.what) && error.location?.line == expected.line + 1
                        && error.path.hasSuffix("Shop.v2.model"),
                    "round \(round), \(kind): expected '\(expected.what)' at line \(expected.line + 1), got \(error.description)\n\(text)"
                )
            }
        }
        #expect(checked.count == Self.kinds.count && checked.values.allSatisfy { $0 == 12 })
    }
}
