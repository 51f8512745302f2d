import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright
@testable import ModelwrightSchema

/// A step written as an outsider would, to make an accepted step fail at runtime: a custom stage
/// turns a `Date` into a zero-padded day number ("00007", which the old `REAL` column would turn
/// into 7.0), beside renamed to-many relationships (a join table renamed, an ordered list
/// through its inverse). `plan` must accept it after running it on rows, and the real migration
/// must keep the app's strings exactly and every link in its place.
struct ShopMigrationTests {
    private static let v1 = """
        model Shop version 1
        entity Product {
            code: Date
            tags: Set<Label>
            parts: [Part] @inverse(product)
        }
        entity Part {
            name: String
            product: Product?
        }
        entity Label {
            name: String
        }

        """

    private static let v2 = """
        model Shop version 2
        entity Product {
            code: String
            labels: Set<Label> @renamed(from: tags)
            components: [Part] @inverse(product) @renamed(from: parts)
        }
        entity Part {
            name: String
            product: Product?
        }
        entity Label {
            name: String
        }
        migration from 1 {
            custom padCodes "Codes become day numbers of five digits" covers Product.code
        }

        """

    @Test func padsCodesExactlyAndKeepsRenamedLinks() throws {
        let folder = try temporaryModelFolder(
            named: "Shop", files: ["Shop.v1.model": Self.v1, "Shop.v2.model": Self.v2])
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let loaded = FrontEnd.run(modelAt: folder.path)
        #expect(!loaded.diagnostics.contains { $0.severity == .error }, "\(loaded.diagnostics)")
        let model = try #require(loaded.model)
        let (v1, v2) = (model.versions[0].schema, model.versions[1].schema)
        let pad = MigrationStage.CustomStep(
            name: "padCodes", label: "Codes become day numbers of five digits",
            obligations: [
                .value(of: "Product", "code") { row -> String in
                    guard case .real(let seconds) = row["code"] else { return "" }
                    let digits = String(Int(seconds / 86_400))
                    return String(repeating: "0", count: max(0, 5 - digits.count)) + digits
                }
            ],
            didMigrate: { _ in })
        let tester = try MigrationTester(
            plan: MigrationPlan(current: v2, stages: [.custom(from: v1, to: v2, steps: [pad])]), startingAt: v1)
        let products = try [7, 42, 123_456].map { try tester.insert("Product", ["code": .real(Double($0) * 86_400)]) }
        let labels = try ["new", "sale"].map { try tester.insert("Label", ["name": .text($0)]) }
        var parts: [SQLValue] = []
        for number in 0..<4 {
            parts.append(
                try tester.insert(
                    "Part",
                    [
                        "name": .text("part \(number)"), "product": products[number % 2],
                        "product._position": .integer(Int64(3 - number)),
                    ]))
        }
        for (product, label) in [(products[0], labels[1]), (products[2], labels[0]), (products[2], labels[1])] {
            try tester.execute(
                "INSERT INTO \"_Product_tags\" (\"source\", \"destination\") VALUES (?, ?)", [product, label])
        }

        _ = try tester.migrate()

        #expect(try tester.schemaDifferences() == [])
        let rows = try tester.rows(of: "Product")
        #expect(
            products.map { id in rows.first { $0.id == id }?["code"] } == [
                .text("00007"), .text("00042"), .text("123456"),
            ])
        let partRows = try tester.rows(of: "Part")
        for (number, part) in parts.enumerated() {
            let row = partRows.first { $0.id == part }
            #expect(row?["product"] == products[number % 2])
            #expect(row?["product._position"] == .integer(Int64(3 - number)))
        }
        let connection = try SQLiteConnection(path: tester.url.path, readOnly: true)
        let links = try SQLiteStatement(
            connection: connection,
            sql: "SELECT hex(\"source\") || ' ' || hex(\"destination\") FROM \"_Product_labels\"")
        var found: [String] = []
        while try links.step() { found.append(links.string(0)) }
        let expected = [(products[0], labels[1]), (products[2], labels[0]), (products[2], labels[1])].map { pair in
            [pair.0, pair.1].map { value -> String in
                guard case .blob(let data) = value else { return "" }
                return data.map { String(format: "%02X", $0) }.joined()
            }.joined(separator: " ")
        }
        #expect(found.sorted() == expected.sorted())
    }
}
