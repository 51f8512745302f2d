import Foundation

extension PostgresCluster {
    /// A new empty database on the cluster; its name.
    package func createDatabase() throws -> String {
        let name = "mw_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())"
        try psql("CREATE DATABASE \(name)", database: "postgres")
        return name
    }

    /// What `database`'s schema is, one line per column (type, nullability, default), index and
    /// foreign key, to compare as sets: a migrated store and a fresh one differ only in column
    /// order (`ADD COLUMN` appends).
    package func schemaLines(database: String) throws -> Set<String> {
        let query = """
            SELECT 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' '
                || a.attnotnull || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
            FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
            WHERE n.nspname = 'public' AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
            UNION ALL
            SELECT 'index ' || i.relname || ' ' || pg_get_indexdef(i.oid) FROM pg_index x
            JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_namespace n ON n.oid = i.relnamespace
            WHERE n.nspname = 'public'
            UNION ALL
            SELECT 'foreign key ' || c.relname || ' ' || pg_get_constraintdef(k.oid) FROM pg_constraint k
            JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'public' AND k.contype = 'f'
            """
        return Set(try psql(query, database: database).split(separator: "\n").map(String.init))
    }

    /// Every constraint of `database`'s tables (primary keys, foreign keys, checks, uniqueness), by
    /// table, name and definition: what ``schemaLines(database:)`` leaves out, and what a
    /// statement that drops a constraint by its name depends on.
    package func constraintLines(database: String) throws -> Set<String> {
        let query = """
            SELECT 'constraint ' || c.relname || ' ' || k.conname || ' ' || pg_get_constraintdef(k.oid)
            FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'public'
            """
        return Set(try psql(query, database: database).split(separator: "\n").map(String.init))
    }
}
