import Foundation
@_spi(Generated) import Modelwright

/// A row of a long list: what a mail or feed app shows, grouped into sections by `section`.
public struct ListItem: Record {
    /// The record's ID type.
    public typealias ID = RecordID<ListItem>
    /// The entity's name in the schema.
    public static let entityName = "ListItem"
    /// The record's identity.
    public let id: ID
    /// The section the item is listed in.
    public let section: String
    /// The item's title, its order within the section.
    public let title: String
    /// A summary long enough to need its own storage.
    public let summary: String
    /// The item's rank.
    public let rank: Int
    /// When the item was created.
    public let createdAt: Date

    /// An item with every field given.
    public init(id: ID = ID(), section: String, title: String, summary: String, rank: Int, createdAt: Date) {
        self.id = id
        self.section = section
        self.title = title
        self.summary = summary
        self.rank = rank
        self.createdAt = createdAt
    }

    /// Writes the columns in schema order.
    @_spi(Generated) public func encode(to row: inout RowEncoder) throws {
        try row.encode(section)
        try row.encode(title)
        try row.encode(summary)
        try row.encode(rank)
        try row.encode(createdAt)
    }

    /// Reads the columns in schema order, into locals, then one `init`.
    @_spi(Generated) public init(id: ID, row: inout RowDecoder) throws {
        let section: String = try row.decode()
        let title: String = try row.decode()
        let summary: String = try row.decode()
        let rank: Int = try row.decode()
        let createdAt: Date = try row.decode()
        self.init(id: id, section: section, title: title, summary: summary, rank: rank, createdAt: createdAt)
    }

    /// The item's fields, for requests.
    public struct Fields: RecordFields {
        /// The record the fields belong to.
        public typealias Target = ListItem
        /// Where the fields are reached from.
        @_spi(Generated) public let path: FieldPath
        /// Creates the fields at `path`.
        @_spi(Generated) public init(path: FieldPath) { self.path = path }
        /// The section.
        public var section: Field<String> { path.field("section") }
        /// The title.
        public var title: Field<String> { path.field("title") }
        /// The rank.
        public var rank: Field<Int> { path.field("rank") }
    }

    /// One entity, indexed for the list's order, as `modelwright` would lower it.
    public static let schema = SchemaDescription(
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
    public static let request = ListItem.request().sorted { [$0.section.ascending, $0.title.ascending] }

    /// `count` items spread evenly over `sections` sections.
    public static func seed(count: Int, sections: Int) -> [ListItem] {
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

    /// The name of section `index`, zero-padded so names sort as numbers.
    public static func sectionName(_ index: Int) -> String {
        "Section \(String(index).leftPadded(to: 4))"
    }
}

extension String {
    /// The string with zeros in front, up to `width` characters.
    func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
