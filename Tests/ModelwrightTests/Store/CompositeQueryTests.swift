import Foundation
@_spi(Generated) import Modelwright
import Testing

/// The fields of composite attributes in requests: required and optional composites, `nil` tests
/// that agree with how records decode, sorting, and the `NSPredicate` key paths.
struct CompositeQueryTests {
    private static let postal = CompositeDescription(
        name: "Postal",
        fields: [
            AttributeDescription(name: "street", type: .string),
            AttributeDescription(name: "city", type: .string),
            AttributeDescription(name: "zip", type: .string, isOptional: true),
        ]
    )

    private static let schema = SchemaDescription(
        modelName: "Venues",
        version: 1,
        entities: [
            EntityDescription(
                name: "Venue",
                attributes: [
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "address", type: .composite(postal)),
                    AttributeDescription(name: "billing", type: .composite(postal), isOptional: true),
                ]
            )
        ]
    )

    private static func venues(_ condition: @escaping @Sendable (Venue.Fields) -> Condition) async throws -> [String] {
        let store = try Store.inMemory(schema: schema)
        try await store.performAndSave { context in
            try context.insert(Venue(name: "Opera", address: Postal(street: "Kirsten Flagstads plass 1", city: "Oslo")))
            try context.insert(
                Venue(
                    name: "Tate",
                    address: Postal(street: "Bankside", city: "London", zip: "SE1 9TG"),
                    billing: Postal(street: "Millbank", city: "London", zip: "SW1P 4RG")
                )
            )
            try context.insert(
                Venue(
                    name: "Grieghallen",
                    address: Postal(street: "Edvard Griegs plass 1", city: "Bergen", zip: "5015"),
                    billing: Postal(street: "Postboks 7701", city: "Oslo")
                )
            )
            // Half an address, as a batch update of one column can leave it: it reads as no address.
            try context.batchUpdate(Venue.request().filter { $0.name == "Opera" }) {
                [try $0.billing.city.set(to: "Oslo")]
            }
        }
        return try await store.performQuery { context in
            try context.fetch(Venue.request().filter(condition).sorted { [$0.name.ascending] }).map(\.name)
        }
    }

    @Test func aRequiredCompositesFieldsKeepTheirTypes() async throws {
        #expect(try await Self.venues { $0.address.city == "Oslo" } == ["Opera"])
        #expect(try await Self.venues { $0.address.zip.isNil } == ["Opera"])
        #expect(
            try await Self.venues { $0.address.street.hasPrefix("edvard", caseInsensitive: true) } == ["Grieghallen"])
        #expect(try await Self.venues { $0.address.city.in(["Bergen", "London"]) } == ["Grieghallen", "Tate"])
    }

    @Test func anOptionalCompositesFieldsAreOptional() async throws {
        #expect(try await Self.venues { $0.billing.city == "London" } == ["Tate"])
        #expect(try await Self.venues { $0.billing.city != "London" } == ["Grieghallen", "Opera"])
        #expect(try await Self.venues { $0.billing.zip.isNil } == ["Grieghallen", "Opera"])
        #expect(try await Self.venues { $0.billing.street.isNil } == ["Opera"])
    }

    @Test func anOptionalCompositeIsNilExactlyWhenItsRecordDecodesNil() async throws {
        #expect(try await Self.venues { $0.billing.isNil } == ["Opera"])
        #expect(try await Self.venues { $0.billing.isNotNil } == ["Grieghallen", "Tate"])
        #expect(try await Self.venues { !$0.billing.isNil } == ["Grieghallen", "Tate"])

        let store = try Store.inMemory(schema: Self.schema)
        let opera = Venue(name: "Opera", address: Postal(street: "Kirsten Flagstads plass 1", city: "Oslo"))
        let stored = try await store.performAndSave { context in
            try context.insert(opera)
            try context.batchUpdate(Venue.request()) { [try $0.billing.city.set(to: "Oslo")] }
            return try context.existing(opera.id)
        }
        #expect(stored?.billing == nil, "a composite missing a required field decodes as nil, as isNil says")
    }

    @Test func requestsSortByACompositesField() async throws {
        let store = try Store.inMemory(schema: Self.schema)
        let names = try await store.performAndSave { context in
            for (name, city) in [("a", "Oslo"), ("b", "Bergen"), ("c", "London")] {
                try context.insert(Venue(name: name, address: Postal(street: "1 Main Street", city: city)))
            }
            return try context.fetch(Venue.request().sorted { [$0.address.city.descending] }).map(\.name)
        }
        #expect(names == ["a", "c", "b"])
    }

    @Test func compositeFieldsRenderAsDottedKeyPaths() {
        let fields = Venue.Fields(path: .root)
        let rendered = PredicateFormatRenderer.render(fields.billing.city == "Oslo" && fields.billing.isNil)
        #expect(rendered.format == "(%K == %@) AND ((%K == nil) OR (%K == nil))")
        #expect(
            rendered.arguments == [
                .keyPath("billing.city"), .value(.text("Oslo")), .keyPath("billing.street"), .keyPath("billing.city"),
            ])
    }
}

// A record and composite shaped as the generator emits them.

private struct Postal: Hashable, Sendable, CompositeValue {
    static let columnCount = 3
    let street: String
    let city: String
    var zip: String?

    init(street: String, city: String, zip: String? = nil) {
        self.street = street
        self.city = city
        self.zip = zip
    }

    func encode(to row: inout RowEncoder) throws {
        try row.encode(street)
        try row.encode(city)
        try row.encode(zip)
    }

    init?(row: inout RowDecoder) throws {
        let street: String? = try row.decode()
        let city: String? = try row.decode()
        let zip: String? = try row.decode()
        guard let street, let city else { return nil }
        self.init(street: street, city: city, zip: zip)
    }

    struct Fields: CompositeFieldsWithPresence {
        static let requiredFields = ["street", "city"]
        let path: CompositePath
        var street: Field<String> { path.field("street") }
        var city: Field<String> { path.field("city") }
        var zip: Field<String?> { path.field("zip") }
    }
}

private struct Venue: Record {
    typealias ID = RecordID<Venue>
    static let entityName = "Venue"
    let id: ID
    let name: String
    let address: Postal
    let billing: Postal?

    init(id: ID = ID(), name: String, address: Postal, billing: Postal? = nil) {
        self.id = id
        self.name = name
        self.address = address
        self.billing = billing
    }

    func encode(to row: inout RowEncoder) throws {
        try row.encode(name)
        try row.encodeComposite(address)
        try row.encodeComposite(billing)
    }

    init(id: ID, row: inout RowDecoder) throws {
        self.id = id
        name = try row.decode()
        address = try row.decodeRequiredComposite()
        billing = try row.decodeComposite()
    }

    struct Fields: RecordFields {
        typealias Target = Venue
        let path: FieldPath
        var name: Field<String> { path.field("name") }
        var address: Postal.Fields { path.composite("address") }
        var billing: OptionalComposite<Postal.Fields> { path.composite("billing") }
    }
}
