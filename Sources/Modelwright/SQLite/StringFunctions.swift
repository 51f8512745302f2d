import CSQLite
import Foundation

/// Registers `mw_string(operation, options, value, needle)`, the SQL function behind every string
/// predicate: it runs the operation's own evaluation (`StringOperation.matches(_:_:options:)`),
/// so a new string operator needs nothing here. SQLite's own `LIKE` folds ASCII only and its `%` and `_` are wildcards; this
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
            sqlite3_result_int(context, operation.matches(value, needle, options: options) ? 1 : 0)
        }
        // `mw_search_text(text)`: the text a full-text index holds for an attribute, in the form
        // `SearchTokenizer` reads queries in (NFKC), so the index and the queries follow one rule.
        try connection.register(function: "mw_search_text", arguments: 1) { context, _, arguments in
            guard let arguments, sqlite3_value_type(arguments[0]) != SQLITE_NULL else {
                sqlite3_result_null(context)
                return
            }
            var text = SearchTokenizer.normalized(StringFunctions.text(arguments[0]))
            // The byte count keeps embedded NUL characters; the destructor -1 (SQLITE_TRANSIENT) copies.
            text.withUTF8 { bytes in
                guard let base = bytes.baseAddress else { return sqlite3_result_text(context, "", 0, nil) }
                sqlite3_result_text64(
                    context, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self), UInt64(bytes.count),
                    unsafeBitCast(-1, to: sqlite3_destructor_type.self), UInt8(SQLITE_UTF8))
            }
        }
    }

    /// An SQL function argument as text, embedded NULs kept.
    static func text(_ value: OpaquePointer?) -> String {
        guard let bytes = sqlite3_value_text(value) else { return "" }
        return String(
            decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_value_bytes(value))), as: UTF8.self)
    }
}
