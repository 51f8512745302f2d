import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright
@testable import ModelwrightSchema

/// A row keeps its enum case by name across a step that reorders the cases, inserts one in the
/// middle or swaps explicit raw values: the store keeps raw values, so without a mapping a
/// reordered `Int` enum would swap every row's meaning under a plan that said nothing changed.
struct EnumCaseMoveTests {
    /// One generated edit: the enum's cases in each version, with explicit raw values or not.
    private struct Edit {
        let rawType: String
        let v1: [(name: String, raw: String?)]
        let v2: [(name: String, raw: String?)]
    }

    private static func edit(seed: UInt64) -> Edit {
        var random = SplitMix64(seed: seed)
        func roll(_ count: Int) -> Int { Int(random.next() % UInt64(count)) }
        let isInt = roll(2) == 0
        let explicit = roll(2) == 0
        let names = (0..<(2 + roll(4))).map { "c\($0)" }
        let v1 = names.enumerated().map { index, name in
            (name: name, raw: explicit ? (isInt ? "\(index * 3 + 1)" : "r\(index)") : nil)
        }
        var v2 = v1
        switch roll(3) {
        case 0:  // reorder
            v2.shuffle(using: &random)
            if v2.map(\.name) == v1.map(\.name) { v2.reverse() }
        case 1:  // insert in the middle
            v2.insert((name: "added", raw: explicit ? (isInt ? "100" : "added") : nil), at: 1 + roll(v2.count - 1))
        default:  // swap two cases' raw values (or, implicit, their places)
            let first = roll(v2.count)
            let second = (first + 1 + roll(v2.count - 1)) % v2.count
            if explicit {
                (v2[first].raw, v2[second].raw) = (v2[second].raw, v2[first].raw)
            } else {
                v2.swapAt(first, second)
            }
        }
        return Edit(rawType: isInt ? "Int" : "String", v1: v1, v2: v2)
    }

    /// The model; `modifier` gives the enum attributes a version hash modifier, since the store's
    /// checksum does not see raw values and the step must run.
    private static func model(
        version: Int, rawType: String, cases: [(name: String, raw: String?)], modifier: Bool = false
    ) -> String {
        let mark = modifier ? " @coreData(versionHashModifier: \"moved\")" : ""
        let list = cases.map { enumCase in
            enumCase.raw.map { rawType == "Int" ? "\(enumCase.name) = \($0)" : "\(enumCase.name) = \"\($0)\"" }
                ?? enumCase.name
        }
        return """
            model Moods version \(version)
            enum Mood: \(rawType) { \(list.joined(separator: ", ")) }
            composite Box { mood: Mood; size: Int }
            entity Base {
                mood: Mood\(mark)
            }
            entity Leaf: Base {
                other: Mood?\(mark)
                box: Box?\(mark)
            }

            """
    }

    /// The case name a stored raw value stands for in `description`.
    private static func caseName(_ value: SQLValue, in description: EnumDescription) -> String? {
        let raw: String
        switch value {
        case .integer(let number): raw = String(number)
        case .text(let text): raw = text
        default: return nil
        }
        return description.cases.first { $0.rawValue == raw }?.name
    }

    private static func literal(_ enumCase: EnumDescription.Case, of description: EnumDescription) -> SQLValue {
        description.rawType == .int ? .integer(Int64(enumCase.rawValue) ?? 0) : .text(enumCase.rawValue)
    }

    @Test func rowsKeepTheirEnumCaseByNameWhenCasesMove() throws {
        var moved = 0
        for seed in 1...UInt64(60) {
            let edit = Self.edit(seed: seed)
            let v1Text = Self.model(version: 1, rawType: edit.rawType, cases: edit.v1)
            let v2Text = Self.model(version: 2, rawType: edit.rawType, cases: edit.v2, modifier: true)
            // Without modifiers the versions share a checksum, so the step would never run: the
            // plan refuses it at the attribute rather than leave rows with other cases.
            let unmarked = try temporaryModelFolder(
                named: "Moods",
                files: [
                    "Moods.v1.model": v1Text,
                    "Moods.v2.model": Self.model(version: 2, rawType: edit.rawType, cases: edit.v2),
                ])
            defer { try? FileManager.default.removeItem(at: unmarked.deletingLastPathComponent()) }
            let refused = FrontEnd.run(modelAt: unmarked.path).diagnostics.filter { $0.severity == .error }
            let folder = try temporaryModelFolder(
                named: "Moods", files: ["Moods.v1.model": v1Text, "Moods.v2.model": v2Text])
            defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
            let loaded = FrontEnd.run(modelAt: folder.path)
            let failure = "seed \(seed)\n\(v1Text)\n\(v2Text)"
            #expect(!loaded.diagnostics.contains { $0.severity == .error }, "\(loaded.diagnostics) \(failure)")
            guard let model = loaded.model, model.versions.count == 2 else { continue }
            let step = model.steps[0]
            #expect(step.isLightweight, "\(step.changes.map(\.summary)) \(failure)")
            let (v1, v2) = (model.versions[0].schema, model.versions[1].schema)
            guard case .enumeration(let before)? = v1.entity(named: "Base")?.attributes.first?.type,
                case .enumeration(let after)? = v2.entity(named: "Base")?.attributes.first?.type
            else {
                Issue.record("no enum: \(failure)")
                continue
            }
            if before.rawValueChanges(to: after)?.isEmpty == false {
                moved += 1
                #expect(
                    refused.contains { $0.message.contains("never runs") && $0.location != nil },
                    "seed \(seed): \(refused)")
            }
            let tester = try MigrationTester(
                plan: MigrationPlan(current: v2, stages: [.lightweight(from: v1, to: v2)]), startingAt: v1)
            var expected: [SQLValue: [String: String]] = [:]
            for (index, enumCase) in before.cases.enumerated() {
                let other = before.cases[(index + 1) % before.cases.count]
                let base = try tester.insert("Base", ["mood": Self.literal(enumCase, of: before)])
                expected[base] = ["mood": enumCase.name]
                let leaf = try tester.insert(
                    "Leaf",
                    [
                        "mood": Self.literal(other, of: before), "other": Self.literal(enumCase, of: before),
                        "box.mood": Self.literal(enumCase, of: before), "box.size": .integer(1),
                    ])
                expected[leaf] = ["mood": other.name, "other": enumCase.name, "box.mood": enumCase.name]
            }
            #expect(throws: Never.self, "\(failure)") { _ = try tester.migrate() }
            for entity in ["Base", "Leaf"] {
                for row in try tester.rows(of: entity) where row["_entity"] == .text(entity) {
                    for (column, name) in expected[row.id] ?? [:] {
                        #expect(
                            Self.caseName(row[column], in: after) == name,
                            "\(entity).\(column) = \(row[column]) should be \(name): \(failure)")
                    }
                }
            }
        }
        #expect(moved >= 20, "only \(moved) edits moved a case")
    }
}
