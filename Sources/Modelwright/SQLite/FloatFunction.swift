import CSQLite

/// Registers `mw_float(value)`, the conversion of a number to a `Float` on SQLite, which has no
/// 32-bit float: the nearest `Float` as Swift's `Float(_:)` rounds it (from an integer directly,
/// so never rounded twice), returned as the double that holds it exactly, as a `Float` column
/// keeps it; NULL for a finite value beyond a `Float`'s range, which a `Float` cannot read. Other
/// values pass unchanged, for the value check to judge. PostgreSQL's cast to `real` rounds the same.
enum FloatFunction {
    static func register(on connection: SQLiteConnection) throws {
        try connection.register(function: "mw_float", arguments: 1) { context, _, arguments in
            guard let arguments else { return sqlite3_result_null(context) }
            let value = arguments[0]
            let rounded: Float
            let finite: Bool
            switch sqlite3_value_type(value) {
            case SQLITE_INTEGER:
                rounded = Float(sqlite3_value_int64(value))
                finite = true
            case SQLITE_FLOAT:
                let number = sqlite3_value_double(value)
                rounded = Float(number)
                finite = number.isFinite
            default:
                return sqlite3_result_value(context, value)
            }
            guard rounded.isFinite || !finite else { return sqlite3_result_null(context) }
            sqlite3_result_double(context, Double(rounded))
        }
    }
}
