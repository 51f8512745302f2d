import Foundation
import Modelwright
import ModelwrightSchema

/// A Date attribute's default in both languages: Core Data's `defaultDateTimeInterval` (seconds
/// since 2001-01-01 00:00:00 UTC, as `Date` holds them) and the schema's ISO 8601 string.
///
/// The schema's literal holds milliseconds at most, so a value with finer digits is rounded to the
/// nearest millisecond, and the caller warns. Whole seconds, which is what Xcode's date picker
/// writes, come back exactly.
enum CoreDataDateDefault {
    /// The instants an ISO 8601 date can name: the years 0001 to 9999, in seconds since 2001.
    static let range: ClosedRange<Double> = -63_113_904_000...252_423_993_599.999

    /// An imported default: its schema literal, and whether the value had to be rounded to get it.
    struct Literal: Equatable {
        /// The quoted ISO 8601 literal, such as `"2024-05-01T09:30:00.250Z"`.
        var text: String
        /// Whether digits finer than a millisecond were dropped.
        var isRounded: Bool
    }

    /// The schema literal of `text`, Core Data's seconds since 2001, or why there is none.
    static func literal(ofInterval text: String) -> Result<Literal, DefaultValueProblem> {
        guard let seconds = Double(text.trimmingCharacters(in: .whitespaces)), seconds.isFinite else {
            return .failure(.init("it is not a finite number of seconds since 2001-01-01"))
        }
        guard range.contains(seconds) else {
            return .failure(.init("it is outside the years 1 to 9999 that an ISO 8601 date can name"))
        }
        // In whole milliseconds, an integer well inside Double's exact range (±2^53).
        let milliseconds = (seconds * 1000).rounded()
        let since1970 = milliseconds / 1000 + Date.timeIntervalBetween1970AndReferenceDate
        guard let iso = ISO8601Timestamp.text(secondsSince1970: since1970) else {
            return .failure(.init("it cannot be written as an ISO 8601 date"))
        }
        return .success(Literal(text: "\"\(iso)\"", isRounded: milliseconds / 1000 != seconds))
    }

    /// Core Data's `defaultDateTimeInterval` for a schema default of `secondsSince1970`: seconds
    /// since 2001, rounded to the microsecond so the 1970 → 2001 subtraction leaves no noise digits.
    static func interval(secondsSince1970: Double) -> String {
        let seconds = secondsSince1970 - Date.timeIntervalBetween1970AndReferenceDate
        guard seconds.isFinite else { return "\(seconds)" }
        // Beyond 10^9 seconds a Double's spacing is already about a microsecond.
        let rounded = abs(seconds) < 1e9 ? (seconds * 1_000_000).rounded() / 1_000_000 : seconds
        if rounded.rounded() == rounded, abs(rounded) < 9e18 { return String(Int64(rounded)) }
        return "\(rounded)"
    }
}
