import Testing

/// A custom stage the schema declares is a protocol requirement: an app that does not implement
/// it does not compile. Proved by type-checking the generated Trips code with a small app file,
/// with and without the implementation.
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
        #expect(missing.errors.contains("splitNameDidMigrate"))

        let implemented = try GeneratedCodeTypeChecker.typecheck(
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
