import Testing

/// Each composite gets one `Fields` type that every attribute of that type reaches: its own fields
/// for a required attribute, an `OptionalComposite` for an optional one, and a nil test only where
/// the storage can tell a missing composite from a present one.
struct CompositeFieldsGenerationTests {
    private static let model = """
        model Venues version 1

        composite Postal { street: String; city: String; zip: String? }
        composite Contact { phone: String?; email: String? }

        entity Venue {
            name: String
            address: Postal
            billing: Postal?
            contact: Contact?
        }
        """

    @Test func eachCompositeHasOneFieldsTypeSharedByItsAttributes() throws {
        let folder = try ModelFolder(["Venues.v1.model": Self.model])
        defer { folder.remove() }
        let queries = try #require(try folder.generate()["Venues+Queries.swift"])
        #expect(queries.components(separatedBy: "extension Postal {").count == 2)
        #expect(queries.contains("struct Fields: CompositeFieldsWithPresence {"))
        #expect(
            queries.contains(
                "static let requiredFields = [\n            \"street\",\n            \"city\",\n        ]\n"))
        #expect(queries.contains(#"var zip: Field<String?> { path.field("zip") }"#))
        #expect(queries.contains(#"var address: Postal.Fields { path.composite("address") }"#))
        #expect(queries.contains(#"var billing: OptionalComposite<Postal.Fields> { path.composite("billing") }"#))
    }

    @Test func aCompositeWithOnlyOptionalFieldsHasNoNilTest() throws {
        let folder = try ModelFolder(["Venues.v1.model": Self.model])
        defer { folder.remove() }
        let queries = try #require(try folder.generate()["Venues+Queries.swift"])
        let contact = try #require(queries.range(of: "extension Contact {"))
        let block = queries[contact.lowerBound...].prefix { $0 != "}" }
        #expect(block.contains("struct Fields: CompositeFields {"))
        #expect(!block.contains("requiredFields"))
        #expect(queries.contains(#"var contact: OptionalComposite<Contact.Fields> { path.composite("contact") }"#))
    }
}
