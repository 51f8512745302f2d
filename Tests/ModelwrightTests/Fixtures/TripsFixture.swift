import Foundation
@_spi(Generated) import Modelwright

// Hand-written records shaped exactly as the generator will emit them, over a schema that
// exercises every column type, inheritance, every delete rule and reserved-word names.

enum Fixture {
    static let role = EnumDescription(
        name: "Role",
        rawType: .string,
        cases: [.init(name: "member", rawValue: "member"), .init(name: "admin", rawValue: "administrator")]
    )

    static let schema = SchemaDescription(
        modelName: "Trips",
        version: 1,
        entities: [
            EntityDescription(
                name: "User",
                attributes: [
                    AttributeDescription(name: "username", type: .string),
                    AttributeDescription(name: "givenName", type: .string),
                    AttributeDescription(name: "familyName", type: .string),
                    AttributeDescription(name: "namePrefix", type: .string, isOptional: true),
                    AttributeDescription(name: "rating", type: .int16),
                    AttributeDescription(name: "role", type: .enumeration(role)),
                ],
                relationships: [
                    RelationshipDescription(
                        name: "organization", destination: "Organization", inverse: "members", cardinality: .toOne),
                    RelationshipDescription(
                        name: "trips", destination: "Trip", inverse: "owner", cardinality: .toMany, deleteRule: .cascade
                    ),
                    RelationshipDescription(
                        name: "profile", destination: "Profile", inverse: "user", cardinality: .toOne,
                        deleteRule: .cascade),
                    RelationshipDescription(
                        name: "favourites", destination: "Trip", cardinality: .toMany, isOrdered: true),
                ],
                uniquenessConstraints: [["username"], ["givenName", "familyName"]],
                indexes: [["rating"]],
                defaultSort: [SortDescription(attribute: "familyName"), SortDescription(attribute: "givenName")]
            ),
            EntityDescription(
                name: "Organization",
                attributes: [AttributeDescription(name: "name", type: .string)],
                relationships: [
                    RelationshipDescription(
                        name: "members", destination: "User", inverse: "organization", cardinality: .toMany,
                        deleteRule: .deny
                    )
                ]
            ),
            EntityDescription(
                name: "Trip",
                attributes: [
                    AttributeDescription(name: "title", type: .string),
                    AttributeDescription(name: "budget", type: .decimal, isOptional: true),
                ],
                relationships: [
                    RelationshipDescription(
                        name: "owner", destination: "User", inverse: "trips", cardinality: .toOne, isOptional: false),
                    RelationshipDescription(
                        name: "stops", destination: "Stop", inverse: "trip", cardinality: .toMany, isOrdered: true,
                        deleteRule: .nullify
                    ),
                    RelationshipDescription(name: "tags", destination: "Tag", inverse: "trips", cardinality: .toMany),
                ],
                defaultSort: [SortDescription(attribute: "title")]
            ),
            EntityDescription(
                name: "Stop",
                attributes: [AttributeDescription(name: "name", type: .string)],
                relationships: [
                    RelationshipDescription(name: "trip", destination: "Trip", inverse: "stops", cardinality: .toOne)
                ]
            ),
            EntityDescription(
                name: "Profile",
                attributes: [AttributeDescription(name: "bio", type: .string)],
                relationships: [
                    RelationshipDescription(name: "user", destination: "User", inverse: "profile", cardinality: .toOne)
                ]
            ),
            EntityDescription(
                name: "Tag",
                attributes: [AttributeDescription(name: "name", type: .string)],
                relationships: [
                    RelationshipDescription(
                        name: "trips", destination: "Trip", inverse: "tags", cardinality: .toMany, deleteRule: .deny)
                ]
            ),
            EntityDescription(
                name: "Item", isAbstract: true, attributes: [AttributeDescription(name: "title", type: .string)]),
            EntityDescription(
                name: "Note", parent: "Item", attributes: [AttributeDescription(name: "body", type: .string)]),
            EntityDescription(
                name: "Order",
                attributes: [
                    AttributeDescription(name: "group", type: .string),
                    AttributeDescription(name: "index", type: .int32),
                ],
                indexes: [["group", "index"]]
            ),
            EntityDescription(
                name: "Sample",
                attributes: [
                    AttributeDescription(name: "bool", type: .bool),
                    AttributeDescription(name: "int16", type: .int16),
                    AttributeDescription(name: "int32", type: .int32),
                    AttributeDescription(name: "int64", type: .int64),
                    AttributeDescription(name: "int", type: .int),
                    AttributeDescription(name: "double", type: .double),
                    AttributeDescription(name: "float", type: .float),
                    AttributeDescription(name: "decimal", type: .decimal),
                    AttributeDescription(name: "string", type: .string),
                    AttributeDescription(name: "date", type: .date),
                    AttributeDescription(name: "data", type: .data),
                    AttributeDescription(name: "uuid", type: .uuid),
                    AttributeDescription(name: "url", type: .url),
                    AttributeDescription(name: "role", type: .enumeration(role)),
                    AttributeDescription(name: "tags", type: .codable(typeName: "[String]"), isOptional: true),
                    AttributeDescription(name: "note", type: .string, isOptional: true),
                ]
            ),
        ]
    )
}

enum Role: String, Sendable, Hashable, Codable, ColumnValue {
    case member
    case admin = "administrator"
}

struct User: Record {
    typealias ID = RecordID<User>
    static let entityName = "User"
    let id: ID
    var username: String
    var givenName: String
    var familyName: String
    var namePrefix: String?
    var rating: Int16
    var role: Role
    var organizationID: Organization.ID?
    var profileID: Profile.ID?

    init(
        id: ID = ID(), username: String, givenName: String, familyName: String, namePrefix: String? = nil,
        rating: Int16 = 0, role: Role = .member, organizationID: Organization.ID? = nil, profileID: Profile.ID? = nil
    ) {
        self.id = id
        self.username = username
        self.givenName = givenName
        self.familyName = familyName
        self.namePrefix = namePrefix
        self.rating = rating
        self.role = role
        self.organizationID = organizationID
        self.profileID = profileID
    }

    func encode(to row: inout RowEncoder) throws {
        try row.encode(username)
        try row.encode(givenName)
        try row.encode(familyName)
        try row.encode(namePrefix)
        try row.encode(rating)
        try row.encode(role)
        try row.encode(organizationID)
        try row.encode(profileID)
    }

    init(id: ID, row: inout RowDecoder) throws {
        self.id = id
        username = try row.decode()
        givenName = try row.decode()
        familyName = try row.decode()
        namePrefix = try row.decode()
        rating = try row.decode()
        role = try row.decode()
        organizationID = try row.decode()
        profileID = try row.decode()
    }

    struct Fields: RecordFields {
        typealias Target = User
        let path: FieldPath
        var username: Field<String> { path.field("username") }
        var givenName: Field<String> { path.field("givenName") }
        var familyName: Field<String> { path.field("familyName") }
        var namePrefix: Field<String?> { path.field("namePrefix") }
        var rating: Field<Int16> { path.field("rating") }
        var role: Field<Role> { path.field("role") }
        var organizationID: Field<Organization.ID?> { path.field("organization") }
        var organization: ToOne<Organization.Fields> { path.toOne("organization") }
        var trips: ToMany<Trip.Fields> { path.toMany("trips") }
        var favourites: ToMany<Trip.Fields> { path.toMany("favourites") }
    }
}

struct Organization: Record {
    typealias ID = RecordID<Organization>
    static let entityName = "Organization"
    let id: ID
    var name: String

    init(id: ID = ID(), name: String) {
        self.id = id
        self.name = name
    }

    func encode(to row: inout RowEncoder) throws {
        try row.encode(name)
    }

    init(id: ID, row: inout RowDecoder) throws {
        self.id = id
        name = try row.decode()
    }

    struct Fields: RecordFields {
        typealias Target = Organization
        let path: FieldPath
        var name: Field<String> { path.field("name") }
        var members: ToMany<User.Fields> { path.toMany("members") }
    }
}

struct Trip: Record {
    typealias ID = RecordID<Trip>
    static let entityName = "Trip"
    let id: ID
    var title: String
    var budget: Decimal?
    var ownerID: User.ID

    init(id: ID = ID(), title: String, budget: Decimal? = nil, ownerID: User.ID) {
        self.id = id
        self.title = title
        self.budget = budget
        self.ownerID = ownerID
    }

    func encode(to row: inout RowEncoder) throws {
        try row.encode(title)
        try row.encode(budget)
        try row.encode(ownerID)
    }

    init(id: ID, row: inout RowDecoder) throws {
        self.id = id
        title = try row.decode()
        budget = try row.decode()
        ownerID = try row.decode()
    }

    struct Fields: RecordFields {
        typealias Target = Trip
        let path: FieldPath
        var title: Field<String> { path.field("title") }
        var budget: Field<Decimal?> { path.field("budget") }
        var owner: ToOne<User.Fields> { path.toOne("owner") }
        var stops: ToMany<Stop.Fields> { path.toMany("stops") }
        var tags: ToMany<Tag.Fields> { path.toMany("tags") }
    }
}

struct Stop: Record {
    typealias ID = RecordID<Stop>
    static let entityName = "Stop"
    let id: ID
    var name: String
    var tripID: Trip.ID?

    init(id: ID = ID(), name: String, tripID: Trip.ID?) {
        self.id = id
        self.name = name
        self.tripID = tripID
    }

    func encode(to row: inout RowEncoder) throws {
        try row.encode(name)
        try row.encode(tripID)
    }

    init(id: ID, row: inout RowDecoder) throws {
        self.id = id
        name = try row.decode()
        tripID = try row.decode()
    }

    struct Fields: RecordFields {
        typealias Target = Stop
        let path: FieldPath
        var name: Field<String> { path.field("name") }
        var trip: ToOne<Trip.Fields> { path.toOne("trip") }
    }
}

struct Profile: Record {
    typealias ID = RecordID<Profile>
    static let entityName = "Profile"
    let id: ID
    var bio: String
    var userID: User.ID?

    init(id: ID = ID(), bio: String, userID: User.ID? = nil) {
        self.id = id
        self.bio = bio
        self.userID = userID
    }

    func encode(to row: inout RowEncoder) throws {
        try row.encode(bio)
        try row.encode(userID)
    }

    init(id: ID, row: inout RowDecoder) throws {
        self.id = id
        bio = try row.decode()
        userID = try row.decode()
    }

    struct Fields: RecordFields {
        typealias Target = Profile
        let path: FieldPath
        var bio: Field<String> { path.field("bio") }
    }
}

struct Tag: Record {
    typealias ID = RecordID<Tag>
    static let entityName = "Tag"
    let id: ID
    var name: String

    init(id: ID = ID(), name: String) {
        self.id = id
        self.name = name
    }

    func encode(to row: inout RowEncoder) throws {
        try row.encode(name)
    }

    init(id: ID, row: inout RowDecoder) throws {
        self.id = id
        name = try row.decode()
    }

    struct Fields: RecordFields {
        typealias Target = Tag
        let path: FieldPath
        var name: Field<String> { path.field("name") }
        var trips: ToMany<Trip.Fields> { path.toMany("trips") }
    }
}

struct Item: Record {
    typealias ID = RecordID<Item>
    static let entityName = "Item"
    let id: ID
    var title: String

    func encode(to row: inout RowEncoder) throws {
        try row.encode(title)
    }

    init(id: ID, row: inout RowDecoder) throws {
        self.id = id
        title = try row.decode()
    }

    struct Fields: RecordFields {
        typealias Target = Item
        let path: FieldPath
        var title: Field<String> { path.field("title") }
    }
}

struct Note: Record {
    typealias ID = RecordID<Note>
    static let entityName = "Note"
    let id: ID
    var title: String
    var body: String

    init(id: ID = ID(), title: String, body: String) {
        self.id = id
        self.title = title
        self.body = body
    }

    func encode(to row: inout RowEncoder) throws {
        try row.encode(title)
        try row.encode(body)
    }

    init(id: ID, row: inout RowDecoder) throws {
        self.id = id
        title = try row.decode()
        body = try row.decode()
    }

    struct Fields: RecordFields {
        typealias Target = Note
        let path: FieldPath
        var title: Field<String> { path.field("title") }
        var body: Field<String> { path.field("body") }
    }
}

struct Order: Record {
    typealias ID = RecordID<Order>
    static let entityName = "Order"
    let id: ID
    var group: String
    var index: Int32

    init(id: ID = ID(), group: String, index: Int32) {
        self.id = id
        self.group = group
        self.index = index
    }

    func encode(to row: inout RowEncoder) throws {
        try row.encode(group)
        try row.encode(index)
    }

    init(id: ID, row: inout RowDecoder) throws {
        self.id = id
        group = try row.decode()
        index = try row.decode()
    }

    struct Fields: RecordFields {
        typealias Target = Order
        let path: FieldPath
        var group: Field<String> { path.field("group") }
        var index: Field<Int32> { path.field("index") }
    }
}

struct Sample: Record {
    typealias ID = RecordID<Sample>
    static let entityName = "Sample"
    let id: ID
    var bool = false
    var int16: Int16 = 0
    var int32: Int32 = 0
    var int64: Int64 = 0
    var int = 0
    var double = 0.0
    var float: Float = 0
    var decimal: Decimal = 0
    var string = ""
    var date = Date(timeIntervalSinceReferenceDate: 0)
    var data = Data()
    var uuid = UUID()
    var url = URL(string: "https://example.com")!
    var role = Role.member
    var tags: [String]?
    var note: String?

    init(id: ID = ID()) {
        self.id = id
    }

    func encode(to row: inout RowEncoder) throws {
        try row.encode(bool)
        try row.encode(int16)
        try row.encode(int32)
        try row.encode(int64)
        try row.encode(int)
        try row.encode(double)
        try row.encode(float)
        try row.encode(decimal)
        try row.encode(string)
        try row.encode(date)
        try row.encode(data)
        try row.encode(uuid)
        try row.encode(url)
        try row.encode(role)
        try row.encodeJSON(tags)
        try row.encode(note)
    }

    init(id: ID, row: inout RowDecoder) throws {
        self.id = id
        bool = try row.decode()
        int16 = try row.decode()
        int32 = try row.decode()
        int64 = try row.decode()
        int = try row.decode()
        double = try row.decode()
        float = try row.decode()
        decimal = try row.decode()
        string = try row.decode()
        date = try row.decode()
        data = try row.decode()
        uuid = try row.decode()
        url = try row.decode()
        role = try row.decode()
        tags = try row.decodeJSON()
        note = try row.decode()
    }

    struct Fields: RecordFields {
        typealias Target = Sample
        let path: FieldPath
        var string: Field<String> { path.field("string") }
        var note: Field<String?> { path.field("note") }
        var double: Field<Double> { path.field("double") }
        var decimal: Field<Decimal> { path.field("decimal") }
        var int64: Field<Int64> { path.field("int64") }
        var bool: Field<Bool> { path.field("bool") }
        var int16: Field<Int16> { path.field("int16") }
        var int32: Field<Int32> { path.field("int32") }
        var int: Field<Int> { path.field("int") }
        var float: Field<Float> { path.field("float") }
        var date: Field<Date> { path.field("date") }
        var data: Field<Data> { path.field("data") }
        var uuid: Field<UUID> { path.field("uuid") }
        var url: Field<URL> { path.field("url") }
        var role: Field<Role> { path.field("role") }
    }
}
