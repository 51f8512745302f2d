import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright
@testable import ModelwrightSchema

/// Issue 25's second case, a blogging app's step: `Content.score` moves down to `Post` and
/// becomes a `Double` through a custom stage, an entity (`Series`) and relationships are added,
/// and the hierarchy's table is rebuilt, while authors' ordered posts, the many-to-many tags and
/// the inverse-less `related` links are populated. `plan` must run the step on rows (the stage's
/// obligation met by a stub), and the real migration must keep every reference, every place in
/// an ordered list and every kept value.
struct BlogMigrationTests {
    private static let v1 = """
        model Blog version 1
        entity Author {
            name: String
            posts: [Post] @inverse(author)
        }
        abstract entity Content {
            title: String
            score: String?
            tags: Set<Tag> @inverse(items)
        }
        entity Post: Content {
            body: String
            author: Author?
            related: Set<Post>
        }
        entity Page: Content {
            slug: String
        }
        entity Tag {
            name: String
            items: Set<Content> @inverse(tags)
        }

        """

    private static let v2 = """
        model Blog version 2
        entity Author {
            name: String
            posts: [Post] @inverse(author)
            series: Set<Series> @inverse(author)
        }
        abstract entity Content {
            title: String
            tags: Set<Tag> @inverse(items)
        }
        entity Post: Content {
            body: String
            score: Double?
            author: Author?
            related: Set<Post>
            series: Series?
        }
        entity Page: Content {
            slug: String
        }
        entity Tag {
            name: String
            items: Set<Content> @inverse(tags)
        }
        entity Series {
            name: String
            author: Author?
            posts: [Post] @inverse(series)
        }
        migration from 1 {
            custom parseScores "Scores were text; parse them" covers Post.score
            lossy Content.score "a page's score meant nothing"
        }

        """

    /// A link as (from, to), both row IDs.
    private typealias Link = (SQLValue, SQLValue)

    @Test func planRunsTheStepOnRowsAndTheMigrationKeepsEveryReference() throws {
        let folder = try temporaryModelFolder(
            named: "Blog", files: ["Blog.v1.model": Self.v1, "Blog.v2.model": Self.v2])
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let loaded = FrontEnd.run(modelAt: folder.path)
        #expect(!loaded.diagnostics.contains { $0.severity == .error }, "\(loaded.diagnostics)")
        let model = try #require(loaded.model)
        let step = try #require(model.steps.first)
        #expect(step.obligations.map(\.subject) == ["Post.score"])
        // The stub's values went into rows, and the hierarchy's table was rebuilt with them in it.
        let operations = step.operations.map(\.description)
        #expect(operations.contains("update rows of Content (Post.score from the custom stage)"), "\(operations)")
        #expect(operations.contains("rebuild table Content"), "\(operations)")

        let (v1, v2) = (model.versions[0].schema, model.versions[1].schema)
        let parse = MigrationStage.CustomStep(
            name: "parseScores", label: "Scores were text; parse them",
            obligations: [
                .value(of: "Post", "score") { row -> Double? in
                    guard case .text(let text) = row["score"] else { return nil }
                    return Double(text)
                }
            ],
            didMigrate: { _ in })
        let tester = try MigrationTester(
            plan: MigrationPlan(current: v2, stages: [.custom(from: v1, to: v2, steps: [parse])]), startingAt: v1)
        let ada = try tester.insert("Author", ["name": .text("Ada")])
        let bob = try tester.insert("Author", ["name": .text("Bob")])
        var posts: [SQLValue] = []
        for number in 0..<6 {
            // Ada's posts in a place order that is not their ID order.
            let author = number % 3 == 2 ? bob : ada
            posts.append(
                try tester.insert(
                    "Post",
                    [
                        "title": .text("Post \(number)"), "body": .text("Body \(number)"),
                        "score": number == 4 ? .null : .text("\(number).5"), "author": author,
                        "author._position": .integer(Int64(5 - number)),
                    ]))
        }
        let pages = try (0..<2).map { number in
            try tester.insert(
                "Page", ["title": .text("Page \(number)"), "slug": .text("page-\(number)"), "score": .text("9")])
        }
        let tags = try ["swift", "sqlite", "news"].map { try tester.insert("Tag", ["name": .text($0)]) }
        let tagLinks: [Link] = [
            (posts[0], tags[0]), (posts[0], tags[1]), (posts[3], tags[2]), (pages[1], tags[0]), (pages[0], tags[2]),
        ]
        for (content, tag) in tagLinks {
            try tester.execute(
                "INSERT INTO \"_Content_tags\" (\"source\", \"destination\") VALUES (?, ?)", [content, tag])
        }
        let relatedLinks: [Link] = [(posts[0], posts[1]), (posts[1], posts[0]), (posts[5], posts[2])]
        for (post, other) in relatedLinks {
            try tester.execute(
                "INSERT INTO \"_Post_related\" (\"source\", \"destination\") VALUES (?, ?)", [post, other])
        }
        let before = try Self.references(tester)

        _ = try tester.migrate()

        #expect(try tester.schemaDifferences() == [])
        #expect(try Self.references(tester) == before)
        let rows = try tester.rows(of: "Content")
        for (number, post) in posts.enumerated() {
            let row = try #require(rows.first { $0.id == post })
            #expect(row["title"] == .text("Post \(number)"))
            #expect(row["body"] == .text("Body \(number)"))
            #expect(row["score"] == (number == 4 ? .null : .real(Double(number) + 0.5)))
            #expect(row["series"] == .null)
        }
        for (number, page) in pages.enumerated() {
            let row = try #require(rows.first { $0.id == page })
            #expect(row["slug"] == .text("page-\(number)"))
            #expect(row["_entity"] == .text("Page"))
        }
        #expect(try tester.rows(of: "Series").isEmpty)
    }

    @Test func plansCheckFindsAReorderedListADroppedLinkAndAChangedValue() throws {
        let folder = try temporaryModelFolder(named: "Blog", files: ["Blog.v1.model": Self.v1])
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let layout = try SchemaLayout(try #require(FrontEnd.run(modelAt: folder.path).model?.versions.first).schema)
        let faults: [String: String?] = [
            "": nil,
            "UPDATE \"Content\" SET \"author._position\" = 1 - \"author._position\"": "posts",
            "DELETE FROM \"_Content_tags\" WHERE \"source\" = (SELECT min(\"source\") FROM \"_Content_tags\")": "tags",
            "DELETE FROM \"_Post_related\" WHERE \"source\" = \"destination\"": "related",
            "UPDATE \"Content\" SET \"title\" = 'changed' WHERE \"_entity\" = 'Page'": "title",
        ]
        for (fault, property) in faults {
            let connection = try SQLiteConnection(path: nil)
            try connection.execute(SchemaSQL.createStatements(for: layout, in: connection.dialect))
            try SyntheticRows.insert(for: layout, into: connection)
            // Both posts in Ada's ordered list, in places 0 and 1.
            try connection.execute("UPDATE \"Content\" SET \"author\" = (SELECT \"id\" FROM \"Author\" LIMIT 1)")
            var kept = KeptData(source: layout, destination: layout, owed: [])
            try kept.readBefore(connection)
            if !fault.isEmpty { try connection.execute(fault) }
            do {
                try kept.compare(connection, stage: "test")
                #expect(property == nil, "\(fault) must change \(property ?? "")")
            } catch MigrationError.keptDataChanged(_, _, let changed, _) {
                #expect(changed == property, "\(fault)")
            }
        }
    }

    /// Every reference the store holds, as text: each post's author with its place, the tag links
    /// and the related links, sorted.
    private static func references(_ tester: MigrationTester) throws -> [String] {
        let connection = try SQLiteConnection(path: tester.url.path, readOnly: true)
        var result: [String] = []
        for sql in [
            "SELECT 'author', hex(\"id\"), hex(\"author\"), \"author._position\" FROM \"Content\" WHERE \"author\" IS NOT NULL",
            "SELECT 'tag', hex(\"source\"), hex(\"destination\"), NULL FROM \"_Content_tags\"",
            "SELECT 'related', hex(\"source\"), hex(\"destination\"), NULL FROM \"_Post_related\"",
        ] {
            let statement = try SQLiteStatement(connection: connection, sql: sql)
            while try statement.step() {
                result.append((0..<4).map { "\(statement.value(Int32($0)))" }.joined(separator: " "))
            }
        }
        return result.sorted()
    }
}
