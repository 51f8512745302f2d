import Foundation
import Modelwright
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing
import Trips

// The Swift snippets of the "Running on PostgreSQL" article, compiled here as they are written
// there; `theArticlesSnippetsAreCompiledHere` checks that each is in this file, line for line.
// None of them runs: they name a server the tests do not have.

private func setUpSnippet() async throws {
    var configuration = PostgresConfiguration("postgresql://app@db.internal/trips?sslmode=verify-full")
    configuration.statementTimeout = .seconds(5)
    let pool = PostgresPool(configuration, size: 8)
    let titles = try await pool.withConnection { connection in
        let rows = try await connection.query("SELECT \"title\" FROM \"Trip\" WHERE \"travellers\" >= $1", [.int32(2)])
        return (0..<rows.count).map { rows[$0, 0] }
    }
    _ = titles
}

private func openSnippet() async throws {
    let store = try Store(postgres: PostgresConfiguration("postgresql://app@db.internal/trips"), schema: Trips.schema)
    let lovelaces = try await store.performQuery { context in
        let request = User.request().filter {
            $0.familyName.hasPrefix("LÖ", caseInsensitive: true, diacriticInsensitive: true)
        }
        return try context.fetch(request)
    }
    try store.close()
    _ = lovelaces
}

/// Every Swift snippet of the article is in this file, so it compiles with the tests.
@Suite(.heavy)
struct ArticleSnippetTests {
    private static func lines(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
    }

    @Test func theArticlesSnippetsAreCompiledHere() throws {
        let here = URL(fileURLWithPath: #filePath)
        let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let article = try String(
            contentsOf: root.appendingPathComponent(
                "Sources/ModelwrightPostgres/ModelwrightPostgres.docc/RunningOnPostgreSQL.md"),
            encoding: .utf8)
        let compiled = Self.lines(try String(contentsOf: here, encoding: .utf8))
        let blocks = article.components(separatedBy: "```swift\n").dropFirst()
            .map { $0.components(separatedBy: "```").first ?? "" }
        #expect(!blocks.isEmpty)
        for block in blocks {
            let snippet = Self.lines(block).filter { !$0.hasPrefix("import ") }
            let found = compiled.indices.contains { start in
                compiled[start...].starts(with: snippet)
            }
            #expect(found, "not compiled: \(snippet.first ?? "")")
        }
    }
}
