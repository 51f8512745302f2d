import Foundation
import ModelwrightTestSupport
import Testing

/// A `Codable` attribute whose Swift type changes is an obligation typed with the new Swift type:
/// an app that forgets it, or answers with the old type, does not compile; and a store whose stage
/// leaves JSON of the old type anyway (through `didMigrate`) is not committed: the generated plan
/// decodes every row with the current records first.
@Suite(.heavy)
struct CodableRetypeTests {
    private static func shelf() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shelf-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("model Shelf version 1\nentity Book { title: String; tags: Codable<[String]> }\n".utf8)
            .write(to: folder.appendingPathComponent("Shelf.v1.model"))
        try Data(
            """
            model Shelf version 2
            entity Book { title: String; tags: Codable<[String: Int]> @coreData(versionHashModifier: "2") }
            migration from 1 {
                custom countTags "Count each tag"
            }

            """.utf8
        ).write(to: folder.appendingPathComponent("Shelf.v2.model"))
        return folder
    }

    @Test(
        .enabled(
            if: GeneratedCodeTypeChecker.modules != nil, "the built Modelwright module was not found beside the tests"))
    func theObligationHasTheNewSwiftType() throws {
        let folder = try Self.shelf()
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = try GeneratedCodeTypeChecker.typecheck(
            app: """
                import Modelwright
                struct AppMigrations: ShelfMigrations {}
                let plan = Shelf.migrationPlan(AppMigrations())
                """, model: folder.path)
        #expect(missing.status != 0)
        #expect(missing.errors.contains("countTagsBookTags"), "\(missing.errors)")

        let oldType = try GeneratedCodeTypeChecker.typecheck(
            app: """
                import Modelwright
                struct AppMigrations: ShelfMigrations {
                    func countTagsBookTags(_ row: MigrationRow) throws -> [String] { [] }
                }
                let plan = Shelf.migrationPlan(AppMigrations())
                """, model: folder.path)
        #expect(oldType.status != 0)

        let newType = try GeneratedCodeTypeChecker.typecheck(
            app: """
                import Modelwright
                struct AppMigrations: ShelfMigrations {
                    func countTagsBookTags(_ row: MigrationRow) throws -> [String: Int] {
                        Dictionary((try row.json("tags", as: [String].self) ?? []).map { ($0, 1) }, uniquingKeysWith: +)
                    }
                }
                let plan = Shelf.migrationPlan(AppMigrations())
                """, model: folder.path)
        #expect(newType.status == 0, "\(newType.errors)")
    }

    @Test(
        .enabled(
            if: GeneratedCodeTypeChecker.runtimeObjects != nil, "the built Modelwright objects were not found"))
    func aStageThatLeavesTheOldJSONRollsBackAndOneThatConvertsOpens() throws {
        let folder = try Self.shelf()
        defer { try? FileManager.default.removeItem(at: folder) }
        let main = """
            import Foundation
            import Modelwright

            struct Converts: ShelfMigrations {
                func countTagsBookTags(_ row: MigrationRow) throws -> [String: Int] {
                    Dictionary((try row.json("tags", as: [String].self) ?? []).map { ($0, 1) }, uniquingKeysWith: +)
                }
            }

            /// Meets the obligation, then puts the old JSON back: what no compiler can see.
            struct PutsTheOldValueBack: ShelfMigrations {
                func countTagsBookTags(_ row: MigrationRow) throws -> [String: Int] { [:] }
                func countTagsDidMigrate(_ context: MigrationContext) throws {
                    try context.execute("UPDATE \\"Book\\" SET \\"tags\\" = '[\\"a\\"]'")
                }
            }

            func tester(_ stages: some ShelfMigrations) throws -> MigrationTester {
                let tester = try MigrationTester(plan: Shelf.migrationPlan(stages), startingAtVersion: 1)
                _ = try tester.insertRow("Book", ["title": "a", "tags": "[\\"x\\",\\"y\\",\\"x\\"]"])
                return tester
            }

            let bad = try tester(PutsTheOldValueBack())
            do {
                _ = try bad.migrate()
                print("committed")
            } catch {
                print("refused: \\(error)")
                print("kept: \\(try bad.rows(of: "Book").map { $0["tags"] })")
            }
            let good = try tester(Converts())
            let store = try good.migrate()
            let semaphore = DispatchSemaphore(value: 0)
            store.performQuery(on: .global(), { try $0.fetch(Book.request()).map { $0.tags.sorted { $0.key < $1.key }.map { "\\($0.key)=\\($0.value)" } } }) { result in
                print("fetched: \\(result)")
                semaphore.signal()
            }
            semaphore.wait()
            """
        let (compiled, output) = try GeneratedCodeTypeChecker.run(main: main, model: folder.path)
        #expect(compiled, "\(output)")
        #expect(!output.contains("committed"), "\(output)")
        #expect(output.contains("refused: migration from version 1 to 2 left the Book row"), "\(output)")
        #expect(output.contains("'tags'"), "\(output)")
        #expect(output.contains("rolled back"), "\(output)")
        #expect(output.contains("kept: [Modelwright.SQLValue.text(\"[\\\"x\\\",\\\"y\\\",\\\"x\\\"]\")]"), "\(output)")
        #expect(output.contains("fetched: success([[\"x=2\", \"y=1\"]])"), "\(output)")
    }
    /// An earlier step's obligation for an app type the app may have deleted since (`OldTags`,
    /// replaced in version 3) is a hook, so the app compiles without that type; the step to the
    /// current version and a step to a standard type are typed.
    @Test(
        .enabled(
            if: GeneratedCodeTypeChecker.modules != nil, "the built Modelwright module was not found beside the tests"))
    func anEarlierStepToAnAppTypeOwesAHook() throws {
        let folder = try Self.shelf()
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(
            """
            model Shelf version 3
            entity Book { title: String; tags: Codable<NewTags> @coreData(versionHashModifier: "3") }
            migration from 2 {
                custom wrapTags "Wrap the tags"
            }

            """.utf8
        ).write(to: folder.appendingPathComponent("Shelf.v3.model"))
        let app = try GeneratedCodeTypeChecker.typecheck(
            app: """
                import Modelwright
                struct NewTags: Codable, Hashable, Sendable { var counts: [String: Int] }
                struct AppMigrations: ShelfMigrations {
                    func countTagsBookTags(_ row: MigrationRow) throws -> [String: Int] { [:] }
                    func wrapTagsBookTags(_ row: MigrationRow) throws -> NewTags {
                        NewTags(counts: try row.json("tags", as: [String: Int].self) ?? [:])
                    }
                }
                let plan = Shelf.migrationPlan(AppMigrations())
                """, model: folder.path)
        #expect(app.status == 0, "\(app.errors)")
        try Data(
            """
            model Shelf version 4
            entity Book { title: String; tags: Codable<[String]> @coreData(versionHashModifier: "4") }
            migration from 3 {
                custom flattenTags "Flatten the tags"
            }

            """.utf8
        ).write(to: folder.appendingPathComponent("Shelf.v4.model"))
        // NewTags is gone from the app: the step to it owes a hook now.
        let later = try GeneratedCodeTypeChecker.typecheck(
            app: """
                import Modelwright
                struct AppMigrations: ShelfMigrations {
                    func countTagsBookTags(_ row: MigrationRow) throws -> [String: Int] { [:] }
                    func wrapTagsBookTags(_ context: MigrationContext) throws {}
                    func flattenTagsBookTags(_ row: MigrationRow) throws -> [String] { [] }
                }
                let plan = Shelf.migrationPlan(AppMigrations())
                """, model: folder.path)
        #expect(later.status == 0, "\(later.errors)")
    }
}
