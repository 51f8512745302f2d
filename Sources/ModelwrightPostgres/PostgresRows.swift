import CLibPQ
import Foundation
import Modelwright

/// The rows a statement returned, read in place from libpq's result: a value is decoded when
/// it is asked for, not before.
public final class PostgresRows: @unchecked Sendable {
    // @unchecked: a PGresult is never changed after libpq returns it, and libpq documents it as
    // safe to read from several threads; it is freed only in deinit.
    private let result: OpaquePointer
    /// Each column's type and whether it came in binary, read from libpq once per result rather
    /// than twice per cell.
    private let columns: [(oid: UInt32, binary: Bool)]

    init(_ result: OpaquePointer) {
        self.result = result
        columns = (0..<PQnfields(result)).map { (UInt32(PQftype(result, $0)), PQfformat(result, $0) == 1) }
    }

    deinit {
        PQclear(result)
    }

    /// The number of rows.
    public var count: Int { Int(PQntuples(result)) }

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

    /// Whether the cell is NULL (or outside the result).
    func isNull(_ row: Int32, _ column: Int32) -> Bool {
        PQgetisnull(result, row, column) != 0
    }

    /// The cell's type and bytes, in the result's format; `nil` for NULL or outside the result.
    /// Two libpq calls per cell (the value and its length); only an empty cell, which NULL is, asks
    /// `PQgetisnull` as well.
    private func cell(_ row: Int32, _ column: Int32) -> (oid: UInt32, binary: Bool, bytes: UnsafeRawBufferPointer)? {
        guard column >= 0, Int(column) < columns.count, let pointer = PQgetvalue(result, row, column) else {
            return nil
        }
        let length = Int(PQgetlength(result, row, column))
        if length == 0, PQgetisnull(result, row, column) != 0 { return nil }
        let type = columns[Int(column)]
        return (type.oid, type.binary, UnsafeRawBufferPointer(start: pointer, count: length))
    }

    private static func bigEndian<T: FixedWidthInteger>(_: T.Type, _ bytes: UnsafeRawBufferPointer) -> T? {
        guard bytes.count == MemoryLayout<T>.size else { return nil }
        return T(bigEndian: bytes.loadUnaligned(as: T.self))
    }

    /// The class of the cell's value as ``value(_:_:)`` would give it, told from the column's type
    /// and the cell's bytes without building the value, for the types a store's columns use;
    /// other types, and a cell whose bytes are not its type's binary form or not UTF-8, are
    /// classed by building the value, so the answer is always the same as that one's. A row
    /// decoder asks it before every read, and building the value to answer cost 19 % of the
    /// client's CPU time in a 20,000-row fetch into records (13.8 against 11.2 ms; BENCHMARKS.md,
    /// "PostgreSQL").
    func storageClass(_ row: Int32, _ column: Int32) -> StorageClass {
        guard let cell = cell(row, column) else { return .null }
        if cell.binary {
            switch (cell.oid, cell.bytes.count) {
            case (20, 8), (23, 4), (21, 2), (16, 1): return .integer
            case (701, 8), (700, 4), (1_184, 8), (1_114, 8): return .real
            case (17, _), (2_950, 16): return .blob
            case (25, _), (1_043, _), (19, _), (1_042, _):
                if Self.isUTF8(cell.bytes) { return .text }
            default: break
            }
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
        if !bytes.contains(where: { $0 >= 0x80 }) { return true }
        let failed = transcode(
            bytes.makeIterator(), from: UTF8.self, to: UTF32.self, stoppingOnError: true, into: { _ in })
        return !failed
    }

    /// The cell as an integer: integers and booleans (as 0 or 1) directly, other types through
    /// their ``SQLValue``; 0 for NULL, as SQLite reads it.
    func int64(_ row: Int32, _ column: Int32) -> Int64 {
        guard let cell = cell(row, column) else { return 0 }
        if cell.binary {
            switch cell.oid {
            case 20: return Self.bigEndian(Int64.self, cell.bytes) ?? 0
            case 23: return Self.bigEndian(Int32.self, cell.bytes).map(Int64.init) ?? 0
            case 21: return Self.bigEndian(Int16.self, cell.bytes).map(Int64.init) ?? 0
            case 16: return cell.bytes.first.map { $0 == 0 ? 0 : 1 } ?? 0
            default: break
            }
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
        guard let cell = cell(row, column) else { return 0 }
        if cell.binary {
            switch cell.oid {
            case 701: return Self.bigEndian(UInt64.self, cell.bytes).map(Double.init(bitPattern:)) ?? 0
            case 700: return Self.bigEndian(UInt32.self, cell.bytes).map { Double(Float(bitPattern: $0)) } ?? 0
            case 1_184, 1_114:
                return Self.bigEndian(Int64.self, cell.bytes).map(PostgresDialect.secondsSinceReferenceDate) ?? 0
            default: break
            }
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
        guard let cell = cell(row, column) else { return "" }
        switch (cell.oid, cell.binary) {
        case (25, _), (1_043, _), (19, _), (1_042, _), (114, _), (3_802, false):
            return String(decoding: cell.bytes, as: UTF8.self)
        case (3_802, true):
            return String(decoding: UnsafeRawBufferPointer(rebasing: cell.bytes.dropFirst()), as: UTF8.self)
        default:
            break
        }
        if cell.oid == 2_950, let uuid = uuid(row, column) { return uuid.uuidString }
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
        guard let cell = cell(row, column) else { return Data() }
        if cell.binary, cell.oid == 17 || cell.oid == 2_950 { return Data(cell.bytes) }
        switch value(row, column) {
        case .blob(let data): return data
        case .text(let text): return Data(text.utf8)
        case .integer, .real, .null: return Data()
        }
    }

    /// The cell as a UUID, when it holds one (a `uuid`, or 16 bytes of `bytea`).
    func uuid(_ row: Int32, _ column: Int32) -> UUID? {
        guard let cell = cell(row, column) else { return nil }
        if cell.binary, cell.oid == 2_950 || cell.oid == 17, cell.bytes.count == 16 {
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: cell.bytes) }
            return UUID(uuid: uuid)
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
