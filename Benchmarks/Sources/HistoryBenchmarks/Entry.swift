import Foundation
@_spi(Generated) import Modelwright

/// A small record: a title, a rank and a time stamp.
struct Entry: Record {
    typealias ID = RecordID<Entry>
    static let entityName = "Entry"
    let id: ID
    let title: String
    let rank: Int
    let stamp: Double

    init(id: ID = ID(), title: String, rank: Int, stamp: Double) {
        self.id = id
        self.title = title
        self.rank = rank
        self.stamp = stamp
    }

    func encode(to row: inout RowEncoder) throws {
        try row.encode(title)
        try row.encode(rank)
        try row.encode(stamp)
    }

    init(id: ID, row: inout RowDecoder) throws {
        self.id = id
        title = try row.decode()
        rank = try row.decode()
        stamp = try row.decode()
    }

    func renamed(_ title: String) -> Entry {
        Entry(id: id, title: title, rank: rank, stamp: stamp)
    }

    struct Fields: RecordFields {
        typealias Target = Entry
        let path: FieldPath
        var title: Field<String> { path.field("title") }
        var rank: Field<Int> { path.field("rank") }
    }

    static let schema = SchemaDescription(
        modelName: "History",
        version: 1,
        entities: [
            EntityDescription(
                name: "Entry",
                attributes: [
                    AttributeDescription(name: "title", type: .string),
                    AttributeDescription(name: "rank", type: .int),
                    AttributeDescription(name: "stamp", type: .double),
                ],
                indexes: [["rank"]]
            )
        ]
    )

    static func seed(count: Int) -> [Entry] {
        (0..<count).map { Entry(title: "entry \($0)", rank: $0, stamp: Double($0)) }
    }
}
