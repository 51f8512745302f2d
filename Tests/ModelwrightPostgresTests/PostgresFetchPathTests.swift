import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright
@testable import ModelwrightPostgres

/// The fetch path's reads (the row decoder's typed overloads, answered by `PostgresRows` from the
/// cell's bytes and its column's kind) against the general path (the cell's ``PostgresValue``,
/// through ``PostgresTypeMap``, then `ColumnValue(sqlValue:)`), on every cell of a result of many
/// rows and every column type, at the extremes: NULLs, NaN, ±infinity, -0.0, numeric's extremes and
/// its NaN and infinities, text of any length with non-ASCII scalars at any byte position, bytes
/// with zeros, dates at PostgreSQL's limits and its infinities. The values are sent as parameters
/// in their own types, so nothing the type map refuses to write (a NaN) is left out of the reads.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresFetchPathTests {
    static let rowCount = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 20_000 : 300

    /// The table's columns after the key, in order: each type a store's columns use, and the
    /// other text types a hand-written query can return.
    static let columns = [
        "boolean", "smallint", "integer", "bigint", "real", "double precision", "numeric", "text",
        "varchar", "timestamptz", "bytea", "uuid", "jsonb",
    ]

    /// Text of a drawn length (0–40 bytes, around the 8-byte words the ASCII check reads), mostly
    /// ASCII, with a non-ASCII scalar at a drawn position in about half the cases.
    static func text(_ random: inout SplitMix64) -> String {
        var scalars = (0..<random.size(in: 0...40)).map { _ in
            Unicode.Scalar(UInt8(1 + random.next(below: 127)))
        }
        if random.chance(0.5) {
            let wide: [Unicode.Scalar] = ["é", "€", "🙂", "\u{301}", "\u{7F}", "\u{80}", "\u{10FFFF}"]
            scalars.insert(random.pick(wide), at: random.next(below: scalars.count + 1))
        }
        return String(String.UnicodeScalarView(scalars))
    }

    /// A drawn value of the column type `column`, often at an extreme, NULL in about one case of eight.
    static func value(_ column: String, _ random: inout SplitMix64) -> PostgresValue {
        if random.chance(0.125) { return .null }
        let extreme = random.chance(0.3)
        switch column {
        case "boolean": return .bool(random.chance(0.5))
        case "smallint":
            return .int16(extreme ? random.pick([.min, .max, 0, -1]) : Int16(truncatingIfNeeded: random.next()))
        case "integer":
            return .int32(extreme ? random.pick([.min, .max, 0, -1]) : Int32(truncatingIfNeeded: random.next()))
        case "bigint":
            return .int64(extreme ? random.pick(ExtremeValues.integers) : Int64(bitPattern: random.next()))
        case "real":
            let extremes: [Float] = [
                .nan, .infinity, -.infinity, -0.0, .greatestFiniteMagnitude, .leastNonzeroMagnitude,
            ]
            return .float(
                extreme ? random.pick(extremes) : Float(bitPattern: UInt32(truncatingIfNeeded: random.next())))
        case "double precision":
            return .double(extreme ? random.pick(ExtremeValues.doubles + [.nan]) : Double(bitPattern: random.next()))
        case "numeric":
            let digits = (0..<random.size(in: 1...38)).map { _ in String(random.next(below: 10)) }.joined()
            let drawn = (random.chance(0.5) ? "-" : "") + digits + "." + digits.prefix(random.next(below: 20))
            return .numeric(extreme ? random.pick(ExtremeValues.decimals + ["NaN", "Infinity", "-Infinity"]) : drawn)
        case "text", "varchar":
            // The 1 MiB string of the extremes would make the table large; a long non-ASCII one stands in.
            let extremes =
                ExtremeValues.strings.filter { !$0.utf8.contains(0) && $0.utf8.count < 1_000 }
                + [String(repeating: "é", count: 5_000)]
            return .text(extreme ? random.pick(extremes) : text(&random))
        case "timestamptz":
            // Microseconds since 2000: PostgreSQL's first and last instants, its infinities, and any between.
            let extremes: [Int64] = [-211_813_488_000_000_000, 9_223_371_331_199_999_999, .max, .min, 0, -1]
            return .timestamp(
                microsecondsSince2000: extreme
                    ? random.pick(extremes)
                    : Int64.random(in: -211_813_488_000_000_000...9_223_371_331_199_999_999, using: &random))
        case "bytea":
            let extremes = [Data(), Data([0]), Data(repeating: 0, count: 16), Data([0, 255, 0])]
            let drawn = Data((0..<random.size(in: 0...40)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
            return .bytes(extreme ? random.pick(extremes) : drawn)
        case "uuid":
            return .uuid(UUID(uuid: withUnsafeBytes(of: (random.next(), random.next())) { $0.load(as: uuid_t.self) }))
        default:
            return .jsonb(random.pick(["{}", "[]", "{\"a\": [1, 2.5, \"it's é\"]}", "\"é🙂\"", "-0", "1e308"]))
        }
    }

    @Test func everyCellOfAManyRowResultReadsAsTheGeneralPathReadsIt() async throws {
        let connection = try await makeConnection()
        let definitions = Self.columns.enumerated().map { "c\($0.offset) \($0.element)" }
        try await connection.execute(
            "CREATE TABLE cells (k bigint PRIMARY KEY, \(definitions.joined(separator: ", ")))")
        var random = SplitMix64(seed: 0xFE7C_4A11)
        let markers = (1...Self.columns.count + 1).map { "$\($0)" }.joined(separator: ", ")
        for key in 0..<Self.rowCount {
            let values = Self.columns.map { Self.value($0, &random) }
            _ = try await connection.execute("INSERT INTO cells VALUES (\(markers))", [.int64(Int64(key))] + values)
        }
        let statement = try engine { try connection.statement("SELECT * FROM cells ORDER BY k") }
        var rows = 0
        var cells = (null: 0, read: 0)
        while try statement.step() {
            for column in 1...Int32(Self.columns.count) {
                let place = "row \(rows), \(Self.columns[Int(column) - 1])"
                let general = statement.value(column)
                if general == .null { cells.null += 1 } else { cells.read += 1 }
                #expect(Self.engineReadsAgree(statement, column, general), "\(place): \(general)")
                #expect(Self.decoderReadsAgree(statement, column), "\(place): \(general)")
            }
            rows += 1
        }
        #expect(rows == Self.rowCount)
        #expect(cells.null > Self.rowCount && cells.read > Self.rowCount * 10, "\(cells)")
    }

    /// Whether the statement's typed reads of `column` say what the general path's value says, bit
    /// for bit (numbers by their bits, text by its UTF-8 bytes).
    static func engineReadsAgree(_ statement: PostgresStatement, _ column: Int32, _ general: SQLValue) -> Bool {
        let expected: (text: [UInt8]?, integer: Int64?, number: UInt64?, uuid: UUID?, storage: StorageClass) =
            switch general {
            case .null: (nil, nil, nil, nil, .null)
            case .text(let text): (Array(text.utf8), nil, nil, nil, .text)
            case .integer(let integer): (nil, integer, Double(integer).bitPattern, nil, .integer)
            case .real(let real): (nil, nil, real.bitPattern, nil, .real)
            case .blob(let data): (nil, nil, nil, data.count == 16 ? try? UUID(sqlValue: .blob(data)) : nil, .blob)
            }
        return statement.storageClass(column) == expected.storage
            && statement.isNull(column) == (expected.storage == .null)
            && statement.text(column).map { Array($0.utf8) } == expected.text
            && statement.integer(column) == expected.integer
            && statement.number(column)?.bitPattern == expected.number
            && statement.uuid(column) == expected.uuid
    }

    /// Whether each of the row decoder's typed overloads (what generated records call) reads
    /// `column` as its generic read through the cell's ``SQLValue`` does: the same value, or both
    /// refusing it.
    static func decoderReadsAgree(_ statement: any DatabaseStatement, _ column: Int32) -> Bool {
        func decoder() -> RowDecoder { RowDecoder(statement: statement, firstIndex: column) }
        func typed<Value>(_ read: (inout RowDecoder) throws -> Value) -> Value? {
            var row = decoder()
            return try? read(&row)
        }
        func general<Value: ColumnValue>(_: Value.Type) -> Value? {
            var row = decoder()
            return try? row.decode(Value.self)
        }
        func agree<Value>(
            _ read: (inout RowDecoder) throws -> Value, _ type: Value.Type, _ same: (Value, Value) -> Bool
        )
            -> Bool where Value: ColumnValue
        {
            switch (typed(read), general(Value.self)) {
            case (nil, nil): return true
            case (let lhs?, let rhs?): return same(lhs, rhs)
            default: return false
            }
        }
        let bytes: (String, String) -> Bool = { Array($0.utf8) == Array($1.utf8) }
        let optionalBytes: (String?, String?) -> Bool = { $0.map { Array($0.utf8) } == $1.map { Array($0.utf8) } }
        let instant: (Date, Date) -> Bool = {
            $0.timeIntervalSinceReferenceDate.bitPattern == $1.timeIntervalSinceReferenceDate.bitPattern
        }
        let optionalInstant: (Date?, Date?) -> Bool = {
            $0?.timeIntervalSinceReferenceDate.bitPattern == $1?.timeIntervalSinceReferenceDate.bitPattern
        }
        return agree({ try $0.decode(String.self) }, String.self, bytes)
            && agree({ try $0.decode(String?.self) }, String?.self, optionalBytes)
            && agree({ try $0.decode(Int64.self) }, Int64.self, ==)
            && agree({ try $0.decode(Int64?.self) }, Int64?.self, ==)
            && agree({ try $0.decode(Int.self) }, Int.self, ==)
            && agree({ try $0.decode(Int?.self) }, Int?.self, ==)
            && agree({ try $0.decode(Date.self) }, Date.self, instant)
            && agree({ try $0.decode(Date?.self) }, Date?.self, optionalInstant)
            && agree({ try $0.decode(UUID.self) }, UUID.self, ==)
    }
}

/// The fetch path's check that a text cell is UTF-8 (ASCII eight bytes at a time, anything else by
/// decoding and comparing) against the general path's (`String(validating:)`, which
/// ``PostgresValue`` reads text with), on drawn byte strings, valid or not, with the bytes that are
/// not ASCII at every position around the eight-byte words. No server: a SQL_ASCII database would
/// hand such bytes to a client whose encoding converts nothing, but the store's connections refuse
/// them before a read (see `PostgresEngineTests`), so only this test reaches the check with them.
@Suite struct PostgresTextCheckTests {
    static let count = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 200_000 : 5_000

    @Test func textCellsReadAsTheGeneralPathReadsThemWhateverTheirBytes() throws {
        var random = SplitMix64(seed: 0x7E_C7)
        var checked = (valid: 0, invalid: 0)
        for _ in 0..<Self.count {
            var bytes = (0..<random.size(in: 0...40)).map { _ in UInt8(random.next(below: 128)) }
            // One to three bytes that are not ASCII, anywhere: a stray byte, part of a scalar, or a
            // whole one (valid, overlong, a surrogate's encoding, past U+10FFFF).
            for _ in 0..<random.size(in: 0...3) where random.chance(0.7) {
                let inserted: [UInt8] = random.pick([
                    [UInt8(truncatingIfNeeded: random.next()) | 0x80], [0xC3, 0xA9], [0xE2, 0x82, 0xAC],
                    [0xF0, 0x9F, 0x99, 0x82], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82],
                ])
                bytes.insert(contentsOf: inserted, at: random.next(below: bytes.count + 1))
            }
            let general = bytes.withUnsafeBytes { try? PostgresValue.utf8($0, oid: 25) }
            let fast = bytes.withUnsafeBytes { PostgresRows.text($0) }
            #expect(fast.map { Array($0.utf8) } == general.map { Array($0.utf8) }, "\(bytes)")
            if general == nil { checked.invalid += 1 } else { checked.valid += 1 }
        }
        #expect(checked.valid > Self.count / 4 && checked.invalid > Self.count / 4, "\(checked)")
    }
}
