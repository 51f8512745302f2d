import CSQLite
import Foundation

/// Registers `mw_string(operation, options, value, needle)`, the SQL function behind every string
/// predicate. SQLite's own `LIKE` folds ASCII only and its `%` and `_` are wildcards; this
/// function compares grapheme clusters with Swift's Unicode rules, so `É` matches `e` under
/// `[cd]` and a `%` in the needle is just a percent sign.
enum StringFunctions {
    static func register(on connection: SQLiteConnection) throws {
        try connection.register(function: "mw_string", arguments: 4) { context, _, arguments in
            guard let arguments,
                let operation = StringOperation(rawValue: Int(sqlite3_value_int(arguments[0]))),
                sqlite3_value_type(arguments[2]) != SQLITE_NULL,
                sqlite3_value_type(arguments[3]) != SQLITE_NULL
            else {
                sqlite3_result_null(context)
                return
            }
            let options = StringComparisonOptions(rawValue: Int(sqlite3_value_int(arguments[1])))
            let value = StringFunctions.text(arguments[2])
            let needle = StringFunctions.text(arguments[3])
            sqlite3_result_int(context, StringMatching.matches(value, operation, needle, options: options) ? 1 : 0)
        }
    }

    /// An SQL function argument as text, embedded NULs kept.
    static func text(_ value: OpaquePointer?) -> String {
        guard let bytes = sqlite3_value_text(value) else { return "" }
        return String(
            decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_value_bytes(value))), as: UTF8.self)
    }
}

/// The string tests a predicate can make.
public enum StringOperation: Int, Sendable, Hashable {
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

/// The Unicode-correct string tests, shared by the SQL function and in-memory evaluation.
enum StringMatching {
    static func matches(
        _ value: String,
        _ operation: StringOperation,
        _ needle: String,
        options: StringComparisonOptions
    ) -> Bool {
        let value = fold(value, options)
        let needle = fold(needle, options)
        switch operation {
        case .hasPrefix: return value.hasPrefix(needle)
        case .hasSuffix: return value.hasSuffix(needle)
        case .contains: return needle.isEmpty || value.contains(needle)
        case .equals: return value == needle
        case .like: return like(Array(value), Array(needle))
        }
    }

    private static func fold(_ string: String, _ options: StringComparisonOptions) -> String {
        var folding: String.CompareOptions = []
        if options.contains(.caseInsensitive) { folding.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { folding.insert(.diacriticInsensitive) }
        guard !folding.isEmpty else { return string }
        return string.folding(options: folding, locale: nil)
    }

    /// Wildcard matching with backtracking to the last `*`, linear in most cases and never recursive.
    private static func like(_ value: [Character], _ pattern: [Character]) -> Bool {
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
