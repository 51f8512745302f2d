import Foundation
import Modelwright
import Testing

@testable import ModelwrightSchema

/// A model folder holds complete version snapshots; what crosses versions is checked.
struct VersionTests {
    private static let v1 = """
        model Notes version 1
        entity Note {
            title: String
            body: String
        }
        """

    private static func load(_ files: [String: String]) throws -> (FrontEndResult, [String]) {
        let folder = try temporaryModelFolder(named: "Notes", files: files)
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let result = FrontEnd.run(modelAt: folder.path)
        let lines = result.diagnostics.map { diagnostic in
            let file = diagnostic.path.split(separator: "/").last.map(String.init) ?? ""
            return
                "\(file):\(diagnostic.location.map(\.description) ?? "-"): \(diagnostic.severity.rawValue): \(diagnostic.message)"
        }
        return (result, lines)
    }

    @Test func versionsLoadInOrderEachWithItsOwnGraph() throws {
        let v2 = """
            model Notes version 2
            entity Note {
                headline: String @renamed(from: title)
                body: String
                pinned: Bool = false
            }
            """
        let (result, lines) = try Self.load(["Notes.v2.model": v2, "Notes.v1.model": Self.v1])
        #expect(lines.isEmpty)
        let model = try #require(result.model)
        #expect(model.name == "Notes")
        #expect(model.versions.map(\.number) == [1, 2])
        #expect(model.current?.graph.entities[0].attributes.map(\.name) == ["headline", "body", "pinned"])
        #expect(model.versions[1].schema.entities[0].attributes[0].renamedFrom == "title")
        #expect(model.versions[0].schema.checksum != model.versions[1].schema.checksum)
    }

    @Test func checksumComputedInTheBackgroundIsTheSchemasWhoeverAsksFirst() throws {
        let (result, _) = try Self.load(["Notes.v1.model": Self.v1])
        let version = try #require(result.model?.current)
        let expected = version.schema.checksum
        // Asked at once from several threads, while the background computation may still run.
        let answers = Array(repeating: version, count: 8).parallelMap { $0.checksum }
        #expect(answers == Array(repeating: expected, count: 8))
        let fresh = LoweredVersion(path: version.path, graph: version.graph, schema: version.schema)
        #expect(fresh.checksum == expected)
    }

    @Test func renamingFromANameThePreviousVersionLacksIsAnError() throws {
        let v2 = """
            model Notes version 2
            entity Note {
                headline: String @renamed(from: titel)
                body: String @renamed(from: title)
                title: String
            }
            entity Tag {
                name: String @renamed(from: label)
            }
            entity Memo {
                @renamed(from: Reminder)
                text: String
            }
            """
        let (result, lines) = try Self.load(["Notes.v1.model": Self.v1, "Notes.v2.model": v2])
        #expect(result.model == nil)
        #expect(
            lines == [
                "Notes.v2.model:3:22: error: 'headline' is renamed from 'titel', but 'Note' in version 1 has no attribute 'titel'",
                "Notes.v2.model:4:18: error: 'body' is renamed from 'title', but 'title' still exists in 'Note'",
                "Notes.v2.model:8:18: error: 'Tag' is new in version 2, so 'name' has nothing to be renamed from",
                "Notes.v2.model:11:5: error: 'Memo' is renamed from 'Reminder', but version 1 has no entity 'Reminder'",
            ]
        )
        #expect(result.diagnostics[0].notes.map(\.message) == ["did you mean 'title'?"])
    }

    @Test func migrationMustStartFromThePreviousVersion() throws {
        let v2 = """
            model Notes version 2
            entity Note {
                title: String
                body: String
            }
            migration from 3 {
                custom fix "Fix"
            }
            """
        let v1WithMigration = Self.v1 + "\nmigration from 1 { custom x \"X\" }\n"
        let (_, lines) = try Self.load(["Notes.v1.model": v1WithMigration, "Notes.v2.model": v2])
        #expect(
            lines == [
                "Notes.v1.model:6:1: error: version 1 has no earlier version to migrate from; remove this migration block",
                "Notes.v2.model:6:1: error: version 2 can only declare a migration from version 1, not 3",
            ]
        )
    }

    /// Every version's custom stages become methods of one generated protocol, so a stage name
    /// is declared by one version only; the later declaration is the error.
    @Test func aCustomStageNameIsDeclaredByOneVersionOnly() throws {
        func version(_ number: Int, stages: [String]) -> String {
            "model Notes version \(number)\nentity Note {\n    title: String\n"
                + (1..<number).map { "    f\($0): Int = 0\n" }.joined() + "}\n"
                + (number > 1
                    ? "migration from \(number - 1) {\n" + stages.map { "    custom \($0) \"S\"\n" }.joined() + "}\n"
                    : "")
        }
        let (_, lines) = try Self.load([
            "Notes.v1.model": version(1, stages: []), "Notes.v2.model": version(2, stages: ["fill", "split"]),
            "Notes.v3.model": version(3, stages: ["merge", "fill"]), "Notes.v4.model": version(4, stages: ["fill"]),
        ])
        #expect(
            lines == [
                "Notes.v3.model:9:12: error: custom stage 'fill' is also declared by version 2's migration; every stage becomes a method of the protocol NotesMigrations, so rename this one",
                "Notes.v4.model:9:12: error: custom stage 'fill' is also declared by version 2's migration; every stage becomes a method of the protocol NotesMigrations, so rename this one",
            ])
    }

    @Test func fileNamesModelNamesAndGaps() throws {
        let v3 = "model Notes version 3\nentity Note { title: String }\n"
        let other = "model Other version 2\nentity Note { title: String }\n"
        let (result, lines) = try Self.load(["Notes.v1.model": Self.v1, "Notes.v2.model": other, "Notes.v5.model": v3])
        #expect(result.model == nil)
        #expect(
            lines == [
                "Notes.v2.model:1:7: error: this file declares model 'Other', but the other versions in its folder are 'Notes'",
                "Notes.v5.model:1:7: error: a file holding version 3 of 'Notes' must be named 'Notes.v3.model' (its name says version 5)",
            ]
        )
        let (_, gap) = try Self.load(["Notes.v1.model": Self.v1, "Notes.v3.model": v3])
        #expect(
            gap == [
                "Notes.v3.model:1:7: error: version 2 of 'Notes' is missing: versions are numbered 1, 2, 3, … without gaps; a released version (listed in modelwright-lock.json) must keep its file: restore it from version control"
            ])
    }

    @Test func aBrokenVersionIsNotAlsoReportedAsMissing() throws {
        let broken = "model Notes version 1\nentity Note { title: Strin }\n"
        let v2 = "model Notes version 2\nentity Note { title: String }\n"
        let (_, lines) = try Self.load(["Notes.v1.model": broken, "Notes.v2.model": v2])
        #expect(lines == ["Notes.v1.model:2:22: error: unknown type 'Strin'"])
    }

    @Test func renamesKeepTheirKind() throws {
        let v1 =
            "model Notes version 1\nentity Note {\n    title: String\n    folder: Folder?\n}\nentity Folder {\n    notes: Set<Note>\n}\n"
        let v2 =
            "model Notes version 2\nentity Note {\n    folderName: String @renamed(from: folder)\n}\nentity Folder {\n    name: String\n}\n"
        let (_, lines) = try Self.load(["Notes.v1.model": v1, "Notes.v2.model": v2])
        #expect(
            lines == [
                "Notes.v2.model:3:24: error: 'folderName' is renamed from 'folder', but 'Note' in version 1 has no attribute 'folder'"
            ]
        )
    }

    @Test func missingAndEmptyFoldersAreReported() throws {
        let (result, lines) = try Self.load([:])
        #expect(result.model == nil)
        #expect(lines == ["Notes:-: error: the folder holds no '.model' files; name each version '<Model>.v<N>.model'"])
        let missing = FrontEnd.run(modelAt: "/nonexistent/Folder")
        #expect(missing.diagnostics.map(\.description) == ["/nonexistent/Folder: error: no such file or folder"])
    }

    @Test func everyExampleModelValidates() throws {
        let models = packageRoot.appendingPathComponent("Models")
        let folders = try FileManager.default.contentsOfDirectory(atPath: models.path).sorted()
        #expect(!folders.isEmpty)
        for folder in folders {
            let result = FrontEnd.run(modelAt: models.appendingPathComponent(folder).path)
            #expect(result.diagnostics.isEmpty, "\(folder): \(result.diagnostics.map(\.description))")
            #expect(result.model != nil)
        }
    }

    @Test func theTripsExampleCoversTheStepsItPromises() throws {
        let model = try #require(FrontEnd.run(modelAt: packageRoot.appendingPathComponent("Models/Trips").path).model)
        #expect(model.versions.count >= 3)
        let organization = try #require(model.versions[1].schema.entity(named: "Organization"))
        #expect(organization.attributes.first { $0.renamedFrom == "title" }?.name == "name")
        let user2 = try #require(model.versions[1].schema.entity(named: "User"))
        #expect(user2.attributes.contains { $0.name == "namePrefix" && $0.isOptional })
        #expect(user2.attributes.contains { $0.name == "isVerified" && $0.defaultValue == .bool(false) })
        let migration = try #require(model.versions[2].graph.migration)
        #expect(migration.fromVersion == 2)
        #expect(migration.customStages.map(\.name) == ["splitName"])
    }
}
