import Foundation

/// An instant written as ISO 8601 text, `2024-05-01T09:30:00Z`, in the proleptic Gregorian
/// calendar that ISO 8601 names, years 1 to 9999.
///
/// Foundation's formatter and Gregorian calendar switch to the Julian calendar before October
/// 1582, so `0001-01-01T00:00:00Z` read through them is two days off the instant every other
/// system means (-62,135,596,800 seconds since 1970). Schema defaults and their Core Data
/// counterparts are read and written here instead, with ``Day``'s day arithmetic.
package enum ISO8601Timestamp {
    /// Seconds since 1970 of `YYYY-MM-DDTHH:MM:SS`, with optional fractions of a second, then `Z`
    /// or an offset `±HH:MM` (or `±HHMM`, `±HH`); `nil` for any other text.
    package static func secondsSince1970(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes[10] == UInt8(ascii: "T"), bytes[13] == colon, bytes[16] == colon,
            let day = Day(String(decoding: bytes[0..<10], as: UTF8.self)),
            let hour = number(bytes[11..<13]), hour < 24,
            let minute = number(bytes[14..<16]), minute < 60,
            let second = number(bytes[17..<19]), second < 60
        else { return nil }
        var index = 19
        var fraction = 0.0
        if bytes[index] == UInt8(ascii: ".") {
            let digits = bytes[(index + 1)...].prefix { isDigit($0) }
            guard !digits.isEmpty, let value = Double("0." + String(decoding: digits, as: UTF8.self)) else {
                return nil
            }
            fraction = value
            index += 1 + digits.count
        }
        guard let offset = offsetSeconds(bytes[index...]) else { return nil }
        let whole = Int64(day.daysSince1970) * 86_400 + Int64(hour * 3_600 + minute * 60 + second) - offset
        return Double(whole) + fraction
    }

    /// The UTC text of an instant, to the millisecond: `2024-05-01T09:30:00Z`, with `.250` before
    /// the `Z` when there are milliseconds; `nil` outside years 1 to 9999 or for a non-finite value.
    package static func text(secondsSince1970 seconds: Double) -> String? {
        guard seconds.isFinite, abs(seconds) < 1e12 else { return nil }
        let milliseconds = Int64((seconds * 1_000).rounded())
        let (wholeSeconds, millisecond) = floorDivision(milliseconds, 1_000)
        let (days, secondOfDay) = floorDivision(wholeSeconds, 86_400)
        let civil = Day.civil(daysSince1970: days)
        guard (1...9999).contains(civil.year) else { return nil }
        var text =
            "\(digits(civil.year, 4))-\(digits(civil.month, 2))-\(digits(civil.day, 2))T"
            + "\(digits(secondOfDay / 3_600, 2)):\(digits(secondOfDay / 60 % 60, 2)):\(digits(secondOfDay % 60, 2))"
        if millisecond != 0 { text += "." + digits(millisecond, 3) }
        return text + "Z"
    }

    private static let colon = UInt8(ascii: ":")

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private static func number(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard !bytes.isEmpty, bytes.allSatisfy(isDigit) else { return nil }
        return bytes.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }

    /// The seconds a `Z` or `±HH[:]MM` suffix lies ahead of UTC.
    private static func offsetSeconds(_ bytes: ArraySlice<UInt8>) -> Int64? {
        guard let sign = bytes.first else { return nil }
        if sign == UInt8(ascii: "Z"), bytes.count == 1 { return 0 }
        guard sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") else { return nil }
        let rest = Array(bytes.dropFirst())
        let hours: Int?
        let minutes: Int?
        switch rest.count {
        case 2: (hours, minutes) = (number(rest[0..<2]), 0)
        case 4: (hours, minutes) = (number(rest[0..<2]), number(rest[2..<4]))
        case 5 where rest[2] == colon: (hours, minutes) = (number(rest[0..<2]), number(rest[3..<5]))
        default: return nil
        }
        guard let hours, let minutes, hours < 24, minutes < 60 else { return nil }
        let seconds = Int64(hours * 3_600 + minutes * 60)
        return sign == UInt8(ascii: "-") ? -seconds : seconds
    }

    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let remainder = value % divisor
        return remainder < 0 ? (value / divisor - 1, remainder + divisor) : (value / divisor, remainder)
    }

    private static func digits(_ value: Int64, _ count: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, count - text.count)) + text
    }
}
