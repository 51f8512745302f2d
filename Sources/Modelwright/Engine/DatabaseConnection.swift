import Foundation

/// One connection to a database, as the runtime uses it: statements prepared (and cached) by their
/// text, transactions begun and ended only by the connection, and the dialect its SQL is spelled in.
///
/// ``SQLiteConnection`` is the only conformance today. The contract is written so a PostgreSQL
/// connection over libpq can meet it too (see `Contributing.md`, "Adding a storage engine"):
/// - statements take the runtime's ``SQLDialect/parameter`` markers, bound by position; a libpq
///   connection numbers them (`$1`, `$2` …) when it prepares, and binds text or binary values;
/// - ``begin(_:)`` takes a ``TransactionKind``; PostgreSQL's DDL is transactional, so a
///   migration stage's steps commit or roll back with it on both engines;
/// - a transaction the engine aborted is over: every later statement throws
///   ``StoreError/transactionAborted(cause:)`` until ``rollback()`` (PostgreSQL's "current
///   transaction is aborted" state is the same rule);
/// - ``changes`` is what the last write statement reported (libpq's `PQcmdTuples`); nothing relies
///   on a `rowid` or a last-insert row ID, since every row is keyed by its `"id"` UUID;
/// - commits of other processes are noticed through ``SQLDialect/dataVersion`` on SQLite; a
///   PostgreSQL connection gets them from `LISTEN`/`NOTIFY` instead (not part of this contract yet).
///
/// It is `package` so that `ModelwrightPostgres` can conform its connection; nothing outside this
/// package sees it.
package protocol DatabaseConnection: AnyObject {
    /// The prepared statements this connection makes.
    associatedtype Statement: DatabaseStatement
    /// How this connection's engine spells SQL.
    associatedtype Dialect: SQLDialect

    /// How the statements this connection runs are spelled.
    var dialect: Dialect { get }

    /// Runs one statement that takes no parameters, stepping through any rows it returns.
    func execute(_ sql: String) throws

    /// Runs statements one by one, each prepared alone.
    func execute(_ statements: [String]) throws

    /// A prepared statement for `sql`, from the cache when it was prepared before; reset and unbound.
    func statement(_ sql: String) throws -> Statement

    /// A statement for `sql` prepared now and not cached, for statements a connection runs once.
    func prepare(_ sql: String) throws -> Statement

    /// Begins a transaction, which only ``commit()`` or ``rollback()`` ends.
    func begin(_ kind: TransactionKind) throws

    /// Begins a transaction whose first statement is `query` (a statement without parameters: the
    /// store's schema check, which opens every transaction) and hands the text of its first row's
    /// first column (`nil` for no row) to `check`, which throws to refuse the transaction. No row of
    /// a later statement reaches the caller before `check` accepted, and `commit()` runs it too.
    ///
    /// The default begins, runs `query` and calls `check` at once. An engine whose every statement
    /// is a round trip to a server may hold a ``TransactionKind/deferred`` transaction's `BEGIN`
    /// and `query` back and send them with its first statement, or its `COMMIT`: a read then waits
    /// for one round trip where it waited for three. `check` may run statements on the connection.
    func begin(_ kind: TransactionKind, checking query: String, with check: @escaping (String?) throws -> Void) throws

    /// Commits the open transaction; throws ``StoreError/transactionAborted(cause:)`` when the
    /// engine rolled it back.
    func commit() throws

    /// Rolls back the open transaction, if the engine has not already, and forgets an abort.
    func rollback()

    /// Runs `body`, whose statements return no rows (a batch of inserts), letting the engine send
    /// them without waiting for each answer: a statement's failure is then thrown by a later
    /// statement of `body` or when `body` returns, so the caller runs the batch atomically and
    /// reports a failure for the batch as a whole. The default runs `body` as it is.
    func batching<Result>(_ body: () throws -> Result) throws -> Result

    /// Whether a transaction is open.
    var isInTransaction: Bool { get }

    /// Whether the link to the database is gone (the server ended the session or restarted, the
    /// network failed): every later statement would fail, so the store opens a fresh connection in
    /// its place (``StoreEngine/openReader()``). Never true for a file or in-memory database.
    var isLost: Bool { get }

    /// How many rows the last `INSERT`, `UPDATE` or `DELETE` changed.
    var changes: Int { get }

    /// Asks the engine to stop waiting on the database (a lock another session holds, a long
    /// statement) once `isCancelled` says so, the statement then failing and its transaction
    /// rolling back; `nil` stops asking. The store sets it for the task a transaction runs for,
    /// whose own cancellation cannot reach the queue the transaction runs on.
    func watchCancellation(_ isCancelled: (@Sendable () -> Bool)?)

    /// Ends the connection; later calls fail.
    func close()

    // MARK: - What the store asks of every engine

    /// SQL the runtime rendered for a request's shape, kept for this connection's life so each shape
    /// is rendered once (the statement cache then finds the prepared statement by this text).
    var renderedSQL: [RequestShape: String] { get set }

    /// The prepared statement this connection keeps for requests of `shape`, ready to bind, or `nil`
    /// when it keeps none or that one is stepping (a fetch nested in another's loop). The caller
    /// resets it after use, also when a step throws (its bindings are cleared with it).
    func keptStatement(for shape: RequestShape) -> Statement?

    /// Prepares `sql`, rendered for `shape`, and keeps it for the next request of that shape (a fresh,
    /// unkept statement while the kept one is stepping).
    func keepStatement(_ sql: String, for shape: RequestShape) throws -> Statement

    /// Forgets the SQL and statements kept by shape, because the schema they were rendered for changed.
    func forgetShapes()

    /// Throws ``StoreError/transactionAborted(cause:)`` when the engine rolled back the open
    /// transaction on its own (a full disk on SQLite, any failed statement on PostgreSQL), so a
    /// write whose closure caught that error does not report a commit.
    func checkTransaction() throws

    /// Throws when the database this connection writes is no longer the one the store opened (on
    /// SQLite, a store file moved or replaced while open); an engine without files does nothing.
    func checkInPlace() throws

    /// Throws ``StoreError/unexpectedSchema(path:differences:)`` when the database's schema
    /// changed since it was last verified (another program added a trigger); run inside a
    /// transaction. `verified` is the schema version last verified; returns the version now.
    func verifySchema(_ layout: SchemaLayout, since verified: Int64) throws -> Int64

    /// How the database's schema differs from the one `layout` creates, each difference a sentence;
    /// empty when they match. A migration stage that ran the app's own SQL is held to it.
    func schemaDifferences(from layout: SchemaLayout) throws -> [String]

    /// The constraint an error of this engine reports as broken, in the engine's words; `nil`
    /// for any other error. The store turns it into a ``StoreError`` that names the entity.
    func constraintFailure(in error: any Error) -> ConstraintFailure?

    // MARK: - Statements written by hand

    /// Prepares a statement written by hand (``SQLQuery``), its text read by the dialect's rules
    /// into `outline`, with `parameters` interpolated values to bind in the order of their markers.
    /// Throws ``SQLQueryError/parameterMarker(sql:)`` when the text holds parameters other than
    /// those values' markers; when `readOnly`, a statement that writes throws
    /// ``SQLQueryError/writeInReadTransaction(sql:)``, before it runs where the engine can tell
    /// (SQLite) or when it runs (PostgreSQL, whose read then goes on as before the statement).
    func handWrittenStatement(_ outline: SQLOutline, parameters: Int, readOnly: Bool) throws -> Statement

    /// Steps through a hand-written statement and returns how many rows it changed itself: 0 for
    /// one that is not an `INSERT`, `UPDATE` or `DELETE`, whatever ran before it.
    func runHandWritten(_ statement: Statement) throws -> Int
}

/// A constraint a statement broke, as an engine reports it: the store names the entity and its
/// attributes from it (SQLite's extended result codes, PostgreSQL's SQLSTATE `23505`, `23502`,
/// `23503`).
package enum ConstraintFailure: Sendable, Equatable {
    /// A uniqueness or primary-key constraint, with the columns the engine named (each may be
    /// qualified by its table, `User.email`).
    case unique(columns: [String])
    /// A NOT NULL constraint, with the engine's message.
    case notNull(message: String)
    /// A foreign key, where the engine leaves finding the row to the dialect's
    /// ``SQLDialect/foreignKeyViolations(in:)`` (SQLite).
    case foreignKey
    /// A foreign key the engine's error names: the table of the row whose reference dangles and
    /// the reference's column (PostgreSQL, whose failed `COMMIT` leaves no rows to query).
    case danglingReference(table: String, column: String)
}

extension DatabaseConnection {
    /// False: a connection to a file or to memory has no link to lose.
    package var isLost: Bool { false }

    /// Nothing to stop: a file or in-memory database answers without waiting on a server.
    package func watchCancellation(_ isCancelled: (@Sendable () -> Bool)?) {}

    /// No statements kept by shape: an engine without that cache finds its statement by the SQL text
    /// (``renderedSQL``, then ``statement(_:)``).
    package func keptStatement(for shape: RequestShape) -> Statement? { nil }

    /// The statement cached by its text, see ``keptStatement(for:)``.
    package func keepStatement(_ sql: String, for shape: RequestShape) throws -> Statement { try statement(sql) }

    /// Forgets the rendered SQL.
    package func forgetShapes() { renderedSQL.removeAll() }

    /// Begins, reads `query` with a cached statement and checks its value (see the requirement).
    package func begin(
        _ kind: TransactionKind, checking query: String, with check: @escaping (String?) throws -> Void
    ) throws {
        try begin(kind)
        let statement = try statement(query)
        defer { statement.reset() }
        try check(try statement.step() ? statement.string(0) : nil)
    }

    /// Runs `body`, each statement waiting for its answer (see the requirement).
    package func batching<Result>(_ body: () throws -> Result) throws -> Result { try body() }

    /// Runs `body` in a transaction that commits when it returns and rolls back when it throws.
    package func inTransaction<Result>(_ kind: TransactionKind, _ body: () throws -> Result) throws -> Result {
        try begin(kind)
        do {
            let result = try body()
            try commit()
            return result
        } catch {
            rollback()
            throw error
        }
    }
}

/// A prepared statement: parameters bound by position from 1, rows stepped through, columns read
/// by position from 0.
package protocol DatabaseStatement: AnyObject {
    /// Resets the statement and clears its bindings so it can run again.
    func reset()
    /// Advances to the next row; `false` when there are no more.
    func step() throws -> Bool
    /// Runs a statement that returns no rows.
    func run() throws

    /// Binds NULL.
    func bindNull(_ index: Int32)
    /// Binds an integer.
    func bind(_ value: Int64, _ index: Int32)
    /// Binds a floating-point number.
    func bind(_ value: Double, _ index: Int32)
    /// Binds text.
    func bind(_ value: String, _ index: Int32)
    /// Binds bytes.
    func bind(_ value: Data, _ index: Int32)
    /// Binds a UUID in the engine's form for ``ColumnStorage/uuid``.
    func bind(_ value: UUID, _ index: Int32)
    /// Binds any value the runtime stores.
    func bind(_ value: SQLValue, _ index: Int32)

    /// Whether the column of the current row is NULL.
    func isNull(_ index: Int32) -> Bool
    /// The class of the column's value in the current row, without converting it, which the row
    /// decoder checks before a typed read (an engine with typed columns answers from the column's
    /// type: PostgreSQL's `boolean`, `smallint` … `bigint` are integers, `double precision`,
    /// `real` and `timestamptz` reals, `text`, `numeric` and `jsonb` text, `bytea` and `uuid` blobs).
    func storageClass(_ index: Int32) -> StorageClass
    /// The column as an integer.
    func int64(_ index: Int32) -> Int64
    /// The column as a floating-point number.
    func double(_ index: Int32) -> Double
    /// The column as text.
    func string(_ index: Int32) -> String
    /// The column as bytes.
    func data(_ index: Int32) -> Data
    /// The column as a UUID, when it holds one.
    func uuid(_ index: Int32) -> UUID?
    /// The column's text, `nil` when its value is of another class (NULL included): the row
    /// decoder's typed read and its class check asked as one question.
    func text(_ index: Int32) -> String?
    /// The column's integer, `nil` when its value is of another class (NULL included).
    func integer(_ index: Int32) -> Int64?
    /// The column's number (a real, or an integer read as a real), `nil` for any other class.
    func number(_ index: Int32) -> Double?
    /// The column as the runtime's value.
    func value(_ index: Int32) -> SQLValue
    /// The names of the columns the statement returns, in order, which a migration step's query
    /// keys its rows by; read after a ``step()`` that returned a row (an engine that runs the
    /// statement at its first step, as PostgreSQL's does, knows them only then).
    var columnNames: [String] { get }
}

extension DatabaseStatement {
    /// The column's text, when its class is text.
    package func text(_ index: Int32) -> String? {
        storageClass(index) == .text ? string(index) : nil
    }

    /// The column's integer, when its class is integer.
    package func integer(_ index: Int32) -> Int64? {
        storageClass(index) == .integer ? int64(index) : nil
    }

    /// The column's number, when its class is real or integer.
    package func number(_ index: Int32) -> Double? {
        switch storageClass(index) {
        case .real, .integer: double(index)
        default: nil
        }
    }
}

/// The class of a value in a result row, as the runtime's coders check it: a value of another class
/// is refused, never converted by the engine.
package enum StorageClass: Sendable {
    case null, integer, real, text, blob
}

extension DatabaseConnection {
    /// The tables and columns `layout` creates that the database lacks, and those it has that
    /// `layout` does not create, each a sentence; read through the dialect's catalog queries
    /// (``SQLDialect/tableNames``, ``SQLDialect/columnNames``), so any engine can answer
    /// ``schemaDifferences(from:)`` with it. The runtime's own tables (metadata, history) are not
    /// compared. An engine whose catalog reads types and indexes too compares those on its own.
    package func tableAndColumnDifferences(from layout: SchemaLayout) throws -> [String] {
        let names = try statement(dialect.tableNames)
        defer { names.reset() }
        var found: Set<String> = []
        while try names.step() { found.insert(names.string(0)) }
        let own = [SchemaSQL.metadataTable]
        found.subtract(own)
        found = found.filter { !$0.hasPrefix(HistorySQL.tablePrefix) }
        var result: [String] = []
        let tables = SchemaSQL.tables(for: layout, in: dialect)
        for table in tables.sorted(by: { $0.name < $1.name }) {
            guard found.remove(table.name) != nil else {
                result.append("the table \"\(table.name)\" is missing")
                continue
            }
            let list = try statement(dialect.columnNames)
            defer { list.reset() }
            list.bind(table.name, 1)
            var columns: Set<String> = []
            while try list.step() { columns.insert(list.string(0)) }
            let wanted = Set(table.columns.keys)
            for column in wanted.subtracting(columns).sorted() {
                result.append("the column \"\(column)\" of \"\(table.name)\" is missing")
            }
            for column in columns.subtracting(wanted).sorted() {
                result.append("the table \"\(table.name)\" has an unexpected column \"\(column)\"")
            }
        }
        for table in found.sorted() {
            result.append("the database has an unexpected table \"\(table)\"")
        }
        return result
    }
}
