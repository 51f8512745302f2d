import Foundation
import Modelwright
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing
import Trips

/// `diacriticInsensitive` string tests call PostgreSQL's `unaccent` extension, which a store
/// creates with its schema. One whose extension went missing (dropped by an administrator, or a
/// restore without its extensions) creates it again when it opens, instead of failing its first
/// such request with the server's "function does not exist".
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresExtensionTests {
    @Test func aStoreWhoseUnaccentWasDroppedCreatesItAgainWhenItOpens() async throws {
        let configuration = try await makeDatabase()
        let first = try Store(postgres: configuration, schema: Trips.schema)
        try first.close()
        let admin = try await PostgresConnection(configuration)
        try await admin.execute(
            "INSERT INTO \"User\" (id, username, \"givenName\", \"familyName\", rating, role, \"joinedAt\") "
                + "VALUES (gen_random_uuid(), 'ines', 'Inês', 'Séverin', 0, 'member', now())")
        try await admin.execute("DROP EXTENSION unaccent")
        let store = try Store(postgres: configuration, schema: Trips.schema)
        let request = User.request().filter {
            $0.familyName.equals("severin", caseInsensitive: true, diacriticInsensitive: true)
        }
        #expect(try await store.performQuery { try $0.count(request) } == 1)
        try store.close()
        await admin.close()
    }
}
