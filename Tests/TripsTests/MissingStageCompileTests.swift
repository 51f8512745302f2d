import Foundation
import Testing

/// A custom stage the schema declares is a protocol requirement: an app that does not implement
/// it does not compile. Proved by type-checking the generated Trips code with a small app file,
/// with and without the implementation, against the Modelwright module this build produced.
struct MissingStageCompileTests {
    private static func typecheck(app: String) throws -> (status: Int32, errors: String) {
        try GeneratedCodeCompiler.typecheck(
            model: GeneratedCodeCompiler.root.appendingPathComponent("Models/Trips").path, app: app)
    }

    @Test(GeneratedCodeCompiler.enabled)
    func anAppWithoutTheStageDoesNotCompile() throws {
        let missing = try Self.typecheck(
            app: """
                import Modelwright
                struct AppMigrations: TripsMigrations {}
                let plan = Trips.migrationPlan(AppMigrations())
                """)
        #expect(missing.status != 0)
        #expect(missing.errors.contains("type 'AppMigrations' does not conform to protocol 'TripsMigrations'"))
        #expect(missing.errors.contains("splitNameDidMigrate"))

        let implemented = try Self.typecheck(
            app: """
                import Modelwright
                struct AppMigrations: TripsMigrations {
                    func splitNameDidMigrate(_ context: MigrationContext) throws {}
                }
                let plan = Trips.migrationPlan(AppMigrations())
                """)
        #expect(implemented.status == 0, "\(implemented.errors)")
    }
}
