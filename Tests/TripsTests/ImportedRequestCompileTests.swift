import Foundation
import ModelwrightCoreData
import ModelwrightSchema
import ModelwrightTestSupport
import Testing

/// Core Data fetch request templates import as named requests whose parameters the compiler
/// checks: the Core Data fixture from mogenerator's tests, imported, generated and type-checked.
@Suite(.heavy)
struct ImportedRequestCompileTests {
    private static let fixture = GeneratedCodeTypeChecker.root.appendingPathComponent(
        "Tests/ModelwrightCoreDataTests/Fixtures/test.xcdatamodel")

    private static func typecheck(app: String) throws -> GeneratedCodeTypeChecker.TypeCheck {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imported-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = CoreDataImporter.importModel(try CoreDataBundle.open(path: fixture.path))
        #expect(!result.hasErrors, "\(result.diagnostics)")
        _ = try CoreDataImporter.write(result, to: folder.path)
        return try GeneratedCodeTypeChecker.typecheck(app: app, model: folder.path)
    }

    @Test(
        .enabled(
            if: GeneratedCodeTypeChecker.modules != nil, "the built Modelwright module was not found beside the tests"))
    func templatesAreTypedFunctions() throws {
        let typed = try Self.typecheck(
            app: """
                import Modelwright
                let requests = (
                    Human.allHumans(), Human.byHumanName(humanName: "Ada"), Child.byParent(parent: Parent.ID()),
                    Child.byParentName(parentName: "Grace")
                )
                """)
        #expect(typed.status == 0, "\(typed.errors)")

        let wrongRecord = try Self.typecheck(
            app: """
                import Modelwright
                let request = Child.byParent(parent: Human.ID())
                """)
        #expect(wrongRecord.status != 0)
        #expect(wrongRecord.errors.contains("to expected argument type 'Parent.ID'"), "\(wrongRecord.errors)")
    }
}
