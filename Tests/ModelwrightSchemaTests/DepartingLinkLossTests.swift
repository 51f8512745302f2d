import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright
@testable import ModelwrightSchema

/// Issue 25, B1/B2: a link held by a foreign key on a row that leaves its relationship's
/// destination hierarchy (its entity removed from the shared table, or moved to another parent or
/// its own table) is lost only when the step declares it, whichever side holds the key. A plan
/// built by hand without the declaration is refused with `undeclaredLinkLoss` and leaves the store
/// as it was; the generated plan's declaration (or the pair's other side) lets it migrate.
struct DepartingLinkLossTests {
    /// How the deepest entity of the hierarchy leaves it.
    private enum Departure: CaseIterable {
        case removed, ownTable, otherParent
        /// Given a parent above the relationship's level, in the same table: only the
        /// discriminator changes, so a key the step drops must be cleared, not left behind.
        case sameTable
    }

    /// The relationship between `Keeper` and a level of the hierarchy, whose key sits on the
    /// hierarchy's rows.
    private enum Kind: CaseIterable {
        case toManyInverse, ordered, oneToOne
        /// `Keeper`'s to-one, the key on `Keeper`'s row, the inverse to-many.
        case toOne
        /// A join table.
        case manyToMany

        /// `Keeper`'s side and the level's side.
        func sides(level: String) -> (keeper: String, level: String) {
            switch self {
            case .toManyInverse: ("animals: Set<\(level)> @inverse(keeper)", "keeper: Keeper?")
            case .ordered: ("animals: [\(level)] @inverse(keeper)", "keeper: Keeper?")
            case .oneToOne: ("pet: \(level)? @inverse(owner)", "owner: Keeper?")
            case .toOne: ("pet: \(level)? @inverse(owners)", "owners: Set<Keeper>")
            case .manyToMany: ("animals: Set<\(level)> @inverse(keepers)", "keepers: Set<Keeper>")
            }
        }

        /// `Keeper`'s relationship and the level's, by name.
        var names: (keeper: String, level: String) {
            switch self {
            case .oneToOne: ("pet", "owner")
            case .toOne: ("pet", "owners")
            case .manyToMany: ("animals", "keepers")
            case .toManyInverse, .ordered: ("animals", "keeper")
            }
        }

        /// Whether a keeper holds at most one row.
        var keeperHoldsOne: Bool { self == .oneToOne || self == .toOne }

        /// The level's value linking a row to `keeper`.
        func link(to keeper: FixtureRow) -> FixtureValue {
            self == .toOne || self == .manyToMany ? .toMany([keeper]) : .to(keeper)
        }
    }

    /// Cases drawn per run: each relationship kind with each departure once in CI, many with
    /// `MODELWRIGHT_LARGE=1`.
    private static let caseCount =
        ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1"
        ? 200 : Kind.allCases.count * Departure.allCases.count

    /// A chain of 2 to 4 levels (`L0` the root, the deepest one leaving) and a relationship
    /// declared on a random level above the deepest, drawn from a seed; the relationship's kind
    /// and how the deepest level leaves go round all pairs: version 1, and version 2 with the loss
    /// declared as `plan` asks.
    private static func draw(seed: UInt64) -> (
        v1: String, v2: String, v3: String, depth: Int, level: Int, Kind, Departure
    ) {
        var random = SplitMix64(seed: seed)
        func roll(_ count: Int) -> Int { Int(random.next() % UInt64(count)) }
        let kind = Kind.allCases[Int(seed) % Kind.allCases.count]
        let departure = Departure.allCases[Int(seed) / Kind.allCases.count % Departure.allCases.count]
        // Leaving within the table needs a level above the relationship's: depth 3 or 4.
        let depth = departure == .sameTable ? 3 + roll(2) : 2 + roll(3)
        let level = departure == .sameTable ? 1 + roll(depth - 2) : roll(depth - 1)
        let sides = kind.sides(level: "L\(level)")
        let leaf = "L\(depth - 1)"
        func text(version: Int, leafParent: String?, block: String) -> String {
            var lines = ["model Zoo version \(version)"]
            for index in 0..<depth {
                let name = "L\(index)"
                let parent = index == 0 ? nil : "L\(index - 1)"
                if name == leaf && version == 2 {
                    guard departure != .removed else { continue }
                    lines.append("entity \(name)\(leafParent.map { ": " + $0 } ?? "") { tag\(index): Int = 0 }")
                    continue
                }
                let relationship = index == level ? "; \(sides.level)" : ""
                lines.append("entity \(name)\(parent.map { ": " + $0 } ?? "") { tag\(index): Int = 0\(relationship) }")
            }
            lines.append("entity Other { label: String = \"o\" }")
            lines.append("entity Keeper { name: String; \(sides.keeper) }")
            lines.append(block)
            return lines.joined(separator: "\n")
        }
        let v1 = text(version: 1, leafParent: "L\(depth - 2)", block: "")
        let block: String
        switch departure {
        case .removed:
            block = "migration from 1 {\n    lossy \(leaf) \"leaves\"\n}\n"
        case .ownTable, .otherParent, .sameTable:
            block =
                "migration from 1 {\n    custom leave \"leaves\"\n    lossy Keeper.\(kind.names.keeper) \"leaves\"\n}\n"
        }
        let parents: [Departure: String] = [.otherParent: "Other", .sameTable: "L\(level - 1)"]
        let v2 = text(version: 2, leafParent: parents[departure], block: block)
        // The leaf back where it was: the links the step dropped stay dropped.
        let v3 = text(
            version: 3, leafParent: "L\(depth - 2)", block: "migration from 2 {\n    custom back \"back\"\n}\n")
        return (v1, v2, v3, depth, level, kind, departure)
    }

    @Test func linksToRowsThatLeaveAreLostOnlyWhenDeclared() throws {
        var refused = 0
        var migrated = 0
        var returned = 0
        var removedCases = 0
        var seen: Set<String> = []
        for seed in 1...UInt64(Self.caseCount) {
            let (v1, v2, v3, depth, level, kind, departure) = Self.draw(seed: seed)
            seen.insert("\(depth) \(kind) \(departure)")
            let failure = "seed \(seed): \(kind), \(departure), depth \(depth), level \(level)\n\(v1)\n\(v2)"
            var files = ["Zoo.v1.model": v1, "Zoo.v2.model": v2]
            if departure != .removed { files["Zoo.v3.model"] = v3 } else { removedCases += 1 }
            let folder = try temporaryModelFolder(named: "Zoo", files: files)
            defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
            let loaded = FrontEnd.run(modelAt: folder.path)
            let model = try #require(
                loaded.model, "\(failure)\n\(loaded.diagnostics.filter { $0.severity == .error }.map(\.message))")
            let step = model.steps[0]
            let (s1, s2) = (model.versions[0].schema, model.versions[1].schema)
            func stages(_ step: PlannedStep) -> [MigrationStage.CustomStep] {
                step.customStages.map { stage in
                    MigrationStage.CustomStep(
                        name: stage.name, label: stage.label,
                        obligations: step.obligations.filter { $0.stage == stage.name }.map {
                            .hook(of: $0.entity, $0.property) { _ in }
                        },
                        didMigrate: { _ in })
                }
            }
            func plan(_ losses: [MigrationStage.Loss]) -> MigrationPlan {
                MigrationPlan(
                    current: s2,
                    stages: [
                        stages(step).isEmpty
                            ? .lightweight(from: s1, to: s2, lossy: losses)
                            : .custom(from: s1, to: s2, steps: stages(step), lossy: losses)
                    ])
            }
            let leaf = "L\(depth - 1)"
            let names = kind.names
            // The same store for every plan: keepers, a row of every level linked to one of them
            // (a one-to-one's keeper holds one row: the leaf's, and another level's).
            func populate(_ tester: MigrationTester) throws -> [(keeper: FixtureRow, rows: [FixtureRow])] {
                let leaving = try tester.insertRow("Keeper", ["name": .string("k0")])
                let staying = try tester.insertRow("Keeper", ["name": .string("k1")])
                var linked: [(keeper: FixtureRow, rows: [FixtureRow])] = [(leaving, []), (staying, [])]
                for index in level..<depth {
                    let keeper = index == depth - 1 ? 0 : 1
                    if kind.keeperHoldsOne && !linked[keeper].rows.isEmpty {
                        _ = try tester.insertRow("L\(index)", [:])
                        continue
                    }
                    let row = try tester.insertRow("L\(index)", [names.level: kind.link(to: linked[keeper].keeper)])
                    linked[keeper].rows.append(row)
                }
                return linked
            }
            // Without the declaration: refused, naming the relationship, and nothing changes.
            let undeclared = try MigrationTester(plan: plan([]), startingAt: s1)
            _ = try populate(undeclared)
            let before = try undeclared.links(of: "Keeper", names.keeper)
            let rowsBefore = try undeclared.rows(of: "L0")
            do {
                _ = try undeclared.migrate()
                Issue.record("\(failure)\na hand-built plan without the declaration lost links silently")
            } catch let error as MigrationError {
                guard case .undeclaredLinkLoss(_, let entity, let relationship, let rows, _, _) = error else {
                    Issue.record("\(failure)\n\(error)")
                    continue
                }
                #expect(
                    (entity, relationship) == ("Keeper", names.keeper)
                        || (entity, relationship) == ("L\(level)", names.level),
                    "\(failure)\n\(error)")
                #expect(rows == 1, "\(failure)\n\(error)")
                refused += 1
            }
            #expect(try undeclared.links(of: "Keeper", names.keeper) == before, "\(failure)")
            #expect(try undeclared.rows(of: "L0") == rowsBefore, "\(failure)")
            // With the generated plan's declaration, or either side of the pair declared: migrates,
            // and only the leaving row's link goes.
            // A removed entity's rows are a loss of their own: the relationship's declaration alone
            // is refused, naming the entity, and the store stays as it was.
            let other = MigrationStage.Loss("L\(level)", names.level)
            if departure == .removed {
                let tester = try MigrationTester(plan: plan([other]), startingAt: s1)
                _ = try populate(tester)
                let rows = try tester.rows(of: "L0")
                #expect(
                    throws: MigrationError.undeclaredEntityRemoval(stage: "from version 1 to 2", entity: leaf, rows: 1)
                ) {
                    _ = try tester.migrate()
                }
                #expect(try tester.rows(of: "L0") == rows, "\(failure)")
            }
            let declarations = [step.losses, (departure == .removed ? [MigrationStage.Loss(leaf)] : []) + [other]]
            for losses in declarations {
                let tester = try MigrationTester(plan: plan(losses), startingAt: s1)
                let linked = try populate(tester)
                _ = try tester.migrate()
                let links = try tester.links(of: "Keeper", names.keeper)
                for (keeper, rows) in linked {
                    let kept = rows.filter { $0.entity != leaf }.map(\.id)
                    #expect(Set(links[keeper.id] ?? []) == Set(kept), "\(failure)\nlosses \(losses)")
                }
                migrated += 1
            }
            // Back to version 1's shape: a link dropped in version 2 does not come back, with its
            // key or its place (the key stayed in the row when the row stayed in the table).
            if model.steps.count == 2 {
                let back = model.steps[1]
                let s3 = model.versions[2].schema
                let both = MigrationPlan(
                    current: s3,
                    stages: [
                        .custom(from: s1, to: s2, steps: stages(step), lossy: step.losses),
                        .custom(from: s2, to: s3, steps: stages(back), lossy: back.losses),
                    ])
                let tester = try MigrationTester(plan: both, startingAt: s1)
                let linked = try populate(tester)
                _ = try tester.migrate()
                let links = try tester.links(of: "Keeper", names.keeper)
                for (keeper, rows) in linked {
                    let kept = rows.filter { $0.entity != leaf }.map(\.id)
                    #expect(Set(links[keeper.id] ?? []) == Set(kept), "\(failure)\nversion 3")
                }
                returned += 1
            }
        }
        #expect(refused == Self.caseCount)
        #expect(migrated == 2 * Self.caseCount)
        // The draw reaches every relationship kind and departure.
        #expect(
            Set(seen.map { $0.split(separator: " ").dropFirst().joined(separator: " ") }).count
                == Kind.allCases.count * Departure.allCases.count)
        #expect(returned == Self.caseCount - removedCases)
    }

    /// Issue 25, red team C: a hand-built plan that removes an entity holding rows without
    /// declaring it is refused before anything changes, whether the entity shares its table or
    /// has its own; declared, it migrates. Drawn: which entity goes, how many rows it holds, and
    /// how many rows of a kept entity beside it.
    @Test func removingAnEntityWithRowsNeedsItsLossDeclared() throws {
        var refused = 0
        for seed in 1...UInt64(8) {
            var random = SplitMix64(seed: seed)
            let removed = seed % 2 == 0 ? "Leaf" : "Solo"
            let count = 1 + Int(random.next() % 3)
            let v1 = """
                model Rm version 1
                entity Root { tag: Int = 0 }
                entity Leaf: Root { leaf: Int = 0 }
                entity Solo { name: String = "s" }
                """
            let kept =
                removed == "Leaf" ? "entity Solo { name: String = \"s\" }" : "entity Leaf: Root { leaf: Int = 0 }"
            let v2 =
                "model Rm version 2\nentity Root { tag: Int = 0 }\n\(kept)\nmigration from 1 {\n    lossy \(removed) \"gone\"\n}\n"
            let folder = try temporaryModelFolder(named: "Rm", files: ["Rm.v1.model": v1, "Rm.v2.model": v2])
            defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
            let loaded = FrontEnd.run(modelAt: folder.path)
            let model = try #require(loaded.model, "\(loaded.diagnostics.map(\.message))")
            let (s1, s2) = (model.versions[0].schema, model.versions[1].schema)
            for losses in [[], [MigrationStage.Loss(removed)]] {
                let tester = try MigrationTester(
                    plan: MigrationPlan(current: s2, stages: [.lightweight(from: s1, to: s2, lossy: losses)]),
                    startingAt: s1)
                for _ in 0..<count { _ = try tester.insertRow(removed, [:]) }
                _ = try tester.insertRow("Root", [:])
                let before = try tester.rows(of: removed)
                do {
                    _ = try tester.migrate()
                    #expect(!losses.isEmpty, "seed \(seed): removing \(removed) undeclared migrated silently")
                } catch let error as MigrationError {
                    #expect(losses.isEmpty, "seed \(seed): \(error)")
                    #expect(
                        error == .undeclaredEntityRemoval(stage: "from version 1 to 2", entity: removed, rows: count))
                    #expect(try tester.rows(of: removed) == before, "seed \(seed): the store changed")
                    refused += 1
                }
            }
        }
        #expect(refused == 8)
    }
}
