import Foundation
import Modelwright
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing
import Trips

/// Hand edits of an older PostgreSQL database, drawn over its own catalog, before the migration
/// plan opens it. What the check before a migration compares is decided by what a step depends
/// on: every statement the migrator runs finds a foreign key by its column and an index by its
/// columns in the catalog (``SQLDialect/dropForeignKey(_:of:)``, the index synchronisation), never by
/// the name it was made with, so a renamed foreign key, primary key or index is harmless, and the
/// migration must then succeed with every value kept. What changes what a step may write or what
/// a later opening reads is refused with ``StoreError/unexpectedSchema(_:)``, the database
/// untouched: a dropped index, a check constraint the version does not declare, a changed default.
///
/// `MODELWRIGHT_LARGE=1` draws 60 edits instead of the CI's 10.
@Suite(.enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresHandEditTests {
    private enum Edit: CaseIterable {
        case renameConstraint, renameIndex, dropIndex, addCheck, changeDefault

        var isHarmless: Bool { self == .renameConstraint || self == .renameIndex }
    }

    private static let caseCount = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 60 : 10

    /// One statement of kind `edit` over the database's catalog, drawn with `random`.
    private static func statement(
        _ edit: Edit, on connection: PostgresConnection, _ random: inout SplitMix64
    ) async throws -> String {
        func rows(_ sql: String) async throws -> [[String]] {
            let result = try await connection.query(sql)
            return (0..<result.count).map { row in
                (0..<result.columnCount).map { column in
                    if case .text(let text) = result[row, column] { text } else { "" }
                }
            }
        }
        let own =
            "n.nspname = current_schema() AND c.relname <> '_modelwright_metadata' AND c.relname NOT LIKE '\\_mw\\_%'"
        switch edit {
        case .renameConstraint:
            let keys = try await rows(
                "SELECT c.relname::text, k.conname::text FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid "
                    + "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE \(own) AND k.contype IN ('f', 'p') "
                    + "ORDER BY 1, 2")
            let key = random.pick(keys)
            return "ALTER TABLE \"\(key[0])\" RENAME CONSTRAINT \"\(key[1])\" TO \"hand_\(random.next() % 1000)\""
        case .renameIndex, .dropIndex:
            let indexes = try await rows(
                "SELECT i.relname::text FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
                    + "JOIN pg_class c ON c.oid = x.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
                    + "WHERE \(own) AND NOT x.indisprimary ORDER BY 1")
            let index = random.pick(indexes)[0]
            return edit == .dropIndex
                ? "DROP INDEX \"\(index)\"" : "ALTER INDEX \"\(index)\" RENAME TO \"hand_\(random.next() % 1000)\""
        case .addCheck:
            let columns = try await rows(
                "SELECT c.relname::text, a.attname::text FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
                    + "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE \(own) AND c.relkind = 'r' "
                    + "AND a.attnum > 0 AND NOT a.attisdropped ORDER BY 1, 2")
            let column = random.pick(columns)
            // True of every row, so only the check before the migration can tell.
            return "ALTER TABLE \"\(column[0])\" ADD CONSTRAINT \"hand_check\" "
                + "CHECK (\"\(column[1])\" IS NULL OR \"\(column[1])\" IS NOT NULL)"
        case .changeDefault:
            let columns = try await rows(
                "SELECT c.relname::text, a.attname::text, format_type(a.atttypid, a.atttypmod), "
                    + "coalesce(pg_get_expr(d.adbin, d.adrelid), '') FROM pg_attribute a "
                    + "JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
                    + "LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum "
                    + "WHERE \(own) AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped "
                    + "AND (d.adbin IS NOT NULL OR format_type(a.atttypid, a.atttypmod) IN ('text', 'bigint', 'integer', 'smallint')) "
                    + "ORDER BY 1, 2")
            let column = random.pick(columns)
            let alter = "ALTER TABLE \"\(column[0])\" ALTER COLUMN \"\(column[1])\" "
            if !column[3].isEmpty && random.next() % 2 == 0 { return alter + "DROP DEFAULT" }
            return alter
                + (column[2] == "text" ? "SET DEFAULT 'hand'" : column[3].isEmpty ? "SET DEFAULT 42" : "DROP DEFAULT")
        }
    }

    @Test func aHandEditIsRefusedUntouchedOrHarmlessToTheMigration() async throws {
        var counts: [String: Int] = [:]
        for seed in 0..<UInt64(Self.caseCount) {
            var random = SplitMix64(seed: seed, index: 2702)
            let edit = Edit.allCases[Int(seed) % Edit.allCases.count]
            let database = try await PostgresMigrationTests.populatedVersion1()
            let connection = try await PostgresConnection(database.configuration)
            let statement = try await Self.statement(edit, on: connection, &random)
            _ = try await connection.execute(statement)
            await connection.close()
            let before = try await PostgresMigrationRefusalTests.snapshot(database.configuration)
            let opened = Result {
                try Store(
                    postgres: database.configuration, migrationPlan: Trips.migrationPlan(ServerMigrations()),
                    readers: 1)
            }
            switch opened {
            case .success(let store):
                try store.close()
                #expect(edit.isHarmless, "seed \(seed): \(statement) was not refused")
                try await PostgresMigrationTests.expectMigrated(database)
                counts["\(edit) migrated", default: 0] += 1
            case .failure(let error):
                #expect(!edit.isHarmless, "seed \(seed): \(statement) was refused: \(error)")
                guard case StoreError.unexpectedSchema = error else {
                    Issue.record("seed \(seed): \(statement) failed with \(error), not the schema check's error")
                    continue
                }
                #expect(try await PostgresMigrationRefusalTests.snapshot(database.configuration) == before)
                counts["\(edit) refused", default: 0] += 1
            }
        }
        print("hand edits before a PostgreSQL migration: \(counts.sorted { $0.key < $1.key })")
    }
}
