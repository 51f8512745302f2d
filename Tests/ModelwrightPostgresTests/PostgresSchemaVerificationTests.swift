import Foundation
import Modelwright
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing
import Trips

/// A store on PostgreSQL whose tables, column types, indexes or foreign keys differ from the
/// schema it records is refused at open with ``StoreError/unexpectedSchema(path:differences:)``
/// naming the difference, and the refusal changes nothing in the database.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresSchemaVerificationTests {
    /// One change to a store's schema made behind the runtime's back, and the table it is on.
    private enum Mutation: CustomStringConvertible {
        case retype(table: String, column: String, to: String)
        case dropIndex(table: String, index: String)
        case dropColumn(table: String, column: String)
        case dropForeignKey(table: String, constraint: String)

        var table: String {
            switch self {
            case .retype(let table, _, _), .dropIndex(let table, _), .dropColumn(let table, _),
                .dropForeignKey(let table, _):
                table
            }
        }

        var sql: String {
            switch self {
            case .retype(let table, let column, let type):
                "ALTER TABLE \"\(table)\" ALTER COLUMN \"\(column)\" TYPE \(type) USING NULL"
            case .dropIndex(_, let index): "DROP INDEX \"\(index)\""
            case .dropColumn(let table, let column): "ALTER TABLE \"\(table)\" DROP COLUMN \"\(column)\" CASCADE"
            case .dropForeignKey(let table, let constraint):
                "ALTER TABLE \"\(table)\" DROP CONSTRAINT \"\(constraint)\""
            }
        }

        var description: String { sql }

        /// Which of the four kinds of change this is.
        var kind: Int {
            switch self {
            case .retype: 0
            case .dropIndex: 1
            case .dropColumn: 2
            case .dropForeignKey: 3
            }
        }
    }

    /// A fresh database holding a new, empty Trips store, and its name.
    private static func storeDatabase(_ cluster: PostgresCluster) async throws -> (PostgresConfiguration, String) {
        let name = "mw_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())"
        try cluster.psql("CREATE DATABASE \(name)", database: "postgres")
        let configuration = PostgresConfiguration(cluster.connectionString(database: name))
        let store = try Store(postgres: configuration, schema: Trips.schema, readers: 1)
        try await store.performAndSave { try $0.insert(makeUser("ada")) }
        try store.close()
        return (configuration, name)
    }

    /// Every table's non-key columns, indexes and foreign keys of a Trips store, read from the catalog.
    private static func mutations(_ cluster: PostgresCluster, database: String) throws -> [Mutation] {
        let own = "c.relname NOT LIKE '\\_mw\\_%' AND c.relname <> '_modelwright_metadata'"
        let columns = try cluster.psql(
            "SELECT c.relname || '|' || a.attname || '|' || format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
                + "JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
                + "WHERE n.nspname = 'public' AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped "
                + "AND a.attname NOT IN ('id', 'source', 'destination') AND \(own) ORDER BY 1",
            database: database
        ).split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
        let indexes = try cluster.psql(
            "SELECT c.relname || '|' || i.relname FROM pg_index x JOIN pg_class c ON c.oid = x.indrelid "
                + "JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
                + "WHERE n.nspname = 'public' AND NOT x.indisprimary AND \(own) ORDER BY 1",
            database: database
        ).split(separator: "\n").map { $0.split(separator: "|").map(String.init) }
        let keys = try cluster.psql(
            "SELECT c.relname || '|' || k.conname FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid "
                + "JOIN pg_namespace n ON n.oid = c.relnamespace "
                + "WHERE n.nspname = 'public' AND k.contype = 'f' AND \(own) ORDER BY 1",
            database: database
        ).split(separator: "\n").map { $0.split(separator: "|").map(String.init) }
        var result: [Mutation] = []
        for column in columns {
            // Another type the column's values could have had: a wider or narrower one.
            let other = column[2] == "text" ? "character varying(200)" : column[2] == "bigint" ? "integer" : "text"
            // A key column keeps its type: PostgreSQL refuses a foreign key between other types.
            if column[2] != "uuid" { result.append(.retype(table: column[0], column: column[1], to: other)) }
            result.append(.dropColumn(table: column[0], column: column[1]))
        }
        result += indexes.map { .dropIndex(table: $0[0], index: $0[1]) }
        result += keys.map { .dropForeignKey(table: $0[0], constraint: $0[1]) }
        return result
    }

    /// The whole catalog of the store's schema as text, to show that a refused open changed nothing.
    private static func catalog(_ cluster: PostgresCluster, database: String) throws -> String {
        try cluster.psql(
            "SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull FROM pg_attribute a "
                + "JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
                + "WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND a.attnum > 0 "
                + "AND NOT a.attisdropped ORDER BY 1, 2",
            database: database) + (try cluster.psql("SELECT count(*) FROM \"User\"", database: database))
    }

    /// Per seed, one drawn change of each kind (a column's type, an index, a column, a foreign key)
    /// on a store of its own.
    @Test(arguments: 0..<2) func aStoreWhoseSchemaWasChangedIsRefusedUntouched(seed: UInt64) async throws {
        let cluster = try #require(PostgresCluster.shared)
        let (_, template) = try await Self.storeDatabase(cluster)
        var random = SplitMix64(seed: seed)
        let all = try Self.mutations(cluster, database: template)
        #expect(all.count > 20)
        for kind in 0..<4 {
            let mutation = try #require(all.filter { $0.kind == kind }.randomElement(using: &random))
            let (configuration, name) = try await Self.storeDatabase(cluster)
            try cluster.psql(mutation.sql, database: name)
            let before = try Self.catalog(cluster, database: name)
            #expect {
                _ = try Store(postgres: configuration, schema: Trips.schema, readers: 1)
            } throws: { error in
                guard case StoreError.unexpectedSchema(_, let differences) = error, let first = differences.first
                else { return false }
                return first.contains(mutation.table)
            }
            #expect(try Self.catalog(cluster, database: name) == before, "\(mutation)")
        }
    }

    private static func makeUser(_ name: String) -> User {
        User(username: name, givenName: "G", familyName: "F", joinedAt: Date(timeIntervalSinceReferenceDate: 0))
    }
}
