import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright
@testable import ModelwrightSchema

/// A many-to-many relationship's join table across a step, on seeded random version pairs: two
/// entities linked both ways, each side a set or an ordered list; version 2 renames either entity
/// or both, either relationship or both, and makes either side ordered or unordered. Each rename
/// can change which side owns the join table (its name, and which column is `source`), which on
/// PostgreSQL (tables altered in place) once left the table renamed with its sides the other way
/// round, refused by every later opening.
///
/// Every pair the plan accepts is migrated on every engine of the machine (``MigrationEngine``)
/// from this one source, over a store with links: every link is kept (in order where both
/// versions order that side), and the schema is a fresh store's of version 2 (on PostgreSQL also
/// each constraint's and index's name, which a later step may drop by name).
///
/// `MODELWRIGHT_MIGRATION_PAIRS=<n>` runs `n` pairs instead of the CI's 24 on SQLite and 6 on
/// PostgreSQL (`MODELWRIGHT_LARGE=1`: 400 and 150).
@Suite(.heavy)
struct ManyToManyMigrationPropertyTests {
    /// One side of the relationship in one version (also drawn by `PlannedStatementsPropertyTests`).
    struct Side: Equatable {
        var entity: String
        var relationship: String
        var ordered: Bool
    }

    struct Pair {
        let v1: (Side, Side)
        let v2: (Side, Side)

        func text(version: Int) -> String {
            let (first, second) = version == 1 ? v1 : v2
            let (old1, old2) = v1
            func declaration(_ side: Side, _ other: Side, old: Side, oldOther: Side) -> String {
                let type = side.ordered ? "[\(other.entity)]" : "Set<\(other.entity)>"
                var lines = ["entity \(side.entity) {"]
                if version == 2, side.entity != old.entity { lines.append("    @renamed(from: \(old.entity))") }
                lines.append("    name: String")
                var relationship = "    \(side.relationship): \(type) @inverse(\(other.relationship))"
                if version == 2, side.relationship != old.relationship {
                    relationship += " @renamed(from: \(old.relationship))"
                }
                lines.append(relationship)
                lines.append("}")
                return lines.joined(separator: "\n")
            }
            // Dropping a side's order loses it: the step says so.
            let lossy = version == 1 ? [] : [(old1, first), (old2, second)].filter { $0.0.ordered && !$0.1.ordered }
            var entities = [
                declaration(first, second, old: old1, oldOther: old2),
                declaration(second, first, old: old2, oldOther: old1),
            ]
            if first.entity == second.entity {
                // A self-referencing relationship: one entity declares both sides.
                var lines = entities[0].components(separatedBy: "\n")
                lines.insert(entities[1].components(separatedBy: "\n")[lines.count - 2], at: lines.count - 1)
                entities = [lines.joined(separator: "\n")]
            }
            return
                (["model Links version \(version)"] + entities
                + (lossy.isEmpty
                    ? []
                    : ["migration from 1 {"] + lossy.map { "    lossy \($0.0.entity).\($0.0.relationship)" } + ["}"]))
                .joined(separator: "\n") + "\n"
        }
    }

    private static let entityNames = ["Apple", "Gadget", "Tag", "Thing", "Zebra", "Mango"]
    private static let relationshipNames = ["tags", "things", "alpha", "zeta", "items", "members"]

    /// The draws both generators make: a number, a name not taken yet, version 1's two sides, and
    /// version 2 as edits of them.
    private struct Draw {
        var random: SplitMix64

        mutating func roll(_ count: Int) -> Int { Int(random.next() % UInt64(count)) }

        mutating func pick(_ names: [String], avoiding taken: [String]) -> String {
            let free = names.filter { !taken.contains($0) }
            return free[roll(free.count)]
        }

        /// Version 1: `entities`' sides under two different names of `relationships`.
        mutating func firstVersion(of entities: (String, String), relationships: [String]) -> (Side, Side) {
            let firstRelationship = pick(relationships, avoiding: [])
            let secondRelationship = pick(relationships, avoiding: [firstRelationship])
            // The store keeps the order of one side of a many-to-many: at most one side is ordered.
            let ordered = roll(3)
            return (
                Side(entity: entities.0, relationship: firstRelationship, ordered: ordered == 0),
                Side(entity: entities.1, relationship: secondRelationship, ordered: ordered == 1)
            )
        }

        /// The pair whose version 2 is `v1` with `edit` (given a roll of `edits`) applied once, then
        /// again while a coin says so or while nothing has changed.
        mutating func pair(
            from v1: (Side, Side), edits: Int, _ edit: (inout Draw, Int, inout (Side, Side)) -> Void
        ) -> Pair {
            var v2 = v1
            repeat {
                let choice = roll(edits)
                edit(&self, choice, &v2)
            } while roll(2) == 0 || (v2.0 == v1.0 && v2.1 == v1.1)
            return Pair(v1: v1, v2: v2)
        }
    }

    /// Makes `side` ordered or unordered; `other` loses its order when `side` gains one.
    private static func toggleOrder(of side: inout Side, other: inout Side) {
        side.ordered.toggle()
        if side.ordered { other.ordered = false }
    }

    static func pair(seed: UInt64) -> Pair {
        var draw = Draw(random: SplitMix64(seed: seed, index: 2627))
        let firstEntity = draw.pick(entityNames, avoiding: [])
        let secondEntity = draw.pick(entityNames, avoiding: [firstEntity])
        let v1 = draw.firstVersion(of: (firstEntity, secondEntity), relationships: relationshipNames)
        return draw.pair(from: v1, edits: 6) { draw, choice, v2 in
            switch choice {
            case 0: v2.0.entity = draw.pick(entityNames, avoiding: [v1.0.entity, v1.1.entity, v2.1.entity])
            case 1: v2.1.entity = draw.pick(entityNames, avoiding: [v1.0.entity, v1.1.entity, v2.0.entity])
            case 2:
                v2.0.relationship = draw.pick(
                    relationshipNames, avoiding: [v1.0.relationship, v1.1.relationship, v2.1.relationship])
            case 3:
                v2.1.relationship = draw.pick(
                    relationshipNames, avoiding: [v1.0.relationship, v1.1.relationship, v2.0.relationship])
            case 4: toggleOrder(of: &v2.0, other: &v2.1)
            default: toggleOrder(of: &v2.1, other: &v2.0)
            }
        }
    }

    /// A self-referencing many-to-many (`follows` ↔ `followers` of one entity): version 2 renames
    /// the entity, either relationship or both, or makes either side ordered or unordered. Both
    /// sides live in one table, so which column is `source` is all that tells them apart.
    static func selfPair(seed: UInt64) -> Pair {
        var draw = Draw(random: SplitMix64(seed: seed, index: 2628))
        let entity = draw.pick(entityNames, avoiding: [])
        let names = ["follows", "followers", "likes", "likedBy", "zeta", "alpha"]
        let v1 = draw.firstVersion(of: (entity, entity), relationships: names)
        return draw.pair(from: v1, edits: 5) { draw, choice, v2 in
            switch choice {
            case 0:
                v2.0.entity = draw.pick(entityNames, avoiding: [v1.0.entity])
                v2.1.entity = v2.0.entity
            case 1:
                v2.0.relationship = draw.pick(
                    names, avoiding: [v1.0.relationship, v1.1.relationship, v2.1.relationship])
            case 2:
                v2.1.relationship = draw.pick(
                    names, avoiding: [v1.0.relationship, v1.1.relationship, v2.0.relationship])
            case 3: toggleOrder(of: &v2.0, other: &v2.1)
            default: toggleOrder(of: &v2.1, other: &v2.0)
            }
        }
    }

    private static func pairCount(on engine: MigrationEngine) -> Int {
        let environment = ProcessInfo.processInfo.environment
        if let count = environment["MODELWRIGHT_MIGRATION_PAIRS"].flatMap({ Int($0) }) { return count }
        let large = environment["MODELWRIGHT_LARGE"] == "1"
        return engine == .sqlite ? (large ? 400 : 24) : (large ? 150 : 6)
    }

    @Test(arguments: MigrationEngine.available)
    func aRenamedOrReorderedManyToManyKeepsItsLinksAndEndsAsAFreshStore(engine: MigrationEngine) throws {
        try Self.check(on: engine, label: "many-to-many", draw: Self.pair(seed:), ownerChanges: true)
    }

    /// SQLite once renamed a self-referencing join table to its new owner's name without trading
    /// its columns, so `d follows a, b` became `a, b follow d`, and the schema check saw nothing.
    @Test(arguments: MigrationEngine.available)
    func aSelfReferencingManyToManyKeepsEachLinkItsWayRound(engine: MigrationEngine) throws {
        try Self.check(
            on: engine, label: "self-referencing many-to-many", draw: Self.selfPair(seed:), ownerChanges: true)
    }

    private static func check(
        on engine: MigrationEngine, label: String, draw: (UInt64) -> Pair, ownerChanges: Bool
    ) throws {
        let count = pairCount(on: engine)
        var migrated = 0
        var ownerChanged = 0
        var refused: [String] = []
        for seed in 1...UInt64(count) {
            let pair = draw(seed)
            let (v1Text, v2Text) = (pair.text(version: 1), pair.text(version: 2))
            let failure = "\(engine) seed \(seed)\n\(v1Text)\(v2Text)"
            let folder = try temporaryModelFolder(
                named: "Links", files: ["Links.v1.model": v1Text, "Links.v2.model": v2Text])
            defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
            let loaded = FrontEnd.run(modelAt: folder.path)
            guard let model = loaded.model, model.versions.count == 2 else {
                refused.append(
                    "seed \(seed): "
                        + loaded.diagnostics.filter { $0.severity == .error }.map(\.message)
                        .joined(separator: "; "))
                continue
            }
            let (v1, v2) = (model.versions[0].schema, model.versions[1].schema)
            let step = model.steps[0]
            guard step.customStages.isEmpty else {
                refused.append("seed \(seed): needs a custom stage")
                continue
            }
            let tester = try engine.tester(
                plan: MigrationPlan(current: v2, stages: [.lightweight(from: v1, to: v2, lossy: step.losses)]),
                startingAt: v1)
            // Three rows a side; the first side's rows link to rows of the second in a drawn order.
            let (old1, old2) = pair.v1
            let targets = try (0..<3).map { try tester.insertRow(old2.entity, ["name": .string("b\($0)")]) }
            var expected: [SQLValue: [SQLValue]] = [:]
            for index in 0..<3 {
                let chosen = [[2, 0], [1, 2, 0], []][index].map { targets[$0] }
                let row = try tester.insertRow(
                    old1.entity, ["name": .string("a\(index)"), old1.relationship: .toMany(chosen)])
                if !chosen.isEmpty { expected[row.id] = chosen.map(\.id) }
            }
            let layouts = (try SchemaLayout(v1), try SchemaLayout(v2))
            if try firstSideOwns(pair.v1, in: layouts.0) != firstSideOwns(pair.v2, in: layouts.1) {
                ownerChanged += 1
            }
            var migratedStore: Store?
            #expect(throws: Never.self, "\(failure)") { migratedStore = try tester.migrate() }
            guard let store = migratedStore else { continue }
            try store.close()
            migrated += 1
            let differences = try tester.schemaDifferences()
            #expect(differences == [], "\(differences)\n\(failure)")
            let catalog = try engine.catalogDifferences(of: tester, from: v2)
            #expect(catalog == [], "\(catalog.joined(separator: "\n"))\n\(failure)")
            // Reopening as a plain store of version 2 succeeds (the schema check at open passes).
            #expect(throws: Never.self, "reopen: \(failure)") { try engine.open(tester, schema: v2).close() }
            let (new1, new2) = pair.v2
            let forward = try tester.links(of: new1.entity, new1.relationship)
            // The order is kept where both versions order the side; otherwise the links compare as sets.
            let keepsOrder = old1.ordered && new1.ordered
            #expect(
                normalized(forward, ordered: keepsOrder) == normalized(expected, ordered: keepsOrder),
                "\(failure)")
            var backward: [SQLValue: [SQLValue]] = [:]
            for (source, list) in expected { for target in list { backward[target, default: []].append(source) } }
            #expect(
                normalized(try tester.links(of: new2.entity, new2.relationship), ordered: false)
                    == normalized(backward, ordered: false), "\(failure)")
        }
        print(
            "\(label) pairs on \(engine): \(count), migrated and checked: \(migrated) (\(ownerChanged) gave the join table to the other side), refused: \(refused.count)"
        )
        #expect(migrated >= count * 3 / 4, "only \(migrated) of \(count) pairs migrated: \(refused)")
        #expect(
            !ownerChanges || ownerChanged >= count / 6,
            "only \(ownerChanged) of \(count) pairs gave the join table to the other side")
    }

    /// Whether the first side's rows are in the join table's `source` column.
    private static func firstSideOwns(_ sides: (Side, Side), in layout: SchemaLayout) throws -> Bool {
        let entity = try layout.entity(sides.0.entity)
        guard let relationship = entity.relationships.first(where: { $0.name == sides.0.relationship }),
            case .joinTable(_, let source, _, _) = try layout.storage(of: relationship, from: entity)
        else { return false }
        return source == "source"
    }

    fileprivate static func normalized(_ links: [SQLValue: [SQLValue]], ordered: Bool) -> [String: [String]] {
        func name(_ id: SQLValue) -> String {
            guard case .blob(let data) = id else { return "\(id)" }
            return data.map { String(format: "%02x", $0) }.joined()
        }
        return Dictionary(
            uniqueKeysWithValues: links.filter { !$0.value.isEmpty }.map { key, value in
                let targets = value.map(name)
                return (name(key), ordered ? targets : targets.sorted())
            })
    }
}

extension ManyToManyMigrationPropertyTests {
    /// A tester on `engine` at the first version of the model `texts` spell (version 1 first, in
    /// files named after `name`), whose plan runs each step as a lightweight stage with the step's
    /// declared losses; nil, with an issue naming `failure`, when the front end refuses the model.
    fileprivate static func lightweightTester(
        of name: String, _ texts: [String], on engine: MigrationEngine, failure: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> MigrationTester? {
        let files = Dictionary(uniqueKeysWithValues: texts.indices.map { ("\(name).v\($0 + 1).model", texts[$0]) })
        let folder = try temporaryModelFolder(named: name, files: files)
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let loaded = FrontEnd.run(modelAt: folder.path)
        guard let model = loaded.model, model.versions.count == texts.count else {
            Issue.record("refused: \(loaded.diagnostics.map(\.message))\n\(failure)", sourceLocation: sourceLocation)
            return nil
        }
        let schemas = model.versions.map(\.schema)
        return try engine.tester(
            plan: MigrationPlan(
                current: schemas[schemas.count - 1],
                stages: model.steps.indices.map {
                    .lightweight(from: schemas[$0], to: schemas[$0 + 1], lossy: model.steps[$0].losses)
                }),
            startingAt: schemas[0])
    }

    /// A to-many relationship moved from a parent entity down to a sub-entity, the step declaring
    /// the loss (`lossy Item.tags "moved"`), on drawn names and orders: the links of the parent's
    /// own rows (not of the sub-entity) go, the sub-entity's stay. They once stayed in the join
    /// table, read afterwards as the sub-entity's links.
    @Test(arguments: MigrationEngine.available)
    func aRelationshipMovedDownDropsTheLinksOfRowsThatLeaveItsSource(engine: MigrationEngine) throws {
        let count = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 60 : (engine == .sqlite ? 8 : 3)
        for seed in 1...UInt64(count) {
            var draw = Draw(random: SplitMix64(seed: seed, index: 2706))
            let names = ["Item", "Note", "Memo", "Entry", "Post"]
            let parent = draw.pick(names, avoiding: [])
            let child = draw.pick(names, avoiding: [parent])
            let relationship = ["tags", "labels", "marks"][draw.roll(3)]
            let type = draw.roll(2) == 0 ? "Set<Tag>" : "[Tag]"
            let texts = [
                "model Moves version 1\nentity \(parent) {\n    title: String\n    \(relationship): \(type) @noInverse\n}\n"
                    + "entity \(child): \(parent) {\n    body: String = \"\"\n}\nentity Tag {\n    name: String\n}\n",
                "model Moves version 2\nentity \(parent) {\n    title: String\n}\n"
                    + "entity \(child): \(parent) {\n    body: String = \"\"\n    \(relationship): \(type) @noInverse\n}\n"
                    + "entity Tag {\n    name: String\n}\nmigration from 1 {\n    lossy \(parent).\(relationship) \"moved\"\n}\n",
            ]
            let failure = "\(engine) seed \(seed)\n\(texts.joined())"
            guard let tester = try Self.lightweightTester(of: "Moves", texts, on: engine, failure: failure) else {
                continue
            }
            let tags = try (0..<3).map { try tester.insertRow("Tag", ["name": .string("t\($0)")]) }
            var expected: [SQLValue: [SQLValue]] = [:]
            for index in 0..<4 {
                let entity = draw.roll(2) == 0 ? parent : child
                let chosen = (0..<3).filter { _ in draw.roll(2) == 0 }.map { tags[$0] }
                var values: [String: FixtureValue] = ["title": .string("r\(index)"), relationship: .toMany(chosen)]
                if entity == child { values["body"] = .string("b") }
                let row = try tester.insertRow(entity, values)
                if entity == child, !chosen.isEmpty { expected[row.id] = chosen.map(\.id) }
            }
            var migrated: Store?
            #expect(throws: Never.self, "\(failure)") { migrated = try tester.migrate() }
            guard let store = migrated else { continue }
            try store.close()
            #expect(try tester.schemaDifferences() == [], "\(failure)")
            #expect(
                Self.normalized(try tester.links(of: child, relationship), ordered: false)
                    == Self.normalized(expected, ordered: false), "\(failure)")
        }
    }
}

extension ManyToManyMigrationPropertyTests {
    /// An entity removed with its many-to-many (either side, ordered or not), then a third version
    /// that changes the kept entity, on drawn names: PostgreSQL once refused to drop the entity's
    /// table while the join table's key referenced it, and left a three-version history stuck at
    /// version 2. Each step ends as a fresh store's schema with the kept rows.
    @Test(arguments: MigrationEngine.available)
    func anEntityRemovedWithItsManyToManyLeavesAFreshStore(engine: MigrationEngine) throws {
        let count = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 40 : (engine == .sqlite ? 6 : 3)
        for seed in 1...UInt64(count) {
            var draw = Draw(random: SplitMix64(seed: seed, index: 2704))
            let removed = draw.pick(Self.entityNames, avoiding: [])
            let kept = draw.pick(Self.entityNames, avoiding: [removed])
            let forward = draw.pick(Self.relationshipNames, avoiding: [])
            let backward = draw.pick(Self.relationshipNames, avoiding: [forward])
            let ordered = draw.roll(3)
            let removedType = ordered == 0 ? "[\(kept)]" : "Set<\(kept)>"
            let keptType = ordered == 1 ? "[\(removed)]" : "Set<\(removed)>"
            let texts = [
                "model Gone version 1\nentity \(removed) {\n    name: String\n    \(forward): \(removedType) @inverse(\(backward))\n}\n"
                    + "entity \(kept) {\n    label: String\n    \(backward): \(keptType) @inverse(\(forward))\n}\n",
                "model Gone version 2\nentity \(kept) {\n    label: String\n}\n"
                    + "migration from 1 {\n    lossy \(removed)\n    lossy \(kept).\(backward)\n}\n",
                "model Gone version 3\nentity \(kept) {\n    label: String\n    note: String?\n}\n",
            ]
            let failure = "\(engine) seed \(seed)\n\(texts.joined())"
            guard let tester = try Self.lightweightTester(of: "Gone", texts, on: engine, failure: failure) else {
                continue
            }
            let targets = try (0..<2).map { try tester.insertRow(kept, ["label": .string("k\($0)")]) }
            _ = try tester.insertRow(removed, ["name": .string("r"), forward: .toMany(targets)])
            var migrated: Store?
            #expect(throws: Never.self, "\(failure)") { migrated = try tester.migrate() }
            guard let store = migrated else { continue }
            try store.close()
            #expect(try tester.schemaDifferences() == [], "\(failure)")
            #expect(Set(try tester.rows(of: kept).map(\.id)) == Set(targets.map(\.id)), "\(failure)")
        }
    }
}
