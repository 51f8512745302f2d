import Foundation
import Modelwright
import Testing

/// The checksum follows the store's structure and nothing else.
struct SchemaChecksumTests {
    private static let base = SchemaDescription(
        modelName: "Trips",
        version: 1,
        entities: [
            EntityDescription(
                name: "User",
                attributes: [
                    AttributeDescription(name: "username", type: .string),
                    AttributeDescription(name: "rating", type: .int16, defaultValue: .integer(0)),
                ],
                relationships: [
                    RelationshipDescription(name: "trips", destination: "Trip", inverse: "owner", cardinality: .toMany)
                ],
                uniquenessConstraints: [["username"]],
                indexes: [["rating", "username"]],
                defaultSort: [SortDescription(attribute: "username")]
            ),
            EntityDescription(
                name: "Trip",
                attributes: [AttributeDescription(name: "title", type: .string)],
                relationships: [
                    RelationshipDescription(
                        name: "owner",
                        destination: "User",
                        inverse: "trips",
                        cardinality: .toOne,
                        isOptional: false
                    )
                ]
            ),
        ]
    )

    private static func changed(_ change: (inout SchemaDescription) -> Void) -> SchemaChecksum {
        var schema = base
        change(&schema)
        return schema.checksum
    }

    @Test func isSixtyFourHexDigitsAndStable() {
        let checksum = Self.base.checksum.description
        #expect(checksum.count == 64)
        #expect(checksum.allSatisfy { "0123456789abcdef".contains($0) })
        #expect(Self.base.checksum == Self.base.checksum)
    }

    @Test func matchesTheDocumentedCanonicalText() {
        let schema = SchemaDescription(
            modelName: "M",
            version: 1,
            entities: [EntityDescription(name: "A", attributes: [AttributeDescription(name: "b", type: .bool)])]
        )
        let text = SchemaChecksum.canonicalText(of: schema)
        #expect(
            text
                == "6:schema\n6:entity\n1:A\n0:\n8:concrete\n9:attribute\n1:b\n4:bool\n8:required\n10:no-default\n3:end\n"
        )
    }

    @Test func ignoresDeclarationOrderSortAndRenames() {
        let reference = Self.base.checksum
        #expect(Self.changed { $0.entities.reverse() } == reference)
        #expect(Self.changed { $0.entities[0].attributes.reverse() } == reference)
        #expect(Self.changed { $0.entities[0].defaultSort = [] } == reference)
        #expect(Self.changed { $0.entities[0].attributes[0].renamedFrom = "login" } == reference)
        #expect(Self.changed { $0.version = 7 } == reference)
    }

    @Test func changesWithStructure() {
        let reference = Self.base.checksum
        let changes: [(String, SchemaChecksum)] = [
            ("optionality", Self.changed { $0.entities[0].attributes[0].isOptional = true }),
            ("type", Self.changed { $0.entities[0].attributes[1].type = .int32 }),
            // The store's DDL declares defaults, so a migration can fill a new column with one.
            ("default", Self.changed { $0.entities[0].attributes[1].defaultValue = .integer(3) }),
            ("attribute name", Self.changed { $0.entities[0].attributes[0].name = "login" }),
            ("delete rule", Self.changed { $0.entities[0].relationships[0].deleteRule = .cascade }),
            ("uniqueness", Self.changed { $0.entities[0].uniquenessConstraints = [] }),
            ("index", Self.changed { $0.entities[0].indexes = [["username", "rating"]] }),
            ("cardinality", Self.changed { $0.entities[1].relationships[0].cardinality = .toMany }),
            ("ordering", Self.changed { $0.entities[0].relationships[0].isOrdered = true }),
            ("inverse", Self.changed { $0.entities[0].relationships[0].inverse = nil }),
            ("abstractness", Self.changed { $0.entities[1].isAbstract = true }),
            ("parent", Self.changed { $0.entities[1].parent = "User" }),
            ("entity name", Self.changed { $0.entities[1].name = "Journey" }),
        ]
        for (what, checksum) in changes {
            #expect(checksum != reference, "changing the \(what) must change the checksum")
        }
        #expect(Set(changes.map(\.1)).count == changes.count, "every change gives its own checksum")
    }

    @Test func uniquenessIsASetButIndexOrderCounts() {
        let reference = Self.base.checksum
        #expect(Self.changed { $0.entities[0].uniquenessConstraints = [["username"], ["username"]] } == reference)
        #expect(Self.changed { $0.entities[0].indexes = [["rating", "username"]] } == reference)
        #expect(Self.changed { $0.entities[0].indexes[0].reverse() } != reference)
    }

    @Test func namesCannotForgeSeparators() {
        let one = SchemaDescription(modelName: "M", version: 1, entities: [EntityDescription(name: "A\n1:B")])
        let two = SchemaDescription(
            modelName: "M", version: 1, entities: [EntityDescription(name: "A"), EntityDescription(name: "B")])
        #expect(one.checksum != two.checksum)
    }

    @Test func schemaDescriptionRoundTripsThroughJSON() throws {
        var schema = Self.base
        schema.entities[0].attributes.append(
            AttributeDescription(
                name: "home",
                type: .composite(
                    CompositeDescription(name: "Address", fields: [AttributeDescription(name: "city", type: .string)])),
                isOptional: true
            )
        )
        schema.entities[0].attributes.append(
            AttributeDescription(
                name: "role",
                type: .enumeration(
                    EnumDescription(name: "Role", rawType: .string, cases: [.init(name: "member", rawValue: "member")])),
                defaultValue: .enumCase("member")
            )
        )
        let data = try JSONEncoder().encode(schema)
        let decoded = try JSONDecoder().decode(SchemaDescription.self, from: data)
        #expect(decoded == schema)
        #expect(decoded.checksum == schema.checksum)
    }
}
