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
    }

    /// An SQL function argument as text, embedded NULs kept.
    static func text(_ value: OpaquePointer?) -> String {
        guard let bytes = sqlite3_value_text(value) else { return "" }
        return String(
            decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_value_bytes(value))), as: UTF8.self)
    }
}
