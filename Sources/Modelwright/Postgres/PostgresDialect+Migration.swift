import Foundation

extension PostgresDialect {
    /// Adds the runtime's deferred foreign key under the name a fresh store gives it
    /// (``foreignKeyName(table:column:)``): PostgreSQL's own guess for an unnamed key is cut
    /// differently past 63 bytes, and the schema check compares key names.
    package func addForeignKey(_ column: String, of table: String, referencing target: String) -> String {
        "ALTER TABLE \(identifier(table)) ADD CONSTRAINT \(identifier(Self.foreignKeyName(table: table, column: column))) "
            + "FOREIGN KEY (\(identifier(column))) REFERENCES \(identifier(target))(\"id\") DEFERRABLE INITIALLY DEFERRED"
    }

    /// A block that finds the foreign key on `column` of `table` in the catalog and renames it to
    /// ``foreignKeyName(table:column:)`` when its name differs: a renamed table or column keeps the
    /// name its key was created with, which a fresh store of the new version does not have, and a
    /// later version's new table of the old name would need.
    package func renameForeignKey(_ column: String, of table: String) -> String? {
        let name = Self.foreignKeyName(table: table, column: column)
        return "DO $mw$ DECLARE found text; BEGIN SELECT k.conname INTO found FROM pg_constraint k "
            + "JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = k.conkey[1] "
            + "WHERE k.conrelid = to_regclass(\(string(identifier(table)))) AND k.contype = 'f' "
            + "AND a.attname = \(string(column)); IF found IS NOT NULL AND found <> \(string(name)) THEN "
            + "EXECUTE format('ALTER TABLE %I RENAME CONSTRAINT %I TO %I', \(string(table)), found, \(string(name))); "
            + "END IF; END $mw$"
    }
}
