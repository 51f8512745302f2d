import Foundation
@_spi(Generated) import Modelwright

// The sync tests' planner model (`SyncPlanner` in ModelwrightTests), again for this process: a
// test target's code cannot be linked into an executable. The test's server serves its own copy
// and refuses any push or pull whose schema checksum differs, so the two cannot drift unnoticed.

enum Planner {
    static let schema = SchemaDescription(
        modelName: "SyncPlanner",
        version: 1,
        entities: [
            EntityDescription(
                name: "Card",
                attributes: [
                    AttributeDescription(name: "title", type: .string),
                    AttributeDescription(name: "rating", type: .int64),
                    AttributeDescription(name: "done", type: .bool),
                    AttributeDescription(name: "due", type: .date, isOptional: true),
                    AttributeDescription(name: "owner", type: .string),
                ],
                relationships: [
                    RelationshipDescription(name: "parent", destination: "Card", cardinality: .toOne),
                    RelationshipDescription(
                        name: "labels", destination: "Label", inverse: "cards", cardinality: .toMany),
                ]
            ),
            EntityDescription(
                name: "Label",
                attributes: [
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "owner", type: .string),
                ],
                relationships: [
                    RelationshipDescription(name: "cards", destination: "Card", inverse: "labels", cardinality: .toMany)
                ]
            ),
        ]
    )
}

/// A card, with the planner's columns in their order.
struct Card: Record, Hashable {
    typealias ID = RecordID<Card>
    static let entityName = "Card"
    let id: ID
    var title: String
    var rating: Int64
    var done: Bool
    var due: Date?
    var owner: String
    var parentID: Card.ID?

    init(
        id: ID = ID(), title: String, rating: Int64, done: Bool, due: Date? = nil, owner: String = "",
        parentID: Card.ID? = nil
    ) {
        self.id = id
        self.title = title
        self.rating = rating
        self.done = done
        self.due = due
        self.owner = owner
        self.parentID = parentID
    }

    func encode(to row: inout RowEncoder) throws {
        try row.encode(title)
        try row.encode(rating)
        try row.encode(done)
        try row.encode(due)
        try row.encode(owner)
        try row.encode(parentID)
    }

    init(id: ID, row: inout RowDecoder) throws {
        self.id = id
        title = try row.decode()
        rating = try row.decode()
        done = try row.decode()
        due = try row.decode()
        owner = try row.decode()
        parentID = try row.decode()
    }

    struct Fields: RecordFields {
        typealias Target = Card
        let path: FieldPath
        var labels: ToMany<Label.Fields> { path.toMany("labels") }
    }
}

/// A label, linked to cards many-to-many.
struct Label: Record, Hashable {
    typealias ID = RecordID<Label>
    static let entityName = "Label"
    let id: ID
    var name: String
    var owner: String

    init(id: ID = ID(), name: String, owner: String = "") {
        self.id = id
        self.name = name
        self.owner = owner
    }

    func encode(to row: inout RowEncoder) throws {
        try row.encode(name)
        try row.encode(owner)
    }

    init(id: ID, row: inout RowDecoder) throws {
        self.id = id
        name = try row.decode()
        owner = try row.decode()
    }

    struct Fields: RecordFields {
        typealias Target = Label
        let path: FieldPath
        var cards: ToMany<Card.Fields> { path.toMany("cards") }
    }
}
