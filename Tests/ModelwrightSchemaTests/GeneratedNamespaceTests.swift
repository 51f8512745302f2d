import Foundation
import Modelwright
import ModelwrightTestSupport
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
                "12:5: error: the join table '_MODELWRIGHT_metadata' that stores 'MODELWRIGHT.metadata' would begin with '_modelwright_', which SQLite or the store keeps for its own tables (names compare without case); rename the relationship or its entity",
            ])
    }

    /// A name in every letter case: `sqlite_stat1`, `SQLite_STAT1` …
    private static func recased(_ name: String, _ random: inout SplitMix64) -> String {
        String(name.map { random.next() % 2 == 0 ? Character($0.uppercased()) : Character($0.lowercased()) })
    }

    /// Tables named like SQLite's or the runtime's own (in any letter case, as SQLite compares
    /// names) are refused at the entity or relationship that names them; every model accepted
    /// gets its store, with history, whose tables share the namespace.
    @Test func tableNamesSQLiteOrTheRuntimeKeepAreRefusedAndAcceptedModelsGetTheirStore() throws {
        var random = SplitMix64(seed: 7)
        var refused = 0
        var accepted = 0
        for _ in 0..<60 {
            var entity = Self.recased(
                [
                    "sqlite_stat1", "sqlite_sequence", "sqlite_master", "sqlite_x", "sqlitex", "mw", "modelwright",
                    "mwx",
                ][
                    random.next(below: 8)], &random)
            entity = entity.prefix(1).uppercased() + entity.dropFirst()
            let relationship = Self.recased(
                ["history_changes", "history_transactions", "removed_A", "metadata", "x"][random.next(below: 5)],
                &random
            ).replacingOccurrences(of: "A", with: "a")
            let text = """
                model M version 1
                entity \(entity) {
                    \(relationship.prefix(1).lowercased() + relationship.dropFirst()): Set<D> @noInverse
                }
                entity D {
                    x: Int
                }
                """
            let errors = diagnose(text).filter { $0.contains(": error: ") }
            let lower = entity.lowercased()
            let joinTable = "_\(lower)_\(relationship.lowercased())"
            let expected = [
                lower.hasPrefix("sqlite_") ? "2:1: error: the table of '\(entity)' would begin with 'sqlite_'" : nil,
                joinTable.hasPrefix("_mw_") || joinTable.hasPrefix("_modelwright_")
                    ? "3:5: error: the join table" : nil,
            ].compactMap { $0 }
            #expect(errors.count == expected.count, "\(text)\n\(errors)")
            for (error, prefix) in zip(errors, expected) { #expect(error.hasPrefix(prefix), "\(error)") }
            if errors.isEmpty {
                accepted += 1
                let schema = SchemaLowering.lower(try graph(text))
                _ = try Store.inMemory(schema: schema, history: .enabled(author: "test"))
            } else {
                refused += 1
            }
        }
        #expect(accepted > 10 && refused > 10, "\(accepted) accepted, \(refused) refused")
    }

    /// A table holds at most SQLite's 2,000 columns, counting `id`, `_entity`, every entity of the
    /// hierarchy and every composite field: the limit is SQLite's own (a store of 2,000 columns is
    /// created, one of 2,001 is not), and the check refuses exactly the tables over it.
    @Test func tablesOverSQLitesColumnLimitAreRefused() throws {
        func attributes(_ count: Int, _ prefix: String) -> String {
            (0..<count).map { "    \(prefix)\($0): Int?" }.joined(separator: "\n")
        }
        let limit = StoreLimits.maximumColumns
        // One entity: `id` and its attributes.
        for (count, refused) in [(limit - 1, false), (limit, true)] {
            let text = "model M version 1\nentity A {\n\(attributes(count, "a"))\n}"
            let errors = diagnose(text).filter { $0.contains(": error: ") }
            #expect(errors.count == (refused ? 1 : 0), "\(count): \(errors)")
            if refused {
                #expect(errors.first?.hasPrefix("2:1: error: the table of 'A' would have \(limit + 1) columns") == true)
                // SQLite agrees: the description the check refused does not make a store.
                let schema = SchemaDescription(
                    modelName: "M", version: 1,
                    entities: [
                        EntityDescription(
                            name: "A",
                            attributes: (0..<count).map {
                                AttributeDescription(name: "a\($0)", type: .int, isOptional: true)
                            }
                        )
                    ])
                #expect(throws: (any Error).self) { _ = try Store.inMemory(schema: schema) }
            } else {
                _ = try Store.inMemory(schema: SchemaLowering.lower(try graph(text)))
            }
        }
        // A hierarchy: `id`, `_entity` and every entity's columns share the root's table.
        let family =
            "model M version 1\nentity A {\n\(attributes(999, "a"))\n}\nentity B: A {\n\(attributes(1_000, "b"))\n}"
        #expect(diagnose(family).filter { $0.contains(": error: ") }.count == 1)
        // Composite fields: 200 attributes of 10 fields, and `id`.
        let fields = (0..<10).map { "f\($0): Int?" }.joined(separator: "; ")
        let composite =
            "model M version 1\ncomposite C { \(fields) }\nentity A {\n"
            + (0..<200).map { "    c\($0): C?" }.joined(separator: "\n") + "\n}"
        #expect(diagnose(composite).filter { $0.contains(": error: ") }.count == 1)
    }

    /// SQLite compares column names without case; the layout gives the later of two keys that
    /// differ only in case a column of its own, so the model is accepted and its store created.
    @Test func compositeFieldsThatDifferOnlyInCaseGetAColumnEach() throws {
        let text = "model M version 1\ncomposite C { aB: Int; ab: Int }\nentity A {\n    c: C?\n}"
        #expect(diagnose(text).filter { $0.contains(": error: ") }.isEmpty)
        let store = try Store.inMemory(schema: SchemaLowering.lower(try graph(text)))
        try store.close()
    }

    @Test func typesTheGeneratedCodeDeclaresInsideItsTypesAreReserved() {
        for name in ["CodingKeys", "RawValue", "AllCases", "OptionalProperty", "Locale"] {
            #expect(
                diagnose("model M version 1\nenum \(name): Int { a }").first?.hasPrefix("2:6: error:") == true,
                "\(name)")
        }
        for name in ["_"] {
            #expect(diagnose("model M version 1\nenum E: Int { \(name) }").first?.hasPrefix("2:15: error:") == true)
        }
    }
}
