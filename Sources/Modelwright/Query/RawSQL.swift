import Foundation

/// An SQL statement written by hand, for what requests cannot express: every interpolated value
/// becomes a bound parameter, never SQL text, so no value can change what the statement does.
///
/// ```swift
/// let title = "Lisbon'; DROP TABLE \"Trip\"; --"
/// let trips = try await store.performQuery { context in
///     try context.fetch(#"SELECT * FROM "Trip" WHERE "title" = \#(title) OR "travellers" > \#(4)"#, as: Trip.self)
/// }
/// ```
///
/// Interpolations:
/// - `\(value)`: any ``ColumnValue`` (strings, numbers, dates, IDs, optionals as NULL), bound;
/// - `\(list: values)`: `(?, ?, …)` for `IN`, each value bound; an empty list is an empty
///   subquery, so nothing is `IN` it and everything is `NOT IN` it, as with a typed `notIn`;
/// - `\(identifier: name)`: a table or column name, quoted by the engine so any name is only a name.
///
/// There is no interpolation that splices text: only the literal parts of the string are SQL. The
/// same statement runs on SQLite and PostgreSQL, each engine reading the text by its own rules: a
/// parameter marker written in the literal text (SQLite's `?`, `?1`, `:name`, `@name`, `$name`;
/// PostgreSQL's `?`, `$1`) is refused. A statement may only read or write rows: it starts with
/// `SELECT`, `WITH`, `VALUES` or a parenthesis, or in a write with `INSERT`, `UPDATE`, `DELETE`
/// (and SQLite's `REPLACE`); every other statement (`PRAGMA`, `EXPLAIN`, `CREATE`, `SET`,
/// `DECLARE`, transaction control …) is refused, since it could change the connection, the session
/// or the schema and outlive the transaction it runs in. On SQLite the authorizer refuses the same
/// whatever the text; on PostgreSQL the functions with lasting effects that the store knows of are
/// refused by name (Runtime.md lists what remains possible).
public struct SQLQuery: Sendable, Hashable, ExpressibleByStringInterpolation {
    /// The statement's pieces, in order.
    let pieces: [Piece]
    /// The first value that could not be stored (a NaN), thrown when the statement is run.
    let failure: String?

    /// A piece of the statement: SQL text written in the literal, a bound value, or a name.
    enum Piece: Sendable, Hashable {
        case sql(String)
        case value(SQLValue)
        case identifier(String)
        /// An empty `IN` list: a subquery with no rows, its column of the values' storage where
        /// known, since PostgreSQL compares an untyped `NULL` as text.
        case emptyList(ColumnStorage?)
    }

    /// A statement with no interpolated values.
    public init(stringLiteral value: String) {
        pieces = [.sql(value)]
        failure = nil
    }

    /// A statement from an interpolated string.
    public init(stringInterpolation: StringInterpolation) {
        pieces = stringInterpolation.pieces
        failure = stringInterpolation.failure
    }

    /// Collects the literal SQL and the interpolated values of an ``SQLQuery``.
    public struct StringInterpolation: StringInterpolationProtocol {
        var pieces: [Piece] = []
        var failure: String?

        /// Starts an empty statement.
        public init(literalCapacity: Int, interpolationCount: Int) {}

        /// SQL text, as written in the literal.
        public mutating func appendLiteral(_ literal: String) {
            pieces.append(.sql(literal))
        }

        /// A value, bound as a parameter.
        public mutating func appendInterpolation(_ value: some ColumnValue) {
            pieces.append(.value(bound(value)))
        }

        /// A parenthesised list of values for `IN`, each bound as a parameter.
        public mutating func appendInterpolation<Value: ColumnValue>(list values: some Sequence<Value>) {
            let bound = values.map { self.bound($0) }
            guard !bound.isEmpty else {
                pieces.append(.emptyList(SQLQuery.storage(of: Value.self)))
                return
            }
            pieces.append(.sql("("))
            for (index, value) in bound.enumerated() {
                if index > 0 { pieces.append(.sql(", ")) }
                pieces.append(.value(value))
            }
            pieces.append(.sql(")"))
        }

        /// A table or column name, quoted.
        public mutating func appendInterpolation(identifier name: String) {
            pieces.append(.identifier(name))
        }

        private mutating func bound(_ value: some ColumnValue) -> SQLValue {
            do {
                return try value.sqlValue
            } catch {
                failure = failure ?? "\(error)"
                return .null
            }
        }
    }

    /// The statement's text in `dialect`, and its values in the order of their markers (each the
    /// dialect's plain marker, or its numbered one where the engine numbers them).
    func rendered(in dialect: any SQLDialect) throws -> (String, [SQLValue]) {
        if let failure { throw StoreError.unsupportedQuery("a value of an SQL statement cannot be stored: \(failure)") }
        let numbered = dialect.handWritten.numberedMarkers
        var text = ""
        var arguments: [SQLValue] = []
        for piece in pieces {
            switch piece {
            case .sql(let sql): text += sql
            case .value(let value):
                arguments.append(value)
                text += numbered ? dialect.parameter(arguments.count) : dialect.parameter
            case .identifier(let name):
                // Both engines end a statement's text at NUL, so no quoting could keep such a name.
                guard !name.utf8.contains(0) else {
                    throw StoreError.unsupportedQuery(
                        "the name \(name.debugDescription) of an SQL statement holds NUL (U+0000), which no table "
                            + "or column name can: remove it")
                }
                if let limit = dialect.handWritten.nameByteLimit, name.utf8.count > limit {
                    throw SQLQueryError.nameTooLong(name: name, limit: limit)
                }
                text += dialect.identifier(name)
            case .emptyList(let storage):
                text += "(SELECT \(storage.map { dialect.cast("NULL", to: $0) } ?? "NULL") WHERE 1 = 0)"
            }
        }
        if let limit = dialect.handWritten.parameterLimit, arguments.count > limit {
            throw SQLQueryError.tooManyValues(count: arguments.count, limit: limit)
        }
        return (text, arguments)
    }

    /// How a value of `type` is stored, for the values a runtime type encodes to; `nil` for others.
    fileprivate static func storage(of type: Any.Type) -> ColumnStorage? {
        if let optional = type as? any OptionalColumn.Type { return storage(of: optional.wrappedType) }
        if let raw = type as? any RawRepresentable.Type { return storage(of: rawValueType(of: raw)) }
        return switch type {
        case is Bool.Type: .boolean
        case is Int16.Type: .integer16
        case is Int32.Type: .integer32
        case is Int.Type, is Int64.Type: .integer64
        case is Double.Type: .double
        case is Float.Type: .float
        case is Date.Type: .timestamp
        case is Decimal.Type: .decimal
        case is String.Type, is URL.Type: .text
        case is Data.Type: .bytes
        case is UUID.Type, is any StoredAsUUID.Type: .uuid
        default: nil
        }
    }

    private static func rawValueType<Value: RawRepresentable>(of type: Value.Type) -> Any.Type {
        Value.RawValue.self
    }
}

/// Why an SQL statement written by hand was refused.
public enum SQLQueryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The statement writes, in a `performQuery` transaction, which only reads.
    case writeInReadTransaction(sql: String)
    /// The statement's result lacks a column that the record type needs.
    case missingColumn(entity: String, column: String, found: [String])
    /// The statement's result has more than one column with a name the record type needs.
    case ambiguousColumn(entity: String, column: String)
    /// The statement's result has another number of columns than the values asked for.
    case columnCount(expected: Int, found: Int, sql: String)
    /// The literal text of the statement holds a parameter marker of its own.
    case parameterMarker(sql: String)
    /// The statement is not one that only reads or writes rows: it starts with another word than
    /// `SELECT`, `WITH`, `VALUES`, `INSERT`, `UPDATE`, `DELETE` (`PRAGMA`, `EXPLAIN`, `CREATE`,
    /// a transaction statement…), or does more than read or write rows (`SELECT … INTO`, a function
    /// whose effect outlives the transaction). `keyword` is the word refused.
    case connectionStatement(keyword: String, sql: String)
    /// An interpolated name is longer than the engine keeps (PostgreSQL cuts names at 63 bytes,
    /// so two long names would be one).
    case nameTooLong(name: String, limit: Int)
    /// The statement has more interpolated values than the engine takes parameters.
    case tooManyValues(count: Int, limit: Int)

    /// What went wrong, and what to do instead.
    public var description: String {
        switch self {
        case .writeInReadTransaction(let sql):
            "the statement writes, but performQuery only reads: run it with execute(_:) in performAndSave (\(sql))"
        case .missingColumn(let entity, let column, let found):
            "the statement's result has no column '\(column)', which \(entity) needs "
                + "(it has \(found.map { "'\($0)'" }.joined(separator: ", "))): select it, or select * from its table"
        case .ambiguousColumn(let entity, let column):
            "the statement's result has more than one column '\(column)', which \(entity) needs: "
                + "select it once, or rename the others with AS"
        case .columnCount(let expected, let found, let sql):
            "the statement returns \(found) column\(found == 1 ? "" : "s") but \(expected) "
                + "\(expected == 1 ? "was" : "were") asked for: select as many columns as types (\(sql))"
        case .parameterMarker(let sql):
            "the statement's text holds a parameter marker of its own (a `?`, a `$1`, a `:name`): "
                + "interpolate the value instead, as \\(value) (\(sql))"
        case .connectionStatement(let keyword, let sql):
            "\(keyword) is refused: SQL written by hand may only read rows (SELECT, WITH, VALUES) or, in "
                + "performAndSave, write them (INSERT, UPDATE, DELETE); a statement that changes the connection, "
                + "the session or the schema would outlive the transaction: configure the store when opening it, "
                + "or change the schema with a migration (\(sql))"
        case .nameTooLong(let name, let limit):
            "the name \(name.debugDescription) has \(name.utf8.count) bytes, but the engine keeps only \(limit) "
                + "and would silently cut it to another name: use a shorter name"
        case .tooManyValues(let count, let limit):
            "the statement has \(count) interpolated values, but the engine takes at most \(limit) parameters: "
                + "split the list, or put the values in a table and join it"
        }
    }
}

extension ReadContext {
    /// The records of `Target` an SQL statement returns: its result must have a column named
    /// after the ID and each column of the entity (as `SELECT *` from its table has), in any order.
    public func fetch<Target: Record>(_ query: SQLQuery, as type: Target.Type = Target.self) throws -> [Target] {
        let entity = try layout.entity(Target.entityName)
        let (sql, arguments) = try query.rendered(in: connection.dialect)
        let found = try checkedStatement(sql, parameters: arguments.count, on: connection).columnNames
        let needed = ["id"] + entity.columns.map(\.name)
        if let missing = needed.first(where: { !found.contains($0) }) {
            throw SQLQueryError.missingColumn(entity: entity.name, column: missing, found: found)
        }
        if let duplicate = needed.first(where: { name in found.filter { $0 == name }.count > 1 }) {
            throw SQLQueryError.ambiguousColumn(entity: entity.name, column: duplicate)
        }
        // Wrapped without what follows the statement's last token (a `-- comment` or `;`).
        let body = SQLOutline(sql, rules: connection.dialect.handWritten).body
        let statement = try run("SELECT \(needed.map(quoted).joined(separator: ", ")) FROM (\(body)) q", arguments)
        defer { statement.reset() }
        var records: [Target] = []
        while try statement.step() {
            guard let uuid = statement.uuid(0) else {
                throw StoreError.invalidValue(entity: entity.name, message: "a row has no valid ID")
            }
            var row = RowDecoder(statement: statement, firstIndex: 1)
            do {
                records.append(try Target(id: RecordID(uuid), row: &row))
            } catch let error as ColumnValueError {
                throw StoreError.invalidValue(entity: entity.name, message: error.message)
            }
        }
        return records
    }

    /// The rows of an SQL statement as plain values, one per result column, in order.
    ///
    /// ```swift
    /// let perRating = try context.fetch(#"SELECT "rating", COUNT(*) FROM "User" GROUP BY 1"#, as: Int16.self, Int.self)
    /// ```
    public func fetch<each Value: ColumnValue>(
        _ query: SQLQuery, as types: repeat (each Value).Type
    ) throws -> [(repeat each Value)] {
        let (sql, arguments) = try query.rendered(in: connection.dialect)
        let statement = try run(sql, arguments)
        defer { statement.reset() }
        var expected = 0
        for _ in repeat each types { expected += 1 }
        // After the first step: an engine that runs the statement then (PostgreSQL) knows its columns then.
        var hasRow = try statement.step()
        let found = statement.columnNames.count
        guard found == expected else { throw SQLQueryError.columnCount(expected: expected, found: found, sql: sql) }
        var rows: [(repeat each Value)] = []
        while hasRow {
            var index: Int32 = 0
            func next<Decoded: ColumnValue>(_ type: Decoded.Type) throws -> Decoded {
                defer { index += 1 }
                do {
                    return try Decoded(sqlValue: statement.value(index))
                } catch let error as ColumnValueError {
                    throw StoreError.invalidValue(entity: "SQL", message: "column \(index + 1): \(error.message)")
                }
            }
            rows.append((repeat try next(each types)))
            hasRow = try statement.step()
        }
        return rows
    }

    /// Prepares `sql`, refusing a statement other than a read or write of rows, one with parameter markers
    /// other than the `parameters` interpolated values', and one that writes unless this is a
    /// write transaction (each engine by its own rules, ``SQLDialect/handWritten``).
    private func checkedStatement<Connection: DatabaseConnection>(
        _ sql: String, parameters: Int, on connection: Connection
    ) throws -> Connection.Statement {
        let rules = connection.dialect.handWritten
        let outline = SQLOutline(sql, rules: rules)
        if let refused = outline.refusedWord(rules) {
            throw SQLQueryError.connectionStatement(keyword: refused, sql: sql)
        }
        return try connection.handWrittenStatement(outline, parameters: parameters, readOnly: !(self is WriteContext))
    }

    /// A checked statement for `sql` with `arguments` bound, ready to step.
    func run(_ sql: String, _ arguments: [SQLValue]) throws -> any DatabaseStatement {
        try run(sql, arguments, on: connection)
    }

    /// A checked statement of `connection` for `sql` with `arguments` bound, ready to step.
    fileprivate func run<Connection: DatabaseConnection>(
        _ sql: String, _ arguments: [SQLValue], on connection: Connection
    ) throws -> Connection.Statement {
        let statement = try checkedStatement(sql, parameters: arguments.count, on: connection)
        for (index, argument) in arguments.enumerated() {
            statement.bind(argument, Int32(index + 1))
        }
        return statement
    }
}

extension WriteContext {
    /// Runs an SQL statement that writes, and returns how many rows it changed.
    ///
    /// ```swift
    /// try await store.performAndSave { context in
    ///     try context.execute(#"UPDATE "Trip" SET "travellers" = "travellers" + 1 WHERE "title" = \#("Lisbon")"#)
    /// }
    /// ```
    ///
    /// The store cannot tell which records such a statement changed: every observer re-runs after
    /// the transaction commits, and persistent history does not record its changes. Delete rules and
    /// uniqueness checks that the store enforces itself (rather than SQLite) do not run.
    @discardableResult
    public func execute(_ query: SQLQuery) throws -> Int {
        let (sql, arguments) = try query.rendered(in: connection.dialect)
        // In a savepoint, as every operation: a statement that fails leaves the transaction as it
        // was on every engine (PostgreSQL would otherwise abort the whole transaction).
        let changed = try atomically { try execute(sql, arguments, on: connection) }
        for entity in layout.entities.values { changes.rowsInsertedOrDeleted(in: entity.table) }
        return changed
    }

    /// Runs `sql` on `connection` and returns the rows it changed itself.
    private func execute<Connection: DatabaseConnection>(
        _ sql: String, _ arguments: [SQLValue], on connection: Connection
    ) throws -> Int {
        let statement = try run(sql, arguments, on: connection)
        defer { statement.reset() }
        return try connection.runHandWritten(statement)
    }
}

/// An optional type, whose wrapped type an empty list's storage follows.
private protocol OptionalColumn {
    static var wrappedType: Any.Type { get }
}

extension Optional: OptionalColumn {
    fileprivate static var wrappedType: Any.Type { Wrapped.self }
}

/// A type stored as a UUID: record IDs.
private protocol StoredAsUUID {}

extension RecordID: StoredAsUUID {}
