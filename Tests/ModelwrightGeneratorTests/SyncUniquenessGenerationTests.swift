import Foundation
import ModelwrightGenerator
import Testing

/// `@sync(unique: …)` reaches the generated schema: the entity description of a marked root says
/// how the sync server resolves its rows, and no other entity's does.
struct SyncUniquenessGenerationTests {
    private static let model = """
        model Shop version 1

        entity Product {
            @sync(unique: merge)
            sku: String @unique
        }
        entity Coupon {
            @sync(unique: reject)
            code: String @unique
        }
        entity Basket {
            @sync
            label: String
        }
        """

    @Test func theGeneratedSchemaCarriesEachRootsRule() throws {
        let folder = try ModelFolder(["Shop.v1.model": Self.model])
        defer { folder.remove() }
        let schema = try #require(try folder.generate()["Shop+Schema.swift"])
        let blocks = schema.components(separatedBy: "EntityDescription = .init(").dropFirst()
        let rules = blocks.map { block -> String in
            let name = block.split(separator: "\n").first { $0.contains("name: ") }.map(String.init) ?? ""
            let rule = block.split(separator: "\n").first { $0.contains("syncUniqueness:") }.map(String.init)
            return "\(name.trimmingCharacters(in: .whitespaces)) \(rule?.trimmingCharacters(in: .whitespaces) ?? "-")"
        }
        #expect(
            rules.sorted() == [
                "name: \"Basket\", -", "name: \"Coupon\", syncUniqueness: .reject,",
                "name: \"Product\", syncUniqueness: .merge,",
            ])
    }
}
