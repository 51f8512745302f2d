import Foundation
import Modelwright
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing
import Trips

/// Hand edits that reach a store from outside its tables: the database's or role's settings, other
/// schemas, and extensions (issue 27's red team). Each edit either is refused at open, untouched,
/// with ``StoreError/unexpectedSchema(path:differences:)``, or cannot change what the store reads.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"), .serialized)
struct PostgresHandEditSessionTests {
    /// One edit of the red team's, and whether the store must refuse the database after it.
    enum Edit: String, CaseIterable, Sendable {
        /// A schema named as the role ("$user" comes first on the default path).
        case userSchema
        /// `ALTER DATABASE … SET search_path` to another schema first.
        case databasePath
        /// `lower(text)` in another schema that the database's path puts before pg_catalog.
        case shadowedLower
        /// A collation `"C"` in another schema the same way.
        case shadowedCollation
        /// `session_replication_role = replica` for the database.
        case replicaDatabase
        /// `session_replication_role = replica` for the role in the database.
        case replicaRole
        /// A table of another schema inheriting from one of the store's, holding copies of its rows.
        case inheritingTable
        /// `unaccent(text)`, a member of the extension, replaced by one answering `'x'`.
        case replacedUnaccent
        /// An overload of `unaccent` added to the extension.
        case unaccentOverloadInExtension
        /// `unaccent(text)` made `SECURITY DEFINER` with its own `search_path`.
        case unaccentSecurityDefiner
        /// The change feed's function replaced and made a member of the extension.
        case feedFunctionInExtension

        /// Whether the store must refuse the database (otherwise it opens and reads correctly).
        var refused: Bool {
            switch self {
            case .userSchema, .databasePath, .shadowedLower, .shadowedCollation: false
            case .replicaDatabase, .replicaRole, .inheritingTable, .replacedUnaccent, .unaccentOverloadInExtension,
                .unaccentSecurityDefiner, .feedFunctionInExtension:
                true
            }
        }

        /// The statements of the edit on database `database` as role `role`.
        func statements(database: String, role: String) -> [String] {
            switch self {
            case .userSchema: ["CREATE SCHEMA \"\(role)\""]
            case .databasePath: ["CREATE SCHEMA hand", "ALTER DATABASE \(database) SET search_path = hand, public"]
            case .shadowedLower:
                [
                    "CREATE SCHEMA hand",
                    "CREATE FUNCTION hand.lower(text) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT 'same'::text $$",
                    "ALTER DATABASE \(database) SET search_path = public, hand, pg_catalog",
                ]
            case .shadowedCollation:
                [
                    "CREATE SCHEMA hand", "CREATE COLLATION hand.\"C\" (provider = icu, locale = 'en-US')",
                    "ALTER DATABASE \(database) SET search_path = public, hand, pg_catalog",
                ]
            case .replicaDatabase: ["ALTER DATABASE \(database) SET session_replication_role = replica"]
            case .replicaRole: ["ALTER ROLE \"\(role)\" IN DATABASE \(database) SET session_replication_role = replica"]
            case .inheritingTable:
                [
                    "CREATE SCHEMA hand", "CREATE TABLE hand.kid () INHERITS (public.\"Trip\")",
                    "INSERT INTO hand.kid SELECT * FROM public.\"Trip\"",
                ]
            case .replacedUnaccent:
                [
                    "CREATE OR REPLACE FUNCTION public.unaccent(text) RETURNS text LANGUAGE sql STABLE STRICT "
                        + "AS $$ SELECT 'x'::text $$"
                ]
            case .unaccentOverloadInExtension:
                [
                    "CREATE FUNCTION public.unaccent(character varying) RETURNS text LANGUAGE sql AS $$ SELECT 'x'::text $$",
                    "ALTER EXTENSION unaccent ADD FUNCTION public.unaccent(character varying)",
                ]
            case .unaccentSecurityDefiner:
                [
                    "ALTER FUNCTION public.unaccent(text) SECURITY DEFINER",
                    "ALTER FUNCTION public.unaccent(text) SET search_path = pg_temp",
                ]
            case .feedFunctionInExtension:
                [
                    "CREATE OR REPLACE FUNCTION public._mw_notify_changes() RETURNS trigger LANGUAGE plpgsql "
                        + "AS $h$ BEGIN RETURN NULL; END $h$",
                    "ALTER EXTENSION unaccent ADD FUNCTION public._mw_notify_changes()",
                ]
            }
        }
    }

    @Test(arguments: Edit.allCases)
    func editIsRefusedOrHarmless(_ edit: Edit) async throws {
        let configuration = try await makeDatabase()
        let store = try Store(postgres: configuration, schema: Trips.schema, readers: 1)
        let owner = User(
            username: "ada", givenName: "Ada", familyName: "Lövelace", joinedAt: Date(timeIntervalSinceReferenceDate: 0)
        )
        try await store.performAndSave { try $0.insert(owner) }
        for title in ["a", "B"] {
            try await store.performAndSave {
                try $0.insert(
                    Trip(
                        identifier: UUID(), title: title, startsOn: Date(timeIntervalSinceReferenceDate: 0),
                        ownerID: owner.id))
            }
        }
        try store.close()
        let admin = try await PostgresConnection(configuration)
        let names = try await admin.query("SELECT current_database()::text, current_user::text", format: .text)
        guard case .text(let database) = names[0, 0], case .text(let role) = names[0, 1] else {
            Issue.record("no database name")
            return
        }
        for statement in edit.statements(database: database, role: role) { try await admin.execute(statement) }
        let before = try await admin.query(Self.snapshot, format: .text)
        do {
            let reopened = try Store(postgres: configuration, schema: Trips.schema, readers: 1)
            defer { try? reopened.close() }
            #expect(!edit.refused, "\(edit): the store opened")
            let count = try await reopened.performQuery { try $0.count(Trip.request()) }
            #expect(count == 2, "\(edit): the store read \(count) trips of 2")
            let none = try await reopened.performQuery {
                try $0.count(User.request().filter { $0.familyName.equals("nobody", caseInsensitive: true) })
            }
            #expect(none == 0, "\(edit): a case-insensitive test matched \(none) users")
            let titles = try await reopened.performQuery {
                try $0.fetch(Trip.request().sorted { [$0.title.ascending] }).map(\.title)
            }
            #expect(titles == ["B", "a"], "\(edit): sorted \(titles)")
            await #expect(throws: (any Error).self, "\(edit): a dangling owner was stored") {
                try await reopened.performAndSave {
                    try $0.insert(Trip(identifier: UUID(), title: "d", startsOn: Date(), ownerID: User.ID()))
                }
            }
        } catch StoreError.unexpectedSchema(_, let differences) {
            #expect(edit.refused, "\(edit): refused with \(differences)")
            let after = try await admin.query(Self.snapshot, format: .text)
            #expect(after.count == before.count, "\(edit): the refused database was changed")
        }
        await admin.close()
    }

    /// Every relation and function of the database outside the catalogs, to show a refused store
    /// left it untouched.
    private static let snapshot =
        "SELECT c.oid::regclass::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        + "WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') UNION ALL "
        + "SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
        + "WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')"
}
