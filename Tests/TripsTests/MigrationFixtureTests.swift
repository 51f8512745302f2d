import Foundation
import Modelwright
import ModelwrightTestSupport
import Testing
import Trips

/// `MigrationTester` builds a store at an old version from rows typed by that version's archived
/// schema (no Swift type of the old version exists), migrates it with the app's plan, and the test
/// reads the result with the current records.
@Suite(.heavy)
struct MigrationFixtureTests {
    private static let plan = Trips.migrationPlan(AppMigrations())

    @Test func aVersion1StoreBuiltFromTypedRowsMigratesAndReadsAsCurrentRecords() async throws {
        let tester = try MigrationTester(plan: Self.plan, startingAtVersion: 1)
        let ada = try tester.insertRow(
            "User",
            [
                "username": "ada", "name": "Ada King Lovelace", "rating": 5, "role": "admin",
                "joinedAt": .date(Date(timeIntervalSinceReferenceDate: 86_400)),
            ])
        let acme = try tester.insertRow("Organization", ["title": "Acme", "members": .toMany([ada])])
        let porto = try tester.insertRow("Stop", ["name": "Porto"])
        let faro = try tester.insertRow("Stop", ["name": "Faro"])
        let trip = try tester.insertRow(
            "Trip",
            [
                "identifier": .uuid(UUID(uuidString: "00000000-0000-0000-0000-0000000000AB")!), "title": "Lisbon",
                "startsOn": .date(Date(timeIntervalSinceReferenceDate: 1_000)), "owner": .to(ada),
                "stops": .toMany([faro, porto]),
            ])
        let store = try tester.migrate()
        #expect(try tester.schemaDifferences() == [])

        let user = try #require(try await store.performQuery { try $0.existing(ada.recordID(User.self)) })
        #expect(user.givenName == "Ada King" && user.familyName == "Lovelace")
        #expect(user.role == .admin && user.rating == 5)
        #expect(user.joinedAt == Date(timeIntervalSinceReferenceDate: 86_400))
        #expect(user.organizationID == acme.recordID(Organization.self))
        let migrated = try #require(try await store.performQuery { try $0.existing(trip.recordID(Trip.self)) })
        #expect(migrated.ownerID == ada.recordID(User.self))
        #expect(migrated.identifier == UUID(uuidString: "00000000-0000-0000-0000-0000000000AB"))
        let stops = try tester.rows(of: "Stop").sorted { "\($0["trip._position"])" < "\($1["trip._position"])" }
        #expect(stops.map(\.id) == [faro.id, porto.id], "the ordered stops keep their order")
        #expect(stops.allSatisfy { $0["trip"] == trip.id })
    }

    @Test func compositeFieldsCodableJSONInheritedAttributesAndToManyLinksAreTyped() async throws {
        let tester = try MigrationTester(plan: Self.plan, startingAtVersion: 3)
        let note = try tester.insertRow(
            "Note", ["title": "Packing", "body": "socks", "createdAt": .date(Date(timeIntervalSinceReferenceDate: 5))])
        let ada = try tester.insertRow(
            "User",
            [
                "username": "ada", "givenName": "Ada", "familyName": "Lovelace",
                "joinedAt": .date(Date(timeIntervalSinceReferenceDate: 0)), "home.street": "Rua Augusta 1",
                "home.city": "Lisbon", "home.zip": nil, "preferences": #"{"theme": "dark"}"#, "notes": .toMany([note]),
            ])
        #expect {
            try tester.insertRow("User", ["username": "b", "preferences": "{not json"])
        } throws: { "\($0)".contains("'preferences' is Codable<") }
        let store = try tester.migrate()
        let user = try #require(try await store.performQuery { try $0.existing(ada.recordID(User.self)) })
        #expect(user.home?.city == "Lisbon" && user.home?.street == "Rua Augusta 1" && user.home?.zip == nil)
        #expect(user.preferences == ["theme": "dark"])
        let written = try #require(try await store.performQuery { try $0.existing(note.recordID(Note.self)) })
        #expect(written.title == "Packing" && written.authorID == ada.recordID(User.self))
    }

    @Test func syntheticRowsAtEveryVersionMigrateAndReadAsCurrentRecords() async throws {
        for version in 1...Trips.checksums.count {
            let tester = try MigrationTester(plan: Self.plan, startingAtVersion: version)
            let rows = try tester.insertSyntheticRows()
            #expect(Set(rows.map(\.entity)).count >= 4, "version \(version): rows in every entity")
            let store = try tester.migrate()
            let users = try await store.performQuery { try $0.fetch(User.request()) }
            let trips = try await store.performQuery { try $0.fetch(Trip.request()) }
            #expect(Set(users.map(\.id)) == Set(rows.filter { $0.entity == "User" }.map { $0.recordID(User.self) }))
            #expect(Set(trips.map(\.id)) == Set(rows.filter { $0.entity == "Trip" }.map { $0.recordID(Trip.self) }))
            try store.close()
        }
    }

    @Test func aRowThatDoesNotFitItsVersionIsRefusedWithTheReason() throws {
        let tester = try MigrationTester(plan: Self.plan, startingAtVersion: 1)
        let ada = try tester.insertRow(
            "User", ["username": "ada", "name": "Ada", "joinedAt": .date(Date(timeIntervalSinceReferenceDate: 0))])
        let acme = try tester.insertRow("Organization", ["title": "Acme"])
        let user: [String: FixtureValue] = [
            "username": "b", "name": "B", "joinedAt": .date(Date(timeIntervalSinceReferenceDate: 0)),
        ]
        let cases: [(String, [String: FixtureValue], String)] = [
            ("User", user.merging(["nmae": "x"]) { $1 }, "version 1 has no attribute or relationship 'nmae' in User"),
            ("User", user.merging(["givenName": "x"]) { $1 }, "no attribute or relationship 'givenName'"),
            (
                "User", user.merging(["rating": "high"]) { $1 },
                "'rating' is Int16 in version 1, and the string \"high\""
            ),
            ("User", user.merging(["rating": 40_000]) { $1 }, "'rating' is Int16 in version 1, and the integer 40000"),
            ("User", user.merging(["role": "owner"]) { $1 }, "'role' is the enum Role (member, administrator)"),
            ("User", user.merging(["name": nil]) { $1 }, "'name' is required in version 1"),
            ("User", user.merging(["organization": .to(ada)]) { $1 }, "'organization' cannot point at a User row"),
            ("User", user.merging(["organization": "Acme"]) { $1 }, "'organization' is a to-one relationship"),
            ("User", user.merging(["trips": .to(acme)]) { $1 }, "'trips' is a to-many relationship"),
            ("User", user.filter { $0.key != "name" }, "'name' is required in version 1 and has no default"),
            ("Traveller", [:], "version 1 has no entity 'Traveller'"),
        ]
        for (entity, values, reason) in cases {
            #expect {
                try tester.insertRow(entity, values)
            } throws: { error in
                guard case MigrationError.invalidFixture(let named, 1, let message) = error else { return false }
                return named == entity && message.contains(reason)
            }
        }
        // A value of another type is refused for every attribute of every entity of every version.
        for version in 1...Trips.checksums.count {
            let tester = try MigrationTester(plan: Self.plan, startingAtVersion: version)
            let schema =
                try Self.plan.stages.first { $0.source.version == version }?.source.schema() ?? Self.plan.current
            for entity in schema.entities where !entity.isAbstract {
                for attribute in entity.attributes {
                    guard case .composite = attribute.type else {
                        let wrong: FixtureValue = attribute.type == .data ? .bool(true) : .data(Data([1]))
                        #expect("\(entity.name).\(attribute.name) at \(version)") {
                            try tester.insertRow(entity.name, [attribute.name: wrong])
                        } throws: { error in
                            "\(error)".contains("'\(attribute.name)' is ") && "\(error)".contains("is not one")
                        }
                        continue
                    }
                }
            }
        }
    }
}
