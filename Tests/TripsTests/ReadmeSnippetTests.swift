import Foundation
import Testing

/// The README's code that claims to compile, type-checked against the generated Trips code.
struct ReadmeSnippetTests {
    /// The Swift block after the `<!-- compiled by ReadmeSnippetTests -->` marker.
    private static func compiledSnippet() throws -> String {
        let readme = try String(
            contentsOf: GeneratedCodeTypeChecker.root.appendingPathComponent("README.md"), encoding: .utf8)
        let marker = try #require(readme.range(of: "<!-- compiled by ReadmeSnippetTests -->"))
        let rest = readme[marker.upperBound...]
        let start = try #require(rest.range(of: "```swift\n"))
        let end = try #require(rest[start.upperBound...].range(of: "\n```"))
        return String(rest[start.upperBound..<end.lowerBound])
    }

    @Test func theListsViewModelCompiles() throws {
        let snippet = try Self.compiledSnippet()
        #expect(snippet.contains("FetchedResultsController"))
        let result = try GeneratedCodeTypeChecker.typecheck(app: snippet)
        #expect(result.status == 0, "\(result.errors)")
    }
}
