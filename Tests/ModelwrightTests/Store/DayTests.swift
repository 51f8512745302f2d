import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright

/// `Day` agrees with Foundation's Gregorian calendar on every day it draws, reads exactly the text
/// it writes, sorts as its text sorts, and refuses days that do not exist.
struct DayTests {
    static let first = Day(year: 1, month: 1, day: 1)!.daysSince1970
    static let last = Day(year: 9999, month: 12, day: 31)!.daysSince1970

    @Test func dayNumbersAgreeWithFoundationsCalendar() throws {
        var random = SplitMix64(seed: 0xDA7)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        // Foundation's Gregorian calendar is Julian before 1582: compare from then on.
        let gregorianStart = Day(year: 1583, month: 1, day: 1)!.daysSince1970
        var numbers = [gregorianStart, Self.last, 0, -1, 1, 11_016, 10_957]
        for _ in 0..<3_000 { numbers.append(Int.random(in: gregorianStart...Self.last, using: &random)) }
        for number in numbers {
            let day = Day(daysSince1970: number)
            #expect(day.daysSince1970 == number)
            let date = Date(timeIntervalSince1970: Double(number) * 86_400)
            let parts = calendar.dateComponents([.year, .month, .day], from: date)
            #expect([parts.year, parts.month, parts.day] == [day.year, day.month, day.day], "\(number)")
            #expect(Day(date) == day)
        }
    }

    @Test func everyDayNumberRoundTripsThroughItsText() throws {
        var random = SplitMix64(seed: 0x7E47)
        var previous: Day?
        var numbers = [Self.first, Self.last]
        for _ in 0..<3_000 { numbers.append(Int.random(in: Self.first...Self.last, using: &random)) }
        for number in numbers.sorted() {
            let day = Day(daysSince1970: number)
            #expect(Day(day.description) == day)
            #expect(try Day(sqlValue: day.sqlValue) == day)
            if let previous, previous != day {
                #expect(previous < day)
                #expect(previous.description < day.description)
            }
            previous = day
        }
        #expect(Day(daysSince1970: Self.first - 1) == Day(daysSince1970: Self.first))
        #expect(Day(daysSince1970: Self.last + 1) == Day(daysSince1970: Self.last))
    }

    @Test func daysThatDoNotExistAndOtherTextAreRefused() {
        for text in [
            "2023-02-29", "2100-02-29", "2024-02-30", "2024-04-31", "2024-13-01", "2024-00-10", "2024-01-00",
            "0000-01-01", "2024-1-01", "2024-01-1", "24-01-01", "2024/01/01", "2024-01-01T00:00:00Z", " 2024-01-01",
            "2024-01-01 ", "２０２４-01-01", "",
        ] {
            #expect(Day(text) == nil, "\(text)")
            #expect((try? Day(sqlValue: .text(text))) == nil, "\(text)")
        }
        #expect(Day("2000-02-29") != nil)
        #expect(Day("2024-02-29") != nil)
        #expect((try? Day(sqlValue: .integer(19_000))) == nil)
    }
}
