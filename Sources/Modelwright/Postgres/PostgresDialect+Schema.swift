import Foundation

// The names of a PostgreSQL store's keys and indexes, and its constants (see `PostgresDialect`); the
// store's tables are created from `SchemaSQL`, as on SQLite, with these names.

extension PostgresDialect {
    /// PostgreSQL keeps the first 63 bytes of a name and silently drops the rest.
    package static let maximumNameLength = 63

    /// The most parameters a statement the store describes may have. The protocol counts them in 16
    /// bits (65,535), but libpq (15.18 measured) takes a message of another kind than rows and
    /// errors over 30,000 bytes as lost synchronization and drops the connection: the server's
    /// description of a statement's parameters takes 6 bytes plus 4 a parameter, so a statement of
    /// 7,499 or more loses the connection as it is described. Refused before anything is sent.
    package static let parameterLimit = (30_000 - 6) / 4

    /// The name of the foreign key on `column` of `table`: PostgreSQL's own `<table>_<column>_fkey`
    /// when it fits in 63 bytes, which PostgreSQL would otherwise cut where it likes; else the
    /// first bytes of it (on a character boundary) and a digest of the table and column, so two
    /// long names never meet. It depends on the table and column alone, so the migration renderer
    /// finds the name a key was created with from the version that created it.
    package static func foreignKeyName(table: String, column: String) -> String {
        let full = "\(table)_\(column)_fkey"
        guard full.utf8.count > maximumNameLength else { return full }
        let digest = String(SHA256.hexDigest(of: Array("\(table)\u{0}\(column)".utf8)).prefix(12))
        return leadingBytes(of: full, count: maximumNameLength - 18) + "_" + digest + "_fkey"
    }

    /// The name of the primary key of `table`: PostgreSQL's own `<table>_pkey` when it fits in 63
    /// bytes; else the first bytes of the table's name (on a character boundary), a digest of it and
    /// `_pkey`. PostgreSQL would cut the table's part alone, so two long names that begin alike
    /// gave one key name (the second then `…_pkey1`, by creation order, which a rename could not
    /// reproduce).
    package static func primaryKeyName(table: String) -> String {
        let full = "\(table)_pkey"
        guard full.utf8.count > maximumNameLength else { return full }
        let digest = String(SHA256.hexDigest(of: Array(table.utf8)).prefix(12))
        return leadingBytes(of: table, count: maximumNameLength - 18) + "_" + digest + "_pkey"
    }

    /// The longest start of `text` of at most `count` UTF-8 bytes that ends on a character boundary.
    static func leadingBytes(of text: String, count: Int) -> String {
        var result = ""
        for character in text.unicodeScalars {
            guard result.utf8.count + String(character).utf8.count <= count else { break }
            result.unicodeScalars.append(character)
        }
        return result
    }

    /// `text` when PostgreSQL keeps it whole, else its first bytes (on a character boundary) and a
    /// digest of the whole, 63 bytes at most.
    static func shortened(_ text: String) -> String {
        guard text.utf8.count > maximumNameLength else { return text }
        let digest = String(SHA256.hexDigest(of: Array(text.utf8)).prefix(12))
        return leadingBytes(of: text, count: maximumNameLength - 13) + "_" + digest
    }
}
