import Foundation

// The operators a condition's leaves apply, each declared once with everything that spells or
// evaluates it: its SQL text, its `NSPredicate` text and, for string tests, the evaluation that
// SQLite's `mw_string` runs. The renderers and the SQL function read these members instead of
// switching over the cases themselves, so a new operator of either kind is its case here and
// its typed spelling in `FieldOperators.swift`.

/// How a column compares with a value.
public enum ComparisonOperator: String, Sendable, Hashable, CaseIterable {
    /// Equal (`==`).
    case equal = "=="
    /// Not equal (`!=`).
    case notEqual = "!="
    /// Less than.
    case less = "<"
    /// Less than or equal.
    case lessOrEqual = "<="
    /// Greater than.
    case greater = ">"
    /// Greater than or equal.
    case greaterOrEqual = ">="

    /// The operator in `NSPredicate` format text.
    var predicateSymbol: String { rawValue }

    /// The operator in SQL text. `!=` is written `<>` here, but a comparison with a value renders
    /// it as the dialect's NULL-safe test (``SQLDialect/differs(_:_:)``); only a count uses it.
    var sqlSymbol: String {
        switch self {
        case .equal: "="
        case .notEqual: "<>"
        case .less: "<"
        case .lessOrEqual: "<="
        case .greater: ">"
        case .greaterOrEqual: ">="
        }
    }
}

/// The string tests a predicate can make.
///
/// In SQL every test is one call, `mw_string(operation, options, value, needle)`, whose first
/// argument is the raw value and which runs `matches(_:_:options:)`: the store and an in-memory
/// evaluation cannot disagree.
public enum StringOperation: Int, Sendable, Hashable, CaseIterable {
    /// The value starts with the needle.
    case hasPrefix = 0
    /// The value ends with the needle.
    case hasSuffix = 1
    /// The needle occurs in the value.
    case contains = 2
    /// The value matches a pattern in which `*` stands for any run of characters and `?` for one
    /// character (NSPredicate's `LIKE`); every other character, `%` and `_` included, is literal.
    case like = 3
    /// The value equals the needle (used for `==` with folding options).
    case equals = 4
    /// The whole value matches the needle, a regular expression in ICU's syntax (NSPredicate's
    /// `MATCHES`): `[c]` ignores case while matching and `[d]` folds diacritics from both the value
    /// and the expression first. An expression that does not compile matches nothing.
    case matches = 5

    /// The operator's keyword in `NSPredicate` format text, before its `[cd]` options.
    var predicateKeyword: String {
        switch self {
        case .hasPrefix: "BEGINSWITH"
        case .hasSuffix: "ENDSWITH"
        case .contains: "CONTAINS"
        case .like: "LIKE"
        case .equals: "=="
        case .matches: "MATCHES"
        }
    }

    /// Whether `value` passes the test against `needle`, compared with Swift's Unicode rules after
    /// folding case and/or diacritics as `options` say.
    func matches(_ value: String, _ needle: String, options: StringComparisonOptions) -> Bool {
        let folded = { StringFolding.fold($0, options) }
        switch self {
        case .hasPrefix: return folded(value).hasPrefix(folded(needle))
        case .hasSuffix: return folded(value).hasSuffix(folded(needle))
        case .contains:
            let needle = folded(needle)
            return needle.isEmpty || folded(value).contains(needle)
        case .equals: return folded(value) == folded(needle)
        case .like: return StringFolding.like(Array(folded(value)), Array(folded(needle)))
        case .matches:
            // Case is the expression's option, not folded text: folding `\D` would make it `\d`.
            let diacritics = options.intersection(.diacriticInsensitive)
            let value = StringFolding.fold(value, diacritics)
            let pattern = StringFolding.fold(needle, diacritics)
            // Compiled alone first, so an unbalanced `)` cannot close the anchoring group.
            guard (try? NSRegularExpression(pattern: pattern)) != nil,
                let whole = try? NSRegularExpression(
                    pattern: "\\A(?:" + pattern + ")\\z",
                    options: options.contains(.caseInsensitive) ? [.caseInsensitive] : [])
            else { return false }
            return whole.firstMatch(in: value, range: NSRange(value.startIndex..., in: value)) != nil
        }
    }
}

/// How string tests compare: Core Data's `[c]`, `[d]` and `[cd]`.
public struct StringComparisonOptions: OptionSet, Sendable, Hashable {
    /// The options as bits: 1 for case-insensitive, 2 for diacritic-insensitive.
    public let rawValue: Int

    /// Options from their bits.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// Ignore case, for every script (`[c]`).
    public static let caseInsensitive = StringComparisonOptions(rawValue: 1)
    /// Ignore accents and other diacritics (`[d]`).
    public static let diacriticInsensitive = StringComparisonOptions(rawValue: 2)
}

/// The folding and wildcard matching the string operators share.
private enum StringFolding {
    static func fold(_ string: String, _ options: StringComparisonOptions) -> String {
        var folding: String.CompareOptions = []
        if options.contains(.caseInsensitive) { folding.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { folding.insert(.diacriticInsensitive) }
        guard !folding.isEmpty else { return string }
        return string.folding(options: folding, locale: nil)
    }

    /// Wildcard matching with backtracking to the last `*`, linear in most cases and never recursive.
    static func like(_ value: [Character], _ pattern: [Character]) -> Bool {
        var valueIndex = 0
        var patternIndex = 0
        var starIndex: Int?
        var matchAfterStar = 0
        while valueIndex < value.count {
            if patternIndex < pattern.count, pattern[patternIndex] == "?" || pattern[patternIndex] == value[valueIndex]
            {
                valueIndex += 1
                patternIndex += 1
            } else if patternIndex < pattern.count, pattern[patternIndex] == "*" {
                starIndex = patternIndex
                matchAfterStar = valueIndex
                patternIndex += 1
            } else if let star = starIndex {
                patternIndex = star + 1
                matchAfterStar += 1
                valueIndex = matchAfterStar
            } else {
                return false
            }
        }
        while patternIndex < pattern.count, pattern[patternIndex] == "*" {
            patternIndex += 1
        }
        return patternIndex == pattern.count
    }
}
