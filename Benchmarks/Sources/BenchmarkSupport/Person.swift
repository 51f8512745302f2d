import Foundation
@_spi(Generated) import Modelwright

/// A person as Modelwright's generator would emit it: columns written and read by position, the
/// row decoded into locals and the record built by one `init`. ModelwrightBenchmarks and FetchProbe
/// both read it, so the record they measure is one source.
public struct Person: Record {
    /// The record's ID type.
    public typealias ID = RecordID<Person>
    /// The entity's name in the schema.
    public static let entityName = "Person"
    /// The record's identity.
    public let id: ID
    /// A short first name (a small string in Swift).
    public let firstName: String
    /// A last name longer than 15 UTF-8 bytes, so it needs a heap buffer.
    public let lastName: String
    /// The indexed age.
    public let age: Int
    /// When the person was created.
    public let createdAt: Date
    /// An optional nickname.
    public let nickname: String?

    /// A person with every field given.
    public init(id: ID, firstName: String, lastName: String, age: Int, createdAt: Date, nickname: String?) {
        self.id = id
        self.firstName = firstName
        self.lastName = lastName
        self.age = age
        self.createdAt = createdAt
        self.nickname = nickname
    }

    /// Writes the columns in schema order.
    @_spi(Generated) public func encode(to row: inout RowEncoder) throws {
        try row.encode(firstName)
        try row.encode(lastName)
        try row.encode(age)
        try row.encode(createdAt)
        try row.encode(nickname)
    }

    /// Reads the columns in schema order.
    @_spi(Generated) public init(id: ID, row: inout RowDecoder) throws {
        let firstName: String = try row.decode()
        let lastName: String = try row.decode()
        let age: Int = try row.decode()
        let createdAt: Date = try row.decode()
        let nickname: String? = try row.decode()
        self.init(
            id: id, firstName: firstName, lastName: lastName, age: age, createdAt: createdAt, nickname: nickname)
    }

    /// Decodes every row of a fetch, with the loop specialised for this record.
    @_spi(Generated) public static func appendRecords(of rows: RowCursor, to records: inout [Person]) throws {
        try rows.append(to: &records)
    }

    /// Inserts every record of a batch, with the loop specialised for this record.
    @_spi(Generated) public static func insertRecords(_ records: [Person], with rows: RowInserter) throws -> Int {
        try rows.insert(records)
    }

    /// The person's fields, for requests.
    public struct Fields: RecordFields {
        /// The record the fields belong to.
        public typealias Target = Person
        /// Where the fields are reached from.
        @_spi(Generated) public let path: FieldPath
        /// Creates the fields at `path`.
        @_spi(Generated) public init(path: FieldPath) { self.path = path }
        /// The first name.
        public var firstName: Field<String> { path.field("firstName") }
        /// The last name.
        public var lastName: Field<String> { path.field("lastName") }
        /// The age.
        public var age: Field<Int> { path.field("age") }
        /// The creation date.
        public var createdAt: Field<Date> { path.field("createdAt") }
        /// The nickname.
        public var nickname: Field<String?> { path.field("nickname") }
    }

    /// The one-entity schema: what `modelwright` would lower from `entity Person { … @index(age) }`.
    public static let schema = schema(uniqueLastName: false)

    /// The schema, with `@unique` on `lastName` when asked (FetchProbe's lookups by a unique key).
    public static func schema(uniqueLastName: Bool) -> SchemaDescription {
        SchemaDescription(
            modelName: "People",
            version: 1,
            entities: [
                EntityDescription(
                    name: "Person",
                    attributes: [
                        AttributeDescription(name: "firstName", type: .string),
                        AttributeDescription(name: "lastName", type: .string),
                        AttributeDescription(name: "age", type: .int),
                        AttributeDescription(name: "createdAt", type: .date),
                        AttributeDescription(name: "nickname", type: .string, isOptional: true),
                    ],
                    uniquenessConstraints: uniqueLastName ? [["lastName"]] : [],
                    indexes: [["age"]]
                )
            ]
        )
    }
}
