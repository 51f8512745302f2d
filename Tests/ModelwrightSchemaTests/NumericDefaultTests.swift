import Foundation
import ModelwrightTestSupport
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

    /// A `Double` or `Float` default is the value Swift holds for its literal, or a located error:
    /// every normal value's shortest spelling is accepted, every subnormal one (Swift reports an
    /// underflow) and every nonzero literal that underflows to zero is refused, and an integer is
    /// accepted exactly when the type represents it (Swift refuses the others).
    @Test func floatingPointDefaultsAreExactlyWhatSwiftHolds() {
        var random = SplitMix64(seed: 24)
        var mismatches: [String] = []
        for _ in 0..<300 {
            let double = Double(bitPattern: random.next())
            let float = Float(bitPattern: UInt32(truncatingIfNeeded: random.next()))
            for (type, text, isNormal, isFinite) in [
                ("Double", "\(double)", double.isNormal, double.isFinite),
                ("Float", "\(float)", float.isNormal, float.isFinite),
            ] where isFinite {
                let found = Self.errors(type, text)
                // Zero and normal values are accepted unless they are integers written exactly that
                // the description already spells exactly (always, for a shortest description).
                if found.isEmpty != (isNormal || Double(text) == 0) { mismatches.append("\(type) \(text): \(found)") }
            }
            // Subnormal magnitudes, which Swift refuses as underflow.
            let subnormal = Double(bitPattern: random.next() % (1 << 52) + 1)
            #expect(Self.errors("Double", "\(subnormal)").count == 1, "\(subnormal)")
            let tinyFloat = Float(bitPattern: UInt32(random.next() % (1 << 23) + 1))
            #expect(Self.errors("Float", "\(tinyFloat)").count == 1, "\(tinyFloat)")
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
        for text in ["1e-400", "-1e-46", "0.0000000000000000000000000000000000000000000000001"] {
            #expect(Self.errors("Float", text).count == 1, "\(text)")
        }
        #expect(Self.errors("Double", "1e-400").count == 1)
        for type in ["Double", "Float"] {
            for text in ["0", "-0", "0.0", "-0.0", "0e-999"] {
                #expect(Self.errors(type, text).isEmpty, "\(type) \(text)")
            }
        }
        // Integers around the last exactly representable ones.
        for offset in -40...40 {
            let float = (1 << 24) + offset
            #expect(Self.errors("Float", "\(float)").isEmpty == (Float(exactly: float) != nil), "\(float)")
            #expect(Self.errors("Float", "\(float).0").isEmpty == (Float(exactly: float) != nil), "\(float).0")
            let double = (1 << 53) + Int64(offset)
            #expect(Self.errors("Double", "\(double)").isEmpty == (Double(exactly: double) != nil), "\(double)")
            #expect(Self.errors("Double", "-\(double)").isEmpty == (Double(exactly: double) != nil), "-\(double)")
        }
        // A long integer that a Double holds exactly (2^100), and one it does not.
        #expect(Self.errors("Double", "1267650600228229401496703205376").isEmpty)
        #expect(Self.errors("Double", "1267650600228229401496703205377").count == 1)
    }

    /// A `Decimal` default keeps every digit written, or is a located error: `Decimal` keeps a
    /// 128-bit significand (38 or 39 digits) and exponents from -128 to 127.
    @Test func decimalDefaultsKeepEveryDigit() {
        let digits = "12345678901234567890123456789012345678"
        #expect(Self.errors("Decimal", digits).isEmpty)
        #expect(Self.errors("Decimal", "-0." + digits).isEmpty)
        #expect(Self.errors("Decimal", digits + "000").isEmpty)
        // 39 digits fit while the significand stays under 2^128; 40 never do.
        #expect(Self.errors("Decimal", digits + "9").isEmpty)
        #expect(Self.errors("Decimal", digits + "99").count == 1)
        #expect(Self.errors("Decimal", "0." + digits + "99").count == 1)
        #expect(Self.errors("Decimal", "1e-129").count == 1)
        #expect(Self.errors("Decimal", "1e128").count == 1)
        #expect(Self.errors("Decimal", "-0").isEmpty)
    }

    /// Request constants are checked by the same rule.
    @Test func requestConstantsAreCheckedLikeDefaults() {
        let found = diagnose(
            "model Test version 1\nentity A {\n    f: Float\n}\nrequest big: A where \"f == 16777217\"\n"
        ).filter { $0.contains(": error: ") }
        #expect(found.count == 1 && found[0].contains("not exactly representable as Float"), "\(found)")
    }
}
