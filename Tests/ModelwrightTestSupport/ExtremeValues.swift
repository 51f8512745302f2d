import Foundation

/// The extreme values every engine's round-trip suite stores and reads back: SQLite's
/// (`ValueRoundTripTests`) and PostgreSQL's (`PostgresTypeMapTests`) draw from these same lists,
/// so an engine cannot pass on easier values.
package enum ExtremeValues {
    /// Strings that break quoting, encodings and length limits (the 1 MiB one included).
    package static let strings = [
        "", "it's \"quoted\"", "nul\u{0}inside", "emoji 👩‍👩‍👧‍👦🇵🇹", "e\u{301} combining",
        "Robert'); DROP TABLE \"User\";--",
        String(repeating: "x", count: 1_048_576),
    ]

    /// Doubles at the edges of their range, -0.0 and the infinities (NaN is refused everywhere).
    package static let doubles: [Double] = [
        .infinity, -.infinity, -0.0, .greatestFiniteMagnitude, .leastNonzeroMagnitude, -.leastNormalMagnitude,
    ]

    /// Dates as seconds since 2001-01-01, at the edges of what `Date` and the engines hold.
    package static let dateIntervals: [Double] = [
        0, -1e9, 1e9, 0.000_001, 978_307_200.000_000_1, Date.distantFuture.timeIntervalSinceReferenceDate,
    ]

    /// Decimals at the edges of `Decimal`'s precision.
    package static let decimals = [
        "0.1", "-0.000000000000000000000000001", "99999999999999999999999999999999999999", "19.99",
    ]

    /// Integers at the edges of each width.
    package static let integers: [Int64] = [
        .min, .max, 0, -1, 1, Int64(Int32.min), Int64(Int32.max), Int64(Int16.min), Int64(Int16.max),
    ]
}
