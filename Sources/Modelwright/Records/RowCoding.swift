import Foundation

/// Writes a record's columns into a prepared statement, in column order.
///
/// Generated code calls ``encode(_:)-(Value)`` once per stored property; the encoder binds
/// each value straight into the statement. The common types have direct overloads that skip
/// the ``SQLValue`` step; they are `@inlinable`, so that a record's `encode(to:)` and the batch
/// insert's loop that calls it (``RowInserter/insert(_:)``) are specialised in the app's module. On
/// SQLite they bind directly (``SQLiteParameters``); another engine's statement is bound through the
/// ``DatabaseStatement`` seam, one call per column.
///
/// Every entry point throws, including those that cannot fail today, so generated code writes
/// `try` on every call and does not need to know which types can be refused (a NaN date, a
/// value that does not encode): that rule belongs to the runtime alone.
@_spi(Generated) public struct RowEncoder {
    private let statement: any DatabaseStatement
    /// The statement's parameters when it is SQLite's, bound without a call through the seam.
    @usableFromInline let sqlite: SQLiteParameters?
    @usableFromInline var index: Int32
    @usableFromInline let firstIndex: Int32
    /// The columns in encoding order, to name the one whose value cannot be stored.
    private let columns: [ColumnLayout]

    init(statement: any DatabaseStatement, firstIndex: Int32, columns: [ColumnLayout]) {
        self.statement = statement
        sqlite = SQLiteParameters.of(statement)
        self.firstIndex = firstIndex
        self.columns = columns
        index = firstIndex
    }

    /// The number of parameters bound so far, counting from the first given.
    var nextIndex: Int32 { index }

    /// Binds the next column.
    public mutating func encode<Value: ColumnValue>(_ value: Value) throws {
        do {
            statement.bind(try value.sqlValue, index)
        } catch let error as ColumnValueError {
            throw named(error)
        }
        index += 1
    }

    /// The error with the attribute being encoded named in front.
    @usableFromInline func named(_ error: ColumnValueError) -> ColumnValueError {
        let position = Int(index - firstIndex)
        guard columns.indices.contains(position) else { return error }
        return ColumnValueError(message: "'\(columns[position].property)': \(error.message)")
    }

    /// The error for a NaN date in the current column.
    @usableFromInline func notANumber() -> ColumnValueError {
        named(Date.notANumber)
    }

    /// Binds the next column.
    @inlinable public mutating func encode(_ value: String) throws {
        bind(value)
        index += 1
    }

    /// Binds the next column.
    @inlinable public mutating func encode(_ value: Int64) throws {
        bind(value)
        index += 1
    }

    /// Binds the next column.
    @inlinable public mutating func encode(_ value: Int) throws {
        bind(Int64(value))
        index += 1
    }

    /// Binds the next column; a NaN date is refused, since SQLite would store it as NULL.
    @inlinable public mutating func encode(_ value: Date) throws {
        guard !value.timeIntervalSinceReferenceDate.isNaN else { throw notANumber() }
        bind(value.timeIntervalSinceReferenceDate)
        index += 1
    }

    /// Binds the next column.
    @inlinable public mutating func encode(_ value: UUID) throws {
        bind(value)
        index += 1
    }

    /// Binds the next column.
    @inlinable public mutating func encode<Target>(_ value: RecordID<Target>) throws {
        bind(value.uuid)
        index += 1
    }

    /// Binds the next column, NULL for `nil`.
    @inlinable public mutating func encode(_ value: String?) throws {
        if let value { bind(value) } else { bindNull() }
        index += 1
    }

    /// Binds the next column, NULL for `nil`.
    @inlinable public mutating func encode(_ value: Int64?) throws {
        if let value { bind(value) } else { bindNull() }
        index += 1
    }

    /// Binds the next column, NULL for `nil`.
    @inlinable public mutating func encode(_ value: Int?) throws {
        if let value { bind(Int64(value)) } else { bindNull() }
        index += 1
    }

    /// Binds the next column, NULL for `nil`.
    @inlinable public mutating func encode(_ value: Date?) throws {
        guard let value else {
            bindNull()
            index += 1
            return
        }
        try encode(value)
    }

    /// Binds the next column, NULL for `nil`.
    @inlinable public mutating func encode(_ value: UUID?) throws {
        if let value { bind(value) } else { bindNull() }
        index += 1
    }

    /// Binds the next column, NULL for `nil`.
    @inlinable public mutating func encode<Target>(_ value: RecordID<Target>?) throws {
        if let value { bind(value.uuid) } else { bindNull() }
        index += 1
    }

    // MARK: - Binds of the current parameter, SQLite's directly

    @inlinable func bind(_ value: String) {
        if let sqlite { sqlite.bind(value, index) } else { statementBind(value) }
    }

    @inlinable func bind(_ value: Int64) {
        if let sqlite { sqlite.bind(value, index) } else { statementBind(value) }
    }

    @inlinable func bind(_ value: Double) {
        if let sqlite { sqlite.bind(value, index) } else { statementBind(value) }
    }

    @inlinable func bind(_ value: UUID) {
        if let sqlite { sqlite.bind(value, index) } else { statementBind(value) }
    }

    @inlinable func bindNull() {
        if let sqlite { sqlite.bindNull(index) } else { statementBindNull() }
    }

    // The same binds through the seam, for another engine (not inlined: the statement stays private).

    @usableFromInline func statementBind(_ value: String) { statement.bind(value, index) }
    @usableFromInline func statementBind(_ value: Int64) { statement.bind(value, index) }
    @usableFromInline func statementBind(_ value: Double) { statement.bind(value, index) }
    @usableFromInline func statementBind(_ value: UUID) { statement.bind(value, index) }
    @usableFromInline func statementBindNull() { statement.bindNull(index) }

    /// Binds the next column as JSON text (a `Codable` attribute; Core Data's Transformable).
    /// Keys are sorted so the same value always gives the same text.
    public mutating func encodeJSON<Value: Encodable>(_ value: Value?) throws {
        guard let value else {
            statement.bindNull(index)
            index += 1
            return
        }
        statement.bind(try Self.jsonText(value), index)
        index += 1
    }

    /// A `Codable` value as the store keeps it: JSON text with sorted keys. Records and the
    /// migration obligations that return a `Codable` value both write it so.
    static func jsonText<Value: Encodable>(_ value: Value) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}

/// Reads a record's columns from the current row, in column order.
///
/// The reads of the common types are `@inlinable`, so that a record's `init(id:row:)` and the fetch
/// loop that calls it (``RowCursor/append(to:)``) are specialised in the app's module. On SQLite they
/// read the statement directly (``SQLiteRow``); another engine's statement is read through the
/// ``DatabaseStatement`` seam, one call per column.
@_spi(Generated) public struct RowDecoder {
    private let statement: any DatabaseStatement
    /// The statement's row when it is SQLite's, read without a call through the seam.
    @usableFromInline let sqlite: SQLiteRow?
    @usableFromInline var index: Int32

    init(statement: any DatabaseStatement, firstIndex: Int32) {
        self.init(statement: statement, sqlite: SQLiteRow.of(statement), firstIndex: firstIndex)
    }

    /// A decoder for `statement`, whose row `sqlite` reads directly when it is SQLite's (found once
    /// per query rather than once per row).
    init(statement: any DatabaseStatement, sqlite: SQLiteRow?, firstIndex: Int32) {
        self.statement = statement
        self.sqlite = sqlite
        index = firstIndex
    }

    /// The index of the next column to read; after a read that threw, one past the column that
    /// could not be read (every read moves on, even when it throws).
    var nextIndex: Int32 { index }

    /// Reads the next column.
    public mutating func decode<Value: ColumnValue>(_ type: Value.Type = Value.self) throws -> Value {
        defer { index += 1 }
        return try Value(sqlValue: statement.value(index))
    }

    // The overloads below skip the `SQLValue` step of `ColumnValue` for speed, and read exactly
    // what it reads: a value of another storage class is refused, never converted by the engine (SQLite
    // would read the integer 7 as the text "7", or text as the number 0). The typed reads (`text`,
    // `integer`, `number`, `uuid`) answer `nil` for any other class, so the check costs no second
    // question; an optional asks whether the value is NULL only when the typed read said no.

    /// Reads the next column.
    @inlinable public mutating func decode(_ type: String.Type = String.self) throws -> String {
        defer { index += 1 }
        guard let text = text() else { throw mismatch(String.self) }
        return text
    }

    /// Reads the next column.
    @inlinable public mutating func decode(_ type: Int64.Type = Int64.self) throws -> Int64 {
        defer { index += 1 }
        guard let integer = integer() else { throw mismatch(Int64.self) }
        return integer
    }

    /// Reads the next column.
    @inlinable public mutating func decode(_ type: Int.Type = Int.self) throws -> Int {
        defer { index += 1 }
        guard let integer = integer() else { throw mismatch(Int.self) }
        return Int(integer)
    }

    /// Reads the next column.
    @inlinable public mutating func decode(_ type: Date.Type = Date.self) throws -> Date {
        defer { index += 1 }
        guard let seconds = number() else { throw mismatch(Date.self) }
        return Date(timeIntervalSinceReferenceDate: seconds)
    }

    /// Reads the next column.
    @inlinable public mutating func decode(_ type: UUID.Type = UUID.self) throws -> UUID {
        defer { index += 1 }
        guard let uuid = uuid() else { throw mismatch(UUID.self) }
        return uuid
    }

    /// Reads the next column.
    @inlinable public mutating func decode(_ type: String?.Type = String?.self) throws -> String? {
        defer { index += 1 }
        if let text = text() { return text }
        guard isNull() else { throw mismatch(String.self) }
        return nil
    }

    /// Reads the next column.
    @inlinable public mutating func decode(_ type: Int64?.Type = Int64?.self) throws -> Int64? {
        defer { index += 1 }
        if let integer = integer() { return integer }
        guard isNull() else { throw mismatch(Int64.self) }
        return nil
    }

    /// Reads the next column.
    @inlinable public mutating func decode(_ type: Int?.Type = Int?.self) throws -> Int? {
        defer { index += 1 }
        if let integer = integer() { return Int(integer) }
        guard isNull() else { throw mismatch(Int.self) }
        return nil
    }

    /// Reads the next column.
    @inlinable public mutating func decode(_ type: Date?.Type = Date?.self) throws -> Date? {
        defer { index += 1 }
        if let seconds = number() { return Date(timeIntervalSinceReferenceDate: seconds) }
        guard isNull() else { throw mismatch(Date.self) }
        return nil
    }

    // MARK: - Typed reads of the current column, SQLite's directly

    @inlinable func text() -> String? {
        if let sqlite { return sqlite.text(index) }
        return statementText()
    }

    @inlinable func integer() -> Int64? {
        if let sqlite { return sqlite.integer(index) }
        return statementInteger()
    }

    @inlinable func number() -> Double? {
        if let sqlite { return sqlite.number(index) }
        return statementNumber()
    }

    @inlinable func uuid() -> UUID? {
        if let sqlite { return sqlite.uuid(index) }
        return statementUUID()
    }

    @inlinable func isNull() -> Bool {
        if let sqlite { return sqlite.isNull(index) }
        return statementIsNull()
    }

    // The same reads through the seam, for another engine (not inlined: the statement stays private).

    @usableFromInline func statementText() -> String? { statement.text(index) }
    @usableFromInline func statementInteger() -> Int64? { statement.integer(index) }
    @usableFromInline func statementNumber() -> Double? { statement.number(index) }
    @usableFromInline func statementUUID() -> UUID? { statement.uuid(index) }
    @usableFromInline func statementIsNull() -> Bool { statement.isNull(index) }

    /// The error for the current column's value, which is not of `type`'s storage class.
    @usableFromInline func mismatch(_ type: Any.Type) -> ColumnValueError {
        ColumnValueError.mismatch(statement.value(index), type)
    }

    /// Reads the next column as JSON text.
    public mutating func decodeJSON<Value: Decodable>(_ type: Value.Type = Value.self) throws -> Value? {
        defer { index += 1 }
        guard !statement.isNull(index) else { return nil }
        return try Self.decodeJSON(Value.self, from: statement.value(index))
    }

    /// A `Codable` column's value: JSON text (any other storage class is refused), decoded.
    static func decodeJSON<Value: Decodable>(_ type: Value.Type, from value: SQLValue) throws -> Value {
        guard case .text(let text) = value else { throw ColumnValueError.mismatch(value, Value.self) }
        return try JSONDecoder().decode(Value.self, from: Data(text.utf8))
    }

    /// Whether a `Codable` column's value is JSON text, whatever the app's type (which the runtime
    /// does not know when it checks a migration): the test the migration's value check makes.
    /// Foundation's parser decides, as it does for `JSONDecoder`; a value that parses may still not
    /// be the app's type, which only the app's code can tell.
    static func isJSON(_ value: SQLValue) -> Bool {
        guard case .text(let text) = value else { return false }
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) != nil
    }
}

extension RowEncoder {
    /// Binds a composite's columns, or NULL for each of them when it is `nil`.
    @_spi(Generated) public mutating func encodeComposite<Value: CompositeValue>(_ value: Value?) throws {
        guard let value else {
            for _ in 0..<Value.columnCount {
                try encode(SQLValue.null)
            }
            return
        }
        try value.encode(to: &self)
    }
}

extension RowDecoder {
    /// Reads a composite's columns; `nil` when a field it requires is NULL (the composite is absent).
    @_spi(Generated) public mutating func decodeComposite<Value: CompositeValue>(_ type: Value.Type = Value.self) throws
        -> Value?
    {
        try Value(row: &self)
    }

    /// Reads a composite that must be present.
    @_spi(Generated) public mutating func decodeRequiredComposite<Value: CompositeValue>(
        _ type: Value.Type = Value.self
    ) throws -> Value {
        guard let value = try Value(row: &self) else {
            throw ColumnValueError(message: "a required \(Value.self) is missing")
        }
        return value
    }

    /// Reads JSON text that must be present.
    @_spi(Generated) public mutating func decodeRequiredJSON<Value: Decodable>(_ type: Value.Type = Value.self) throws
        -> Value
    {
        guard let value = try decodeJSON(Value.self) else {
            throw ColumnValueError(message: "a required \(Value.self) is missing")
        }
        return value
    }
}

/// A composite attribute type: a struct stored as one column per field, in field order.
///
/// Generated code conforms each `composite` of the schema; the requirements are
/// `@_spi(Generated)`, for generated code alone:
///
/// ```swift
/// extension Address: CompositeValue {
///     static let columnCount = 2
///     func encode(to row: inout RowEncoder) throws {
///         try row.encode(street)
///         try row.encode(zip)
///     }
///     init?(row: inout RowDecoder) throws {
///         let street: String? = try row.decode()
///         let zip: String? = try row.decode()
///         guard let street else { return nil }
///         self.init(street: street, zip: zip)
///     }
/// }
/// ```
public protocol CompositeValue: Sendable {
    /// How many columns the composite takes.
    @_spi(Generated) static var columnCount: Int { get }
    /// Writes each field, in order.
    @_spi(Generated) func encode(to row: inout RowEncoder) throws
    /// Reads each field, in order; `nil` when a required field is NULL.
    @_spi(Generated) init?(row: inout RowDecoder) throws
}

extension SQLValue: ColumnValue {
    /// The value itself.
    @_spi(Generated) public var sqlValue: SQLValue { self }
    /// The value itself.
    @_spi(Generated) public init(sqlValue: SQLValue) { self = sqlValue }
}
