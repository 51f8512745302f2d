import Foundation
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright

private enum Level: Int, ColumnValue, Equatable {
    case low = 0
    case high = 10
}

private enum Role: String, ColumnValue, Equatable {
    case member
    case admin = "administrator"
}

/// Every attribute type goes through the type map into its PostgreSQL column, in a table, and
/// comes back as the record reads it: with the extreme values the SQLite suites use
/// (``ExtremeValues``), random values drawn from the whole range, in both result formats.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresTypeMapTests {
    static let randomCount = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 20_000 : 300

    /// A connection with one table per column type (`v_<type>`).
    private static func connection() async throws -> PostgresConnection {
        let connection = try await makeConnection()
        let types: [AttributeType] = [
            .bool, .int16, .int32, .int64, .double, .float, .decimal, .string, .date, .data, .uuid,
            .codable(typeName: "T"),
        ]
        for type in types {
            let column = PostgresTypeMap.columnType(of: type)
            try await connection.execute("CREATE TABLE \(table(column)) (x \(column))")
        }
        return connection
    }

    private static func table(_ column: String) -> String {
        "\"v_\(column)\""
    }

    /// `value` stored in its column and read back as `T`, in `format`.
    private static func roundTrip<T: ColumnValue>(
        _ value: T, as type: AttributeType, on connection: PostgresConnection,
        format: PostgresConnection.ResultFormat = .binary
    ) async throws -> T {
        let stored = try PostgresTypeMap.postgresValue(try value.sqlValue, storedAs: type)
        let rows = try await connection.query(
            "INSERT INTO \(table(PostgresTypeMap.columnType(of: type))) (x) VALUES ($1) RETURNING x", [stored],
            format: format)
        return try T(sqlValue: try PostgresTypeMap.sqlValue(try rows.value(row: 0, column: 0), storedAs: type))
    }

    /// `value` round-trips exactly (by `same`) in both formats.
    private static func expectExact<T: ColumnValue>(
        _ value: T, as type: AttributeType, on connection: PostgresConnection,
        same: (T, T) -> Bool, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        for format in [PostgresConnection.ResultFormat.binary, .text] {
            let back = try await roundTrip(value, as: type, on: connection, format: format)
            #expect(
                same(back, value), "\(type) \(format): \(value) came back as \(back)", sourceLocation: sourceLocation)
        }
    }

    @Test func integersAndBooleansRoundTripAtEveryWidth() async throws {
        let connection = try await Self.connection()
        var random = SplitMix64(seed: 0x1A7)
        let integers = ExtremeValues.integers + (0..<Self.randomCount).map { _ in Int64(bitPattern: random.next()) }
        for integer in integers {
            try await Self.expectExact(integer, as: .int64, on: connection, same: ==)
            try await Self.expectExact(Int(integer), as: .int, on: connection, same: ==)
            if let value = Int32(exactly: integer) {
                try await Self.expectExact(value, as: .int32, on: connection, same: ==)
            }
            if let value = Int16(exactly: integer) {
                try await Self.expectExact(value, as: .int16, on: connection, same: ==)
            }
        }
        for small in [Int64(Int16.min) - 1, Int64(Int16.max) + 1] {
            #expect(throws: PostgresError.self) { try PostgresTypeMap.postgresValue(.integer(small), storedAs: .int16) }
        }
        try await Self.expectExact(true, as: .bool, on: connection, same: ==)
        try await Self.expectExact(false, as: .bool, on: connection, same: ==)
        try await Self.expectExact(Level.high, as: .int64, on: connection, same: ==)
    }

    @Test func doublesAndFloatsKeepEveryBit() async throws {
        let connection = try await Self.connection()
        var random = SplitMix64(seed: 0xF10A7)
        var doubles = ExtremeValues.doubles + [0.1, 1.0 / 3.0, 1e-300, 1e300]
        for _ in 0..<Self.randomCount {
            let value = Double(bitPattern: random.next())
            if !value.isNaN { doubles.append(value) }
        }
        for double in doubles {
            try await Self.expectExact(double, as: .double, on: connection) { $0.bitPattern == $1.bitPattern }
        }
        var floats: [Float] = [
            .infinity, -.infinity, -0.0, .greatestFiniteMagnitude, .leastNonzeroMagnitude, -.leastNormalMagnitude, 0.1,
        ]
        for _ in 0..<Self.randomCount {
            let value = Float(bitPattern: UInt32(truncatingIfNeeded: random.next()))
            if !value.isNaN { floats.append(value) }
        }
        for float in floats {
            try await Self.expectExact(float, as: .float, on: connection) { $0.bitPattern == $1.bitPattern }
        }
        // A double that is not a Float value is refused, not rounded.
        #expect(throws: PostgresError.self) { try PostgresTypeMap.postgresValue(.real(0.1), storedAs: .float) }
    }

    @Test func decimalsAreExact() async throws {
        let connection = try await Self.connection()
        var random = SplitMix64(seed: 0xDEC)
        var texts = ExtremeValues.decimals + ["0", "-1", "1e-128", "\(Decimal.greatestFiniteMagnitude)"]
        for _ in 0..<Self.randomCount {
            let digits = (0..<random.size(in: 1...38)).map { _ in String(random.next(below: 10)) }.joined()
            let point = random.next(below: digits.count + 1)
            let text =
                (random.chance(0.5) ? "-" : "") + digits.prefix(point) + (point < digits.count ? "." : "")
                + digits.dropFirst(point)
            texts.append(text.hasSuffix(".") || text.hasPrefix(".") || text.hasPrefix("-.") ? text + "0" : text)
        }
        for text in texts {
            let value = try #require(Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), "\(text)")
            try await Self.expectExact(value, as: .decimal, on: connection, same: ==)
        }
    }

    @Test func stringsURLsAndEnumsRoundTripAndTextWithNULIsRefused() async throws {
        let connection = try await Self.connection()
        for string in ExtremeValues.strings {
            guard !string.utf8.contains(0) else {
                // A difference from SQLite, pinned: PostgreSQL's text cannot hold NUL.
                #expect {
                    try PostgresTypeMap.postgresValue(.text(string), storedAs: .string)
                } throws: { error in
                    "\(error)".contains("NUL")
                }
                continue
            }
            try await Self.expectExact(string, as: .string, on: connection) { $0.utf8.elementsEqual($1.utf8) }
        }
        let url = try #require(URL(string: "https://example.com/a%20b?q=1#frag"))
        try await Self.expectExact(url, as: .url, on: connection, same: ==)
        try await Self.expectExact(Role.admin, as: .string, on: connection, same: ==)
    }

    /// Dates keep microseconds; below that they round to the nearest, halfway to even. The
    /// SQLite suite's 978_307_200.000_000_1 is the pinned difference: its 100 ns are dropped.
    @Test func datesKeepMicrosecondsAndRoundHalfToEvenBelow() async throws {
        let connection = try await Self.connection()
        let expected: [Double: Double] = [
            0: 0, -1e9: -1e9, 1e9: 1e9, 0.000_001: 0.000_001, 978_307_200.000_000_1: 978_307_200,
            Date.distantFuture.timeIntervalSinceReferenceDate: Date.distantFuture.timeIntervalSinceReferenceDate,
            Date.distantPast.timeIntervalSinceReferenceDate: Date.distantPast.timeIntervalSinceReferenceDate,
            1.0 / 128: 0.007_812, 3.0 / 128: 0.023_438, .infinity: .infinity, -.infinity: -.infinity,
        ]
        #expect(Set(ExtremeValues.dateIntervals).isSubset(of: Set(expected.keys)))
        for (interval, back) in expected {
            let date = Date(timeIntervalSinceReferenceDate: interval)
            for format in [PostgresConnection.ResultFormat.binary, .text]
            where !(format == .text && interval.isInfinite) {
                let stored = try await Self.roundTrip(date, as: .date, on: connection, format: format)
                #expect(stored.timeIntervalSinceReferenceDate == back, "\(interval) \(format)")
            }
        }
        for outside in [1e300, -1e300, 1e13, -1e12] {
            #expect(throws: PostgresError.self) { try PostgresTypeMap.postgresValue(.real(outside), storedAs: .date) }
        }
    }

    /// Any whole number of microseconds within ±272 years of 2001 comes back bit for bit; any
    /// date comes back within half a microsecond, and a date read back is stored again unchanged.
    @Test func randomDatesRoundTripAsTheRuleSays() async throws {
        let connection = try await Self.connection()
        var random = SplitMix64(seed: 0xDA7E)
        for _ in 0..<Self.randomCount {
            let microseconds = Int64.random(in: -(1 << 53)...(1 << 53), using: &random) / 1_000
            let onGrid = Double(microseconds) / 1_000_000
            let back = try await Self.roundTrip(Date(timeIntervalSinceReferenceDate: onGrid), as: .date, on: connection)
            #expect(back.timeIntervalSinceReferenceDate == onGrid, "\(onGrid)")
            let any = Double.random(in: -3e10...3e10, using: &random)
            let read = try await Self.roundTrip(Date(timeIntervalSinceReferenceDate: any), as: .date, on: connection)
            let difference = abs(read.timeIntervalSinceReferenceDate - any)
            #expect(difference <= 0.000_000_5 + any.ulp, "\(any) came back as \(read.timeIntervalSinceReferenceDate)")
            let again = try await Self.roundTrip(read, as: .date, on: connection)
            #expect(again == read, "\(any)")
        }
    }

    @Test func bytesUUIDsAndJSONRoundTrip() async throws {
        let connection = try await Self.connection()
        var random = SplitMix64(seed: 0xB17E5)
        let large = Data((0..<1_048_576).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        for data in [Data(), Data([0, 1, 2, 255]), large] {
            try await Self.expectExact(data, as: .data, on: connection, same: ==)
        }
        let uuids =
            [UUID(), UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))]
            + [UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")].compactMap { $0 }
        for uuid in uuids {
            try await Self.expectExact(uuid, as: .uuid, on: connection, same: ==)
        }
        // Codable values as the runtime writes them (JSON with sorted keys) come back as the same
        // value; jsonb keeps its own key order and spacing, so the text may differ.
        struct Preferences: Codable, Equatable {
            var theme: String
            var sizes: [Double]
            var nested: [String: [Int64]]
        }
        let values = [
            Preferences(
                theme: "dark", sizes: [-0.0, 0.1, .greatestFiniteMagnitude, .leastNonzeroMagnitude], nested: [:]),
            Preferences(theme: "Robert'); --\"\\é🙂", sizes: [], nested: ["b": [.min, .max], "a": []]),
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        for value in values {
            let json = String(decoding: try encoder.encode(value), as: UTF8.self)
            for format in [PostgresConnection.ResultFormat.binary, .text] {
                let back = try await Self.roundTrip(
                    json, as: .codable(typeName: "Preferences"), on: connection, format: format)
                #expect(try JSONDecoder().decode(Preferences.self, from: Data(back.utf8)) == value, "\(back)")
            }
        }
        // A difference from SQLite, pinned: jsonb refuses U+0000 in a string.
        let nul = String(decoding: try encoder.encode(["k": "a\u{0}b"]), as: UTF8.self)
        #expect {
            try PostgresTypeMap.postgresValue(.text(nul), storedAs: .codable(typeName: "T"))
        } throws: { error in
            "\(error)".contains("U+0000")
        }
    }

    /// Differences from SQLite in what jsonb keeps, pinned: a number is a numeric there, which has
    /// no negative zero, so -0.0 comes back as 0; the character U+0000 (a raw NUL or the escape
    /// `\u0000`) is refused, as jsonb itself refuses it. Text that merely spells `\u0000` is kept.
    @Test(arguments: [
        ["\\u0000"], ["a\\\\u0000"], ["\\\\u0000"], ["x\\u0000y", "\\"], ["\\\\", "u0000"],
    ])
    func jsonbKeepsTextSpellingAnEscapeAndDropsTheSignOfZero(strings: [String]) async throws {
        let connection = try await Self.connection()
        let json = String(decoding: try JSONEncoder().encode(strings), as: UTF8.self)
        for format in [PostgresConnection.ResultFormat.binary, .text] {
            let back = try await Self.roundTrip(json, as: .codable(typeName: "T"), on: connection, format: format)
            #expect(try JSONDecoder().decode([String].self, from: Data(back.utf8)) == strings, "\(back)")
            let zero = try await Self.roundTrip("[-0.0]", as: .codable(typeName: "T"), on: connection, format: format)
            let number = try JSONDecoder().decode([Double].self, from: Data(zero.utf8))
            #expect(number == [0] && number[0].sign == .plus, "\(zero)")
        }
        // jsonb's own refusal of the real escape, which the type map reports before sending.
        await #expect(throws: PostgresError.self) {
            try await connection.query("SELECT $1::text::jsonb", [.text(#"["\u0000"]"#)])
        }
        for escaped in [#"["\u0000"]"#, #"["\\\u0000"]"#, #"{"\u0000": 1}"#] {
            #expect(throws: PostgresError.self, "\(escaped)") {
                try PostgresTypeMap.postgresValue(.text(escaped), storedAs: .codable(typeName: "T"))
            }
        }
    }

    /// The DDL writes date defaults as text and text-format results are read back: PostgreSQL
    /// reads the runtime's text as the same microsecond, and the runtime reads PostgreSQL's text
    /// (in UTC and in a zone with a seconds offset, BC years included) as the same microsecond.
    @Test func timestampTextMeansTheSameMicrosecondToBothSides() async throws {
        let connection = try await makeConnection()
        var random = SplitMix64(seed: 0x7E47)
        var values: [Int64] = [
            0, -1, 1, PostgresDialect.microsecondRange.lowerBound, PostgresDialect.microsecondRange.upperBound, .max,
            .min,
        ]
        for _ in 0..<Self.randomCount {
            values.append(Int64.random(in: PostgresDialect.microsecondRange, using: &random))
        }
        for zone in ["UTC", "Asia/Kolkata", "Europe/Amsterdam"] {
            try await connection.execute("SET TIME ZONE '\(zone)'")
            for value in values {
                let text = PostgresDialect.timestampText(microseconds: value)
                #expect(PostgresDialect.microseconds(timestampText: text) == value, "\(text)")
                let rows = try await connection.query("SELECT $1::timestamptz", [.text(text)])
                #expect(rows[0, 0] == .timestamp(microsecondsSince2000: value), "\(text) in \(zone)")
                let back = try await connection.query(
                    "SELECT $1", [.timestamp(microsecondsSince2000: value)], format: .text)
                #expect(back[0, 0] == .timestamp(microsecondsSince2000: value), "\(text) in \(zone) as text")
            }
        }
    }
}
