import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright
@testable import ModelwrightSchema

/// What the migrator checks after a custom stage's code, which can write anything: the stage
/// rolls back with an error naming the entity rather than commit a store the records misread.
struct StageVerificationTests {
    /// The schemas of a model's two versions, read from its files.
    private static func versions(_ v1: String, _ v2: String) throws -> (SchemaDescription, SchemaDescription) {
        let folder = try temporaryModelFolder(named: "Farm", files: ["Farm.v1.model": v1, "Farm.v2.model": v2])
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let loaded = FrontEnd.run(modelAt: folder.path)
        guard let model = loaded.model, model.versions.count == 2 else {
            throw MigrationError.invalidPlan("\(loaded.diagnostics)")
        }
        return (model.versions[0].schema, model.versions[1].schema)
    }

    private static func stage(_ code: @escaping @Sendable (MigrationContext) throws -> Void)
        -> MigrationStage.CustomStep
    {
        MigrationStage.CustomStep(name: "fix", label: "fix", obligations: [], didMigrate: code)
    }

    /// A tester at `old` whose plan to `new` is one custom stage running `code`.
    private static func tester(
        from old: SchemaDescription, to new: SchemaDescription, lossy: [MigrationStage.Loss] = [],
        _ code: @escaping @Sendable (MigrationContext) throws -> Void
    ) throws -> MigrationTester {
        try MigrationTester(
            plan: MigrationPlan(
                current: new, stages: [.custom(from: old, to: new, steps: [stage(code)], lossy: lossy)]),
            startingAt: old)
    }

    /// Generated hierarchies (root abstract or not, a sub-entity below the destination or not, the
    /// relationship with a to-many inverse or none): a stage that points a to-one at a sibling's
    /// row fails naming the entity and relationship; one that points it at the destination's own
    /// rows, or a sub-entity's, commits.
    @Test func aToOneRelationshipPointingAtAnotherEntityFailsTheStage() throws {
        var failures = 0
        for abstractRoot in [false, true] {
            for withKitten in [false, true] {
                for withInverse in [false, true] {
                    let text = { (version: Int) in
                        """
                        model Farm version \(version)
                        \(abstractRoot ? "abstract " : "")entity Animal {
                            name: String
                        }
                        entity Cat: Animal {
                            lives: Int16 = 9
                            \(withInverse ? "owners: Set<Owner> @inverse(pet)" : "")
                        }
                        entity Dog: Animal {
                            bark: String = "woof"
                        }
                        \(withKitten ? "entity Kitten: Cat {\n    age: Int16 = 0\n}" : "")
                        entity Owner {
                            pet: Cat? \(withInverse ? "@inverse(owners)" : "@noInverse")
                            \(version == 2 ? "note: String?" : "")
                        }

                        """
                    }
                    let (v1, v2) = try Self.versions(text(1), text(2))
                    var targets = ["Cat": true, "Dog": false]
                    if !abstractRoot { targets["Animal"] = false }
                    if withKitten { targets["Kitten"] = true }
                    for (target, allowed) in targets.sorted(by: { $0.key < $1.key }) {
                        let tester = try Self.tester(from: v1, to: v2) { context in
                            let pet = try context.rows(of: target).first {
                                $0["_entity"] == .text(target)
                            }
                            for owner in try context.rows(of: "Owner") {
                                try context.execute(
                                    "UPDATE \"Owner\" SET \"pet\" = ? WHERE \"id\" = ?",
                                    [pet?.id ?? .null, owner.id])
                            }
                        }
                        for entity in targets.keys { try tester.insert(entity, ["name": .text(entity)]) }
                        try tester.insert("Owner", [:])
                        let label = "abstract \(abstractRoot) kitten \(withKitten) inverse \(withInverse) → \(target)"
                        if allowed {
                            #expect(throws: Never.self, "\(label)") { _ = try tester.migrate() }
                            continue
                        }
                        failures += 1
                        do {
                            _ = try tester.migrate()
                            Issue.record("the stage committed Owner.pet pointing at a \(target): \(label)")
                        } catch let error as MigrationError {
                            guard case .wrongRelationshipTarget(_, "Owner", "pet", _, "Cat", target, 1) = error else {
                                Issue.record("\(error): \(label)")
                                continue
                            }
                            #expect(
                                error.description.contains("'pet' points at a \(target) row where a Cat is required"))
                        }
                    }
                }
            }
        }
        #expect(failures == 12)
    }

    /// An entity moved to another parent has its rows moved by the migrator, before the stage's
    /// code: a stage that then deletes some of them fails naming the entity and the counts, for
    /// stores of several sizes; a stage that leaves them commits with every row.
    @Test func anEntityMovedToAnotherParentKeepsItsRowsOrTheStageFails() throws {
        let v1 = """
            model Farm version 1
            abstract entity Animal {
                name: String
            }
            entity Cat: Animal {
                lives: Int16
            }
            abstract entity Pet {
                owner: String = ""
            }
            entity Fish: Pet {
                fins: Int16 = 0
            }

            """
        let v2 = """
            model Farm version 2
            abstract entity Animal {
                name: String
            }
            entity Cat: Pet {
                name: String
                lives: Int16
            }
            abstract entity Pet {
                owner: String = ""
            }
            entity Fish: Pet {
                fins: Int16 = 0
            }
            migration from 1 {
                custom move "move cats under Pet"
            }

            """
        let (old, new) = try Self.versions(v1, v2)
        for rows in [0, 1, 3] {
            for moved in Set([0, rows / 2, rows]).sorted() {
                let tester = try Self.tester(from: old, to: new) { context in
                    try context.execute(
                        "DELETE FROM \"Pet\" WHERE \"id\" IN (SELECT \"id\" FROM \"Pet\" WHERE \"_entity\" = 'Cat' ORDER BY \"name\" LIMIT \(rows - moved))"
                    )
                }
                for row in 0..<rows { try tester.insert("Cat", ["name": .text("c\(row)"), "lives": .integer(9)]) }
                if moved == rows {
                    #expect(throws: Never.self, "\(moved) of \(rows)") { _ = try tester.migrate() }
                    #expect(try tester.rows(of: "Cat").count == rows)
                    continue
                }
                #expect(
                    throws: MigrationError.rowsLost(
                        stage: "from version 1 to 2", entity: "Cat", before: rows, after: moved)
                ) {
                    _ = try tester.migrate()
                }
            }
        }
    }

    /// Giving an entity another parent (or none, or one where it had none) while relationships
    /// point at it: `plan` accepts the step with a stage whose hook does nothing, and the
    /// migration keeps every row with its ID, its values and every link to it (a to-one, an
    /// ordered to-many in its order, a many-to-many), whichever way it moves.
    @Test func anEntityGivenAnotherParentKeepsItsRowsAndLinks() throws {
        let parents: [(String?, String?)] = [("Animal", "Pet"), ("Animal", nil), (nil, "Pet"), ("Pet", "Animal")]
        for (from, to) in parents {
            func text(_ version: Int, _ parent: String?) -> String {
                """
                model Farm version \(version)
                entity Animal {
                    name: String = ""
                }
                entity Pet {
                    owner: String = ""
                }
                entity Cat\(parent.map { ": \($0)" } ?? "") {
                    lives: Int16
                    keeper: Person? @inverse(cats)
                }
                entity Person {
                    name: String
                    favourite: Cat?
                    cats: [Cat] @inverse(keeper)
                    friends: Set<Cat>
                }
                \(version == 2 ? "migration from 1 {\n    custom move \"move cats\"\n}" : "")

                """
            }
            let failure = "\(from ?? "none") → \(to ?? "none")"
            let (old, new) = try Self.versions(text(1, from), text(2, to))
            let folder = try temporaryModelFolder(
                named: "Farm", files: ["Farm.v1.model": text(1, from), "Farm.v2.model": text(2, to)])
            defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
            let loaded = FrontEnd.run(modelAt: folder.path)
            #expect(!loaded.diagnostics.contains { $0.severity == .error }, "\(failure): \(loaded.diagnostics)")
            let step = try #require(loaded.model?.steps.first)
            let stage = MigrationStage.CustomStep(
                name: "move", label: "move cats",
                obligations: step.obligations.map { obligation in
                    .hook(of: obligation.entity, obligation.property) { _ in }
                },
                didMigrate: { _ in })
            let tester = try MigrationTester(
                plan: MigrationPlan(current: new, stages: [.custom(from: old, to: new, steps: [stage])]),
                startingAt: old)
            let cats = try (0..<3).map { try tester.insertRow("Cat", ["lives": .integer(Int64($0 + 1))]) }
            let links: [String: FixtureValue] = [
                "name": "Ada", "favourite": .to(cats[1]), "cats": .toMany([cats[2], cats[0]]),
                "friends": .toMany([cats[1]]),
            ]
            let ada = try tester.insertRow("Person", links)
            #expect(throws: Never.self, "\(failure)") { _ = try tester.migrate() }
            let rows = try tester.rows(of: "Cat")
            #expect(Set(rows.map(\.id)) == Set(cats.map(\.id)), "\(failure)")
            #expect(rows.map { $0["lives"] }.sorted { "\($0)" < "\($1)" } == [.integer(1), .integer(2), .integer(3)])
            #expect(try tester.links(of: "Person", "favourite")[ada.id] == [cats[1].id], "\(failure)")
            #expect(try tester.links(of: "Person", "cats")[ada.id] == [cats[2].id, cats[0].id], "\(failure)")
            #expect(try tester.links(of: "Person", "friends")[ada.id] == [cats[1].id], "\(failure)")
        }
    }

    /// A stage that splits `Order.street` into a new `Address` and links one side of the
    /// one-to-one (either one) leaves both sides linked; one whose sides disagree fails, naming
    /// the entity and relationship.
    @Test func bothSidesOfAOneToOneAgreeAfterAStage() throws {
        let v1 = """
            model Farm version 1
            entity Order {
                street: String
            }

            """
        let v2 = """
            model Farm version 2
            entity Order {
                street: String
                address: Address? @inverse(order)
            }
            entity Address {
                street: String
                order: Order? @inverse(address)
            }

            """
        let (old, new) = try Self.versions(v1, v2)
        for rows in [1, 3] {
            for sides in ["order", "address", "both", "crossed"] where sides != "crossed" || rows > 1 {
                let tester = try Self.tester(from: old, to: new) { context in
                    let orders = try context.rows(of: "Order")
                    var addresses: [SQLValue] = []
                    for order in orders {
                        let id = context.newID()
                        addresses.append(id)
                        try context.insert(
                            into: "Address", values: ["id": id, "street": order["street"]])
                    }
                    for (index, order) in orders.enumerated() {
                        if sides != "address" {
                            try context.update(
                                "Order", id: order.id, set: ["address": addresses[index]])
                        }
                        if sides != "order" {
                            let back = orders[
                                sides == "crossed" ? (index + 1) % orders.count : index]
                            try context.update(
                                "Address", id: addresses[index], set: ["order": back.id])
                        }
                    }
                }
                for row in 0..<rows { try tester.insert("Order", ["street": .text("s\(row)")]) }
                if sides == "crossed" {
                    do {
                        _ = try tester.migrate()
                        Issue.record("a one-to-one whose sides disagree committed, \(rows) rows")
                    } catch let error as MigrationError {
                        #expect(error.description.contains("does not point back"), "\(error)")
                    }
                    continue
                }
                #expect(throws: Never.self, "\(sides), \(rows) rows") { _ = try tester.migrate() }
                let orders = try tester.rows(of: "Order")
                let addresses = try tester.rows(of: "Address")
                #expect(orders.count == rows && addresses.count == rows)
                for order in orders {
                    let address = addresses.first { $0.id == order["address"] }
                    #expect(address?["order"] == order.id, "\(sides), \(rows) rows")
                    #expect(address?["street"] == order["street"])
                }
            }
        }
    }

    /// Generated stores (two to five people, each with a pet): a stage that widens `pet` to `pets`
    /// and gives some pets another owner moved those links, not lost them, and commits; one that
    /// clears a pet's owner lost the link and fails naming the relationship.
    @Test func aLinkMovedToAnotherRowIsNotLost() throws {
        let v1 = """
            model Farm version 1
            entity Person { name: String; pet: Pet? @inverse(owner) }
            entity Pet { name: String; owner: Person? @inverse(pet) }

            """
        let v2 = """
            model Farm version 2
            entity Person { name: String; pets: Set<Pet> @inverse(owner) @renamed(from: pet) }
            entity Pet { name: String; owner: Person? @inverse(pets) }

            """
        let (old, new) = try Self.versions(v1, v2)
        var moved = 0
        for seed in UInt64(1)...12 {
            let people = 2 + Int(seed % 4)
            let clears = seed % 3 == 0
            let tester = try Self.tester(from: old, to: new) { context in
                var random = SplitMix64(seed: seed)
                let owners = try context.rows(of: "Person").map(\.id)
                for (index, pet) in try context.rows(of: "Pet").enumerated() {
                    if clears, index == 0 {
                        try context.update("Pet", id: pet.id, set: ["owner": .null])
                    } else if random.next() % 2 == 0 || index == 1 {
                        let other = owners.filter { $0 != pet["owner"] }
                        let owner = other[Int(random.next() % UInt64(other.count))]
                        try context.update("Pet", id: pet.id, set: ["owner": owner])
                    }
                }
            }
            for index in 0..<people {
                let pet = try tester.insertRow("Pet", ["name": .string("pet\(index)")])
                _ = try tester.insertRow("Person", ["name": .string("p\(index)"), "pet": .to(pet)])
            }
            if clears {
                #expect(throws: MigrationError.self, "seed \(seed): a cleared owner committed") {
                    _ = try tester.migrate()
                }
                continue
            }
            #expect(throws: Never.self, "seed \(seed), \(people) people") { _ = try tester.migrate() }
            moved += 1
        }
        #expect(moved == 8)
    }

    /// Generated stores where `Cow` leaves `Animal` and an owner's `pet` (typed `Animal`) points
    /// at a cow, a plain animal or nothing: plan has the step declare the loss (`lossy Owner.pet`,
    /// see `ParentChangeMigrationTests`), and the migration clears a pet that pointed at a cow,
    /// which is no animal any more, and keeps the others.
    @Test func aToOnePointingAtARowThatLeftItsDestinationIsCleared() throws {
        let v1 = """
            model Farm version 1
            entity Animal { legs: Int = 4 }
            entity Cow: Animal { name: String }
            entity Owner { name: String; pet: Animal? @noInverse }

            """
        let v2 = """
            model Farm version 2
            entity Animal { legs: Int = 4 }
            entity Cow { name: String }
            entity Owner { name: String; pet: Animal? @noInverse }
            migration from 1 {
                custom fix "cows leave"
                lossy Owner.pet "a cow is no pet"
            }

            """
        let (old, new) = try Self.versions(v1, v2)
        var cleared = 0
        for seed in 0..<6 {
            let tester = try Self.tester(from: old, to: new, lossy: [.init("Owner", "pet")]) { _ in }
            let cow = try tester.insertRow("Cow", ["name": .string("daisy")])
            let animal = try tester.insertRow("Animal", [:])
            let pets: [FixtureValue] = [.to(cow), .to(animal), .null]
            for index in 0...(seed % 3) {
                _ = try tester.insertRow("Owner", ["name": .string("o\(index)"), "pet": pets[(seed + index) % 3]])
            }
            let pointsAtCow = (0...(seed % 3)).contains { (seed + $0) % 3 == 0 }
            _ = try tester.migrate()
            let stored = try tester.rows(of: "Owner").map(\.values).compactMap { $0["pet"] }
            #expect(!stored.contains(cow.id), "seed \(seed): a pet still points at a cow")
            let animals = (0...(seed % 3)).filter { (seed + $0) % 3 == 1 }.count
            #expect(stored.filter { $0 == animal.id }.count == animals, "seed \(seed): \(stored)")
            if pointsAtCow { cleared += 1 }
        }
        #expect(cleared > 0)
    }
}
