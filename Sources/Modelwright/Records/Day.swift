import Foundation

/// A calendar day without a time of day or a time zone, such as a birthday or a due date.
///
/// A `Date` is an instant: the same birthday read in another time zone can fall on the day
/// before. A `Day` is the year, month and day as written, in the proleptic Gregorian calendar,
/// years 1 to 9999. The store keeps it as its ISO 8601 text (`2024-05-01`), which sorts as the days
/// do.
///
/// ```swift
/// let due = Day(year: 2024, month: 5, day: 1)!
/// let same = Day("2024-05-01")
/// let today = Day(Date(), in: .current)
/// ```
public struct Day: Sendable, Hashable, Comparable, Codable, LosslessStringConvertible {
    /// The year, 1 to 9999.
    public let year: Int
    /// The month, 1 to 12.
    public let month: Int
    /// The day of the month, 1 to 31.
    public let day: Int

    /// The day, or `nil` when there is no such day (February 30, say).
    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month), day >= 1,
            day <= Self.length(ofMonth: month, in: year)
        else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Reads `YYYY-MM-DD`, exactly as ``description`` writes it; `nil` for any other text.
    public init?(_ description: String) {
        let bytes = Array(description.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10) else { return nil }
        self.init(year: year, month: month, day: day)
    }

    /// The day on which `date` falls in `timeZone` (UTC unless given).
    ///
    /// Counted in the proleptic Gregorian calendar like every `Day`: Foundation's Gregorian
    /// calendar turns Julian before October 1582, which would put an early instant on another day
    /// than ``daysSince1970`` gives back. Instants beyond years 1 to 9999 clamp to them.
    public init(_ date: Date, in timeZone: TimeZone = TimeZone(identifier: "UTC") ?? .current) {
        let local = date.timeIntervalSince1970 + Double(timeZone.secondsFromGMT(for: date))
        let days = (local / 86_400).rounded(.down)
        let bound = Double(Self.last.daysSince1970 + 1)
        self.init(daysSince1970: days.isNaN ? 0 : Int(min(max(days, -bound), bound)))
    }

    /// The day `count` days after 1970-01-01 (before it, when negative), clamped to years 1 to 9999.
    public init(daysSince1970 count: Int) {
        let civil = Self.civil(daysSince1970: Int64(min(max(count, Self.first.daysSince1970), Self.last.daysSince1970)))
        year = Int(civil.year)
        month = Int(civil.month)
        day = Int(civil.day)
    }

    /// The proleptic Gregorian date `days` days after 1970-01-01, for any day an `Int64` counts
    /// (years before 1 are astronomical: 0 is 1 BC): eras of 400 years (146,097 days) starting on
    /// March 1. The one conversion from a day count to a date, for `Day` and PostgreSQL's text.
    package static func civil(daysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// The number of days from 1970-01-01 to this day (negative before it).
    public var daysSince1970: Int {
        let year = month <= 2 ? self.year - 1 : self.year
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// `YYYY-MM-DD`.
    public var description: String {
        func digits(_ value: Int, _ count: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, count - text.count)) + text
        }
        return "\(digits(year, 4))-\(digits(month, 2))-\(digits(day, 2))"
    }

    /// Earlier days first.
    public static func < (lhs: Day, rhs: Day) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    /// Decodes the ISO text.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let day = Day(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "\"\(text)\" is not a day")
        }
        self = day
    }

    /// Encodes the ISO text.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// 0001-01-01.
    static let first = Day(checkedYear: 1, month: 1, day: 1)
    /// 9999-12-31.
    static let last = Day(checkedYear: 9999, month: 12, day: 31)

    private init(checkedYear year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    private static func length(ofMonth month: Int, in year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

extension Day: ColumnValue {
    /// The ISO 8601 text, `YYYY-MM-DD`.
    @_spi(Generated) public var sqlValue: SQLValue { .text(description) }
    /// Reads text that is exactly a day as ``description`` writes it.
    @_spi(Generated) public init(sqlValue: SQLValue) throws {
        guard case .text(let text) = sqlValue, let day = Day(text) else {
            throw ColumnValueError.mismatch(sqlValue, Day.self)
        }
        self = day
    }
}
