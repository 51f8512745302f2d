import Foundation
@_spi(Generated) import Modelwright
import Testing

/// Siblings that declare one name with different meanings (`A.v: Int?` beside `B.v: String`, a
/// relationship `A.image: Media?` beside an attribute `B.image: String?`) each read, filter, sort,
/// batch-update and delete through their own column.
struct SiblingColumnTests {
    static let schema = SchemaDescription(
        modelName: "Siblings", version: 1,
        entities: [
            EntityDescription(name: "P", isAbstract: true, attributes: [.init(name: "title", type: .string)]),
            EntityDescription(
                name: "A", parent: "P", attributes: [.init(name: "v", type: .int, isOptional: true)],
                relationships: [.init(name: "image", destination: "Media", inverse: "posts", cardinality: .toOne)]),
            EntityDescription(
                name: "B", parent: "P",
                attributes: [.init(name: "v", type: .string), .init(name: "image", type: .string, isOptional: true)]),
            EntityDescription(
                name: "Media", attributes: [.init(name: "url", type: .string)],
                relationships: [.init(name: "posts", destination: "A", inverse: "image", cardinality: .toMany)]),
        ])

    @Test func eachSiblingReadsWritesAndQueriesItsOwnColumn() async throws {
        let store = try Store.inMemory(schema: Self.schema, history: .enabled(author: "test"))
        let media = SiblingMedia(url: "https://example.com/a.png")
        let a = SiblingA(title: "a", v: 7, image: media.id)
        let b = SiblingB(title: "b", v: "007", image: "https://example.com/b.png")
        try await store.performAndSave { context in
            try context.insert(media)
            try context.insert(a)
            try context.insert(b)
        }
        let (readA, readB, filtered, linked) = try await store.performQuery { context in
            (
                try context.existing(a.id), try context.existing(b.id),
                try context.count(SiblingB.request().filter { $0.v == "007" })
                    + context.count(SiblingA.request().filter { $0.v == 7 }),
                try context.count(SiblingMedia.request().filter { $0.posts.any { $0.v == 7 } })
            )
        }
        #expect(readA == a)
        #expect(readB == b)
        #expect(filtered == 2)
        #expect(linked == 1)
        try await store.performAndSave { context in
            try context.batchUpdate(SiblingB.request()) { [try $0.v.set(to: "008")] }
            try context.delete(media.id)
        }
        let (afterA, afterB) = try await store.performQuery { context in
            (try context.existing(a.id), try context.existing(b.id))
        }
        #expect(afterA?.image == nil, "deleting the media nullifies A's relationship")
        #expect(afterA?.v == 7)
        #expect(afterB?.v == "008")
        #expect(afterB?.image == "https://example.com/b.png", "B's attribute of the same name is untouched")
        // History names the attributes as the schema does, not by their columns.
        let changed = try await store.fetchHistory(after: nil).flatMap(\.changes).filter { $0.kind == .update }
            .reduce(into: Set<String>()) { $0.formUnion($1.changedAttributes) }
        #expect(changed == ["v", "image"], "\(changed)")
    }
}

private struct SiblingA: ListedRecord {
    static let entityName = "A"
    static var columns: [RecordColumn<SiblingA>] { [RecordColumn(\.title), RecordColumn(\.v), RecordColumn(\.image)] }
    var id = RecordID<SiblingA>()
    var title = ""
    var v: Int?
    var image: RecordID<SiblingMedia>?

    struct Fields: RecordFields {
        typealias Target = SiblingA
        let path: FieldPath
        var v: Field<Int?> { path.field("v") }
        var image: ToOne<SiblingMedia.Fields> { path.toOne("image") }
    }
}

private struct SiblingB: ListedRecord {
    static let entityName = "B"
    static var columns: [RecordColumn<SiblingB>] { [RecordColumn(\.title), RecordColumn(\.v), RecordColumn(\.image)] }
    var id = RecordID<SiblingB>()
    var title = ""
    var v = ""
    var image: String?

    struct Fields: RecordFields {
        typealias Target = SiblingB
        let path: FieldPath
        var v: Field<String> { path.field("v") }
        var image: Field<String?> { path.field("image") }
    }
}

private struct SiblingMedia: ListedRecord {
    static let entityName = "Media"
    static var columns: [RecordColumn<SiblingMedia>] { [RecordColumn(\.url)] }
    var id = RecordID<SiblingMedia>()
    var url = ""

    struct Fields: RecordFields {
        typealias Target = SiblingMedia
        let path: FieldPath
        var posts: ToMany<SiblingA.Fields> { path.toMany("posts") }
    }
}
