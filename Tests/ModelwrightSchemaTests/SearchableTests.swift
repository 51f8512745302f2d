import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright
@testable import ModelwrightSchema

/// `@searchable`: accepted on `String` attributes and lowered into the entity's full-text index,
/// refused elsewhere at its line and column with the fix, and planned between versions (added,
/// removed, rebuilt on a rename) with the store's own operation listed.
struct SearchableTests {
    @Test func searchableStringsAreLoweredInDeclarationOrder() throws {
        let built = try graph(
            """
            model M version 1
            entity Book {
                title: String @searchable
                pages: Int32
                summary: String? @searchable
            }
            """)
        let book = try #require(built.entities.first)
        #expect(book.searchableAttributes == ["title", "summary"])
        let lowered = SchemaLowering.lower(built)
        #expect(lowered.entities[0].searchableAttributes == ["title", "summary"])
    }

    @Test func searchableElsewhereIsALocatedErrorWithTheFix() {
        let text = """
            model M version 1
            entity Book {
                pages: Int32 @searchable
                tags: Set<Tag> @searchable
                title: String @searchable(title)
                cover: Data? @searchable
            }
            entity Tag {
                books: Set<Book>
            }
            """
        #expect(
            diagnose(text) == [
                "3:18: error: '@searchable' applies to String attributes, and 'pages' is Int32: a full-text index reads text",
                "4:20: error: '@searchable' applies to String attributes, and 'tags' is a relationship: remove '@searchable', and search the destination's own String attribute",
                "5:19: error: '@searchable' takes no arguments: remove the parentheses",
                "6:18: error: '@searchable' applies to String attributes, and 'cover' is Data: a full-text index reads text",
            ])
        #expect(notes(text).contains("3:18: remove '@searchable', or make the attribute a String"))
    }

    @Test func thePlanAddsRemovesAndRebuildsTheIndex() throws {
        let versions = [
            "model Shelf version 1\nentity Book {\n    title: String\n    notes: String?\n}\n",
            "model Shelf version 2\nentity Book {\n    title: String @searchable\n    notes: String?\n}\n",
            "model Shelf version 3\nentity Book {\n    name: String @searchable @renamed(from: title)\n    notes: String?\n}\n",
            "model Shelf version 4\nentity Book {\n    name: String @searchable\n    notes: String? @searchable\n}\n",
            "model Shelf version 5\nentity Book {\n    name: String\n    notes: String?\n}\n",
        ]
        var files: [String: String] = [:]
        for (index, text) in versions.enumerated() { files["Shelf.v\(index + 1).model"] = text }
        let folder = try temporaryModelFolder(named: "Shelf", files: files)
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let result = FrontEnd.run(modelAt: folder.path)
        #expect(result.diagnostics.filter { $0.severity == .error }.isEmpty, "\(result.diagnostics)")
        let steps = try #require(result.model).steps
        let changes = steps.map { $0.changes.map(\.summary).filter { $0.contains("full-text") } }
        #expect(
            changes == [
                ["add full-text index Book(title)"], ["rebuild full-text index Book(name)"],
                ["rebuild full-text index Book(name, notes)"], ["remove full-text index Book(name, notes)"],
            ])
        let index = SchemaSQL.searchIndexName(of: "Book")
        #expect(steps[0].operations.contains(.createIndex(table: "Book", name: index)), "\(steps[0].operations)")
        #expect(steps[3].operations.contains(.dropIndex(table: "Book", name: index)), "\(steps[3].operations)")
        // Versions without `@searchable` keep the checksum they had before it existed.
        let plain = try #require(result.model).versions[0].schema
        #expect(!SchemaChecksum.canonicalText(of: plain).contains("search"))
        #expect(SchemaChecksum.canonicalText(of: try #require(result.model).versions[1].schema).contains("search"))
    }

    /// Names drawn from the pools that meet the full-text index's own: searchable attributes named
    /// like FTS5's `rank` and `rowid` columns in any case, and pairs of entities where one's name is
    /// the other's followed by a suffix of the index's tables (`Note` and `Note_pending`,
    /// `NOTE_content` …). `validate` accepts a model exactly when its store can be created, and
    /// refuses the rest at the entity or attribute with the fix. Before, it accepted all of them.
    @Test func validateAcceptsExactlyTheSearchableModelsWhoseStoreIsCreated() throws {
        var random = SplitMix64(seed: 0xF75A)
        let bases = ["Note", "NOTE", "NOte", "Doc"]
        let suffixes = [
            "", "_pending", "_content", "_data", "_idx", "_docsize", "_config", "_ids", "_x", "_Pending", "_insert",
        ]
        let attributes = ["rank", "rANK", "rowid", "rOWID", "title", "ranks", "rowids", "body", "text"]
        var accepted = 0
        var refused = 0
        for _ in 0..<200 {
            let first = bases[Int(random.next() % UInt64(bases.count))]
            let second =
                bases[Int(random.next() % UInt64(bases.count))] + suffixes[Int(random.next() % UInt64(suffixes.count))]
            guard first.lowercased() != second.lowercased() else { continue }
            let names = [
                attributes[Int(random.next() % UInt64(attributes.count))],
                attributes[Int(random.next() % UInt64(attributes.count))],
            ]
            let searchable = [true, random.next() % 4 != 0]
            let text =
                "model M version 1\n"
                + zip([first, second], zip(names, searchable)).map { entity, attribute in
                    "entity \(entity) {\n    \(attribute.0): String\(attribute.1 ? " @searchable" : "")\n}\n"
                }.joined()
            let errors = diagnose(text).filter { $0.contains(": error: ") }
            let schema = SchemaDescription(
                modelName: "M", version: 1,
                entities: zip([first, second], zip(names, searchable)).map { entity, attribute in
                    EntityDescription(
                        name: entity, attributes: [AttributeDescription(name: attribute.0, type: .string)],
                        searchableAttributes: attribute.1 ? [attribute.0] : [])
                })
            let created = (try? Store.inMemory(schema: schema)) != nil
            #expect(errors.isEmpty == created, "\(text)\n\(errors)")
            for error in errors {
                #expect(error.contains("rename"), "the error says the fix: \(error)")
                #expect(
                    ["2:", "3:", "5:", "6:"].contains(where: error.hasPrefix), "at the entity or attribute: \(error)")
            }
            if errors.isEmpty { accepted += 1 } else { refused += 1 }
        }
        #expect(accepted > 15 && refused > 15, "\(accepted) accepted, \(refused) refused")
    }
}
