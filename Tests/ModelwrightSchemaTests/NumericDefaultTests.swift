import Foundation
import Testing

@testable import ModelwrightSchema

/// Numeric defaults are finite and fit their attribute's type, or are a located error.
struct NumericDefaultTests {
    private static func errors(_ type: String, _ value: String) -> [String] {
        diagnose("model Test version 1\nentity A {\n    x: \(type) = \(value)\n}\n").filter { $0.contains(": error: ") }
    }

    @Test func integerDefaultsAtAndPastEveryBound() {
        let bounds: [(String, Int64, Int64)] = [
            ("Int16", Int64(Int16.min), Int64(Int16.max)), ("Int32", Int64(Int32.min), Int64(Int32.max)),
            ("Int64", Int64.min, Int64.max), ("Int", Int64.min, Int64.max),
        ]
        for (type, low, high) in bounds {
            #expect(Self.errors(type, "\(low)").isEmpty)
            #expect(Self.errors(type, "\(high)").isEmpty)
            let above = high == Int64.max ? "9223372036854775808" : "\(high + 1)"
            let below = low == Int64.min ? "-9223372036854775809" : "\(low - 1)"
            for value in [above, below, String(repeating: "9", count: 5_000)] {
                let found = Self.errors(type, value)
                #expect(
                    found.count == 1 && found[0].hasPrefix("3:") && found[0].contains("does not fit in \(type)"),
                    "\(found)")
            }
        }
    }

    @Test func floatingPointAndDecimalDefaultsMustBeFinite() {
        for (type, value) in [
            ("Double", "1e309"), ("Double", "-1e309"), ("Float", "3.5e38"), ("Float", "-1e39"), ("Decimal", "1e400"),
            ("Decimal", "-1e300"), ("Double", "1" + String(repeating: "0", count: 400)),
        ] {
            let found = Self.errors(type, value)
            #expect(found.count == 1 && found[0].hasPrefix("3:"), "\(type) \(value): \(found)")
        }
        for (type, value) in [("Double", "1.7976931348623157e308"), ("Float", "3.4e38"), ("Decimal", "1e127")] {
            #expect(Self.errors(type, value).isEmpty, "\(type) \(value)")
        }
        // No literal spells NaN or infinity.
        for value in ["nan", "NaN", "inf", "infinity"] {
            #expect(Self.errors("Double", value).count == 1)
        }
    }
}
