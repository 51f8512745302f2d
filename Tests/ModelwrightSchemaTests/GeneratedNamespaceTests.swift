import Testing

@testable import ModelwrightSchema

/// Names the generated Swift or the store's SQL would use twice are resolved by the documented
/// rule or refused where they are declared.
struct GeneratedNamespaceTests {
    @Test func aRelationshipsIDPropertyYieldsToADeclaredPropertyOfItsName() throws {
        // WooCommerce: `productID` beside `product`, also when a child entity declares it.
        let built = try graph(
            """
            model M version 1
            entity Product { name: String; items: Set<Item> @inverse(product) }
            entity Item { productID: Int64; product: Product? @inverse(items); order: Order? @inverse(items) }
            entity Order { items: Set<Item> @inverse(order) }
            entity Gift: Item { orderID: String }
            """)
        let item = try #require(built.entity(named: "Item"))
        #expect(item.relationships.map(\.idProperty) == ["productRecordID", "orderRecordID"])
    }

    @Test func clashesTheRuleCannotResolveAreLocatedErrors() {
        #expect(
            diagnose(
                "model M version 1\nentity A { b: B? @inverse(a); bRecordID: Int; bID: Int }\nentity B { a: A? @inverse(b) }"
            )
                == [
                    "2:12: error: the relationship 'b' generates the Swift property 'bRecordID', which 'bRecordID' of A already generates; rename one of them"
                ])
        #expect(
            diagnose(
                "model M version 1\nentity A { tripsRequest: Int; trips: Set<B> @inverse(a) }\nentity B { a: A? @inverse(trips) }"
            )
                == [
                    "2:31: error: the relationship 'trips' generates the Swift property 'tripsRequest', which 'tripsRequest' of A already generates; rename one of them"
                ])
    }

    @Test func reservedNamesAreRefusedWhereDeclared() {
        for name in ["path", "row", "hashValue", "self", "_", "Fields", "init"] where name.first?.isLowercase ?? true {
            #expect(
                diagnose("model M version 1\nentity A {\n    \(name): Int\n}").first?.hasPrefix("3:5: error:") == true,
                "\(name)")
        }
        for name in ["Record", "Field", "Fields", "ID", "Hashable", "M", "MMigrations"] {
            #expect(
                diagnose("model M version 1\nentity \(name) {\n    x: Int\n}").first?.hasPrefix("2:8: error:") == true,
                "\(name)")
        }
    }

    @Test func namesSQLWouldConfuseByCaseAreRefused() {
        #expect(
            diagnose(
                "model M version 1\nentity Abc {\n    name: String\n    nAme: String\n}\nentity ABC {\n    x: Int\n}")
                == [
                    "4:5: error: 'nAme' and 'name' would name one SQL column of Abc's table, since SQLite compares names without case; rename one",
                    "6:1: error: 'ABC' and 'Abc' would name one SQL table, since SQLite compares names without case; rename one",
                ])
        // A child's column shares its root's table.
        #expect(
            diagnose("model M version 1\nentity A {\n    name: Int\n}\nentity B: A {\n    nAme: Int\n}").count == 1)
    }

    @Test func joinTablesWhoseNamesMeetAreRefusedAtTheRelationship() {
        // `_A_b_c` stores both A.b_c and A_b.c; `_MODELWRIGHT_metadata` is the store's own table.
        #expect(
            diagnose(
                "model M version 1\nentity A {\n    b_c: Set<D>\n}\nentity A_b {\n    c: Set<D>\n}\nentity D {\n    x: Int\n}\nentity MODELWRIGHT {\n    metadata: Set<D>\n}"
            ).filter { $0.contains(": error: ") } == [
                "6:5: error: the join table '_A_b_c' that stores 'A_b.c' would have the name of the table '_A_b_c', since SQLite compares names without case; rename the relationship or its entity",
                "12:5: error: the join table '_MODELWRIGHT_metadata' that stores 'MODELWRIGHT.metadata' would have the name of the table '_modelwright_metadata', since SQLite compares names without case; rename the relationship or its entity",
            ])
    }
}
