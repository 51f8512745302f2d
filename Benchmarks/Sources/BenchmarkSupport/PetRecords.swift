import Foundation
@_spi(Generated) import Modelwright

// The records a generator would emit for:
//
//     entity Owner { name: String; age: Int; score: Int16; balance: Decimal?; pets: Set<Pet> @inverse(owner) }
//     entity Pet { name: String; owner: Owner? }
//
// (an executable target cannot import the Trips library's generated code with a schema this small).
// QueryBenchmarks measures aggregates and prefetching on them, FetchProbe a to-one hop in a filter.

/// A person who owns pets.
public struct Owner: Record {
    /// The entity's name in the schema.
    public static let entityName = "Owner"
    /// The record's identity.
    public let id: RecordID<Owner>
    /// `Owner <index>`: unique.
    public let name: String
    /// `index % 97`.
    public let age: Int
    /// `index % 1000`.
    public let score: Int16
    /// `index / 100`, `nil` for every fourth owner.
    public let balance: Decimal?

    /// The owner at `index` of every generated list, with a new ID.
    public init(index: Int) {
        id = RecordID(UUID())
        name = "Owner \(index)"
        age = index % 97
        score = Int16(index % 1000)
        balance = index % 4 == 0 ? nil : Decimal(index) / 100
    }

    /// Writes the columns in schema order.
    @_spi(Generated) public func encode(to row: inout RowEncoder) throws {
        try row.encode(name)
        try row.encode(age)
        try row.encode(score)
        try row.encode(balance)
    }

    /// Reads the columns in schema order, as the generator emits it: into locals, then one `init`.
    @_spi(Generated) public init(id: RecordID<Owner>, row: inout RowDecoder) throws {
        let name: String = try row.decode()
        let age: Int = try row.decode()
        let score: Int16 = try row.decode()
        let balance: Decimal? = try row.decode()
        self.init(id: id, name: name, age: age, score: score, balance: balance)
    }

    private init(id: RecordID<Owner>, name: String, age: Int, score: Int16, balance: Decimal?) {
        self.id = id
        self.name = name
        self.age = age
        self.score = score
        self.balance = balance
    }

    /// The owner's fields, for requests.
    public struct Fields: RecordFields {
        /// The record the fields belong to.
        public typealias Target = Owner
        /// Where the fields are reached from.
        @_spi(Generated) public let path: FieldPath
        /// Creates the fields at `path`.
        @_spi(Generated) public init(path: FieldPath) { self.path = path }
        /// The owner's name.
        public var name: Field<String> { path.field("name") }
        /// The owner's age.
        public var age: Field<Int> { path.field("age") }
        /// The owner's score.
        public var score: Field<Int16> { path.field("score") }
        /// The owner's balance.
        public var balance: Field<Decimal?> { path.field("balance") }
        /// The owner's pets.
        public var pets: ToMany<Pet.Fields> { path.toMany("pets") }
    }
}

/// A pet with an owner.
public struct Pet: Record {
    /// The entity's name in the schema.
    public static let entityName = "Pet"
    /// The record's identity.
    public let id: RecordID<Pet>
    /// `Pet <index>`.
    public let name: String
    /// The owner's ID.
    public let ownerID: RecordID<Owner>?

    /// The pet at `index`, owned by `owner`, with a new ID.
    public init(index: Int, owner: RecordID<Owner>) {
        id = RecordID(UUID())
        name = "Pet \(index)"
        ownerID = owner
    }

    /// Writes the columns in schema order.
    @_spi(Generated) public func encode(to row: inout RowEncoder) throws {
        try row.encode(name)
        try row.encode(ownerID)
    }

    /// Reads the columns in schema order, into locals, then one `init`.
    @_spi(Generated) public init(id: RecordID<Pet>, row: inout RowDecoder) throws {
        let name: String = try row.decode()
        let ownerID: RecordID<Owner>? = try row.decode()
        self.init(id: id, name: name, ownerID: ownerID)
    }

    private init(id: RecordID<Pet>, name: String, ownerID: RecordID<Owner>?) {
        self.id = id
        self.name = name
        self.ownerID = ownerID
    }

    /// The pet's fields, for requests.
    public struct Fields: RecordFields {
        /// The record the fields belong to.
        public typealias Target = Pet
        /// Where the fields are reached from.
        @_spi(Generated) public let path: FieldPath
        /// Creates the fields at `path`.
        @_spi(Generated) public init(path: FieldPath) { self.path = path }
        /// The pet's name.
        public var name: Field<String> { path.field("name") }
        /// The pet's owner.
        public var owner: ToOne<Owner.Fields> { path.toOne("owner") }
    }
}

/// The schema of the two records.
public let querySchema = SchemaDescription(
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
