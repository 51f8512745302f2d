import Foundation
import Modelwright
import ModelwrightTestSupport
import Testing

/// Every attribute type comes back from the store exactly as it went in.
struct ValueRoundTripTests {
    private static func roundTrip(_ sample: Sample) async throws -> Sample? {
        let store = try Store.inMemory(schema: Fixture.schema)
        try await store.performAndSave { try $0.insert(sample) }
        return try await store.performQuery { try $0.existing(sample.id) }
    }

    @Test func everyTypeRoundTrips() async throws {
        var sample = Sample()
        sample.bool = true
        sample.int16 = .min
        sample.int32 = .max
        sample.int64 = .min
        sample.int = .max
        sample.double = 1.0 / 3.0
        sample.float = 0.1
        sample.decimal = Decimal(string: "12345678901234567890.123456789")!
        sample.string = "plain"
        sample.date = Date(timeIntervalSinceReferenceDate: 123_456_789.123_456_789)
        sample.data = Data([0, 1, 2, 255])
        sample.uuid = UUID()
        sample.url = URL(string: "https://example.com/a%20b?q=1#frag")!
        sample.role = .admin
        sample.tags = ["a", "b"]
        sample.note = "note"
        #expect(try await Self.roundTrip(sample) == sample)
    }

    @Test func hostileStringsRoundTrip() async throws {
        for string in ExtremeValues.strings {
            var sample = Sample()
            sample.string = string
            let stored = try await Self.roundTrip(sample)
            #expect(stored?.string.utf8.elementsEqual(string.utf8) == true, "\(string.prefix(20))")
        }
    }

    @Test func emptyDataStaysEmptyAndOptionalsStayNil() async throws {
        var sample = Sample()
        sample.data = Data()
        sample.note = nil
        sample.tags = nil
        let stored = try #require(try await Self.roundTrip(sample))
        #expect(stored.data == Data())
        #expect(stored.note == nil)
        #expect(stored.tags == nil)
    }

    @Test func datesKeepEveryBitOfTheirValue() async throws {
        for interval in ExtremeValues.dateIntervals {
            var sample = Sample()
            sample.date = Date(timeIntervalSinceReferenceDate: interval)
            #expect(try await Self.roundTrip(sample)?.date.timeIntervalSinceReferenceDate == interval)
        }
    }

    @Test func decimalsAreExact() async throws {
        for text in ExtremeValues.decimals {
            var sample = Sample()
            sample.decimal = Decimal(string: text)!
            #expect(try await Self.roundTrip(sample)?.decimal == Decimal(string: text)!)
        }
    }

    @Test func doubleExtremesRoundTripAndNaNIsRefused() async throws {
        for value in ExtremeValues.doubles {
            var sample = Sample()
            sample.double = value
            let stored = try #require(try await Self.roundTrip(sample))
            #expect(stored.double == value)
            #expect(stored.double.sign == value.sign)
        }
        var sample = Sample()
        sample.double = .nan
        await #expect(throws: StoreError.self) { try await Self.roundTrip(sample) }
    }

    @Test func aNaNDateIsRefusedNamingItsAttribute() async throws {
        for date in [Date(timeIntervalSinceReferenceDate: .nan), Date(timeIntervalSinceReferenceDate: -.nan)] {
            var sample = Sample()
            sample.date = date
            await #expect {
                try await Self.roundTrip(sample)
            } throws: { error in
                guard case StoreError.invalidValue(let entity, let message) = error else { return false }
                return entity == "Sample" && message.hasPrefix("'date': ") && message.contains("NaN")
            }
        }
    }
}
