import Foundation

/// A value as SQLite stores it: the currency of query parameters and predicates.
public enum SQLValue: Sendable, Hashable {
    /// SQL `NULL`.
    case null
    /// A 64-bit integer (also `Bool`, enums backed by `Int`).
    case integer(Int64)
    /// A double (also `Float`, `Date` as seconds since 2001-01-01).
    case real(Double)
    /// UTF-8 text (also `Decimal`, `URL`, enums backed by `String`, JSON).
    case text(String)
    /// Bytes (also `UUID`, as 16 bytes).
    case blob(Data)
}
