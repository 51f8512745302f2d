import Foundation
import Modelwright
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing
import Trips

/// The app's side of Trips' v2 → v3 custom stage, as a server would write it.
struct ServerMigrations: TripsMigrations {
    func splitNameUserGivenName(_ row: MigrationRow) throws -> String {
        guard case .text(let name) = row["name"] else { return "" }
        return name.split(separator: " ").dropLast().joined(separator: " ")
    }

    func splitNameUserFamilyName(_ row: MigrationRow) throws -> String {
        guard case .text(let name) = row["name"] else { return "" }
        return name.split(separator: " ").last.map(String.init) ?? ""
    }
}

/// `Store(postgres:migrationPlan:)` on a database at an older version of Trips: each stage in
/// one transaction, values and links kept, the custom stage run, the metadata recorded, and the
/// schema the same as a fresh store's.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresMigrationTests {
    /// The rows of a populated version 1 database.
    struct Version1 {
        let configuration: PostgresConfiguration
        let acme = UUID()
        let ada = UUID()
        let cher = UUID()
    }

    /// A database created at version 1 of Trips by a store of that version, with an organization,
    /// two users (one in it) and a trip of one of them, written as version 1's columns.
    static func populatedVersion1() async throws -> Version1 {
        let database = Version1(configuration: try await makeDatabase())
        try Store(postgres: database.configuration, schema: try Trips.version1.schema(), readers: 1).close()
        let connection = try await PostgresConnection(database.configuration)
        _ = try await connection.execute(
            "INSERT INTO \"Organization\" (id, title) VALUES ($1, 'Acme')", [.uuid(database.acme)])
        _ = try await connection.execute(
            "INSERT INTO \"User\" (id, username, name, rating, role, \"joinedAt\", organization) "
                + "VALUES ($1, 'ada', 'Ada King Lovelace', 5, 'administrator', now(), $2), "
                + "($3, 'cher', 'Cher', 0, 'member', now(), NULL)",
            [.uuid(database.ada), .uuid(database.acme), .uuid(database.cher)])
        _ = try await connection.execute(
            "INSERT INTO \"Trip\" (id, identifier, title, \"startsOn\", owner) VALUES ($1, $2, 'Lisbon', now(), $3)",
            [.uuid(UUID()), .uuid(UUID()), .uuid(database.ada)])
        await connection.close()
        return database
    }

    /// Checks the migrated rows of ``populatedVersion1()`` through the generated records.
    static func expectMigrated(_ database: Version1) async throws {
        let store = try Store(postgres: database.configuration, schema: Trips.schema, readers: 1)
        let users = try await store.performQuery { try $0.fetch(User.request().sorted { [$0.username.ascending] }) }
        #expect(users.map(\.username) == ["ada", "cher"])
        #expect(users.map(\.givenName) == ["Ada King", ""])
        #expect(users.map(\.familyName) == ["Lovelace", "Cher"])
        #expect(users.map(\.id.uuid) == [database.ada, database.cher])
        #expect(users.map(\.isVerified) == [false, false])
        #expect(users.first?.role == .admin)
        let organizations = try await store.performQuery { try $0.fetch(Organization.request()) }
        #expect(organizations.map(\.name) == ["Acme"])
        #expect(organizations.map(\.id.uuid) == [database.acme])
        #expect(users.first?.organizationID == organizations.first?.id)
        let trips = try await store.performQuery { try $0.fetch(Trip.request()) }
        #expect(trips.map(\.title) == ["Lisbon"])
        #expect(trips.first?.ownerID.uuid == database.ada)
        #expect(trips.first?.travellers == 1 && trips.first?.priority == .normal)
        try store.close()
    }

    @Test func aVersion1DatabaseMigratesToTheCurrentVersionKeepingItsData() async throws {
        let database = try await Self.populatedVersion1()
        let events = LockedValue<[MigrationProgress]>([])
        let store = try Store(
            postgres: database.configuration, migrationPlan: Trips.migrationPlan(ServerMigrations()), readers: 1
        ) { event in events.set(events.get() + [event]) }
        try store.close()
        #expect(events.get().filter { $0.event == .stageCommitted }.map(\.toVersion) == [2, 3])
        // The migrated database opens as a plain store of the current version, its schema as a
        // fresh one's.
        try await Self.expectMigrated(database)
        let cluster = try #require(PostgresCluster.shared)
        let fresh = try await makeDatabase()
        try Store(postgres: fresh, schema: Trips.schema, readers: 1).close()
        let migratedLines = try cluster.schemaLines(database: Self.name(of: database.configuration))
        let freshLines = try cluster.schemaLines(database: Self.name(of: fresh))
        #expect(migratedLines.subtracting(freshLines).sorted() == [])
        #expect(freshLines.subtracting(migratedLines).sorted() == [])
    }

    /// The database name of a configuration the test support made.
    static func name(of configuration: PostgresConfiguration) -> String {
        String(configuration.connectionString.split(separator: "=").last ?? "")
    }
}
