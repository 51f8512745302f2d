import Foundation

/// The change feed: triggers that, when a transaction commits, tell every listening connection of
/// every process which tables, columns and rows it changed (`LISTEN`/`NOTIFY` on ``channel``), and
/// the reading of what they send into ``PostgresCommittedChanges``, the same description SQLite's
/// store builds for its observers (`StoreChanges`).
///
/// ```swift
/// for statement in PostgresChangeFeed.installation { try await connection.execute(statement) }
/// let observer = try await PostgresChangeObserver(configuration)
/// for try await changes in observer.changes where changes.affects(table: "Trip", columns: ["title"]) {
///     // fetch again
/// }
/// ```
///
/// Each `INSERT`, `UPDATE` or `DELETE` statement on a store table runs one statement-level trigger,
/// which reads the statement's rows from its transition tables and sends one notification; the
/// server delivers a transaction's notifications when it commits, together, and never those of a
/// transaction that rolled back. An update that wrote the values rows already had sends nothing.
///
/// A notification's payload is at most 8000 bytes (PostgreSQL's limit). When the IDs of the rows an
/// update changed do not fit, the payload names the table and columns and says that rows of it
/// changed (``PostgresCommittedChanges/tablesWithUnknownUpdatedRows``); when even the columns do
/// not fit, every column of the table counts as changed.
public enum PostgresChangeFeed {
    /// The channel the triggers notify.
    public static let channel = "modelwright_changes"

    /// The largest payload the triggers send: PostgreSQL refuses 8000 bytes or more.
    static let payloadLimit = 7_999

    /// The statements that create (or replace) the trigger function and a trigger per event on every table
    /// of the current schema but the runtime's own (`_modelwright_…`, `_mw_…`). Run it after each
    /// migration: it is idempotent, and it covers tables a migration created.
    ///
    /// Names are quoted by the server (`format('%I')`), so no table name is spliced into SQL here.
    public static let installation = [function, triggers]

    /// The statement that creates (or replaces) the trigger function, unqualified, so it lands in the
    /// first schema of the search path; the schema check at open creates it in its scratch schema
    /// too and compares the store's with it, body included.
    static let function = """
        CREATE OR REPLACE FUNCTION _mw_notify_changes() RETURNS trigger LANGUAGE plpgsql AS $feed$
        DECLARE
            payload jsonb := jsonb_build_object(
                'x', pg_current_xact_id()::text, 't', TG_TABLE_NAME, 'k', lower(left(TG_OP, 1)));
            changed_columns jsonb;
            ids jsonb;
            message text;
        BEGIN
            IF TG_OP = 'UPDATE' THEN
                IF EXISTS (SELECT 1 FROM _mw_new AS n WHERE to_jsonb(n) -> 'id' IS NULL) THEN
                    -- Rows without an "id" (join tables) cannot be paired: rows came and went.
                    payload := payload || '{"k": "i"}';
                ELSE
                    SELECT coalesce(jsonb_agg(DISTINCT e.key), '[]') INTO changed_columns
                    FROM _mw_new AS n JOIN _mw_old AS o ON to_jsonb(n) -> 'id' = to_jsonb(o) -> 'id',
                        jsonb_each(to_jsonb(n)) AS e(key, value)
                    WHERE to_jsonb(o) -> e.key IS DISTINCT FROM e.value;
                    IF changed_columns = '[]' THEN
                        RETURN NULL;
                    END IF;
                    SELECT coalesce(jsonb_agg(to_jsonb(n) -> 'id'), '[]') INTO ids
                    FROM _mw_new AS n JOIN _mw_old AS o ON to_jsonb(n) -> 'id' = to_jsonb(o) -> 'id'
                    WHERE to_jsonb(n) IS DISTINCT FROM to_jsonb(o);
                    payload := payload || jsonb_build_object('c', changed_columns, 'i', ids);
                END IF;
            ELSIF TG_OP = 'INSERT' THEN
                IF NOT EXISTS (SELECT 1 FROM _mw_new) THEN
                    RETURN NULL;
                END IF;
            ELSIF NOT EXISTS (SELECT 1 FROM _mw_old) THEN
                RETURN NULL;
            END IF;
            message := payload::text;
            IF octet_length(message) > 7999 THEN
                message := ((payload - 'i') || '{"a": 1}')::text;
            END IF;
            IF octet_length(message) > 7999 THEN
                message := ((payload - 'i' - 'c') || '{"a": 1}')::text;
            END IF;
            PERFORM pg_notify('modelwright_changes', message);
            RETURN NULL;
        END
        $feed$
        """

    /// The statement that creates (or replaces) the three triggers on every table of the current schema.
    private static let triggers = """
        DO $install$
        DECLARE
            name text;
        BEGIN
            FOR name IN
                SELECT c.relname FROM pg_class AS c
                WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
                    AND left(c.relname, 4) <> '_mw_' AND left(c.relname, 13) <> '_modelwright_'
            LOOP
                EXECUTE format(
                    'CREATE OR REPLACE TRIGGER _mw_changes_insert AFTER INSERT ON %I '
                    'REFERENCING NEW TABLE AS _mw_new FOR EACH STATEMENT EXECUTE FUNCTION _mw_notify_changes()',
                    name);
                EXECUTE format(
                    'CREATE OR REPLACE TRIGGER _mw_changes_update AFTER UPDATE ON %I '
                    'REFERENCING OLD TABLE AS _mw_old NEW TABLE AS _mw_new '
                    'FOR EACH STATEMENT EXECUTE FUNCTION _mw_notify_changes()', name);
                EXECUTE format(
                    'CREATE OR REPLACE TRIGGER _mw_changes_delete AFTER DELETE ON %I '
                    'REFERENCING OLD TABLE AS _mw_old FOR EACH STATEMENT EXECUTE FUNCTION _mw_notify_changes()',
                    name);
            END LOOP;
        END
        $install$
        """

    /// One notification's payload as the triggers write it.
    private struct Payload: Decodable {
        /// The transaction's ID.
        var x: String
        /// The table.
        var t: String
        /// The kind: `i` insert, `u` update, `d` delete.
        var k: String
        /// The columns an update changed; absent when they did not fit.
        var c: [String]?
        /// The IDs of the rows an update changed; absent when they did not fit.
        var i: [UUID]?
        /// Present when something did not fit.
        var a: Int?
    }

    /// What a run of notifications says, one description per transaction: notifications of one
    /// transaction arrive one after another, and consecutive ones with the same transaction ID are
    /// merged. A payload that is not the triggers' (another program's `NOTIFY` on the channel) is
    /// skipped.
    public static func changes(in notifications: [PostgresNotification]) -> [PostgresCommittedChanges] {
        var result: [PostgresCommittedChanges] = []
        let decoder = JSONDecoder()
        for notification in notifications where notification.channel == channel {
            guard let payload = try? decoder.decode(Payload.self, from: Data(notification.payload.utf8)) else {
                continue
            }
            if result.last?.transaction != payload.x {
                result.append(
                    PostgresCommittedChanges(transaction: payload.x, senderProcessID: notification.senderProcessID))
            }
            let index = result.count - 1
            switch payload.k {
            case "u":
                if let ids = payload.i, let columns = payload.c {
                    result[index].rowsUpdated(ids, columns: columns, in: payload.t)
                } else {
                    result[index].someRowsUpdated(columns: payload.c, in: payload.t)
                }
            default:
                result[index].rowsInsertedOrDeleted(in: payload.t)
            }
        }
        return result
    }
}

/// What one committed transaction changed, table by table, as a PostgreSQL change feed reports
/// it: the fields and rules of the runtime's `StoreChanges`, plus the tables whose updated rows a
/// notification could not name.
public struct PostgresCommittedChanges: Sendable, Equatable {
    /// The transaction's ID (`pg_current_xact_id()`).
    public let transaction: String
    /// The server process of the connection that committed it.
    public let senderProcessID: Int32
    /// Tables that gained or lost rows.
    public private(set) var tablesWithNewOrDeletedRows: Set<String> = []
    /// Columns whose values changed in rows that stayed, by table.
    public private(set) var changedColumns: [String: Set<String>] = [:]
    /// Rows that stayed and whose values changed, by table.
    public private(set) var updatedRows: [String: Set<UUID>] = [:]
    /// Tables where rows changed that the payload could not name (it would not fit in 8000 bytes).
    public private(set) var tablesWithUnknownUpdatedRows: Set<String> = []
    /// Tables where every column counts as changed, because their names did not fit.
    public private(set) var tablesWithUnknownColumns: Set<String> = []

    init(transaction: String, senderProcessID: Int32) {
        self.transaction = transaction
        self.senderProcessID = senderProcessID
    }

    /// Whether the transaction changed nothing.
    public var isEmpty: Bool {
        tablesWithNewOrDeletedRows.isEmpty && changedColumns.isEmpty && tablesWithUnknownUpdatedRows.isEmpty
    }

    /// Whether a request that reads `columns` of `table` could see a different result.
    public func affects(table: String, columns: Set<String>) -> Bool {
        if tablesWithNewOrDeletedRows.contains(table) || tablesWithUnknownColumns.contains(table) { return true }
        return changedColumns[table].map { !$0.isDisjoint(with: columns) } ?? false
    }

    mutating func rowsInsertedOrDeleted(in table: String) {
        tablesWithNewOrDeletedRows.insert(table)
    }

    mutating func rowsUpdated(_ ids: [UUID], columns: [String], in table: String) {
        updatedRows[table, default: []].formUnion(ids)
        changedColumns[table, default: []].formUnion(columns)
    }

    mutating func someRowsUpdated(columns: [String]?, in table: String) {
        tablesWithUnknownUpdatedRows.insert(table)
        if let columns {
            changedColumns[table, default: []].formUnion(columns)
        } else {
            tablesWithUnknownColumns.insert(table)
            changedColumns[table, default: []] = changedColumns[table, default: []]
        }
    }
}

/// A listening connection that reports each committed transaction's changes, as the change feed
/// (``PostgresChangeFeed``) sends them: commits of any process wake it, with no polling.
public final class PostgresChangeObserver: Sendable {
    /// The changes of each committed transaction, in commit order.
    public let changes: AsyncThrowingStream<PostgresCommittedChanges, any Error>
    private let listener: PostgresListener

    /// Connects and listens; a transaction that commits after this returns is reported.
    public init(_ configuration: PostgresConfiguration) async throws {
        let (stream, continuation) = AsyncThrowingStream<PostgresCommittedChanges, any Error>.makeStream()
        listener = try await PostgresListener(
            configuration, channels: [PostgresChangeFeed.channel],
            batches: { batch in
                switch batch {
                case .success(let notifications) where notifications.isEmpty:
                    continuation.finish()  // the listener stopped
                case .success(let notifications):
                    for changes in PostgresChangeFeed.changes(in: notifications) { continuation.yield(changes) }
                case .failure(let error):
                    continuation.finish(throwing: error)
                }
            })
        changes = stream
        let listener = self.listener
        continuation.onTermination = { _ in listener.stop() }
    }

    /// Stops listening; the sequence finishes.
    public func stop() {
        listener.stop()
    }
}
