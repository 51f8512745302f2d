import CSQLite
import Foundation

/// Registers `mw_decodes(kind, value)`: 1 when the runtime's own decoding reads the text `value`
/// as a `Decimal` (kind 0) or a `URL` (kind 1), else 0. A migration's check of stored values
/// uses it where no SQL test says the same thing (see `StoredValues`).
enum DecodingFunction {
    /// What `mw_decodes` can decode.
    enum Kind: Int32 {
        case decimal = 0
        case url = 1
    }

    static func register(on connection: SQLiteConnection) throws {
        try connection.register(function: "mw_decodes", arguments: 2) { context, _, arguments in
            guard let arguments, sqlite3_value_type(arguments[1]) == SQLITE_TEXT,
                let kind = DecodingFunction.Kind(rawValue: sqlite3_value_int(arguments[0]))
            else {
                sqlite3_result_int(context, 0)
                return
            }
            let text = StringFunctions.text(arguments[1])
            let decodes =
                switch kind {
                case .decimal: (try? Decimal(sqlValue: .text(text))) != nil
                case .url: (try? URL(sqlValue: .text(text))) != nil
                }
            sqlite3_result_int(context, decodes ? 1 : 0)
        }
    }
}
