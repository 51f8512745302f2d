import Foundation
@_spi(Generated) import Modelwright

/// A row of a long list: what a mail or feed app shows, grouped into sections by `section`.
struct ListItem: Record {
    typealias ID = RecordID<ListItem>
    static let entityName = "ListItem"
    let id: ID
    let section: String
    let title: String
    let summary: String
    let rank: Int
    let createdAt: Date

    init(id: ID = ID(), section: String, title: String, summary: String, rank: Int, createdAt: Date) {
        self.id = id
        self.section = section
        self.title = title
        self.summary = summary
        self.rank = rank
        self.createdAt = createdAt
    }

    func encode(to row: inout RowEncoder) throws {
        try row.encode(section)
        try row.encode(title)
        try row.encode(summary)
        try row.encode(rank)
        try row.encode(createdAt)
    }

    init(id: ID, row: inout RowDecoder) throws {
        self.id = id
        section = try row.decode()
        title = try row.decode()
        summary = try row.decode()
        rank = try row.decode()
        createdAt = try row.decode()
    }

    struct Fields: RecordFields {
        typealias Target = ListItem
        let path: FieldPath
        var section: Field<String> { path.field("section") }
        var title: Field<String> { path.field("title") }
        var rank: Field<Int> { path.field("rank") }
    }

    /// One entity, indexed for the list's order, as `modelwright` would lower it.
    static let schema = SchemaDescription(
        modelName: "Lists",
        version: 1,
        entities: [
            EntityDescription(
                name: "ListItem",
                attributes: [
                    AttributeDescription(name: "section", type: .string),
                    AttributeDescription(name: "title", type: .string),
                    AttributeDescription(name: "summary", type: .string),
                    AttributeDescription(name: "rank", type: .int),
                    AttributeDescription(name: "createdAt", type: .date),
                ],
                indexes: [["section", "title"]]
            )
        ]
    )

    /// The list's request: by section, then title.
    static let request = ListItem.request().sorted { [$0.section.ascending, $0.title.ascending] }

    /// `count` items spread evenly over `sections` sections.
    static func seed(count: Int, sections: Int) -> [ListItem] {
        let start = Date(timeIntervalSinceReferenceDate: 700_000_000)
        return (0..<count).map { index in
            ListItem(
                section: sectionName(index % sections),
                title: "Item \(String(index * 7_919 % count).leftPadded(to: 6))",
                summary: "A summary long enough to need its own storage, number \(index)",
                rank: index,
                createdAt: start.addingTimeInterval(Double(index))
            )
        }
    }

    static func sectionName(_ index: Int) -> String {
        "Section \(String(index).leftPadded(to: 4))"
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
