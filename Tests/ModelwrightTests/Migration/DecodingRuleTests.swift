import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright

/// One set of decoding rules: the migration's value check (SQL where a storage class and a range
/// say it all, `mw_decodes` elsewhere), `mw_decodes` itself and the record decoder's fast paths
/// all agree with ``ColumnValue``'s `init(sqlValue:)` on every value, of every storage class.
struct DecodingRuleTests {
    static func values() -> [SQLValue] {
        var random = SplitMix64(seed: 0xDEC0DE)
        var values: [SQLValue] = [
            .integer(0), .integer(1), .integer(-1), .integer(2), .integer(7), .integer(32767), .integer(32768),
            .integer(-32768), .integer(-32769), .integer(2_147_483_647), .integer(2_147_483_648),
            .integer(-2_147_483_648), .integer(-2_147_483_649), .integer(.max), .integer(.min),
            .real(0), .real(-0.0), .real(1), .real(1.5), .real(1e300), .real(.infinity), .real(-.infinity),
            .text(""), .text("1"), .text("0"), .text("abc"), .text("12.5"), .text("1,5"), .text("[1]"), .text("{"),
            .text("null"), .text("0123456789abcdef"), .text("https://example.com"), .text("\u{0}x"),
            .blob(Data()), .blob(Data(count: 15)), .blob(Data(count: 16)), .blob(Data(count: 17)),
        ]
        for _ in 0..<200 {
            switch Int.random(in: 0..<4, using: &random) {
            case 0: values.append(.integer(Int64.random(in: -70_000...70_000, using: &random)))
            case 1: values.append(.real(Double.random(in: -1e6...1e6, using: &random)))
            case 2: values.append(.text(String(Int.random(in: -1_000...1_000, using: &random))))
            default: values.append(.blob(Data(count: Int.random(in: 0...20, using: &random))))
            }
        }
        return values
    }

    @Test(arguments: DecodingFunction.Kind.allCases)
    func theCheckAndTheDecoderAgree(kind: DecodingFunction.Kind) throws {
        let connection = try SQLiteConnection(path: ":memory:")
        for value in Self.values() {
            let statement = try SQLiteStatement(
                connection: connection,
                sql: "WITH v(x) AS (SELECT ?) SELECT (\(kind.test("x"))), mw_decodes(\(kind.rawValue), x) FROM v")
            statement.bind(value, 1)
            _ = try statement.step()
            #expect((statement.int64(0) == 1) == kind.decodes(value), "\(kind) SQL on \(value)")
            #expect((statement.int64(1) == 1) == kind.decodes(value), "\(kind) mw_decodes on \(value)")
        }
    }

    @Test func theDecodersFastPathsReadExactlyWhatColumnValueReads() throws {
        let connection = try SQLiteConnection(path: ":memory:")
        for value in Self.values() + [.null] {
            let statement = try SQLiteStatement(connection: connection, sql: "SELECT ?, ?, ?, ?")
            for index in 1...4 { statement.bind(value, Int32(index)) }
            _ = try statement.step()
            var row = RowDecoder(statement: statement, firstIndex: 0)
            #expect(((try? row.decode(String.self)) != nil) == ((try? String(sqlValue: value)) != nil), "\(value)")
            #expect(((try? row.decode(Int64.self)) != nil) == ((try? Int64(sqlValue: value)) != nil), "\(value)")
            #expect(((try? row.decode(Int.self)) != nil) == ((try? Int(sqlValue: value)) != nil), "\(value)")
            #expect(((try? row.decode(Date.self)) != nil) == ((try? Date(sqlValue: value)) != nil), "\(value)")
            // The optional forms ask for the storage class once; they must still read what
            // `Optional(sqlValue:)` reads: nil for NULL, the value, or a refusal.
            var optional = RowDecoder(statement: statement, firstIndex: 0)
            #expect((try? optional.decode(String?.self)) == (try? String?(sqlValue: value)), "\(value)")
            #expect((try? optional.decode(Int64?.self)) == (try? Int64?(sqlValue: value)), "\(value)")
            #expect((try? optional.decode(Int?.self)) == (try? Int?(sqlValue: value)), "\(value)")
            #expect((try? optional.decode(Date?.self)) == (try? Date?(sqlValue: value)), "\(value)")
            #expect(optional.nextIndex == 4, "\(value)")
        }
    }

    /// Values as a store file holds them, not as parameters: each drawn value of every storage class
    /// is written into an untyped column (so SQLite keeps its class) and read back from the table,
    /// where text is not NUL-terminated and the decoder's typed reads take the column's value from
    /// the row. Every record column type must accept exactly what `init(sqlValue:)` accepts.
    @Test func storedValuesOfEveryClassAreReadExactlyAsColumnValueReadsThem() throws {
        let connection = try SQLiteConnection(path: ":memory:")
        try connection.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, a, b)")
        let values =
            Self.values() + [.null, .blob(Data((0..<16).map { UInt8($0) })), .text(String(repeating: "é", count: 40))]
        for (key, value) in values.enumerated() {
            let insert = try SQLiteStatement(connection: connection, sql: "INSERT INTO t VALUES (?, ?, ?)")
            insert.bind(Int64(key), 1)
            insert.bind(value, 2)
            insert.bind(value, 3)
            try insert.run()
        }
        let select = try SQLiteStatement(connection: connection, sql: "SELECT a, b FROM t ORDER BY k")
        #expect(SQLiteRow.of(select) != nil)
        var read = 0
        while try select.step() {
            let stored = select.value(0)
            #expect(stored == values[read], "SQLite kept \(values[read]) as \(stored)")
            // Each read twice: from SQLite's row directly, as a fetch reads on SQLite, and through the
            // statement's typed reads, as the decoder reads another engine's statement.
            func agrees<Value: ColumnValue & Equatable>(
                _ type: Value.Type, _ decode: (inout RowDecoder) throws -> Value
            ) {
                for sqlite in [SQLiteRow.of(select), nil] {
                    var row = RowDecoder(statement: select, sqlite: sqlite, firstIndex: 1)
                    let path = sqlite == nil ? "through the statement" : "directly"
                    #expect(
                        (try? decode(&row)) == (try? Value(sqlValue: stored)), "\(Value.self) from \(stored), \(path)")
                    #expect(row.nextIndex == 2)
                }
            }
            agrees(String.self) { try $0.decode(String.self) }
            agrees(String?.self) { try $0.decode(String?.self) }
            agrees(Int.self) { try $0.decode(Int.self) }
            agrees(Int?.self) { try $0.decode(Int?.self) }
            agrees(Int64.self) { try $0.decode(Int64.self) }
            agrees(Int64?.self) { try $0.decode(Int64?.self) }
            agrees(Date.self) { try $0.decode(Date.self) }
            agrees(Date?.self) { try $0.decode(Date?.self) }
            agrees(UUID.self) { try $0.decode(UUID.self) }
            agrees(UUID?.self) { try $0.decode(UUID?.self) }
            #expect((select.uuid(1) != nil) == ((try? UUID(sqlValue: stored)) != nil), "the row ID from \(stored)")
            read += 1
        }
        #expect(read == values.count)
    }
}
