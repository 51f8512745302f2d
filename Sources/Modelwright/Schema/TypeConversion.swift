/// How stored values of one attribute type become another's, in a lightweight migration: the one
/// rule the planner judges a type change by and the migrator runs.
package struct TypeConversion: Sendable, Equatable {
    /// Whether every value survives the conversion.
    package let isLossless: Bool
    /// Why, for people (`widening`, `large integers lose precision`).
    package let reason: String
    /// What SQL converts stored values to (the dialect's `CAST`); `nil` when they serve as they are.
    package let cast: ColumnStorage?
    /// Whether converting changes the stored values (a cast, or a narrowing the value check must see).
    package let rewritesValues: Bool
    /// Whether some values have no counterpart in the new type (an integer outside a narrower
    /// range, a finite `Double` beyond a `Float`'s): they are replaced by the attribute's default,
    /// or `NULL` when it is optional, so a required attribute without a default cannot take them.
    package var clearsValues: Bool = false
}

extension ScalarType {
    /// How values of this type convert to `new` without a custom stage; `nil` when only a custom
    /// stage can convert them, or the types are the same.
    package func conversion(to new: ScalarType) -> TypeConversion? {
        guard self != new else { return nil }
        switch (number, new.number) {
        case (.integer(let before)?, .integer(let after)?):
            return before <= after
                ? TypeConversion(isLossless: true, reason: "widening", cast: nil, rewritesValues: false)
                : TypeConversion(
                    isLossless: false, reason: "narrowing: large values are cut", cast: nil, rewritesValues: false,
                    clearsValues: true)
        case (.integer(let width)?, .floatingPoint(_, let exact)?):
            return TypeConversion(
                isLossless: width <= exact, reason: width <= exact ? "exact" : "large integers lose precision",
                cast: new.columnStorage, rewritesValues: true)
        // A value becomes the nearest value of the new type, as Swift's `Float(_:)` rounds it (on
        // SQLite too, where a `Float` is kept as the double it converts to exactly), and a finite
        // value beyond the new type's range is cleared (see `SQLDialect.cast(_:to:)`).
        case (.floatingPoint(let before, _)?, .floatingPoint(let after, _)?):
            return before <= after
                ? TypeConversion(isLossless: true, reason: "widening", cast: nil, rewritesValues: false)
                : TypeConversion(
                    isLossless: false, reason: "narrowing: precision is lost", cast: new.columnStorage,
                    rewritesValues: true, clearsValues: true)
        // Integers become their exact text. A floating-point number's text in SQL keeps 15 digits,
        // and a `Decimal` holds neither every magnitude nor every digit of a `Double`: only the
        // app's code (a custom stage) can say how such a number becomes text.
        case (.integer?, nil) where new.takesNumbersAsText:
            return TypeConversion(
                isLossless: true, reason: "integers become their text", cast: new.columnStorage, rewritesValues: true)
        default:
            return nil
        }
    }
}
