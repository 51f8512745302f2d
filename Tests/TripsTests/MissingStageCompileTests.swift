import Foundation
import ModelwrightTestSupport
import Testing

/// A custom stage the schema declares is a protocol requirement: an app that does not implement
/// it does not compile. Proved by type-checking the generated Trips code with a small app file,
/// with and without the implementation.
@Suite(.heavy)
struct MissingStageCompileTests {
    @Test(
        .enabled(
            if: GeneratedCodeTypeChecker.modules != nil, "the built Modelwright module was not found beside the tests"))
    func anAppWithoutTheStageDoesNotCompile() throws {
        let missing = try GeneratedCodeTypeChecker.typecheck(
            app: """
                import Modelwright
                struct AppMigrations: TripsMigrations {}
                let plan = Trips.migrationPlan(AppMigrations())
                """)
        #expect(missing.status != 0)
        #expect(missing.errors.contains("type 'AppMigrations' does not conform to protocol 'TripsMigrations'"))
        #expect(missing.errors.contains("splitNameUserGivenName"))
        #expect(missing.errors.contains("splitNameUserFamilyName"))

        let implemented = try GeneratedCodeTypeChecker.typecheck(
            app: """
                import Modelwright
                struct AppMigrations: TripsMigrations {
                    func splitNameUserGivenName(_ row: MigrationRow) throws -> String { "" }
                    func splitNameUserFamilyName(_ row: MigrationRow) throws -> String { "" }
                }
                let plan = Trips.migrationPlan(AppMigrations())
                """)
        #expect(implemented.status == 0, "\(implemented.errors)")
    }

    @Test(
        .enabled(
            if: GeneratedCodeTypeChecker.modules != nil, "the built Modelwright module was not found beside the tests"))
    func codeWrittenAtVersionOneOpensTheStoreTheSameWayLater() throws {
        // The app's line is the same before and after the model gains a custom stage; only then
        // does it stop compiling, naming the stage to write.
        let app = """
            import Foundation
            import Modelwright
            struct AppMigrations: NotesMigrations {}
            func open(_ url: URL) throws -> Store {
                try Notes.openStore(at: url, migrations: AppMigrations())
            }
            """
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("notes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("model Notes version 1\nentity Note { title: String }\n".utf8)
            .write(to: folder.appendingPathComponent("Notes.v1.model"))
        let first = try GeneratedCodeTypeChecker.typecheck(app: app, model: folder.path)
        #expect(first.status == 0, "\(first.errors)")

        try Data(
            """
            model Notes version 2
            entity Note { title: String; body: String }
            migration from 1 {
                custom fillBody "Fill body from the title"
            }

            """.utf8
        ).write(to: folder.appendingPathComponent("Notes.v2.model"))
        let second = try GeneratedCodeTypeChecker.typecheck(app: app, model: folder.path)
        #expect(second.status != 0)
        #expect(second.errors.contains("fillBodyNoteBody"))
    }
}
