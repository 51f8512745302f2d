import Foundation
import Modelwright
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing
import Trips

/// Opening with the migration plan refuses what it must not touch, each with a clear error that
/// holds no password, and leaves the database exactly as it was: a database of another model, one
/// at a version newer than the plan's, an unreachable server and wrong credentials.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresMigrationRefusalTests {
    /// Every table, column and row count of the database and every metadata row, to show a refusal
    /// touched nothing.
    static func snapshot(_ configuration: PostgresConfiguration) async throws -> String {
        let connection = try await PostgresConnection(configuration)
        let columns = try await connection.query(
            "SELECT string_agg(table_name || ':' || column_name || ':' || data_type || ':' || is_nullable, ',' "
                + "ORDER BY table_name, column_name) FROM information_schema.columns "
                + "WHERE table_schema = current_schema()")
        let metadata = try await connection.query(
            "SELECT string_agg(key || '=' || value, ',' ORDER BY key) FROM _modelwright_metadata")
        let triggers = try await connection.query("SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal")
        let counts = try await connection.query(
            "SELECT string_agg(c.relname || '=' || c.reltuples::text, ',' ORDER BY c.relname) FROM pg_class c "
                + "WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'i')")
        await connection.close()
        return "\(columns[0, 0]) \(metadata[0, 0]) \(triggers[0, 0]) \(counts[0, 0])"
    }

    /// A database created by a store of `schema`, with one row written through raw SQL when it has `Counter`.
    static func database(of schema: SchemaDescription) async throws -> PostgresConfiguration {
        let configuration = try await makeDatabase()
        try Store(postgres: configuration, schema: schema, readers: 1).close()
        return configuration
    }

    /// Whether the error's text (both spellings) holds `secret`.
    static func shows(_ secret: String, _ error: any Error) -> Bool {
        ("\(error)" + String(reflecting: error)).contains(secret)
    }

    @Test func aDatabaseOfAnotherModelIsRefusedUntouched() async throws {
        let configuration = try await Self.database(of: PostgresStoreTests.otherModel)
        let before = try await Self.snapshot(configuration)
        #expect {
            _ = try Store(postgres: configuration, migrationPlan: Trips.migrationPlan(ServerMigrations()), readers: 1)
        } throws: { error in
            guard case StoreError.otherModel(let found, let expected, _) = error else { return false }
            return found == "Other" && expected == "Trips" && !Self.shows(Self.password, error)
        }
        #expect(try await Self.snapshot(configuration) == before)
    }

    @Test func aDatabaseOfANewerVersionIsRefusedUntouched() async throws {
        var newer = Trips.schema
        newer.version += 1
        newer.entities.append(EntityDescription(name: "Later", attributes: [.init(name: "value", type: .int64)]))
        let configuration = try await Self.database(of: newer)
        let before = try await Self.snapshot(configuration)
        #expect {
            _ = try Store(postgres: configuration, migrationPlan: Trips.migrationPlan(ServerMigrations()), readers: 1)
        } throws: { error in
            guard case MigrationError.unknownStoreVersion(_, let version, _) = error else { return false }
            return version == newer.version && "\(error)".contains("untouched") && !Self.shows(Self.password, error)
        }
        #expect(try await Self.snapshot(configuration) == before)
    }

    /// Hand edits of a version 1 database that its recorded version does not have.
    static let handEdits = [
        "ALTER TABLE \"User\" ADD COLUMN \"nickname\" text; UPDATE \"User\" SET \"nickname\" = 'kept'",
        "ALTER TABLE \"User\" ALTER COLUMN \"username\" TYPE varchar(3) USING left(\"username\", 3)",
        "ALTER TABLE \"User\" ALTER COLUMN \"rating\" TYPE numeric",
        "ALTER TABLE \"User\" ADD CONSTRAINT \"positive\" CHECK (\"rating\" >= 0)",
        // A renamed key or index is harmless, not refused: `PostgresHandEditTests` migrates one.
    ]

    @Test(arguments: handEdits)
    func aHandEditedOlderDatabaseIsRefusedUntouched(edit: String) async throws {
        let database = try await PostgresMigrationTests.populatedVersion1()
        let connection = try await PostgresConnection(database.configuration)
        for statement in edit.split(separator: ";") { _ = try await connection.execute(String(statement)) }
        await connection.close()
        let before = try await Self.snapshot(database.configuration)
        #expect {
            _ = try Store(
                postgres: database.configuration, migrationPlan: Trips.migrationPlan(ServerMigrations()), readers: 1)
        } throws: { error in
            guard case StoreError.unexpectedSchema = error else { return false }
            return !Self.shows(Self.password, error)
        }
        #expect(try await Self.snapshot(database.configuration) == before)
    }

    @Test func anUnreachableServerIsAClearErrorWithoutThePassword() throws {
        var configuration = PostgresConfiguration("postgresql://app:hunter2-secret@127.0.0.1:1/trips")
        configuration.connectTimeout = .seconds(2)
        #expect {
            _ = try Store(postgres: configuration, migrationPlan: Trips.migrationPlan(ServerMigrations()), readers: 1)
        } throws: { error in
            guard case PostgresError.connectionFailed(let message) = error else { return false }
            return message.contains("127.0.0.1") && !Self.shows("hunter2-secret", error)
        }
    }

    @Test func wrongCredentialsAreAClearErrorAndTouchNothing() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let configuration = try await PostgresMigrationTests.populatedVersion1().configuration
        let before = try await Self.snapshot(configuration)
        let name = PostgresMigrationTests.name(of: configuration)
        let wrong = PostgresConfiguration(cluster.url(database: name, password: "wrong-Secret-77"))
        #expect {
            _ = try Store(postgres: wrong, migrationPlan: Trips.migrationPlan(ServerMigrations()), readers: 1)
        } throws: { error in
            guard case PostgresError.connectionFailed(let message) = error else { return false }
            return message.contains("password authentication failed") && !Self.shows("wrong-Secret-77", error)
                && !Self.shows(cluster.password, error)
        }
        #expect(try await Self.snapshot(configuration) == before)
    }

    /// The password of the test cluster, which no error may show.
    static var password: String { PostgresCluster.shared?.password ?? "-" }
}
