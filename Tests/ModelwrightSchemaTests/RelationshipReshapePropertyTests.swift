import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright
@testable import ModelwrightSchema

/// The rule `plan` promises for relationships, on seeded random version pairs that reshape one
/// relationship and its inverse (to-one, set or ordered list on each side, an inverse added or
/// removed, the destination narrowed to a sub-entity or widened to its parent, a rename), over a
/// store with links, with a custom stage whose hooks do nothing: either the plan refuses the step,
/// or the migration fails loudly, or every old link the new version can hold is still there.
/// Never a migration that commits having lost links.
///
/// `MODELWRIGHT_MIGRATION_PAIRS=<n>` runs `n` pairs instead of the CI's 20 (the same variable as
/// ``MigrationPropertyTests``).
struct RelationshipReshapePropertyTests {
    /// One version's relationship between `Person` and the `Animal` hierarchy.
    private struct Shape: CustomStringConvertible {
        /// `one`, `set` or `list`.
        var forward: String
        var destination: String
        /// The inverse on the destination entity, or `nil`.
        var inverse: String?
        var renamed = false

        var name: String { renamed ? "petsR" : "pets" }
        var description: String { "\(forward) of \(destination), inverse \(inverse ?? "none")" }

        static func type(_ kind: String, of entity: String) -> String {
            switch kind {
            case "one": "\(entity)?"
            case "set": "Set<\(entity)>"
            default: "[\(entity)]"
            }
        }

        /// Whether a side of the pair can hold fewer links in `next` (a side without a declared
        /// inverse holds any number), decided from the shapes alone, apart from the planner.
        func narrows(to next: Shape) -> Bool {
            let back = { (shape: Shape) in shape.inverse ?? "set" }
            return (forward != "one" && next.forward == "one") || (back(self) != "one" && back(next) == "one")
        }

        func text(version: Int, stage: Bool = true) -> String {
            let pets =
                "    \(name): \(Self.type(forward, of: destination))"
                + (inverse == nil ? "" : " @inverse(owner)") + (renamed ? " @renamed(from: pets)" : "")
            let owner = inverse.map { "    owner: \(Self.type($0, of: "Person"))" }
            var lines = [
                "model Pairs version \(version)",
                "entity Person {", "    name: String", pets, "}",
                "entity Animal {", "    name: String", destination == "Animal" ? owner : nil, "}",
                "entity Cat: Animal {", "    lives: Int16 = 9", destination == "Cat" ? owner : nil, "}",
                "entity Dog: Animal {", "    good: Bool = true", "}",
            ].compactMap { $0 }
            if version == 2, stage {
                lines += ["migration from 1 {", "    custom relink \"Relink\""]
                lines.append("    lossy Person.pets")
                lines.append("}")
            }
            return lines.joined(separator: "\n") + "\n"
        }
    }

    private static let kinds = ["one", "set", "list"]

    private static func shapes(seed: UInt64) -> (Shape, Shape) {
        var random = SplitMix64(seed: seed)
        func roll(_ count: Int) -> Int { Int(random.next() % UInt64(count)) }
        func draw() -> Shape {
            Shape(
                forward: kinds[roll(3)], destination: roll(2) == 0 ? "Animal" : "Cat",
                inverse: roll(4) == 0 ? nil : kinds[roll(3)])
        }
        let v1 = draw()
        var v2 = v1
        // One to three changes, each to one facet.
        for _ in 0..<(1 + roll(3)) {
            switch roll(4) {
            case 0: v2.forward = kinds[roll(3)]
            case 1: v2.destination = v2.destination == "Animal" ? "Cat" : "Animal"
            case 2: v2.inverse = roll(4) == 0 ? nil : kinds[roll(3)]
            default: v2.renamed.toggle()
            }
        }
        return (v1, v2)
    }

    /// Pairs where the list stays a list whose order is its own while the links move between
    /// storages (the inverse added, removed or reshaped, the destination narrowed or widened).
    private static func orderedShapes(seed: UInt64) -> (Shape, Shape) {
        var random = SplitMix64(seed: seed)
        func roll(_ count: Int) -> Int { Int(random.next() % UInt64(count)) }
        let inverses: [String?] = [nil, "one", "set"]
        let v1 = Shape(forward: "list", destination: roll(2) == 0 ? "Animal" : "Cat", inverse: inverses[roll(3)])
        var v2 = v1
        v2.inverse = inverses[((inverses.firstIndex(of: v1.inverse) ?? 0) + 1 + roll(2)) % 3]
        if roll(2) == 0 { v2.destination = v2.destination == "Animal" ? "Cat" : "Animal" }
        v2.renamed = roll(2) == 0
        return (v1, v2)
    }

    @Test func aReshapedRelationshipKeepsItsLinksOrTheMigrationFailsLoudly() throws {
        try check(count: 20, orders: 0, shapes: Self.shapes(seed:))
    }

    @Test func aReshapedListKeepsItsOrder() throws {
        try check(count: 30, orders: 10, shapes: Self.orderedShapes(seed:))
    }

    private func check(count defaultCount: Int, orders: Int, shapes: (UInt64) -> (Shape, Shape)) throws {
        let environment = ProcessInfo.processInfo.environment
        let count = environment["MODELWRIGHT_MIGRATION_PAIRS"].flatMap { Int($0) } ?? defaultCount
        var accepted = 0
        var acceptedLightweight = 0
        var committedLightweight = 0
        var committed = 0
        var refusedAtRuntime = 0
        var linksChecked = 0
        var ordersChecked = 0
        var reshapes: Set<String> = []
        for seed in 1...UInt64(count) {
            let (s1, s2) = shapes(seed)
            // First as a lightweight step (no migration block); when plan refuses that, with a
            // custom stage and the loss accepted.
            let bare = try temporaryModelFolder(
                named: "Pairs",
                files: ["Pairs.v1.model": s1.text(version: 1), "Pairs.v2.model": s2.text(version: 2, stage: false)])
            defer { try? FileManager.default.removeItem(at: bare.deletingLastPathComponent()) }
            let folder = try temporaryModelFolder(
                named: "Pairs", files: ["Pairs.v1.model": s1.text(version: 1), "Pairs.v2.model": s2.text(version: 2)])
            defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
            let failure = "seed \(seed): \(s1) → \(s2)"
            let lightweight = FrontEnd.run(modelAt: bare.path).model.flatMap { $0.versions.count == 2 ? $0 : nil }
            let isLightweight = lightweight != nil
            if isLightweight {
                // By construction: a narrowing is never lightweight.
                #expect(!s1.narrows(to: s2), "\(failure): plan accepted a narrowing as lightweight")
            }
            let loaded = FrontEnd.run(modelAt: folder.path)
            guard let model = lightweight ?? loaded.model, model.versions.count == 2 else { continue }
            accepted += 1
            if isLightweight { acceptedLightweight += 1 }
            let (v1, v2) = (model.versions[0].schema, model.versions[1].schema)
            let step = model.steps[0]
            // The app's stage: every hook does nothing.
            let stages = step.customStages.map { stage in
                MigrationStage.CustomStep(
                    name: stage.name, label: stage.label,
                    obligations: step.obligations.filter { $0.stage == stage.name }.map { obligation in
                        .hook(of: obligation.entity, obligation.property) { _ in }
                    },
                    didMigrate: { _ in })
            }
            let tester = try MigrationTester(
                plan: MigrationPlan(
                    current: v2,
                    stages: [
                        stages.isEmpty
                            ? .lightweight(from: v1, to: v2, lossy: step.losses)
                            : .custom(from: v1, to: v2, steps: stages, lossy: step.losses)
                    ]
                ),
                startingAt: v1)
            // Animals of every entity, then people linked to them as version 1 allows.
            var random = SplitMix64(seed: seed &* 7919)
            var animals: [FixtureRow] = []
            for (index, entity) in ["Animal", "Cat", "Cat", "Dog", "Dog"].enumerated() {
                animals.append(try tester.insertRow(entity, ["name": .string("a\(index)")]))
            }
            let targets = animals.filter { s1.destination == "Animal" || $0.entity == "Cat" }
            var taken: Set<FixtureRow> = []
            var links: [(person: FixtureRow, animal: FixtureRow)] = []
            for index in 0..<4 {
                // An animal with a to-one inverse has one owner at most.
                // The ordered pairs keep lists apart when the new inverse is to-one, so their
                // order is checked rather than the links refused.
                let apart = s1.inverse == "one" || (orders > 0 && s2.inverse == "one")
                let free = targets.filter { !apart || !taken.contains($0) }
                let chosen = free.filter { _ in random.next() % 2 == 0 }
                var linked = s1.forward == "one" ? Array(chosen.prefix(1)) : chosen
                // A list in an order other than the IDs', so a carry that renumbers shows.
                if s1.forward == "list" {
                    for index in stride(from: linked.count - 1, to: 0, by: -1) {
                        linked.swapAt(index, Int(random.next() % UInt64(index + 1)))
                    }
                }
                let value: FixtureValue = s1.forward == "one" ? linked.first.map { .to($0) } ?? .null : .toMany(linked)
                let person = try tester.insertRow("Person", ["name": .string("p\(index)"), "pets": value])
                links += linked.map { (person, $0) }
                taken.formUnion(linked)
            }
            do {
                _ = try tester.migrate()
            } catch {
                // Loudly: a migration error that names the stage, and never for a step plan
                // accepted as lightweight (the promise: plan-accepted lightweight steps migrate).
                #expect(error is MigrationError, "\(failure): \(error)")
                #expect(!isLightweight, "\(failure): a lightweight step failed on real data: \(error)")
                refusedAtRuntime += 1
                if ProcessInfo.processInfo.environment["MODELWRIGHT_SHOW_REFUSALS"] == "1" {
                    print("\(failure): \(error)")
                }
                continue
            }
            committed += 1
            if isLightweight { committedLightweight += 1 }
            reshapes.insert("\(s1.forward)/\(s1.inverse ?? "-") → \(s2.forward)/\(s2.inverse ?? "-")")
            let after = try tester.links(of: "Person", s2.name)
            // The links the new version can hold: to a row of its destination, and not one of
            // several where the new shape keeps one.
            let fitting = links.filter { s2.destination == "Animal" || $0.animal.entity == "Cat" }
            let held = fitting.filter { link in
                !(s2.forward == "one" && fitting.filter({ $0.person == link.person }).count > 1)
                    && !(s2.inverse == "one" && fitting.filter({ $0.animal == link.animal }).count > 1)
            }
            for link in held {
                linksChecked += 1
                #expect(
                    after[link.person.id]?.contains(link.animal.id) == true,
                    "\(failure): the link \(link.person.entity) → \(link.animal.entity) was lost")
            }
            // A list that stays a list keeps its order (when both sides are lists, the shared
            // table keeps the order of `Animal.owner`, whose name sorts first, so not this one).
            if s1.forward == "list", s2.forward == "list", s1.inverse != "list", s2.inverse != "list" {
                for person in Set(held.map(\.person)) {
                    let kept = held.filter { $0.person == person }.map(\.animal.id)
                    ordersChecked += 1
                    #expect(
                        (after[person.id] ?? []).filter { kept.contains($0) } == kept,
                        "\(failure): the order of \(person.id)'s list was not kept")
                }
            }
        }
        print(
            "relationship reshapes: \(count) pairs, accepted by plan: \(accepted) (lightweight: \(acceptedLightweight), of which committed: \(committedLightweight)), committed: \(committed), refused at runtime: \(refusedAtRuntime), links checked: \(linksChecked), orders checked: \(ordersChecked), distinct reshapes committed: \(reshapes.count)"
        )
        #expect(accepted >= count / 5, "only \(accepted) of \(count) pairs were accepted")
        // The ordered pairs hold fewer links: no to-one side to draw many from.
        #expect(linksChecked >= (orders == 0 ? count : count / 2), "only \(linksChecked) links checked")
        #expect(ordersChecked >= orders * count / defaultCount, "only \(ordersChecked) orders checked")
    }
}
