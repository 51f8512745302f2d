import Foundation
import ModelwrightGenerator
import ModelwrightSchema
import ModelwrightTestSupport
import Testing

/// The config's `naming` renames the generated Swift types and nothing else: the schema, its
/// checksums and the migration plan are the same bytes, and the renamed code compiles.
@Suite(.heavy)
struct NamingTests {
    private static let naming = Naming(typeSuffix: "Record", types: ["Group": "StopGroup", "Address": "PostalAddress"])

    private static func generate(_ naming: Naming) throws -> [String: String] {
        let files = try Pipeline.run(
            Pipeline.Request(
                modelPath: GeneratedCodeTypeChecker.root.appendingPathComponent("Models/Trips").path, goal: .render,
                config: GeneratorConfig(naming: naming, path: "modelwright-config.json"))
        ).files
        return Dictionary(uniqueKeysWithValues: files.map { ($0.name, $0.contents) })
    }

    /// The message of the error generating with `naming` gives.
    private static func error(_ naming: Naming) throws -> String? {
        do {
            _ = try generate(naming)
            return nil
        } catch GeneratorError.invalidConfig(_, let message) {
            return message
        }
    }

    @Test func aSuffixAndOverridesRenameTheSwiftTypesOnly() throws {
        let renamed = try Self.generate(Self.naming)
        let plain = try Self.generate(Naming())
        let records = try #require(renamed["Trips+Records.swift"])
        let queries = try #require(renamed["Trips+Queries.swift"])
        for declaration in [
            "struct UserRecord: Record", "typealias ID = RecordID<UserRecord>", "static let entityName = \"User\"",
            "let organizationID: OrganizationRecord.ID?", "struct StopGroup: Record", "struct NoteRecord: Record",
            "struct PostalAddress: Hashable", "let home: PostalAddress?", "enum Role: String",
        ] {
            #expect(records.contains(declaration), "\(declaration)")
        }
        #expect(!records.contains("struct User:") && !records.contains("GroupRecord"))
        for declaration in [
            "extension UserRecord {", "extension PostalAddress {",
            "var home: OptionalComposite<PostalAddress.Fields>", "var owner: ToOne<UserRecord.Fields>",
            "var stops: ToMany<StopRecord.Fields>", "var stopsRequest: FetchRequest<StopRecord>",
        ] {
            #expect(queries.contains(declaration), "\(declaration)")
        }
        #expect(renamed["Trips+Schema.swift"] == plain["Trips+Schema.swift"], "storage names do not change")
        // The migrations name the record types only in the plan's list of records, which decode
        // every row before the last stage commits.
        let migrations = try #require(renamed["Trips+Migrations.swift"])
        #expect(migrations.contains("                UserRecord.self,") && migrations.contains("StopGroup.self"))
        let withoutRecords = { (text: String?) in
            text?.split(separator: "\n", omittingEmptySubsequences: false).filter {
                !$0.hasSuffix(".self,") && !$0.hasSuffix(".self")
            }
        }
        #expect(withoutRecords(migrations) == withoutRecords(plain["Trips+Migrations.swift"]))
    }

    @Test func aPrefixFramesRecordTypesButNotEnumsOrComposites() throws {
        let records = try #require(try Self.generate(Naming(typePrefix: "TR"))["Trips+Records.swift"])
        #expect(records.contains("struct TRUser: Record") && records.contains("let organizationID: TROrganization.ID?"))
        #expect(records.contains("enum Role: String") && records.contains("struct Address: Hashable"))
    }

    @Test(
        .enabled(
            if: GeneratedCodeTypeChecker.modules != nil, "the built Modelwright module was not found beside the tests"))
    func renamedCodeCompiles() throws {
        let result = try GeneratedCodeTypeChecker.typecheck(
            app: """
                import Modelwright
                struct Group {}  // the app's own type, as SwiftUI's would be
                let user = UserRecord(username: "ada", givenName: "Ada", familyName: "Lovelace")
                let group = StopGroup(label: "Coast")
                let inOslo = UserRecord.request().filter { $0.home.city == "Oslo" && $0.organization.name == "Acme" }
                let trips: FetchRequest<TripRecord> = user.tripsRequest
                let home = PostalAddress(street: "Storgata 1", city: "Oslo", zip: nil)
                let schema = Trips.schema
                """,
            config: GeneratorConfig(naming: Self.naming))
        #expect(result.status == 0, "\(result.errors)")
    }

    @Test func anOverrideOfATypeTheModelDoesNotHaveIsAnError() throws {
        #expect(
            try Self.error(Naming(types: ["Grop": "StopGroup"]))
                == "'naming.types' renames 'Grop', which is not an entity, enum or composite of Trips; did you mean 'Group'?"
        )
    }

    @Test func namesThatCollideAreErrors() throws {
        #expect(
            try Self.error(Naming(types: ["Group": "Note"]))
                == "'naming' gives entity 'Group' the Swift name 'Note', which entity 'Note' already has; choose another in 'naming.types'"
        )
        #expect(
            try Self.error(Naming(typeSuffix: "Record", types: ["Role": "UserRecord"]))
                == "'naming' gives enum 'Role' the Swift name 'UserRecord', which entity 'User' already has; choose another in 'naming.types'"
        )
        #expect(
            try Self.error(Naming(typeSuffix: "s"))
                == "'naming' gives entity 'Trip' the Swift name 'Trips', which the generated schema enum already has; choose another in 'naming.types'"
        )
        #expect(try Self.error(Naming(typeSuffix: "s", types: ["Trip": "Journey"])) == nil, "an override resolves it")
    }

    /// Every name the generated code takes for Swift's, Foundation's or the runtime's types is
    /// refused as a Swift name too, however `naming` reaches it (outright, or by prefix or suffix).
    @Test func namesTheGeneratedCodeUsesAreErrors() throws {
        for reserved in ["Date", "Locale", "CodingKeys", "OptionalProperty", "FetchRequest", "String"] {
            #expect(
                try Self.error(Naming(types: ["Group": reserved]))
                    == "'naming' gives entity 'Group' the Swift name '\(reserved)', which the generated code uses for Swift's, Foundation's or the runtime's type of that name; choose another in 'naming.types'"
            )
        }
        #expect(try Self.error(Naming(typePrefix: "Fetch", types: ["Trip": "Request"]))?.contains("'Request'") == nil)
        #expect(try Self.error(Naming(types: ["Group": "_"]))?.contains("which is not a Swift identifier") == true)
        #expect(
            try Self.error(Naming(typeSuffix: "ID", types: ["Trip": "Journey"]))?.contains(
                "the Swift name 'RecordID'") != true)
    }
}
