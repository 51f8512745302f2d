import CLibPQ
import Foundation
import Modelwright

/// The rows a statement returned, read in place from libpq's result: a value is decoded when
/// it is asked for, not before.
public final class PostgresRows: @unchecked Sendable {
    // @unchecked: a PGresult is never changed after libpq returns it, and libpq documents it as
    // safe to read from several threads; it is freed only in deinit.
    private let result: OpaquePointer
    /// How each column's cells are read, resolved once per result from the column's type and
    /// format (libpq's `PQftype` and `PQfformat`), not per cell; and the type, for the readers
    /// that build a ``PostgresValue``.
    private let columns: [(kind: ColumnKind, oid: UInt32)]
    /// The number of rows, read once.
    public let count: Int

    /// How the typed readers read a column's cells: in place for the types a store's columns use
    /// in binary, through a ``PostgresValue`` for anything else.
    private enum ColumnKind {
        /// `bigint`, `integer`, `smallint`, `boolean`, in binary: an integer.
        case int64, int32, int16, bool
        /// `double precision`, `real` in binary: a floating-point number.
        case float64, float32
        /// `timestamptz` (or `timestamp`) in binary: a `Date`'s seconds.
        case timestamp
        /// `text`, `varchar`, `name`, `char`, in either format (they are the same bytes): UTF-8 text.
        case text
        /// `bytea` in binary: bytes.
        case bytes
        /// `uuid` in binary: 16 bytes.
        case uuid
        /// Anything else (`numeric`, `jsonb`, a text-format number …): through its value.
        case other

        init(oid: UInt32, binary: Bool) {
            switch (oid, binary) {
            case (25, _), (1_043, _), (19, _), (1_042, _): self = .text
            case (20, true): self = .int64
            case (23, true): self = .int32
            case (21, true): self = .int16
            case (16, true): self = .bool
            case (701, true): self = .float64
            case (700, true): self = .float32
            case (1_184, true), (1_114, true): self = .timestamp
            case (17, true): self = .bytes
            case (2_950, true): self = .uuid
            default: self = .other
            }
        }
    }

    init(_ result: OpaquePointer) {
        self.result = result
        columns = (0..<PQnfields(result)).map { column in
            let oid = UInt32(PQftype(result, column))
            return (ColumnKind(oid: oid, binary: PQfformat(result, column) == 1), oid)
        }
        count = Int(PQntuples(result))
    }

    deinit {
        PQclear(result)
    }

    /// The number of columns.
    public var columnCount: Int { Int(PQnfields(result)) }

    /// The columns' names, in order.
    public var columnNames: [String] {
        (0..<PQnfields(result)).map { String(cString: PQfname(result, $0)) }
    }

    /// How many rows an `INSERT`, `UPDATE`, `DELETE` (…) changed; 0 for other statements.
    public var affectedRows: Int { Int(String(cString: PQcmdTuples(result))) ?? 0 }

    /// The command tag the server answered with (`INSERT 0 1`, `COMMIT`, `ROLLBACK`).
    public var commandTag: String { String(cString: PQcmdStatus(result)) }

    /// The value at `row` and `column`; throws when the server sent a malformed value.
    public func value(row: Int, column: Int) throws -> PostgresValue {
        let (row, column) = (Int32(row), Int32(column))
        guard row >= 0, row < PQntuples(result), column >= 0, column < PQnfields(result) else {
            throw PostgresError.invalidValue("no value at row \(row), column \(column)")
        }
        if PQgetisnull(result, row, column) == 1 { return .null }
        let oid = UInt32(PQftype(result, column))
        guard let bytes = PQgetvalue(result, row, column) else { return .null }
        let length = Int(PQgetlength(result, row, column))
        let buffer = UnsafeRawBufferPointer(start: bytes, count: length)
        if PQfformat(result, column) == 1 { return try PostgresValue.decodeBinary(oid: oid, buffer) }
        return try PostgresValue.decodeText(oid: oid, PostgresValue.utf8(buffer, oid: oid))
    }

    /// The parameters' types of a described prepared statement (`PQparamtype`).
    var parameterTypes: [UInt32] {
        (0..<PQnparams(result)).map { UInt32(PQparamtype(result, $0)) }
    }

    // MARK: - Reading in place

    // The engine interface's column readers (``PostgresStatement``) read a cell where libpq keeps
    // it, without building a ``PostgresValue`` (no Data, no String) for numbers: the fetch path.
    // The column's kind was resolved when the result arrived, so a cell costs `PQgetvalue`,
    // `PQgetlength` and a switch on the kind.

    /// Whether the cell is NULL (or outside the result).
    func isNull(_ row: Int32, _ column: Int32) -> Bool {
        PQgetisnull(result, row, column) != 0
    }

    /// The column's kind; `.other` outside the result.
    private func kind(_ column: Int32) -> ColumnKind {
        column >= 0 && Int(column) < columns.count ? columns[Int(column)].kind : .other
    }

    /// The cell's bytes, in the result's format; `nil` for NULL or outside the result. Two libpq
    /// calls per cell (the value and its length); only an empty cell, which NULL is, asks
    /// `PQgetisnull` as well.
    @inline(__always) private func cell(_ row: Int32, _ column: Int32) -> UnsafeRawBufferPointer? {
        guard column >= 0, Int(column) < columns.count else { return nil }
        return cellInside(row, column)
    }

    /// The cell's bytes and its column's kind, with one check that the column is in the result:
    /// what the typed reads of the fetch path ask first.
    @inline(__always) private func kindAndCell(
        _ row: Int32, _ column: Int32
    ) -> (kind: ColumnKind, bytes: UnsafeRawBufferPointer)? {
        guard column >= 0, Int(column) < columns.count, let bytes = cellInside(row, column) else { return nil }
        return (columns[Int(column)].kind, bytes)
    }

    /// ``cell(_:_:)`` for a column known to be in the result.
    @inline(__always) private func cellInside(_ row: Int32, _ column: Int32) -> UnsafeRawBufferPointer? {
        guard let pointer = PQgetvalue(result, row, column) else { return nil }
        let length = Int(PQgetlength(result, row, column))
        if length == 0, PQgetisnull(result, row, column) != 0 { return nil }
        return UnsafeRawBufferPointer(start: pointer, count: length)
    }

    private static func bigEndian<T: FixedWidthInteger>(_: T.Type, _ bytes: UnsafeRawBufferPointer) -> T? {
        guard bytes.count == MemoryLayout<T>.size else { return nil }
        return T(bigEndian: bytes.loadUnaligned(as: T.self))
    }

    /// The integer of a cell of an integer kind in its binary form (a boolean as 0 or 1); `nil`
    /// for another kind or bytes of another length, which are not that type's binary form.
    private static func integer(_ kind: ColumnKind, _ bytes: UnsafeRawBufferPointer) -> Int64? {
        switch kind {
        case .int64: bigEndian(Int64.self, bytes)
        case .int32: bigEndian(Int32.self, bytes).map(Int64.init)
        case .int16: bigEndian(Int16.self, bytes).map(Int64.init)
        case .bool: bytes.count == 1 ? (bytes[0] == 0 ? 0 : 1) : nil
        default: nil
        }
    }

    /// The number of a cell of a floating-point or timestamp kind in its binary form (a timestamp
    /// as seconds since 2001-01-01, as a `Date` is stored); `nil` otherwise.
    private static func real(_ kind: ColumnKind, _ bytes: UnsafeRawBufferPointer) -> Double? {
        switch kind {
        case .float64: bigEndian(UInt64.self, bytes).map(Double.init(bitPattern:))
        case .float32: bigEndian(UInt32.self, bytes).map { Double(Float(bitPattern: $0)) }
        case .timestamp: bigEndian(Int64.self, bytes).map(PostgresDialect.secondsSinceReferenceDate)
        default: nil
        }
    }

    /// `bytes` as text when they are valid UTF-8; `nil` otherwise (a SQL_ASCII database hands over
    /// whatever bytes it stored). `String(decoding:as:)` validates as it copies and repairs what is
    /// not UTF-8; what it makes is always UTF-8, so it is the very bytes given exactly when they
    /// were UTF-8, which one comparison of the two tells. (`String(validating:as:)` answers the same
    /// through its generic path, which looked up type metadata four times per call: 15 % of the
    /// client's instructions in a 100,000-row fetch into records.)
    ///
    /// ASCII, which most text is, is valid UTF-8 and decodes to itself: a scan of the bytes eight at a
    /// time tells it, and then the comparison is left out (about a sixth of a text cell's instructions).
    @inline(__always) static func text(_ bytes: UnsafeRawBufferPointer) -> String? {
        let units = bytes.assumingMemoryBound(to: UInt8.self)
        if isASCII(bytes) { return String(decoding: units, as: UTF8.self) }
        return decodedExactly(units)
    }

    /// `units` as text when decoding them changed nothing, which is when they were valid UTF-8.
    private static func decodedExactly(_ units: UnsafeBufferPointer<UInt8>) -> String? {
        var text = String(decoding: units, as: UTF8.self)
        let exact = text.withUTF8 { made in
            made.count == units.count
                && (units.isEmpty || memcmp(made.baseAddress!, units.baseAddress!, units.count) == 0)
        }
        return exact ? text : nil
    }

    /// The class of the cell's value as ``value(_:_:)`` would give it, told from the column's kind
    /// and the cell's bytes without building the value, for the types a store's columns use;
    /// other types, and a cell whose bytes are not its type's binary form, are classed by building
    /// the value, so the answer is always the same as that one's.
    func storageClass(_ row: Int32, _ column: Int32) -> StorageClass {
        guard let bytes = cell(row, column) else { return .null }
        let kind = kind(column)
        if Self.integer(kind, bytes) != nil { return .integer }
        if Self.real(kind, bytes) != nil { return .real }
        switch (kind, bytes.count) {
        case (.bytes, _), (.uuid, 16): return .blob
        // Text that is not UTF-8 cannot be read as a value: NULL, as the value says.
        case (.text, _): return Self.isUTF8(bytes) ? .text : .null
        default: break
        }
        switch value(row, column) {
        case .null: return .null
        case .integer: return .integer
        case .real: return .real
        case .text: return .text
        case .blob: return .blob
        }
    }

    /// Whether `bytes` are valid UTF-8, as `String(validating:as:)` judges, without building a
    /// string: ASCII at a glance, anything else scalar by scalar.
    private static func isUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if isASCII(bytes) { return true }
        let failed = transcode(
            bytes.makeIterator(), from: UTF8.self, to: UTF32.self, stoppingOnError: true, into: { _ in })
        return !failed
    }

    /// Whether every byte is below 0x80, read eight bytes at a time.
    @inline(__always) private static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        var bits: UInt64 = 0
        var offset = 0
        while offset + 8 <= bytes.count {
            bits |= base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        while offset < bytes.count {
            bits |= UInt64(base.load(fromByteOffset: offset, as: UInt8.self))
            offset += 1
        }
        return bits & 0x8080_8080_8080_8080 == 0
    }

    // The row decoder's typed reads: the value when its class is the one asked for, `nil` for any
    // other class (NULL included), answering what ``storageClass(_:_:)`` followed by the read would,
    // with one look at the cell.

    /// The cell's text, when its class is text.
    @inline(__always) func text(_ row: Int32, _ column: Int32) -> String? {
        guard let (kind, bytes) = kindAndCell(row, column) else { return nil }
        if kind == .text { return Self.text(bytes) }
        return storageClass(row, column) == .text ? string(row, column) : nil
    }

    /// The cell's integer, when its class is integer.
    @inline(__always) func integer(_ row: Int32, _ column: Int32) -> Int64? {
        guard let (kind, bytes) = kindAndCell(row, column) else { return nil }
        if let integer = Self.integer(kind, bytes) { return integer }
        return storageClass(row, column) == .integer ? int64(row, column) : nil
    }

    /// The cell's number, when its class is real or integer (an integer as a real).
    @inline(__always) func number(_ row: Int32, _ column: Int32) -> Double? {
        guard let (kind, bytes) = kindAndCell(row, column) else { return nil }
        if let real = Self.real(kind, bytes) { return real }
        if let integer = Self.integer(kind, bytes) { return Double(integer) }
        switch storageClass(row, column) {
        case .real, .integer: return double(row, column)
        default: return nil
        }
    }

    /// The cell as an integer: integers and booleans (as 0 or 1) directly, other types through
    /// their ``SQLValue``; 0 for NULL, as SQLite reads it.
    func int64(_ row: Int32, _ column: Int32) -> Int64 {
        guard let bytes = cell(row, column) else { return 0 }
        switch kind(column) {
        case .int64, .int32, .int16, .bool: return Self.integer(kind(column), bytes) ?? 0
        default: break
        }
        switch value(row, column) {
        case .integer(let value): return value
        case .real(let value): return Int64(exactly: value.rounded(.towardZero)) ?? 0
        case .text(let text): return Int64(text) ?? 0
        case .null, .blob: return 0
        }
    }

    /// The cell as a floating-point number: `real`, `double precision` directly, a `timestamptz`
    /// as seconds since 2001-01-01 (as a `Date` is stored), other types through their ``SQLValue``.
    func double(_ row: Int32, _ column: Int32) -> Double {
        guard let bytes = cell(row, column) else { return 0 }
        switch kind(column) {
        case .float64, .float32, .timestamp: return Self.real(kind(column), bytes) ?? 0
        default: break
        }
        switch value(row, column) {
        case .integer(let value): return Double(value)
        case .real(let value): return value
        case .text(let text): return Double(text) ?? 0
        case .null, .blob: return 0
        }
    }

    /// The cell as text: `text` and `jsonb` directly, a `numeric` as its exact decimal text, a
    /// `uuid` as its canonical text, other types through their ``SQLValue``.
    func string(_ row: Int32, _ column: Int32) -> String {
        guard let bytes = cell(row, column) else { return "" }
        switch (columns[Int(column)].oid, PQfformat(result, column) == 1) {
        case (25, _), (1_043, _), (19, _), (1_042, _), (114, _), (3_802, false):
            return String(decoding: bytes, as: UTF8.self)
        case (3_802, true):
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes.dropFirst()), as: UTF8.self)
        default:
            break
        }
        if columns[Int(column)].oid == 2_950, let uuid = uuid(row, column) { return uuid.uuidString }
        switch value(row, column) {
        case .integer(let value): return String(value)
        case .real(let value): return String(value)
        case .text(let text): return text
        case .blob(let data): return String(decoding: data, as: UTF8.self)
        case .null: return ""
        }
    }

    /// The cell as bytes: `bytea` directly, a `uuid` as its 16 bytes, text as its UTF-8.
    func data(_ row: Int32, _ column: Int32) -> Data {
        guard let bytes = cell(row, column) else { return Data() }
        switch kind(column) {
        case .bytes, .uuid: return Data(bytes)
        default: break
        }
        switch value(row, column) {
        case .blob(let data): return data
        case .text(let text): return Data(text.utf8)
        case .integer, .real, .null: return Data()
        }
    }

    /// The cell as a UUID, when it holds one (a `uuid`, or 16 bytes of `bytea`).
    @inline(__always) func uuid(_ row: Int32, _ column: Int32) -> UUID? {
        guard let (kind, bytes) = kindAndCell(row, column) else { return nil }
        switch kind {
        case .uuid, .bytes:
            guard bytes.count == 16 else { break }
            return UUID(uuid: bytes.loadUnaligned(as: uuid_t.self))
        default: break
        }
        if case .uuid(let uuid) = (try? value(row: Int(row), column: Int(column))) ?? .null { return uuid }
        return nil
    }

    /// The cell in the runtime's currency, as ``PostgresTypeMap`` reads it; `.null` for a value
    /// of a type outside the map.
    func value(_ row: Int32, _ column: Int32) -> SQLValue {
        guard let value = try? value(row: Int(row), column: Int(column)) else { return .null }
        return (try? PostgresTypeMap.sqlValue(value, storedAs: nil)) ?? .null
    }

    /// The value at `row` and `column`, or `.null` where it cannot be read.
    public subscript(row: Int, column: Int) -> PostgresValue {
        (try? value(row: row, column: column)) ?? .null
    }
}
