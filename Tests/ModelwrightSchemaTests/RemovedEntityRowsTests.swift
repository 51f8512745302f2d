import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright
@testable import ModelwrightSchema

/// Issue 25, B4: a custom stage reads the rows of an entity its step removes with
/// `MigrationContext.rows(ofRemoved:)`, however the step renames tables, when another entity is
/// renamed to the removed one's name and takes its table name (or its `_entity` value).
struct RemovedEntityRowsTests {
    /// Where the removed `Note` lives in version 1, and where the entity renamed to `Note` comes from.
    private enum Place: CaseIterable {
        /// Its own table.
        case root
        /// Below `Item`, in `Item`'s table.
        case belowItem
        /// Below `Box`, in `Box`'s table.
        case belowBox
    }

    /// Every pair of places (the taker below `Item` beside the removed note shares its table) with
    /// 0 to 3 notes and memos drawn from the case number.
    @Test func aRemovedEntityIsReadByItsOldNameWhenARenamedEntityTakesIt() throws {
        var cases = 0
        for removed in [Place.root, .belowItem] {
            for taker in Place.allCases {
                cases += 1
                let notes = cases % 4
                let memos = (cases + 1) % 4
                func entity(_ name: String, _ place: Place, _ body: String, renamed: String? = nil) -> String {
                    let parent = place == .root ? "" : place == .belowItem ? ": Item" : ": Box"
                    let rename = renamed.map { "\n    @renamed(from: \($0))\n    " } ?? ""
                    return "entity \(name)\(parent) { \(rename)\(body) }"
                }
                let common = "entity Item { kind: Int = 0 }\nentity Box { size: Int = 0 }"
                let v1 = """
                    model Pad version 1
                    \(common)
                    \(entity("Note", removed, "text: String"))
                    \(entity("Memo", taker, "body: String"))
                    """
                let v2 = """
                    model Pad version 2
                    \(common)
                    \(entity("Note", taker, "body: String; oldTexts: String?", renamed: "Memo"))
                    migration from 1 {
                        custom keepTexts "keeps the old notes' texts"
                        lossy Note "the old notes go"
                    }
                    """
                let failure = "removed \(removed), taker \(taker)\n\(v1)\n\(v2)"
                let folder = try temporaryModelFolder(named: "Pad", files: ["Pad.v1.model": v1, "Pad.v2.model": v2])
                defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
                let loaded = FrontEnd.run(modelAt: folder.path)
                let model = try #require(
                    loaded.model, "\(failure)\n\(loaded.diagnostics.filter { $0.severity == .error }.map(\.message))")
                let step = model.steps[0]
                let (s1, s2) = (model.versions[0].schema, model.versions[1].schema)
                let read = Locked<(removed: [MigrationRow], current: [MigrationRow])>(([], []))
                let stages = step.customStages.map { stage in
                    MigrationStage.CustomStep(
                        name: stage.name, label: stage.label,
                        obligations: step.obligations.filter { $0.stage == stage.name }.map {
                            .hook(of: $0.entity, $0.property) { _ in }
                        },
                        didMigrate: { context in
                            let removed = try context.rows(ofRemoved: "Note")
                            let current = try context.rows(of: "Note")
                            read.withLock { $0 = (removed, current) }
                            let texts = removed.compactMap { row -> String? in
                                guard case .text(let text) = row["text"] else { return nil }
                                return text
                            }
                            for note in current {
                                try context.update(
                                    "Note", id: note.id, set: ["oldTexts": .text(texts.sorted().joined(separator: ","))]
                                )
                            }
                        })
                }
                let tester = try MigrationTester(
                    plan: MigrationPlan(
                        current: s2, stages: [.custom(from: s1, to: s2, steps: stages, lossy: step.losses)]),
                    startingAt: s1)
                var noteRows: [FixtureRow] = []
                for index in 0..<notes {
                    noteRows.append(try tester.insertRow("Note", ["text": .string("t\(index)")]))
                }
                var memoRows: [FixtureRow] = []
                for index in 0..<memos {
                    memoRows.append(try tester.insertRow("Memo", ["body": .string("b\(index)")]))
                }
                _ = try tester.insertRow("Item", [:])
                _ = try tester.insertRow("Box", [:])
                _ = try tester.migrate()
                let (removedRows, currentRows) = read.withLock { $0 }
                #expect(Set(removedRows.map(\.id)) == Set(noteRows.map(\.id)), "\(failure)")
                #expect(
                    Set(removedRows.map { $0["text"] }) == Set((0..<notes).map { SQLValue.text("t\($0)") }),
                    "\(failure)")
                #expect(Set(currentRows.map(\.id)) == Set(memoRows.map(\.id)), "\(failure)")
                // After the stage: the renamed memos are the notes, each with the old notes' texts.
                let after = try tester.rows(of: "Note")
                #expect(Set(after.map(\.id)) == Set(memoRows.map(\.id)), "\(failure)")
                let texts = (0..<notes).map { "t\($0)" }.joined(separator: ",")
                for row in after { #expect(row["oldTexts"] == .text(texts), "\(failure)") }
            }
        }
        #expect(cases == 6)
    }
}
