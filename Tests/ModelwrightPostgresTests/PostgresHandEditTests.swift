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
/// untouched: a dropped index, a check constraint the version does not declare, a changed default,
/// an index recreated partial, descending, `NULLS NOT DISTINCT`, with another collation or of
/// another method, a column's collation, a trigger on a model table or on the metadata table, a
/// rule on the metadata table, row level security with a policy, an unlogged table, an event
/// trigger in the database (in any schema; it runs on the step's DDL), the change feed's trigger
/// function with another body (notifications dropped, sent elsewhere, a limit changed) or another
/// definition (`SECURITY DEFINER`, a setting, `STRICT`), and a function added to the store's schema
/// (an overload of the feed's function or of `unaccent`), and a foreign key made `NOT DEFERRABLE` or
/// `INITIALLY IMMEDIATE` (a transaction that links rows before both exist would then fail). The
/// refusal names the table, event trigger or function the edit changed.
///
/// `MODELWRIGHT_LARGE=1` draws 138 edits instead of the CI's 23 (one of each kind).
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresHandEditTests {
    private enum Edit: CaseIterable {
        case renamePrimaryKey, renameForeignKey, renameIndex, dropIndex, addCheck, changeDefault
        case partialIndex, descendingIndex, nullsNotDistinct, indexCollation, hashIndex
        case columnCollation, modelTrigger, rowLevelSecurity, metadataTrigger, metadataRule, unlogged
        case eventTrigger, feedBody, feedDefinition, addedFunction, notDeferrable, initiallyImmediate

        /// A renamed foreign key: its name is unique only on its table, so nothing can collide with
        /// it and the schema check does not compare it. A renamed index or primary key is refused
        /// (a later entity of the old name would collide with it).
        var isHarmless: Bool { self == .renameForeignKey }
    }

    private static let caseCount =
        Edit.allCases.count * (ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 6 : 1)

    /// The statements of kind `edit` over the database's catalog, drawn with `random`, and the
    /// table they change.
    private static func statements(
        _ edit: Edit, on connection: PostgresConnection, _ random: inout SplitMix64
    ) async throws -> (statements: [String], table: String) {
        if let (statement, table) = try await redefinition(edit, on: connection, &random) {
            // A function's body holds semicolons at line ends: it is one statement.
            let whole = statement.hasPrefix("CREATE OR REPLACE FUNCTION")
            return (whole ? [statement] : statement.components(separatedBy: ";\n"), table)
        }
        return ([try await statement(edit, on: connection, &random)], "")
    }

    /// The statements of an edit that ``statement(_:on:_:)`` does not make, and the table they
    /// change: an index recreated with another definition, a collation, a trigger, a rule, row
    /// level security, a table made unlogged; `nil` for the others.
    private static func redefinition(
        _ edit: Edit, on connection: PostgresConnection, _ random: inout SplitMix64
    ) async throws -> (String, String)? {
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
        // Name, table, definition, first column as the definition prints it, whether unique, the
        // number of key columns and whether the first is text.
        let indexes =
            "SELECT i.relname::text, c.relname::text, pg_get_indexdef(x.indexrelid), "
            + "pg_get_indexdef(x.indexrelid, 1, true), x.indisunique::text, x.indnkeyatts::text, "
            + "(a.atttypid = 'text'::regtype)::text FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
            + "JOIN pg_class c ON c.oid = x.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
            + "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = x.indkey[0] "
            + "WHERE \(own) AND NOT x.indisprimary ORDER BY 1"
        func recreate(_ index: [String], _ definition: String) -> (String, String) {
            ("DROP INDEX \"\(index[0])\";\n\(definition)", index[1])
        }
        let tables = try await rows(
            "SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                + "WHERE \(own) AND c.relkind = 'r' ORDER BY 1")
        switch edit {
        case .partialIndex:
            let index = random.pick(try await rows(indexes))
            return recreate(index, index[2] + " WHERE \(index[3]) IS NOT NULL")
        case .descendingIndex:
            let index = random.pick(try await rows(indexes))
            return recreate(index, String(index[2].dropLast()) + " DESC)")
        case .nullsNotDistinct:
            let index = random.pick(try await rows(indexes).filter { $0[4] == "true" })
            return recreate(index, index[2] + " NULLS NOT DISTINCT")
        case .indexCollation:
            let index = random.pick(try await rows(indexes).filter { $0[6] == "true" })
            return recreate(
                index, index[2].replacingOccurrences(of: "(\(index[3])", with: "(\(index[3]) COLLATE \"C\""))
        case .hashIndex:
            let index = random.pick(try await rows(indexes).filter { $0[4] == "false" && $0[5] == "1" })
            return recreate(index, index[2].replacingOccurrences(of: " USING btree ", with: " USING hash "))
        case .columnCollation:
            let column = random.pick(
                try await rows(
                    "SELECT c.relname::text, a.attname::text FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
                        + "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE \(own) AND c.relkind = 'r' "
                        + "AND a.attnum > 0 AND NOT a.attisdropped AND a.atttypid = 'text'::regtype ORDER BY 1, 2"))
            return ("ALTER TABLE \"\(column[0])\" ALTER COLUMN \"\(column[1])\" TYPE text COLLATE \"C\"", column[0])
        case .modelTrigger:
            // Harmless in what it does (it returns the row unchanged), refused for what it could do.
            let table = random.pick(tables)[0]
            return (
                "CREATE FUNCTION hand_keep() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;\n"
                    + "CREATE TRIGGER hand_keep BEFORE INSERT OR UPDATE ON \"\(table)\" FOR EACH ROW "
                    + "EXECUTE FUNCTION hand_keep()", table
            )
        case .rowLevelSecurity:
            let table = random.pick(tables)[0]
            let force = random.next() % 2 == 0 ? "ALTER TABLE \"\(table)\" FORCE ROW LEVEL SECURITY;\n" : ""
            return (
                "ALTER TABLE \"\(table)\" ENABLE ROW LEVEL SECURITY;\n\(force)"
                    + "CREATE POLICY hand_policy ON \"\(table)\" USING (true)", table
            )
        case .metadataTrigger:
            // Swallows the metadata's writes: the migration's DDL would commit under the old version.
            let events = random.pick(["INSERT OR UPDATE", "UPDATE", "INSERT"])
            return (
                "CREATE FUNCTION hand_swallow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;\n"
                    + "CREATE TRIGGER hand_swallow BEFORE \(events) ON _modelwright_metadata FOR EACH ROW "
                    + "EXECUTE FUNCTION hand_swallow()", "_modelwright_metadata"
            )
        case .metadataRule:
            let event = random.pick(["UPDATE", "INSERT"])
            return (
                "CREATE RULE hand_rule AS ON \(event) TO _modelwright_metadata DO INSTEAD NOTHING",
                "_modelwright_metadata"
            )
        case .eventTrigger:
            // In a schema of its own: the event trigger alone is refused, wherever its function is.
            let event = random.pick(["ddl_command_start", "ddl_command_end", "sql_drop", "table_rewrite"])
            let tags = random.next() % 2 == 0 ? "" : " WHEN TAG IN ('ALTER TABLE', 'CREATE TABLE')"
            let usable = event == "ddl_command_start" || event == "ddl_command_end" || tags.isEmpty
            return (
                "CREATE SCHEMA hand;\n"
                    + "CREATE FUNCTION hand.watch() RETURNS event_trigger LANGUAGE plpgsql AS $$ BEGIN END $$;\n"
                    + "CREATE EVENT TRIGGER hand_event ON \(event)\(usable ? tags : "") EXECUTE FUNCTION hand.watch()",
                "event trigger hand_event"
            )
        case .feedBody:
            let source = try await rows(
                "SELECT p.prosrc FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
                    + "WHERE n.nspname = current_schema() AND p.proname = '_mw_notify_changes'")[0][0]
            let bodies = [
                // Drops every notification.
                "BEGIN RETURN NULL; END",
                // Writes elsewhere: the payload goes to another channel.
                source.replacingOccurrences(of: "'modelwright_changes'", with: "'hand_changes'"),
                // A limit changed: payloads lose their rows far earlier.
                source.replacingOccurrences(of: "7999", with: "100"),
                // The same body with a comment: any difference of the text counts.
                source + "-- hand\n",
            ]
            return (
                "CREATE OR REPLACE FUNCTION _mw_notify_changes() RETURNS trigger LANGUAGE plpgsql AS $hand$"
                    + random.pick(bodies) + "$hand$", "_mw_notify_changes()"
            )
        case .feedDefinition:
            let change = random.pick(["SECURITY DEFINER", "SET search_path = pg_temp", "STRICT", "IMMUTABLE"])
            return ("ALTER FUNCTION _mw_notify_changes() \(change)", "_mw_notify_changes()")
        case .addedFunction:
            if random.next() % 2 == 0 {
                return (
                    "CREATE FUNCTION _mw_notify_changes(integer) RETURNS integer LANGUAGE sql AS $$ SELECT 1 $$",
                    "_mw_notify_changes(integer)"
                )
            }
            // Takes the calls of a varchar argument from the extension's unaccent(text).
            return (
                "CREATE FUNCTION unaccent(character varying) RETURNS text LANGUAGE sql AS $$ SELECT 'x' $$",
                "unaccent(character varying)"
            )
        case .unlogged:
            // A table no foreign key refers to: PostgreSQL refuses to unlog one that is referred to.
            let table = random.pick(
                try await rows(
                    "SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                        + "WHERE \(own) AND c.relkind = 'r' AND NOT EXISTS (SELECT 1 FROM pg_constraint k "
                        + "WHERE k.confrelid = c.oid AND k.contype = 'f' AND k.conrelid <> c.oid) ORDER BY 1"))[0]
            return ("ALTER TABLE \"\(table)\" SET UNLOGGED", table)
        default:
            return nil
        }
    }

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
        case .notDeferrable, .initiallyImmediate:
            let keys = try await rows(
                "SELECT c.relname::text, k.conname::text FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid "
                    + "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE \(own) AND k.contype = 'f' ORDER BY 1, 2")
            let key = random.pick(keys)
            return "ALTER TABLE \"\(key[0])\" ALTER CONSTRAINT \"\(key[1])\" "
                + (edit == .notDeferrable ? "NOT DEFERRABLE" : "DEFERRABLE INITIALLY IMMEDIATE")
        case .renamePrimaryKey, .renameForeignKey:
            let keys = try await rows(
                "SELECT c.relname::text, k.conname::text FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid "
                    + "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE \(own) "
                    + "AND k.contype = '\(edit == .renamePrimaryKey ? "p" : "f")' ORDER BY 1, 2")
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
        default:
            return ""
        }
    }

    @Test func aHandEditIsRefusedUntouchedOrHarmlessToTheMigration() async throws {
        var counts: [String: Int] = [:]
        for seed in 0..<UInt64(Self.caseCount) {
            var random = SplitMix64(seed: seed, index: 2702)
            let edit = Edit.allCases[Int(seed) % Edit.allCases.count]
            let database = try await PostgresMigrationTests.populatedVersion1()
            let connection = try await PostgresConnection(database.configuration)
            let (statements, table) = try await Self.statements(edit, on: connection, &random)
            let statement = statements.joined(separator: "; ")
            for part in statements {
                _ = try await connection.execute(part)
            }
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
                guard case StoreError.unexpectedSchema(_, let differences) = error else {
                    Issue.record("seed \(seed): \(statement) failed with \(error), not the schema check's error")
                    continue
                }
                #expect(
                    table.isEmpty || differences.contains { $0.hasPrefix(table + " ") },
                    "seed \(seed): \(statement) was refused without naming \(table): \(differences)")
                #expect(try await PostgresMigrationRefusalTests.snapshot(database.configuration) == before)
                counts["\(edit) refused", default: 0] += 1
            }
        }
        print("hand edits before a PostgreSQL migration: \(counts.sorted { $0.key < $1.key })")
    }
}

/// A metadata write that would not take: an event trigger that installs a trigger on
/// `_modelwright_metadata` after the schema check passed, on the DDL of the step itself, to swallow
/// the row or change its value. The store refuses the database while it has an enabled event trigger,
/// before it creates or migrates anything (``StoreError/unexpectedSchema(path:differences:)`` naming
/// the event trigger), so neither a new store's creation nor a migration stage runs under it; once it
/// is dropped, the store opens. (The metadata's read-back, ``StoreError/metadataNotRecorded(key:value:found:)``,
/// stays for a trigger installed by another program between the check and the write.)
///
/// `MODELWRIGHT_LARGE=1` draws 24 cases instead of the CI's 4 (one of each).
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresMetadataWriteTests {
    private static let caseCount = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 24 : 4

    /// The statements that make every later `CREATE TABLE` or `ALTER TABLE` in the `public` schema
    /// install a trigger on its metadata table that swallows (`swallow`) or rewrites each write.
    private static func sabotage(swallow: Bool, events: String) -> [String] {
        [
            "CREATE SCHEMA hand",
            "CREATE FUNCTION hand.meta() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                + (swallow ? "RETURN NULL;" : "NEW.value := NEW.value || '0'; RETURN NEW;") + " END $$",
            "CREATE FUNCTION hand.install() RETURNS event_trigger LANGUAGE plpgsql AS $$ BEGIN "
                + "IF to_regclass('public._modelwright_metadata') IS NOT NULL AND NOT EXISTS "
                + "(SELECT 1 FROM pg_trigger WHERE tgname = 'hand_meta') THEN "
                + "CREATE TRIGGER hand_meta BEFORE \(events) ON public._modelwright_metadata FOR EACH ROW "
                + "EXECUTE FUNCTION hand.meta(); END IF; END $$",
            "CREATE EVENT TRIGGER hand_install ON ddl_command_end WHEN TAG IN ('CREATE TABLE', 'ALTER TABLE', "
                + "'CREATE INDEX', 'DROP INDEX', 'DROP TABLE') EXECUTE FUNCTION hand.install()",
        ]
    }

    private static func drop(_ configuration: PostgresConfiguration) async throws {
        let connection = try await PostgresConnection(configuration)
        _ = try await connection.execute("DROP EVENT TRIGGER hand_install")
        await connection.close()
    }

    @Test func anEventTriggerIsRefusedBeforeTheStoreWritesAnything() async throws {
        var counts: [String: Int] = [:]
        for seed in 0..<UInt64(Self.caseCount) {
            var random = SplitMix64(seed: seed, index: 2703)
            let swallow = seed % 2 == 0
            let migrating = seed % 4 >= 2
            let events = random.pick(["INSERT OR UPDATE", migrating ? "UPDATE" : "INSERT"])
            let label = "seed \(seed) (\(migrating ? "migration" : "creation"), \(swallow ? "swallowed" : "rewritten"))"
            let configuration: PostgresConfiguration
            if migrating {
                configuration = try await PostgresMigrationTests.populatedVersion1().configuration
            } else {
                configuration = try await makeDatabase()
            }
            let connection = try await PostgresConnection(configuration)
            for statement in Self.sabotage(swallow: swallow, events: events) {
                _ = try await connection.execute(statement)
            }
            await connection.close()
            let before = migrating ? try await PostgresMigrationRefusalTests.snapshot(configuration) : ""
            let open = {
                let store =
                    migrating
                    ? try Store(
                        postgres: configuration, migrationPlan: Trips.migrationPlan(ServerMigrations()), readers: 1)
                    : try Store(postgres: configuration, schema: Trips.schema, readers: 1)
                try store.close()
            }
            do {
                try open()
                Issue.record("\(label): the store opened under an event trigger")
            } catch StoreError.unexpectedSchema(_, let differences) {
                #expect(
                    differences.count == 1 && differences[0].hasPrefix("event trigger hand_install ")
                        && differences[0].contains("DROP EVENT TRIGGER hand_install"), "\(label): \(differences)")
            } catch {
                Issue.record("\(label): failed with \(error), not the schema check's error")
            }
            let check = try await PostgresConnection(configuration)
            if migrating {
                // Nothing ran: version 1's tables and metadata, as before.
                let version = try await check.query("SELECT value FROM _modelwright_metadata WHERE key = 'version'")
                #expect(version.count == 1 && version[0, 0] == .text("1"), "\(label)")
                await check.close()
                #expect(try await PostgresMigrationRefusalTests.snapshot(configuration) == before, "\(label)")
            } else {
                // Nothing was created: no table at all.
                let tables = try await check.query(
                    "SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r'")
                #expect(tables[0, 0] == .text("0") || tables[0, 0] == .int64(0), "\(label): \(tables[0, 0])")
                await check.close()
            }
            // Dropped, the store opens: the check refused the event trigger and nothing else.
            try await Self.drop(configuration)
            try open()
            counts[label.split(separator: "(")[1].dropLast().description, default: 0] += 1
        }
        print("event triggers refused at open: \(counts.sorted { $0.key < $1.key })")
    }
}
