import Foundation
import ModelwrightGenerator
import ModelwrightSchema
import ModelwrightTestSupport
import Testing

@testable import Modelwright

/// A model whose current version marks attributes `@searchable` (required and optional, on a parent
/// and a child entity, after a version without them) generates code that compiles with
/// `-warnings-as-errors`, together with app code that searches, ranks and reads snippets.
@Suite(.heavy)
struct SearchableCompileTests {
    static let versions = [
        """
        model Library version 1

        abstract entity Item {
            title: String
        }

        entity Book: Item {
            summary: String?
            pages: Int32 = 0
        }

        """,
        """
        model Library version 2

        abstract entity Item {
            /// Searched by title.
            title: String @searchable
        }

        entity Book: Item {
            summary: String? @searchable
            pages: Int32 = 0 @indexed
        }

        """,
    ]

    static let app = """
        import Modelwright

        func find(_ text: String, in store: Store) async throws -> [String] {
            let query = try SearchQuery(text)
            let typed = SearchQuery(words: text)
            let books = try await store.performQuery { context in
                try context.fetch(Book.request().filter { $0.title.matches(query) || $0.summary.matches(typed) })
            }
            let ranked = try await store.performQuery { context in
                try context.search(Book.request().filter { $0.pages > 10 }.limit(20), for: query, in: { $0.summary })
            }
            return books.map(\\.title) + ranked.map { result in
                result.snippet.parts.map { $0.isMatch ? "[\\($0.text)]" : String($0.text) }.joined()
                    + " \\(result.score) \\(result.record.id)"
            }
        }

        """

    @Test func aSearchableModelValidatesAndPlans() throws {
        let folder = try Self.modelFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = FrontEnd.run(modelAt: folder.path)
        #expect(!result.diagnostics.contains { $0.severity == .error }, "\(result.diagnostics.prefix(3))")
        let current = try #require(result.model?.current?.schema)
        let item = try #require(current.entities.first { $0.name == "Item" })
        let book = try #require(current.entities.first { $0.name == "Book" })
        #expect(item.searchableAttributes == ["title"])
        #expect(book.searchableAttributes == ["summary"])
    }

    @Test(
        .enabled(
            if: GeneratedCodeTypeChecker.modules != nil, "the built Modelwright module was not found beside the tests"))
    func searchableGeneratedCodeCompiles() throws {
        let folder = try Self.modelFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try GeneratedCodeTypeChecker.typecheck(app: Self.app, model: folder.path)
        #expect(result.status == 0, "\(result.errors.prefix(4_000))")
    }

    private static func modelFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("Library-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (index, text) in versions.enumerated() {
            try Data(text.utf8).write(to: folder.appendingPathComponent("Library.v\(index + 1).model"))
        }
        return folder
    }
}
