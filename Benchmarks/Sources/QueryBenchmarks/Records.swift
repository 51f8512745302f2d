import Foundation
@_spi(Generated) import Modelwright

// The records a generator would emit for:
//
//     entity Owner { name: String; age: Int; score: Int16; balance: Decimal?; pets: Set<Pet> @inverse(owner) }
//     entity Pet { name: String; owner: Owner? }
//
// (an executable target cannot import the Trips library's generated code with a schema this small).

/// A person who owns pets.
struct Owner: Record {
    static let entityName = "Owner"
    let id: RecordID<Owner>
    let name: String
    let age: Int
    let score: Int16
    let balance: Decimal?

    init(index: Int) {
        id = RecordID(UUID())
        name = "Owner \(index)"
        age = index % 97
        score = Int16(index % 1000)
        balance = index % 4 == 0 ? nil : Decimal(index) / 100
    }

    func encode(to row: inout RowEncoder) throws {
        try row.encode(name)
        try row.encode(age)
        try row.encode(score)
        try row.encode(balance)
    }

    init(id: RecordID<Owner>, row: inout RowDecoder) throws {
        self.id = id
        name = try row.decode()
        age = try row.decode()
        score = try row.decode()
        balance = try row.decode()
    }

    struct Fields: RecordFields {
        typealias Target = Owner
        let path: FieldPath
        var name: Field<String> { path.field("name") }
        var age: Field<Int> { path.field("age") }
        var score: Field<Int16> { path.field("score") }
        var balance: Field<Decimal?> { path.field("balance") }
        var pets: ToMany<Pet.Fields> { path.toMany("pets") }
    }
}

/// A pet with an owner.
struct Pet: Record {
    static let entityName = "Pet"
    let id: RecordID<Pet>
    let name: String
    let ownerID: RecordID<Owner>?

    init(index: Int, owner: RecordID<Owner>) {
        id = RecordID(UUID())
        name = "Pet \(index)"
        ownerID = owner
    }

    func encode(to row: inout RowEncoder) throws {
        try row.encode(name)
        try row.encode(ownerID)
    }

    init(id: RecordID<Pet>, row: inout RowDecoder) throws {
        self.id = id
        name = try row.decode()
        ownerID = try row.decode()
    }

    struct Fields: RecordFields {
        typealias Target = Pet
        let path: FieldPath
        var name: Field<String> { path.field("name") }
        var owner: ToOne<Owner.Fields> { path.toOne("owner") }
    }
}

/// The schema of the two records.
let querySchema = SchemaDescription(
    modelName: "Pets",
    version: 1,
    entities: [
        EntityDescription(
            name: "Owner",
            attributes: [
                AttributeDescription(name: "name", type: .string),
                AttributeDescription(name: "age", type: .int),
                AttributeDescription(name: "score", type: .int16),
                AttributeDescription(name: "balance", type: .decimal, isOptional: true),
            ],
            relationships: [
                RelationshipDescription(name: "pets", destination: "Pet", inverse: "owner", cardinality: .toMany)
            ]
        ),
        EntityDescription(
            name: "Pet",
            attributes: [AttributeDescription(name: "name", type: .string)],
            relationships: [
                RelationshipDescription(name: "owner", destination: "Owner", inverse: "pets", cardinality: .toOne)
            ]
        ),
    ]
)
