import Foundation

// Values and dates here; the schema's DDL and names in `PostgresDialect+Schema`, the statements the
// store issues in `PostgresDialect+SQLDialect`.

/// PostgreSQL's spelling of a store: the column type of each attribute type, how a `Date` becomes
/// microseconds, and the DDL that creates a schema (issue 27).
///
/// It lives in the runtime because the runtime owns all SQL and the layout (``SchemaLayout``
/// names every table and column; this file only spells them for PostgreSQL), and it is `package`
/// because only `ModelwrightPostgres` calls it. It needs no libpq: rendering SQL is plain Swift.
///
/// A value of it is the runtime's ``SQLDialect`` for PostgreSQL (see "SQLDialect" below): every
/// statement the store issues, spelled for that engine. Where PostgreSQL has no equivalent of
/// something SQLite offers (a row number, `data_version`, a foreign-key check query), the
/// requirement throws ``SQLDialectError/unsupported(_:)`` saying what stands in for it.
package struct PostgresDialect: Sendable {
    /// The dialect value a PostgreSQL connection hands the runtime.
    package init() {}

    /// The PostgreSQL column types a store uses, each chosen so a value round-trips exactly.
    package enum ColumnType: String, Sendable, CaseIterable {
        case boolean
        case smallint
        case integer
        case bigint
        case doublePrecision = "double precision"
        case real
        case numeric
        case text
        case timestamptz
        case bytea
        case uuid
        case jsonb
    }

    /// The column type of an attribute type; `nil` stands for a record ID (the `id` column and
    /// to-one relationships), which is a `uuid`.
    package static func columnType(of type: AttributeType?) -> ColumnType {
        guard let type else { return .uuid }
        // A composite is one column per field; one nested inside another is stored as the runtime
        // encodes it, as text, kept byte for byte.
        if case .composite = type { return .text }
        return switch SchemaLayout.storage(of: type) {
        case .boolean: .boolean
        case .integer16: .smallint
        case .integer32: .integer
        case .integer64: .bigint
        case .double: .doublePrecision
        case .float: .real
        case .decimal: .numeric
        case .text: .text
        case .timestamp: .timestamptz
        case .bytes: .bytea
        case .uuid: .uuid
        case .json: .jsonb
        }
    }

    // MARK: - Dates

    /// Seconds from PostgreSQL's epoch (2000-01-01) to `Date`'s reference date (2001-01-01).
    private static let epochOffset: Int64 = 31_622_400
    /// The first and last microsecond PostgreSQL's `timestamptz` holds (4713 BC to 294276 AD);
    /// `Int64.min` and `Int64.max` themselves stand for `-infinity` and `infinity`.
    package static let microsecondRange: ClosedRange<Int64> = -211_813_488_000_000_000...9_223_371_331_199_999_999

    /// A `Date` (seconds since 2001-01-01) as PostgreSQL's `timestamptz`: microseconds since
    /// 2000-01-01, rounded to the nearest microsecond, halfway cases to even, computed exactly
    /// (never through a rounded product). Infinities become PostgreSQL's `infinity` and
    /// `-infinity`. Throws for NaN and for dates outside 4713 BC … 294276 AD.
    package static func microseconds(sinceReferenceDate seconds: Double) throws -> Int64 {
        guard !seconds.isNaN else { throw PostgresValueError("a NaN date cannot be stored") }
        if seconds.isInfinite { return seconds < 0 ? .min : .max }
        guard let rounded = microsecondsRoundedToEven(seconds), let shifted = addingEpoch(rounded),
            microsecondRange.contains(shifted)
        else {
            throw PostgresValueError(
                "the date \(seconds) seconds after 2001-01-01 is outside PostgreSQL's timestamptz range "
                    + "(4713 BC to 294276 AD)")
        }
        return shifted
    }

    /// The `Date` interval (seconds since 2001-01-01) nearest to `microseconds` since 2000-01-01.
    /// A date read back equals the date written whenever that date is a whole number of
    /// microseconds or lies more than about 272 years from 2001 (where `Double` spacing is at
    /// least a microsecond); otherwise it is the nearest `Double` to the rounded microsecond.
    package static func secondsSinceReferenceDate(microseconds: Int64) -> Double {
        if microseconds == .max { return .infinity }
        if microseconds == .min { return -.infinity }
        let value = microseconds - epochOffset * 1_000_000
        // Both operands exact, so one correctly rounded division.
        if value.magnitude <= 1 << 53 { return Double(value) / 1_000_000 }
        let (whole, rest) = value.quotientAndRemainder(dividingBy: 1_000_000)
        return Double(whole) + Double(rest) / 1_000_000
    }

    private static func addingEpoch(_ value: Int64) -> Int64? {
        let (sum, overflow) = value.addingReportingOverflow(epochOffset * 1_000_000)
        return overflow ? nil : sum
    }

    /// `seconds × 10⁶` rounded half to even, in exact integer arithmetic on the double's
    /// significand; `nil` when it does not fit in 64 bits.
    private static func microsecondsRoundedToEven(_ seconds: Double) -> Int64? {
        if seconds == 0 { return 0 }
        // |seconds| = significand × 2^exponent, exactly.
        let significand =
            seconds.isNormal
            ? seconds.significandBitPattern | (1 << UInt64(Double.significandBitCount))
            : seconds.significandBitPattern
        let exponent =
            (seconds.isNormal ? Int(seconds.exponent) : Int(Double.leastNormalMagnitude.exponent))
            - Double.significandBitCount
        let (high, low) = significand.multipliedFullWidth(by: 1_000_000)  // below 2^73
        var magnitude: UInt64
        if exponent >= 0 {
            guard high == 0, exponent < 63, low >> UInt64(63 - exponent) == 0 else { return nil }
            magnitude = low << UInt64(exponent)
        } else if -exponent >= 74 {
            magnitude = 0  // the product is below 2^73, less than half of 2^shift
        } else {
            let shift = -exponent
            // The quotient and the remainder of (high, low) ÷ 2^shift, and half of 2^shift.
            let remainder: (high: UInt64, low: UInt64)
            let half: (high: UInt64, low: UInt64)
            if shift >= 64 {
                magnitude = high >> UInt64(shift - 64)
                remainder = (high & ((1 << UInt64(shift - 64)) &- 1), low)
                half = shift == 64 ? (0, 1 << 63) : (1 << UInt64(shift - 65), 0)
            } else {
                magnitude = low >> UInt64(shift) | high << UInt64(64 - shift)
                remainder = (0, low & ((1 << UInt64(shift)) &- 1))
                half = (0, 1 << UInt64(shift - 1))
            }
            let isAboveHalf = remainder.high != half.high ? remainder.high > half.high : remainder.low > half.low
            let isHalf = remainder == half
            if isAboveHalf || (isHalf && magnitude & 1 == 1) { magnitude += 1 }
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return seconds < 0 ? -Int64(magnitude) : Int64(magnitude)
    }

    /// The microsecond as PostgreSQL's text input reads it: `2001-01-01 00:00:00.000000+00`,
    /// with ` BC` for years before 1 AD; `infinity` and `-infinity` for the two ends.
    package static func timestampText(microseconds: Int64) -> String {
        if microseconds == .max { return "infinity" }
        if microseconds == .min { return "-infinity" }
        let perDay: Int64 = 86_400_000_000
        let (days, inDay) = (microseconds.floorDivided(by: perDay), microseconds.floorModulo(by: perDay))
        // Days since 2000-01-01, which is 10,957 days after 1970-01-01.
        let (year, month, day) = Day.civil(daysSince1970: days + 10_957)
        func padded(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let seconds = inDay / 1_000_000
        let time =
            "\(padded(seconds / 3_600, 2)):\(padded(seconds / 60 % 60, 2)):\(padded(seconds % 60, 2))"
            + ".\(padded(inDay % 1_000_000, 6))+00"
        // PostgreSQL has no year 0: astronomical year 0 is 1 BC.
        let suffix = year > 0 ? "" : " BC"
        return "\(padded(year > 0 ? year : 1 - year, 4))-\(padded(month, 2))-\(padded(day, 2)) \(time)\(suffix)"
    }
}

extension PostgresDialect {
    /// The microsecond a `timestamptz` in PostgreSQL's ISO text output stands for
    /// (`2001-01-01 00:00:00.000001+00`, any offset such as `+05:30` or `-00:53:28`, ` BC`,
    /// `infinity`): the inverse of ``timestampText(microseconds:)``; `nil` for other text.
    package static func microseconds(timestampText text: String) -> Int64? {
        if text == "infinity" { return .max }
        if text == "-infinity" { return .min }
        var rest = Substring(text)
        let isBC = rest.hasSuffix(" BC")
        if isBC { rest = rest.dropLast(3) }
        let parts = rest.split(separator: " ")
        guard parts.count == 2 else { return nil }
        let date = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard date.count == 3, let year = Int64(date[0]), let month = Int64(date[1]), let day = Int64(date[2]),
            (1...12).contains(month), (1...31).contains(day), year >= 1
        else { return nil }
        var time = parts[1]
        guard let signIndex = time.lastIndex(where: { $0 == "+" || $0 == "-" }) else { return nil }
        let offsetParts = time[time.index(after: signIndex)...].split(separator: ":").map { Int64($0) }
        guard (1...3).contains(offsetParts.count), offsetParts.allSatisfy({ $0 != nil }) else { return nil }
        let offsetSeconds =
            zip(offsetParts.compactMap { $0 }, [3_600, 60, 1] as [Int64]).map(*).reduce(0, +)
            * (time[signIndex] == "-" ? -1 : 1)
        time = time[..<signIndex]
        let clock = time.split(separator: ":")
        guard clock.count == 3, let hours = Int64(clock[0]), let minutes = Int64(clock[1]) else { return nil }
        let secondParts = clock[2].split(separator: ".", omittingEmptySubsequences: false)
        guard let seconds = Int64(secondParts[0]), secondParts.count <= 2 else { return nil }
        var fraction: Int64 = 0
        if secondParts.count == 2 {
            let digits = secondParts[1]
            guard (1...6).contains(digits.count), let value = Int64(digits) else { return nil }
            fraction = value * [1, 100_000, 10_000, 1_000, 100, 10, 1][digits.count]
        }
        // Howard Hinnant's days_from_civil, for the astronomical year (1 BC is year 0).
        let astronomical = isBC ? 1 - year : year
        let shiftedYear = month <= 2 ? astronomical - 1 : astronomical
        let era = shiftedYear.floorDivided(by: 400)
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468 - 10_957  // since 2000-01-01
        let (total, overflow) = days.multipliedReportingOverflow(by: 86_400_000_000)
        guard !overflow else { return nil }
        return total + ((hours * 60 + minutes) * 60 + seconds - offsetSeconds) * 1_000_000 + fraction
    }
}

/// Why a value cannot be stored in PostgreSQL exactly (a string holding NUL, a date out of range).
package struct PostgresValueError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, in the user's terms.
    package let message: String

    /// An error saying `message`.
    package init(_ message: String) {
        self.message = message
    }

    /// The message.
    package var description: String { message }
}

extension Int64 {
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let (quotient, remainder) = quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? quotient - 1 : quotient
    }

    fileprivate func floorModulo(by divisor: Int64) -> Int64 {
        let remainder = self % divisor
        return remainder < 0 ? remainder + divisor : remainder
    }
}
