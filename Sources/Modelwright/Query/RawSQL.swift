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
/// - `\(list: values)`: `(?, ?, …)` for `IN`, each value bound; an empty list is `(NULL)`, which
///   nothing is `IN`;
/// - `\(identifier: name)`: a table or column name, quoted by the engine so any name is only a name.
///
/// There is no interpolation that splices text: only the literal parts of the string are SQL.
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
                pieces.append(.sql("(NULL)"))
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

    /// The statement's text in `dialect`, and its values in the order of their markers.
    func rendered(in dialect: any SQLDialect) throws -> (String, [SQLValue]) {
        if let failure { throw StoreError.unsupportedQuery("a value of an SQL statement cannot be stored: \(failure)") }
        var text = ""
        var arguments: [SQLValue] = []
        for piece in pieces {
            switch piece {
            case .sql(let sql): text += sql
            case .value(let value):
                text += dialect.parameter
                arguments.append(value)
            case .identifier(let name): text += dialect.identifier(name)
            }
        }
        return (text, arguments)
    }
}

/// Why an SQL statement written by hand was refused.
public enum SQLQueryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The statement writes, in a `performQuery` transaction, which only reads.
    case writeInReadTransaction(sql: String)
    /// The statement's result lacks a column that the record type needs.
    case missingColumn(entity: String, column: String, found: [String])

    /// What went wrong, and what to do instead.
    public var description: String {
        switch self {
        case .writeInReadTransaction(let sql):
            "the statement writes, but performQuery only reads: run it with execute(_:) in performAndSave (\(sql))"
        case .missingColumn(let entity, let column, let found):
            "the statement's result has no column '\(column)', which \(entity) needs "
                + "(it has \(found.map { "'\($0)'" }.joined(separator: ", "))): select it, or select * from its table"
        }
    }
}

extension ReadContext {
    /// The records of `Target` an SQL statement returns: its result must have a column named
    /// after the ID and each column of the entity (as `SELECT *` from its table has), in any order.
    public func fetch<Target: Record>(_ query: SQLQuery, as type: Target.Type = Target.self) throws -> [Target] {
        let entity = try layout.entity(Target.entityName)
        let (sql, arguments) = try query.rendered(in: connection.dialect)
        let found = try checkedStatement(sql).columnNames
        let needed = ["id"] + entity.columns.map(\.name)
        if let missing = needed.first(where: { !found.contains($0) }) {
            throw SQLQueryError.missingColumn(entity: entity.name, column: missing, found: found)
        }
        let statement = try run("SELECT \(needed.map(quoted).joined(separator: ", ")) FROM (\(sql)) q", arguments)
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
        var rows: [(repeat each Value)] = []
        while try statement.step() {
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
        }
        return rows
    }

    /// Prepares `sql`, refusing a statement that writes unless this is a write transaction.
    private func checkedStatement(_ sql: String) throws -> any DatabaseStatement {
        let statement = try connection.prepare(sql)
        if !(self is WriteContext), let sqlite = statement as? SQLiteStatement, !sqlite.isReadOnly {
            throw SQLQueryError.writeInReadTransaction(sql: sql)
        }
        return statement
    }

    /// A checked statement for `sql` with `arguments` bound, ready to step.
    func run(_ sql: String, _ arguments: [SQLValue]) throws -> any DatabaseStatement {
        let statement = try checkedStatement(sql)
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
        let statement = try run(sql, arguments)
        defer { statement.reset() }
        while try statement.step() {}
        for entity in layout.entities.values { changes.rowsInsertedOrDeleted(in: entity.table) }
        return connection.changes
    }
}
