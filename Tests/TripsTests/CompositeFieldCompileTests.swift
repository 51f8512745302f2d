import ModelwrightTestSupport
import Testing

/// The fields of a composite are typed like any other: a misspelt field, a value of the wrong
/// type, or a nil test on a required field does not compile. Proved by type-checking the
/// generated Trips code with a small app file.
@Suite(.heavy)
struct CompositeFieldCompileTests {
    private static func typecheck(_ condition: String) throws -> GeneratedCodeTypeChecker.TypeCheck {
        try GeneratedCodeTypeChecker.typecheck(
            app: """
                import Modelwright
                let request = User.request().filter { \(condition) }
                """)
    }

    @Test(
        .enabled(
            if: GeneratedCodeTypeChecker.modules != nil, "the built Modelwright module was not found beside the tests"))
    func compositeFieldsAreCheckedByTheCompiler() throws {
        let valid = try Self.typecheck(#"$0.home.city == "Oslo" && $0.home.isNotNil && $0.home.zip.isNil"#)
        #expect(valid.status == 0, "\(valid.errors)")

        let misspelt = try Self.typecheck(#"$0.home.cty == "Oslo""#)
        #expect(misspelt.status != 0)
        #expect(misspelt.errors.contains("has no dynamic member 'cty'"), "\(misspelt.errors)")

        let wrongType = try Self.typecheck(#"$0.home.city == 3"#)
        #expect(wrongType.status != 0)

        let throughToOne = try GeneratedCodeTypeChecker.typecheck(
            app: """
                import Modelwright
                let request = Trip.request().filter { $0.owner.home.cit == "Oslo" }
                """)
        #expect(throughToOne.status != 0)
        #expect(throughToOne.errors.contains("has no dynamic member 'cit'"), "\(throughToOne.errors)")
    }
}
