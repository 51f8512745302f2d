import Foundation
import ModelwrightTestSupport

@testable import Modelwright

/// A random Core Data model (as `contents` XML) that exercises every rule of Core Data's SQLite
/// layout the format notes list, and random objects of it, written as Core Data writes its store.
///
/// The layout is worked out here from `coredata-store-format.md` on its own, not through the
/// importer's `CoreDataStoreLayout`, so the two implementations check each other.
struct CoreDataStoreFixture {
    /// One attribute of the generated model.
    struct Attribute {
        var name: String
        var type: String
        var isOptional: Bool
        var external = false
        /// A Transformable's class, for one imported as `Codable<T>`.
        var className: String?
    }

    /// One relationship.
    struct Relationship {
        var name: String
        var destination: String
        var inverse: String?
        var toMany: Bool
        var ordered: Bool
        var isOptional = true
    }

    /// One entity.
    struct Entity {
        var name: String
        var parent: String?
        var isAbstract = false
        var attributes: [Attribute] = []
        var relationships: [Relationship] = []
    }

    /// The types of attributes, with Core Data's spelling.
    static let types = [
        "Integer 16", "Integer 32", "Integer 64", "Decimal", "Double", "Float", "String", "Boolean", "Date", "Binary",
        "UUID", "URI", "Transformable",
    ]

    var entities: [Entity]

    /// A model drawn from `random`: a plain root, a three-level hierarchy whose siblings declare one
    /// name with two types, and a root whose name starts in lower case; relationships of every kind.
    init(random: inout SplitMix64, reflexive: Bool = true) {
        func attributes(_ prefix: String, count: Int) -> [Attribute] {
            (0..<count).map { index in
                let type = random.pick(Self.types)
                return Attribute(
                    name: "\(prefix)\(index)", type: type, isOptional: random.chance(0.5),
                    external: type == "Binary" && random.chance(0.6))
            }
        }
        // Every type at least once, on the plain root.
        var author = Entity(
            name: "Author",
            attributes: Self.types.enumerated().map { index, type in
                Attribute(name: "value\(index)", type: type, isOptional: index % 2 == 0, external: type == "Binary")
            })
        author.attributes.append(Attribute(name: "note", type: "Binary", isOptional: true, external: false))
        // Transformables of standard types, imported as Codable<T>: keyed archives become JSON.
        for (index, className) in ["[String]", "[String: Int64]", "NSString", "NSDate", "[URL]"].enumerated() {
            author.attributes.append(
                Attribute(
                    name: "codable\(index)", type: "Transformable", isOptional: index % 2 == 1, className: className))
        }
        var item = Entity(name: "Item", parent: nil, isAbstract: random.chance(0.5))
        item.attributes = attributes("shared", count: random.size(in: 1...3))
        var book = Entity(name: "Book", parent: "Item")
        book.attributes = attributes("pages", count: random.size(in: 0...2))
        book.attributes.append(Attribute(name: "size", type: "Integer 32", isOptional: true))
        var note = Entity(name: "Note", parent: "Item")
        note.attributes = [Attribute(name: "size", type: "String", isOptional: true)]
        var ebook = Entity(name: "Ebook", parent: "Book")
        ebook.attributes = attributes("format", count: random.size(in: 0...2))
        var tag = Entity(name: "tag")
        tag.attributes =
            [Attribute(name: "label", type: "String", isOptional: false)]
            + attributes("extra", count: random.size(in: 0...2))

        // One-to-many with an inverse, into a hierarchy: the to-one side holds the key.
        let itemsOrdered = random.chance(0.5)
        author.relationships.append(
            Relationship(name: "items", destination: "Item", inverse: "author", toMany: true, ordered: itemsOrdered))
        item.relationships.append(
            Relationship(name: "author", destination: "Author", inverse: "items", toMany: false, ordered: false))
        // A to-one without an inverse into an entity with subentities: a key and an entity column.
        note.relationships.append(
            Relationship(name: "book", destination: "Book", inverse: nil, toMany: false, ordered: false))
        // A to-many without an inverse: a virtual to-one in the destination's table.
        author.relationships.append(
            Relationship(name: "favorites", destination: "tag", inverse: nil, toMany: true, ordered: random.chance(0.5))
        )
        // A many-to-many pair: a join table.
        item.relationships.append(
            Relationship(name: "tags", destination: "tag", inverse: "items", toMany: true, ordered: random.chance(0.5)))
        tag.relationships.append(
            Relationship(name: "items", destination: "Item", inverse: "tags", toMany: true, ordered: false))
        // A same-entity one-to-many pair.
        author.relationships.append(
            Relationship(name: "mentor", destination: "Author", inverse: "mentees", toMany: false, ordered: false))
        author.relationships.append(
            Relationship(
                name: "mentees", destination: "Author", inverse: "mentor", toMany: true, ordered: random.chance(0.5)))
        if reflexive {
            tag.relationships.append(
                Relationship(name: "related", destination: "tag", inverse: "related", toMany: true, ordered: false))
        }
        entities = [author, item, book, note, ebook, tag].shuffled(using: &random)
    }

    func entity(_ name: String) -> Entity? { entities.first { $0.name == name } }

    /// The model's `contents` XML, with `extra` inside the entity `Author` (a new version's change).
    func contents(extra: String = "") -> String {
        var lines: [String] = []
        for entity in entities {
            var head = "<entity name=\"\(entity.name)\" representedClassName=\"\(entity.name)\" syncable=\"YES\""
            if let parent = entity.parent { head += " parentEntity=\"\(parent)\"" }
            if entity.isAbstract { head += " isAbstract=\"YES\"" }
            lines.append(head + ">")
            for attribute in entity.attributes {
                var line =
                    "<attribute name=\"\(attribute.name)\" attributeType=\"\(attribute.type)\" optional=\"\(attribute.isOptional ? "YES" : "NO")\""
                if attribute.external { line += " allowsExternalBinaryDataStorage=\"YES\"" }
                if attribute.type == "Transformable" {
                    line +=
                        attribute.className.map {
                            " valueTransformerName=\"NSSecureUnarchiveFromData\" customClassName=\"\($0)\""
                        } ?? " valueTransformerName=\"MyTransformer\" customClassName=\"MyClass\""
                }
                if ["Integer 16", "Integer 32", "Integer 64", "Double", "Float", "Boolean"].contains(attribute.type) {
                    line += " usesScalarValueType=\"YES\""
                }
                lines.append(line + "/>")
            }
            for relationship in entity.relationships {
                var line =
                    "<relationship name=\"\(relationship.name)\" optional=\"YES\" destinationEntity=\"\(relationship.destination)\" deletionRule=\"Nullify\""
                line += relationship.toMany ? " toMany=\"YES\"" : " maxCount=\"1\""
                if relationship.ordered { line += " ordered=\"YES\"" }
                if let inverse = relationship.inverse {
                    line += " inverseName=\"\(inverse)\" inverseEntity=\"\(relationship.destination)\""
                }
                lines.append(line + "/>")
            }
            if entity.name == "Author" { lines.append(extra) }
            lines.append("</entity>")
        }
        return """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22758" systemVersion="23F79" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            \(lines.joined(separator: "\n"))
            </model>
            """
    }
}
