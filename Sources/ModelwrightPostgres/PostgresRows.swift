import CLibPQ
import Foundation

/// The rows a statement returned, read in place from libpq's result: a value is decoded when
/// it is asked for, not before.
public final class PostgresRows: @unchecked Sendable {
    // @unchecked: a PGresult is never changed after libpq returns it, and libpq documents it as
    // safe to read from several threads; it is freed only in deinit.
    private let result: OpaquePointer

    init(_ result: OpaquePointer) {
        self.result = result
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

    /// The value at `row` and `column`, or `.null` where it cannot be read.
    public subscript(row: Int, column: Int) -> PostgresValue {
        (try? value(row: row, column: column)) ?? .null
    }
}
