import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright

/// ISO 8601 text names instants in the proleptic Gregorian calendar at every year from 1 to 9999,
/// so an early default or day is not shifted by Foundation's switch to the Julian calendar.
struct ISO8601TimestampTests {
    @Test func knownInstantsAtTheEdges() {
        let known: [(String, Double)] = [
            ("0001-01-01T00:00:00Z", -62_135_596_800),
            ("1582-10-15T00:00:00Z", -12_219_292_800),
            ("1970-01-01T00:00:00Z", 0),
            ("2001-01-01T00:00:00Z", 978_307_200),
            ("9999-12-31T23:59:59.999Z", 253_402_300_799.999),
        ]
        for (text, seconds) in known {
            #expect(ISO8601Timestamp.secondsSince1970(text) == seconds, "\(text)")
            #expect(ISO8601Timestamp.text(secondsSince1970: seconds) == text, "\(seconds)")
        }
        #expect(ISO8601Timestamp.secondsSince1970("1970-01-01T02:00:00+02:00") == 0)
        #expect(ISO8601Timestamp.secondsSince1970("1969-12-31T22:30:00-0130") == 0)
        #expect(ISO8601Timestamp.text(secondsSince1970: -62_135_596_801) == nil, "year 0")
        #expect(ISO8601Timestamp.text(secondsSince1970: .nan) == nil)
    }

    @Test func malformedTextIsRefused() {
        for text in [
            "", "2024-05-01", "2024-05-01T09:30:00", "2024-02-30T00:00:00Z", "2024-05-01T24:00:00Z",
            "2024-05-01T09:60:00Z", "2024-05-01T09:30:60Z", "2024-05-01 09:30:00Z", "2024-05-01T09:30:00.Z",
            "2024-05-01T09:30:00+25:00", "2024-05-01T09:30:00Zjunk", "+2024-05-01T09:30:00Z", "0000-01-01T00:00:00Z",
        ] {
            #expect(ISO8601Timestamp.secondsSince1970(text) == nil, "\(text)")
        }
    }

    /// Every millisecond instant of years 1 to 9999 reads back from its text, and its day is the
    /// `Day` that `Day(Date)` finds for it, before 1582 too.
    @Test func everyInstantRoundTripsThroughItsText() {
        var random = SplitMix64(seed: 0x150)
        let first = Int64(Day(year: 1, month: 1, day: 1)!.daysSince1970) * 86_400_000
        let last = Int64(Day(year: 9999, month: 12, day: 31)!.daysSince1970 + 1) * 86_400_000 - 1
        for _ in 0..<5_000 {
            let milliseconds = Int64.random(in: first...last, using: &random)
            let seconds = Double(milliseconds) / 1_000
            guard let text = ISO8601Timestamp.text(secondsSince1970: seconds) else {
                Issue.record("no text for \(seconds)")
                continue
            }
            #expect(ISO8601Timestamp.secondsSince1970(text) == seconds, "\(text)")
            #expect(Day(Date(timeIntervalSince1970: seconds)).description == String(text.prefix(10)), "\(text)")
        }
    }
}
