import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright
@testable import ModelwrightSchema

/// Issue 25 for entities that change parent: a step `plan` accepts migrates a populated store, every
/// row kept with its values and links, and what cannot be kept is reported at the step.
struct ParentChangeMigrationTests {
    /// How the step changes `Cow`'s parent.
    private enum ParentChange: CaseIterable {
        case removed, added, changed

        var before: String? { self == .added ? nil : "Animal" }
        var after: String? {
            switch self {
            case .removed: nil
            case .added: "Animal"
            case .changed: "Beast"
            }
        }
    }

    private static func cow(parent: String?, body: String) -> String {
        "entity Cow\(parent.map { ": " + $0 } ?? "") { \(body) }"
    }

    /// Every parent change × a required attribute added with a default, without one, or none, over
    /// stores of 0 to 3 cows drawn from the case number: plan accepts the step with a custom stage,
    /// lists the attribute without a default as the stage's value obligation, and the migration
    /// keeps every cow with its values and links and the obligation's value.
    @Test func aParentChangeWithANewRequiredAttributeMigratesEveryRow() throws {
        var migrated = 0
        for change in ParentChange.allCases {
            for added in ["", "name: String = \"none\"; ", "name: String; "] {
                let withoutDefault = added == "name: String; "
                let text = { (version: Int, body: String, parent: String?, block: String) in
                    """
                    model Farm version \(version)
                    entity Animal { legs: Int = 4 }
                    entity Beast { fur: Bool = true }
                    \(Self.cow(parent: parent, body: body))
                    entity Barn { label: String; cows: Set<Cow> @inverse(barns) }
                    \(block)
                    """
                }
                let v1 = text(1, "tag: Int = 0; barns: Set<Barn>", change.before, "")
                let v2 = text(
                    2, added + "tag: Int = 0; barns: Set<Barn>", change.after,
                    "migration from 1 {\n    custom move \"cows move\"\n}\n")
                let folder = try temporaryModelFolder(named: "Farm", files: ["Farm.v1.model": v1, "Farm.v2.model": v2])
                defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
                let loaded = FrontEnd.run(modelAt: folder.path)
                let failure = "\(change), '\(added)'"
                let model = try #require(loaded.model, "\(failure): \(loaded.diagnostics.map(\.message))")
                let step = model.steps[0]
                let owed = step.obligations.filter { $0.entity == "Cow" && $0.property == "name" }
                #expect(owed.count == (withoutDefault ? 1 : 0), "\(failure): \(owed.map(\.subject))")
                if withoutDefault, let obligation = owed.first {
                    #expect(obligation.memberName == "moveCowName", "\(failure)")
                    guard case .value = obligation.work else {
                        Issue.record("\(failure): Cow.name is owed as \(obligation.work), not a value")
                        continue
                    }
                }
                let stages = step.customStages.map { stage in
                    MigrationStage.CustomStep(
                        name: stage.name, label: stage.label,
                        obligations: step.obligations.filter { $0.stage == stage.name }.map { obligation in
                            if case .value = obligation.work {
                                return .value(of: obligation.entity, obligation.property ?? "") { row in
                                    "cow \(row["tag"])"
                                }
                            }
                            return .hook(of: obligation.entity, obligation.property) { _ in }
                        },
                        didMigrate: { _ in })
                }
                let (s1, s2) = (model.versions[0].schema, model.versions[1].schema)
                let tester = try MigrationTester(
                    plan: MigrationPlan(current: s2, stages: [.custom(from: s1, to: s2, steps: stages)]), startingAt: s1
                )
                _ = try tester.insertRow("Animal", ["legs": .integer(3)])
                let barn = try tester.insertRow("Barn", ["label": .string("red")])
                let count = (migrated + 1) % 4
                var cows: [FixtureRow] = []
                for index in 0..<count {
                    cows.append(try tester.insertRow("Cow", ["tag": .integer(Int64(index)), "barns": .toMany([barn])]))
                }
                _ = try tester.migrate()
                migrated += 1
                let rows = try tester.rows(of: "Cow").sorted { "\($0["tag"])" < "\($1["tag"])" }
                #expect(rows.count == count, "\(failure)")
                for (index, row) in rows.enumerated() {
                    #expect(row["tag"] == .integer(Int64(index)), "\(failure)")
                    let name: SQLValue? =
                        withoutDefault
                        ? .text("cow \(SQLValue.integer(Int64(index)))") : added.isEmpty ? nil : .text("none")
                    if let name { #expect(row["name"] == name, "\(failure)") }
                }
                let links = try tester.links(of: "Barn", "cows")
                #expect(Set(links[barn.id] ?? []) == Set(cows.map(\.id)), "\(failure)")
            }
        }
        #expect(migrated == 9)
    }

    /// A parent removed or changed while a relationship typed as the parent, to-one or to-many,
    /// can hold rows of the entity that leaves: plan refuses the step at the relationship, with
    /// the `lossy` line and the other ways out; with the loss declared, the migration of a
    /// populated store drops exactly the links to the leaving rows. Typed as the entity itself,
    /// the relationship keeps every link and plan asks for nothing.
    @Test func aRelationshipTypedAsTheLeftParentIsReportedAndDropsOnlyThoseLinks() throws {
        var cases = 0
        for change in [ParentChange.removed, .changed] {
            for toMany in [false, true] {
                for destination in ["Animal", "Cow"] {
                    cases += 1
                    let relationship =
                        toMany ? "herd: Set<\(destination)> @noInverse" : "pet: \(destination)? @noInverse"
                    let name = toMany ? "herd" : "pet"
                    let text = { (version: Int, parent: String?, block: String) in
                        """
                        model Zoo version \(version)
                        entity Animal { legs: Int = 4 }
                        entity Beast { fur: Bool = true }
                        \(Self.cow(parent: parent, body: "tag: Int = 0"))
                        entity Owner { label: String; \(relationship) }
                        \(block)
                        """
                    }
                    let failure = "\(change), \(relationship)"
                    let v1 = text(1, change.before, "")
                    let stage = "    custom leave \"cows leave\"\n"
                    let refused = try temporaryModelFolder(
                        named: "Zoo",
                        files: [
                            "Zoo.v1.model": v1, "Zoo.v2.model": text(2, change.after, "migration from 1 {\n\(stage)}"),
                        ]
                    )
                    defer { try? FileManager.default.removeItem(at: refused.deletingLastPathComponent()) }
                    let first = FrontEnd.run(modelAt: refused.path)
                    let errors = first.diagnostics.filter { $0.severity == .error }
                    let leaves = destination == "Animal"
                    if leaves {
                        let error = try #require(errors.first, "\(failure): plan accepted the step")
                        #expect(error.message.contains("Owner.\(name)"), "\(failure): \(error.message)")
                        // Located at the relationship, on the Owner line of version 2.
                        #expect(error.location?.line == 5, "\(failure): \(String(describing: error.location))")
                        let notes = error.notes.map(\.message).joined(separator: " | ")
                        #expect(notes.contains("lossy Owner.\(name)"), "\(failure): \(notes)")
                        #expect(notes.contains("keep Cow below Animal"), "\(failure): \(notes)")
                    } else {
                        #expect(errors.isEmpty, "\(failure): \(errors.map(\.message))")
                    }
                    let declared = stage + (leaves ? "    lossy Owner.\(name) \"cows leave\"\n" : "")
                    let folder = try temporaryModelFolder(
                        named: "Zoo",
                        files: [
                            "Zoo.v1.model": v1,
                            "Zoo.v2.model": text(2, change.after, "migration from 1 {\n\(declared)}"),
                        ]
                    )
                    defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
                    let loaded = FrontEnd.run(modelAt: folder.path)
                    let model = try #require(loaded.model, "\(failure): \(loaded.diagnostics.map(\.message))")
                    let step = model.steps[0]
                    let stages = step.customStages.map { stage in
                        MigrationStage.CustomStep(
                            name: stage.name, label: stage.label,
                            obligations: step.obligations.filter { $0.stage == stage.name }.map {
                                .hook(of: $0.entity, $0.property) { _ in }
                            },
                            didMigrate: { _ in })
                    }
                    let (s1, s2) = (model.versions[0].schema, model.versions[1].schema)
                    // The plan carries the step's `lossy` lines, as the generated one does.
                    #expect(step.losses == (leaves ? [MigrationStage.Loss("Owner", name)] : []), "\(failure)")
                    let tester = try MigrationTester(
                        plan: MigrationPlan(
                            current: s2, stages: [.custom(from: s1, to: s2, steps: stages, lossy: step.losses)]),
                        startingAt: s1)
                    let animal = try tester.insertRow("Animal", ["legs": .integer(3)])
                    let cow = try tester.insertRow("Cow", ["tag": .integer(1)])
                    let targets = destination == "Animal" ? [animal, cow] : [cow]
                    var owners: [FixtureRow] = []
                    for target in targets {
                        owners.append(
                            try tester.insertRow(
                                "Owner",
                                ["label": .string("o"), name: toMany ? .toMany(targets) : .to(target)]))
                    }
                    // Built by hand without the declaration, the same stage refuses to drop the
                    // links, naming the relationship, how many and the first; nothing commits.
                    let undeclared = try MigrationTester(
                        plan: MigrationPlan(current: s2, stages: [.custom(from: s1, to: s2, steps: stages)]),
                        startingAt: s1)
                    let animal2 = try undeclared.insertRow("Animal", ["legs": .integer(3)])
                    let cow2 = try undeclared.insertRow("Cow", ["tag": .integer(1)])
                    let targets2 = destination == "Animal" ? [animal2, cow2] : [cow2]
                    for target in targets2 {
                        _ = try undeclared.insertRow(
                            "Owner", ["label": .string("o"), name: toMany ? .toMany(targets2) : .to(target)])
                    }
                    if leaves {
                        do {
                            _ = try undeclared.migrate()
                            Issue.record("\(failure): a hand-built plan dropped links without 'lossy'")
                        } catch let error as MigrationError {
                            guard
                                case .undeclaredLinkLoss(
                                    _, let entity, let relationship, let rows, let row, let target) = error
                            else {
                                Issue.record("\(failure): \(error)")
                                continue
                            }
                            #expect(entity == "Owner" && relationship == name, "\(failure): \(error)")
                            #expect(rows == (toMany ? 2 : 1), "\(failure): \(error)")
                            #expect(!row.isEmpty && !target.isEmpty, "\(failure): \(error)")
                        }
                    } else {
                        _ = try undeclared.migrate()
                    }
                    _ = try tester.migrate()
                    let links = try tester.links(of: "Owner", name)
                    for (owner, target) in zip(owners, targets) {
                        let kept = toMany ? targets : [target]
                        let expected = leaves ? kept.filter { $0.entity != "Cow" } : kept
                        #expect(
                            Set(links[owner.id] ?? []) == Set(expected.map(\.id)),
                            "\(failure): \(owner) links \(links[owner.id] ?? [])")
                    }
                    #expect(try tester.rows(of: "Cow").count == 1, "\(failure)")
                }
            }
        }
        #expect(cases == 8)
    }
}
