import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright
@testable import ModelwrightSchema

/// An entity split off into a new one through a new required to-one (`Order.street` becomes
/// `Order.address.street`): `plan` accepts the step when a custom stage covers the relationship
/// (its synthetic stub creates a destination row for each row, as the app's stage would), and the
/// app's stage, written with the migration context, migrates real rows with every link in place.
///
/// Drawn: the destination's attributes (types, optionality), whether it sits under a new abstract
/// parent, and the inverse (none, optional or required to-one, to-many).
struct EntitySplitTests {
    private struct Split {
        let v1: String
        let v2: String
        /// The concrete entity the stage creates rows of.
        let destination: String
        /// The inverse relationship's name and whether it is a required to-one.
        let inverse: (name: String, required: Bool)?
        /// The destination's required attributes besides `street`, with a value for each.
        let required: [(name: String, value: SQLValue)]
    }

    private static let types: [(String, SQLValue)] = [
        ("Int16", .integer(3)), ("String", .text("x")), ("Bool", .integer(1)), ("Double", .real(2.5)),
        ("Date", .real(1.0e8)), ("UUID", .blob(Data(repeating: 7, count: 16))), ("Decimal", .text("1.5")),
    ]

    private static func split(seed: UInt64) -> Split {
        var random = SplitMix64(seed: seed)
        func roll(_ count: Int) -> Int { Int(random.next() % UInt64(count)) }
        let underParent = roll(2) == 0
        let destination = underParent ? "HomeAddress" : "Address"
        var attributes = ["street: String"]
        var required: [(String, SQLValue)] = []
        for index in 0..<roll(3) {
            let (type, value) = types[roll(types.count)]
            let optional = roll(2) == 0
            attributes.append("x\(index): \(type)\(optional ? "?" : "")")
            if !optional { required.append(("x\(index)", value)) }
        }
        let inverse: (name: String, required: Bool)?
        let forward: String
        switch roll(4) {
        case 0:
            inverse = nil
            forward = "address: \(destination)"
        case 1:
            inverse = ("order", false)
            forward = "address: \(destination) @inverse(order)"
            attributes.append("order: Order? @inverse(address)")
        case 2:
            inverse = ("order", true)
            forward = "address: \(destination) @inverse(order)"
            attributes.append("order: Order @inverse(address)")
        default:
            inverse = ("orders", false)
            forward = "address: \(destination) @inverse(orders)"
            attributes.append("orders: Set<Order> @inverse(address)")
        }
        let body = attributes.joined(separator: "; ")
        let entities =
            underParent
            ? "abstract entity Place { label: String? }\nentity \(destination): Place { \(body) }"
            : "entity \(destination) { \(body) }"
        let v1 = "model Shop version 1\nentity Order { number: Int32; street: String }\n"
        let v2 = """
            model Shop version 2
            entity Order { number: Int32; \(forward) }
            \(entities)
            migration from 1 {
                custom splitAddress "Move each order's street into an address" covers Order.address
                lossy Order.street "moved into Address"
            }

            """
        return Split(v1: v1, v2: v2, destination: destination, inverse: inverse, required: required)
    }

    @Test func aSplitIntoANewEntityIsAcceptedAndTheStageThatCreatesItsRowsMigrates() throws {
        let count = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 400 : 24
        var shapes = Set<String>()
        for seed in 1...UInt64(count) {
            let split = Self.split(seed: seed)
            let failure = "seed \(seed)\n\(split.v2)"
            let folder = try temporaryModelFolder(
                named: "Shop", files: ["Shop.v1.model": split.v1, "Shop.v2.model": split.v2])
            defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
            let loaded = FrontEnd.run(modelAt: folder.path)
            let errors = loaded.diagnostics.filter { $0.severity == .error }.map(\.message)
            #expect(errors == [], "\(failure)")
            guard let model = loaded.model else { continue }
            shapes.insert("\(split.destination) \(split.inverse.map { "\($0)" } ?? "none")")
            let step = model.steps[0]
            #expect(step.obligations.map(\.subject) == ["Order.address"], "\(failure)")
            // The app's stage: a new destination row per order, holding its street, linked both ways.
            let stage = MigrationStage.CustomStep(
                name: "splitAddress", label: "Split",
                obligations: [
                    .hook(of: "Order", "address") { context in
                        for order in try context.rows(of: "Order") {
                            let id = context.newID()
                            var values: [String: SQLValue] = ["id": id, "street": order["street"]]
                            for (name, value) in split.required { values[name] = value }
                            if let inverse = split.inverse, inverse.name == "order" { values["order"] = order.id }
                            try context.insert(into: split.destination, values: values)
                            try context.update("Order", id: order.id, set: ["address": id])
                        }
                    }
                ], didMigrate: { _ in })
            let (v1, v2) = (model.versions[0].schema, model.versions[1].schema)
            let tester = try MigrationTester(
                plan: MigrationPlan(current: v2, stages: [.custom(from: v1, to: v2, steps: [stage])]), startingAt: v1)
            for number in 0..<3 {
                _ = try tester.insert(
                    "Order", ["number": .integer(Int64(number)), "street": .text("street \(number)")])
            }
            #expect(throws: Never.self, "\(failure)") { _ = try tester.migrate() }
            let orders = try tester.rows(of: "Order")
            let addresses = try tester.rows(of: split.destination)
            #expect(orders.count == 3 && addresses.count == 3, "\(failure)")
            for order in orders {
                let address = addresses.first { $0.id == order["address"] }
                guard case .integer(let number) = order["number"] else {
                    Issue.record("an order lost its number: \(failure)")
                    continue
                }
                #expect(address?["street"] == .text("street \(number)"), "\(failure)")
            }
        }
        // The draws reach every inverse and both hierarchies.
        #expect(shapes.count >= 6, "\(shapes)")
    }
}
