import Foundation
import Modelwright
import Testing

@testable import ModelwrightSchema

/// The generated stage protocol names its members by joining words (stage, entity, property;
/// stage and `WillMigrate`/`DidMigrate`), so two members can get one name; `validate` refuses
/// that at the later stage's name instead of generating a protocol that does not compile.
struct StageMemberNameTests {
    /// The errors `plan` reports for the versions, as `file:line:column: message`.
    private static func errors(_ files: [String: String]) throws -> [String] {
        let folder = try temporaryModelFolder(named: "Names", files: files)
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        return FrontEnd.run(modelAt: folder.path).diagnostics.filter { $0.severity == .error }.map { diagnostic in
            let file = diagnostic.path.split(separator: "/").last.map(String.init) ?? ""
            return "\(file):\(diagnostic.location.map(\.description) ?? "-"): \(diagnostic.message)"
        }
    }

    @Test func aRequirementNamedLikeItsStagesHookIsRefused() throws {
        let errors = try Self.errors([
            "Names.v1.model": "model Names version 1\nentity Did {\n    migrate: Int32\n}\n",
            "Names.v2.model":
                "model Names version 2\nentity Did {\n    migrate: UUID\n}\nmigration from 1 {\n    custom parse \"Parse\"\n}\n",
        ])
        #expect(
            errors == [
                "Names.v2.model:6:12: custom stage 'parse' generates 'parseDidMigrate' (the hook after the tables change), which custom stage 'parse' of version 2 already generates (the requirement for Did.migrate); rename one of the stages"
            ])
    }

    @Test func requirementsOfTwoStagesThatJoinToOneNameAreRefused() throws {
        let errors = try Self.errors([
            "Names.v1.model":
                "model Names version 1\nentity BookRating {\n    x: Int32\n}\nentity Rating {\n    x: Int32\n}\n",
            "Names.v2.model": """
            model Names version 2
            entity BookRating {
                x: UUID
            }
            entity Rating {
                x: UUID
            }
            migration from 1 {
                custom a "A" covers BookRating.x
                custom aBook "A book" covers Rating.x
            }

            """,
        ])
        #expect(
            errors == [
                "Names.v2.model:10:12: custom stage 'aBook' generates 'aBookRatingX' (the requirement for Rating.x), which custom stage 'a' of version 2 already generates (the requirement for BookRating.x); rename one of the stages"
            ])
    }

    @Test func aStageNameReusedByALaterVersionIsRefused() throws {
        let errors = try Self.errors([
            "Names.v1.model": "model Names version 1\nentity Book {\n    title: String\n}\n",
            "Names.v2.model":
                "model Names version 2\nentity Book {\n    title: String\n    pages: Int32?\n}\nmigration from 1 {\n    custom fix \"Fix\"\n}\n",
            "Names.v3.model":
                "model Names version 3\nentity Book {\n    title: String\n    pages: Int32?\n    isbn: String?\n}\nmigration from 2 {\n    custom fix \"Fix again\"\n}\n",
        ])
        // The version checker sees a reused name before any member is named.
        #expect(
            errors == [
                "Names.v3.model:8:12: custom stage 'fix' is also declared by version 2's migration; every stage becomes a method of the protocol NamesMigrations, so rename this one"
            ])
    }
}
