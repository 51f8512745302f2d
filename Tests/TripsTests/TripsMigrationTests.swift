import Foundation
import Modelwright
import ModelwrightTestSupport
import Testing
import Trips

/// The app's side of the v2 → v3 custom stage, as a Trips app would write it: the stage owes a
/// value for each new required attribute, and forgetting one does not compile.
struct AppMigrations: TripsMigrations {
    /// Everything before the last space of `name`; empty for a name without a space.
    func splitNameUserGivenName(_ row: MigrationRow) throws -> String {
        guard case .text(let name) = row["name"] else { return "" }
        return name.split(separator: " ").dropLast().joined(separator: " ")
    }

    /// The last word of `name`, the whole name when it has no space.
    func splitNameUserFamilyName(_ row: MigrationRow) throws -> String {
        guard case .text(let name) = row["name"] else { return "" }
        return name.split(separator: " ").last.map(String.init) ?? ""
    }
}

/// Migrates Trips stores from v1 and v2 to v3 with data, through the generated plan, and checks
/// the rows and the schema as the app's own migration tests would.
@Suite(.heavy)
struct TripsMigrationTests {
    @Test("v1 → v2 → v3 keeps data: the rename keeps values, new attributes get defaults, splitName splits names")
    func fromVersion1() async throws {
        let tester = try MigrationTester(plan: Trips.migrationPlan(AppMigrations()), startingAt: Trips.version1)
        let acme = try tester.insert("Organization", ["title": .text("Acme")])
        let ada = try tester.insert(
            "User",
            [
                "username": .text("ada"), "name": .text("Ada King Lovelace"), "rating": .integer(5),
                "role": .text("administrator"), "joinedAt": .real(0), "organization": acme,
            ])
        let cher = try tester.insert(
            "User",
            [
                "username": .text("cher"), "name": .text("Cher"), "rating": .integer(0), "role": .text("member"),
                "joinedAt": .real(0),
            ])
        try tester.insert(
            "Trip",
            [
                "identifier": .blob(Data(repeating: 7, count: 16)), "title": .text("Lisbon"), "startsOn": .real(1_000),
                "owner": ada,
            ])
        let events = Locked()
        let store = try tester.migrate { events.append($0) }

        #expect(try tester.schemaDifferences() == [])
        let users = try await store.performQuery { try $0.fetch(User.request().sorted { [$0.username.ascending] }) }
        #expect(users.map(\.username) == ["ada", "cher"])
        #expect(users.map(\.givenName) == ["Ada King", ""])
        #expect(users.map(\.familyName) == ["Lovelace", "Cher"])
        #expect(users.map(\.isVerified) == [false, false])  // added in v2 with a default
        #expect(users.first?.role == .admin)
        #expect(users.map(\.id.description) == [ada, cher].map { Self.uuid($0) })
        let organizations = try await store.performQuery { try $0.fetch(Organization.request()) }
        #expect(organizations.map(\.name) == ["Acme"])  // `title` renamed to `name` in v2
        #expect(users.first?.organizationID == organizations.first?.id)
        let trips = try await store.performQuery { try $0.fetch(Trip.request()) }
        #expect(trips.map(\.title) == ["Lisbon"])
        #expect(trips.first?.travellers == 1 && trips.first?.priority == .normal)  // v3 defaults
        #expect(trips.first?.ownerID == users.first?.id)

        let seen = events.values
        #expect(seen.filter { $0.event == .stageCommitted }.map(\.toVersion) == [2, 3])
        #expect(seen.allSatisfy { $0.stageCount == 2 })
        #expect(seen.contains { $0.event == .tableCopied && $0.table == "User" && $0.rowsCopied >= 2 })

        // The migrated store now opens as a plain v3 store.
        #expect(throws: Never.self) { try Store(url: tester.url, schema: Trips.schema) }
    }

    @Test("a store already at v2 runs only the last stage")
    func fromVersion2() throws {
        let tester = try MigrationTester(plan: Trips.migrationPlan(AppMigrations()), startingAt: Trips.version2)
        try tester.insert(
            "User",
            [
                "username": .text("grace"), "name": .text("Grace Hopper"), "rating": .integer(4),
                "role": .text("member"), "isVerified": .integer(1), "joinedAt": .real(0),
            ])
        let events = Locked()
        _ = try tester.migrate { events.append($0) }
        #expect(events.values.filter { $0.event == .stageCommitted }.map(\.fromVersion) == [2])
        let user = try #require(try tester.rows(of: "User").first)
        #expect(user["givenName"] == .text("Grace"))
        #expect(user["familyName"] == .text("Hopper"))
        #expect(user["isVerified"] == .integer(1))
        #expect(user.values["name"] == nil)
    }

    @Test("the plan has one stage per step, keyed by the generated checksums")
    func planShape() throws {
        let plan = Trips.migrationPlan(AppMigrations())
        #expect(plan.stages.map(\.source.checksum.hexDigits) == Array(Trips.checksums.dropLast()))
        #expect(plan.stages.map(\.destination.checksum.hexDigits) == Array(Trips.checksums.dropFirst()))
        #expect(plan.stages.map(\.isLightweight) == [true, false])
        #expect(plan.stages[1].customSteps.map(\.name) == ["splitName"])
    }

    private static func uuid(_ value: SQLValue) -> String {
        guard case .blob(let data) = value, data.count == 16 else { return "" }
        let bytes = [UInt8](data)
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            )
        ).uuidString
    }
}

/// Progress events collected from the migration's thread.
private final class Locked: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [MigrationProgress] = []
    func append(_ event: MigrationProgress) { lock.withLock { events.append(event) } }
    var values: [MigrationProgress] { lock.withLock { events } }
}
