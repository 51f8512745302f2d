import Foundation

extension DatabaseConnection {
    /// What differs between the store's schema on a PostgreSQL database and the schema `layout`
    /// creates, one sentence each, as ``StoreSchema/differences(from:)`` words them: tables,
    /// columns with their types, `NOT NULL`, defaults and primary keys, indexes and foreign keys,
    /// and checks and other constraints (``otherConstraints()``); of names, those of indexes and of
    /// primary and foreign keys.
    ///
    /// The expected schema is PostgreSQL's own report of a fresh store: the runtime's DDL runs in
    /// a scratch schema inside a savepoint (in a transaction of its own when none is open) that is
    /// rolled back, and both are read with the dialect's introspection queries. So the comparison
    /// needs no second spelling of the types PostgreSQL reports, and nothing of the scratch schema
    /// stays behind.
    ///
    /// `ownedFunctions` are the statements that create the functions the store installs beside its
    /// tables (the change feed's trigger function): they run in the scratch schema too, so each
    /// function of the store's schema is compared, body included, with the one the runtime makes
    /// (see ``catalogFacts()``). Event triggers of the whole database are refused as well
    /// (``eventTriggerDifferences()``).
    ///
    /// `extensionFunctions` are the functions, by `name(arguments)`, of the extensions whose
    /// functions the runtime calls (`unaccent`), each with the definition the extension ships, in
    /// ``catalogFacts()``'s words: a function of the store's schema that is a member of such an
    /// extension, or that shares a name with one of them or with a runtime function (`_mw_…`), is
    /// accepted only as that definition, so neither replacing an extension's function nor adding a
    /// function to an extension hides it from the check. Members of other extensions, which no
    /// statement of the runtime calls, are not compared.
    package func serverSchemaDifferences(
        from layout: SchemaLayout, ownedFunctions: [String] = [], extensionFunctions: [String: String] = [:]
    ) throws -> [String] {
        guard isInTransaction else {
            return try inTransaction(.deferred) {
                try serverSchemaDifferences(
                    from: layout, ownedFunctions: ownedFunctions, extensionFunctions: extensionFunctions)
            }
        }
        let found = try StoreSchema.read(self)
        let foundConstraints = try otherConstraints()
        let foundFacts = try catalogFacts().filter { !Self.isUncalledExtensionFunction($0, extensionFunctions) }
        let savepoint = "mw_schema_check"
        try execute(dialect.savepoint(savepoint))
        let fresh: StoreSchema
        let freshConstraints: [String]
        let freshFacts: [String]
        do {
            let scratch = dialect.identifier("mw_schema_check_\(UUID().uuidString.prefix(8).lowercased())")
            // SET LOCAL ends with the savepoint's rollback, so the connection's path is as it was.
            try execute(["CREATE SCHEMA \(scratch)", "SET LOCAL search_path TO \(scratch)"])
            try execute(SchemaSQL.createStatements(for: layout, in: dialect))
            try execute(ownedFunctions)
            fresh = try StoreSchema.read(self)
            freshConstraints = try otherConstraints()
            freshFacts = try
                (catalogFacts()
                + extensionFunctions.map { [$0.key, "function", $0.value].joined(separator: "\u{0}") }).sorted()
        } catch {
            try? execute([dialect.rollbackToSavepoint(savepoint), dialect.releaseSavepoint(savepoint)])
            throw error
        }
        try execute([dialect.rollbackToSavepoint(savepoint), dialect.releaseSavepoint(savepoint)])
        let tables = Set(fresh.tables.keys)
        let unexpected = foundConstraints.filter { !freshConstraints.contains($0) }.filter { line in
            tables.contains(String(line.prefix { $0 != "\u{0}" }))
        }
        let missing = freshConstraints.filter { !foundConstraints.contains($0) }
        // An index or a collation of a table no fresh store has (persistent history's) is not
        // compared; a trigger, rule, policy or storage setting is refused on any table.
        let unexpectedFacts = Self.difference(foundFacts, freshFacts).filter { line in
            let fields = line.split(separator: "\u{0}", omittingEmptySubsequences: false)
            return fields.count < 2 || !Self.perTableFacts.contains(String(fields[1]))
                || tables.contains(String(fields[0]))
        }
        // A function the runtime installs after it opens a store (the change feed's) may be missing:
        // opening installs it. Changed, it is both unexpected and missing, and refused as unexpected.
        let missingFacts = Self.difference(freshFacts, foundFacts).filter { !$0.contains("\u{0}function\u{0}") }
        let search = SchemaSQL.searchIndexes(for: layout).isEmpty ? [] : try searchConfigurationDifferences()
        return try eventTriggerDifferences() + search + found.differences(from: fresh)
            + unexpected.map { Self.sentence($0, "has an unexpected") }
            + missing.map { Self.sentence($0, "lacks the") }
            + unexpectedFacts.map { Self.factSentence($0, missing: false) }
            + missingFacts.map { Self.factSentence($0, missing: true) }
    }

    /// The event triggers of the database, one sentence each: an event trigger runs its function
    /// on DDL, so on every statement of a migration step and of a new store's creation, whatever
    /// schema it sits in; the runtime creates none, and a store is refused while one is enabled.
    package func eventTriggerDifferences() throws -> [String] {
        let statement = try prepare(
            "SELECT quote_ident(e.evtname), e.evtevent::text, e.evtfoid::regprocedure::text, "
                + "coalesce(array_to_string(e.evttags, ', '), '') FROM pg_event_trigger e "
                + "WHERE e.evtenabled <> 'D' ORDER BY 1")
        var result: [String] = []
        while try statement.step() {
            let (name, event, function, tags) = (
                statement.string(0), statement.string(1), statement.string(2), statement.string(3)
            )
            let filter = tags.isEmpty ? "" : " (\(tags))"
            result.append(
                "event trigger \(name) has the database run \(function) on \(event)\(filter), so on the DDL of "
                    + "every migration step: the runtime creates none; drop it (DROP EVENT TRIGGER \(name)) "
                    + "or disable it (ALTER EVENT TRIGGER \(name) DISABLE) before opening the store")
        }
        return result
    }

    /// What differs in the text search configuration the full-text indexes use
    /// (``PostgresDialect/searchConfiguration``, `pg_catalog.simple`) from the one PostgreSQL ships:
    /// its dictionary without options (a `StopWords` option would drop words from every index and
    /// query) on the `simple` template, the `default` parser, and the 19 token types that carry
    /// text mapped to that dictionary alone. An index and a fresh store built on a changed
    /// configuration agree with each other, so only this comparison with the shipped one sees the
    /// change, which would make searches miss rows that SQLite and `SearchQuery.matches` find.
    package func searchConfigurationDifferences() throws -> [String] {
        let name = PostgresDialect.searchConfiguration
        let dictionary = "'pg_catalog.\(name)'::pg_catalog.regdictionary"
        let configuration = "'pg_catalog.\(name)'::pg_catalog.regconfig"
        let statement = try prepare(
            "SELECT coalesce((SELECT d.dictinitoption IS NULL AND t.tmplname = 'simple' "
                + "AND t.tmplnamespace = 'pg_catalog'::pg_catalog.regnamespace FROM pg_catalog.pg_ts_dict d "
                + "JOIN pg_catalog.pg_ts_template t ON t.oid = d.dicttemplate WHERE d.oid = \(dictionary)), false)::int, "
                + "coalesce((SELECT p.prsname = 'default' AND p.prsnamespace = 'pg_catalog'::pg_catalog.regnamespace "
                + "FROM pg_catalog.pg_ts_config c JOIN pg_catalog.pg_ts_parser p ON p.oid = c.cfgparser "
                + "WHERE c.oid = \(configuration)), false)::int, "
                + "coalesce((SELECT pg_catalog.array_agg(m.maptokentype ORDER BY m.maptokentype, m.mapseqno)::text "
                + "FROM pg_catalog.pg_ts_config_map m WHERE m.mapcfg = \(configuration) "
                + "AND m.mapdict = \(dictionary)), '') || '/' || (SELECT pg_catalog.count(*) "
                + "FROM pg_catalog.pg_ts_config_map m WHERE m.mapcfg = \(configuration))")
        guard try statement.step() else { return [] }
        var result: [String] = []
        if statement.int64(0) != 1 {
            result.append(
                "the text search dictionary pg_catalog.\(name), which every full-text index uses, has options or a "
                    + "template PostgreSQL does not ship it with, so searches would miss words: restore it (for "
                    + "a stop-word list, ALTER TEXT SEARCH DICTIONARY pg_catalog.\(name) (StopWords))")
        }
        if statement.int64(1) != 1 {
            result.append(
                "the text search configuration pg_catalog.\(name), which every full-text index uses, has another "
                    + "parser than PostgreSQL's default: restore it as PostgreSQL ships it")
        }
        if statement.string(2) != "{1,2,3,4,5,6,7,8,9,10,11,15,16,17,18,19,20,21,22}/19" {
            result.append(
                "the text search configuration pg_catalog.\(name), which every full-text index uses, maps its token "
                    + "types otherwise than PostgreSQL ships it (each of the 19 that carry text to the dictionary "
                    + "pg_catalog.\(name) alone), so searches would miss words: restore its mappings (ALTER TEXT "
                    + "SEARCH CONFIGURATION pg_catalog.\(name) ALTER MAPPING FOR … WITH pg_catalog.\(name))")
        }
        return result
    }

    /// Whether `line` of ``catalogFacts()`` is a function of an extension that the runtime never
    /// calls: a member only of extensions none of whose functions are in `expected`, under a name
    /// neither of those nor of the runtime's own (`_mw_…`).
    private static func isUncalledExtensionFunction(_ line: String, _ expected: [String: String]) -> Bool {
        let fields = line.split(separator: "\u{0}", omittingEmptySubsequences: false).map(String.init)
        guard fields.count == 3, fields[1] == "function" else { return false }
        let definition = fields[2].range(of: ", body ").map { String(fields[2][..<$0.lowerBound]) } ?? fields[2]
        let extensions = definition.components(separatedBy: ", member of extension ").dropFirst()
        guard !extensions.isEmpty else { return false }
        let called = Set(
            expected.values.flatMap { value in
                let head = value.range(of: ", body ").map { String(value[..<$0.lowerBound]) } ?? value
                return head.components(separatedBy: ", member of extension ").dropFirst()
            })
        let name = String(fields[0].prefix { $0 != "(" })
        let calledNames = Set(expected.keys.map { String($0.prefix { $0 != "(" }) })
        return !extensions.contains { called.contains($0) } && !calledNames.contains(name) && !name.hasPrefix("_mw_")
    }

    /// The kinds of ``catalogFacts()`` a fresh store has on its own tables only.
    private static var perTableFacts: Set<String> { ["index", "collation", "key name"] }

    /// The lines of `lines` that `other` lacks, counted as a multiset: two equal indexes on one
    /// table are two lines, and one of them missing is a difference.
    private static func difference(_ lines: [String], _ other: [String]) -> [String] {
        var left = Dictionary(other.map { ($0, 1) }, uniquingKeysWith: +)
        return lines.filter { line in
            guard let count = left[line], count > 0 else { return true }
            left[line] = count - 1
            return false
        }
    }

    /// What else of the current schema's tables decides what a statement does or what a row
    /// holds, as `table NUL kind NUL detail`, sorted, compared in full with a fresh store's:
    ///
    /// - `index`: every index's whole definition (`pg_get_indexdef`) after its name and table:
    ///   method, columns with their order, collations and operator classes, `INCLUDE`, a partial
    ///   index's `WHERE` and `NULLS NOT DISTINCT`, each of which changes what a unique index
    ///   refuses or what a sorted fetch returns;
    /// - `collation`: each column's collation, which decides text order and equality;
    /// - `key name`: the name of each primary key, which names its index among all the schema's
    ///   relations, so a later step's new table of an old name would need it (a renamed entity's
    ///   keys take a fresh store's names, as its indexes do). A foreign key's name is unique only on
    ///   its own table, so it cannot collide and is not compared: a database a release before this
    ///   one migrated through a rename keeps its old foreign-key names and still opens;
    /// - `foreign key`: every foreign key's definition (`pg_get_constraintdef`, without its name):
    ///   its columns, target, delete action and whether it is `DEFERRABLE INITIALLY DEFERRED`, which
    ///   the store's writes depend on (a transaction links rows before both exist);
    /// - `trigger`: every trigger but the change feed's own (`_mw_changes_…` after each statement,
    ///   calling `_mw_notify_changes()`, enabled, on a table not the runtime's), since a trigger
    ///   can rewrite or swallow the rows a step or the app writes;
    /// - `rule`: every rewrite rule on a table, which can do the same;
    /// - `security`: row level security enabled or forced, and each policy, which hide rows from
    ///   the migration and the app;
    /// - `persistence`: an unlogged or temporary table, whose rows a crash empties;
    /// - `function`: every function and procedure of the store's schema, an extension's members
    ///   included, with its arguments, result, language, volatility, `SECURITY DEFINER`,
    ///   settings, object file, extension and body, under its name in place of a table: the change feed's trigger function
    ///   runs on every write of a step and of the app, so a body edited to write elsewhere or to
    ///   drop notifications changes what they do; any other function may take a call the runtime
    ///   makes (an overload of `unaccent`), so it is refused too.
    ///
    /// - `inheritance`: a table of any schema inheriting from one of the store's (or one of the
    ///   store's inheriting from another), whose rows the store's reads and deletes would take too.
    ///
    /// None but `index`, `collation`, `foreign key` and the runtime's own functions exists in a fresh store, so any
    /// other is unexpected.
    private func catalogFacts() throws -> [String] {
        let inSchema = "JOIN pg_class c ON c.oid = x JOIN pg_namespace n ON n.oid = c.relnamespace "
        let own = "n.nspname = current_schema()"
        let queries = [
            "SELECT c.relname::text, 'index', "
                + "CASE WHEN i.indisunique THEN 'unique ' ELSE '' END || "
                + "substr(pg_get_indexdef(i.indexrelid), strpos(pg_get_indexdef(i.indexrelid), ' USING ') + 1) "
                + "FROM pg_index i \(inSchema.replacingOccurrences(of: "= x", with: "= i.indrelid"))WHERE \(own)",
            "SELECT c.relname::text, 'collation', quote_ident(a.attname) || ' COLLATE ' || "
                + "CASE WHEN k.oid = c.relnamespace OR k.nspname = 'pg_catalog' THEN '' ELSE quote_ident(k.nspname) || '.' END "
                + "|| quote_ident(o.collname) FROM pg_attribute a \(inSchema.replacingOccurrences(of: "= x", with: "= a.attrelid"))"
                + "JOIN pg_collation o ON o.oid = a.attcollation JOIN pg_namespace k ON k.oid = o.collnamespace "
                + "WHERE \(own) AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped",
            "SELECT c.relname::text, 'trigger', pg_get_triggerdef(t.oid) || CASE t.tgenabled WHEN 'O' THEN '' "
                + "ELSE ' (enabled ' || t.tgenabled::text || ')' END FROM pg_trigger t "
                + "\(inSchema.replacingOccurrences(of: "= x", with: "= t.tgrelid"))JOIN pg_proc f ON f.oid = t.tgfoid "
                + "WHERE \(own) AND NOT t.tgisinternal AND NOT (t.tgenabled = 'O' AND f.proname = '_mw_notify_changes' "
                + "AND f.pronamespace = c.relnamespace AND t.tgnargs = 0 AND t.tgqual IS NULL "
                + "AND cardinality(t.tgattr::int2[]) = 0 AND left(c.relname, 4) <> '_mw_' "
                + "AND left(c.relname, 13) <> '_modelwright_' AND ("
                + "(t.tgname = '_mw_changes_insert' AND t.tgtype = 4 AND t.tgoldtable IS NULL AND t.tgnewtable = '_mw_new') "
                + "OR (t.tgname = '_mw_changes_update' AND t.tgtype = 16 AND t.tgoldtable = '_mw_old' "
                + "AND t.tgnewtable = '_mw_new') "
                + "OR (t.tgname = '_mw_changes_delete' AND t.tgtype = 8 AND t.tgoldtable = '_mw_old' "
                + "AND t.tgnewtable IS NULL)))",
            "SELECT c.relname::text, 'key name', 'primary key named ' || quote_ident(k.conname) "
                + "FROM pg_constraint k \(inSchema.replacingOccurrences(of: "= x", with: "= k.conrelid"))"
                + "WHERE \(own) AND k.contype = 'p'",
            // By definition, not name: whether a key is DEFERRABLE and INITIALLY DEFERRED decides
            // whether a write that links rows in either order commits.
            "SELECT c.relname::text, 'foreign key', pg_get_constraintdef(k.oid) "
                + "FROM pg_constraint k \(inSchema.replacingOccurrences(of: "= x", with: "= k.conrelid"))"
                + "WHERE \(own) AND k.contype = 'f'",
            "SELECT c.relname::text, 'rule', pg_get_ruledef(r.oid) FROM pg_rewrite r "
                + "\(inSchema.replacingOccurrences(of: "= x", with: "= r.ev_class"))WHERE \(own) AND c.relkind IN ('r', 'p')",
            "SELECT c.relname::text, 'security', 'row level security ' || "
                + "CASE WHEN c.relforcerowsecurity THEN 'forced' ELSE 'enabled' END FROM pg_class c "
                + "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE \(own) AND c.relkind IN ('r', 'p') "
                + "AND (c.relrowsecurity OR c.relforcerowsecurity)",
            "SELECT c.relname::text, 'security', 'policy ' || quote_ident(p.polname) || ' (' || p.polcmd::text || ' '"
                + " || CASE WHEN p.polpermissive THEN 'permissive' ELSE 'restrictive' END || ')' FROM pg_policy p "
                + "\(inSchema.replacingOccurrences(of: "= x", with: "= p.polrelid"))WHERE \(own)",
            "SELECT c.relname::text, 'persistence', CASE c.relpersistence WHEN 'u' THEN 'unlogged' ELSE 'temporary' END "
                + "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE \(own) "
                + "AND c.relkind IN ('r', 'p') AND c.relpersistence <> 'p'",
            "SELECT c.relname::text, 'inheritance', 'inherited by ' || i.inhrelid::regclass::text FROM pg_inherits i "
                + "\(inSchema.replacingOccurrences(of: "= x", with: "= i.inhparent"))WHERE \(own) UNION ALL "
                + "SELECT c.relname::text, 'inheritance', 'inheriting from ' || i.inhparent::regclass::text "
                + "FROM pg_inherits i \(inSchema.replacingOccurrences(of: "= x", with: "= i.inhrelid"))WHERE \(own)",
            "SELECT p.proname::text || '(' || pg_get_function_identity_arguments(p.oid) || ')', 'function', "
                + "CASE p.prokind WHEN 'p' THEN 'procedure' WHEN 'a' THEN 'aggregate' WHEN 'w' THEN 'window' "
                + "ELSE 'function' END || ' returning ' || coalesce(pg_get_function_result(p.oid), 'nothing') "
                + "|| ' in ' || l.lanname || ', volatility ' || p.provolatile::text "
                + "|| CASE WHEN p.prosecdef THEN ', security definer' ELSE '' END "
                + "|| CASE WHEN p.proisstrict THEN ', strict' ELSE '' END "
                + "|| coalesce(', set ' || array_to_string(p.proconfig, ', '), '') "
                + "|| coalesce(', object file ' || p.probin, '') "
                + "|| coalesce((SELECT string_agg(', member of extension ' || e.extname, '' ORDER BY e.extname) "
                + "FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid WHERE d.classid = 'pg_proc'::regclass "
                + "AND d.objid = p.oid AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'), '') "
                + "|| ', body ' || p.prosrc "
                + "FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang "
                + "WHERE n.nspname = current_schema()",
        ]
        var result: [String] = []
        for query in queries {
            let statement = try prepare(query)
            while try statement.step() {
                result.append(
                    [statement.string(0), statement.string(1), statement.string(2)].joined(separator: "\u{0}"))
            }
        }
        return result.sorted()
    }

    /// One difference of ``catalogFacts()`` as a sentence naming the table and what differs.
    private static func factSentence(_ line: String, missing: Bool) -> String {
        let parts = line.split(separator: "\u{0}", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3 else { return line }
        let (table, kind, detail) = (parts[0], parts[1], parts[2])
        switch (kind, missing) {
        case ("index", false): return "\(table) has an index the schema does not create: \(detail)"
        case ("index", true): return "\(table) lacks the index \(detail) (it was changed or dropped)"
        case ("collation", false): return "\(table) has a column of another collation: \(detail)"
        case ("collation", true): return "\(table) lacks the column collation \(detail)"
        case ("key name", false):
            return "\(table) has a \(detail), a name a fresh store does not give it; rename it back"
        case ("key name", true): return "\(table) lacks the \(detail) (it was renamed or dropped)"
        case ("foreign key", false):
            return "\(table) has a foreign key a fresh store does not: \(detail) (made NOT DEFERRABLE, INITIALLY "
                + "IMMEDIATE or otherwise redefined); drop it and add it again as a fresh store has it"
        case ("foreign key", true): return "\(table) lacks the foreign key \(detail) (it was changed or dropped)"
        case ("trigger", _): return "\(table) has a trigger the runtime does not create: \(detail); drop it"
        case ("rule", _): return "\(table) has a rule the runtime does not create: \(detail); drop it"
        case ("security", _):
            return "\(table) has \(detail), which hides rows from the store; disable it or drop the policy"
        case ("persistence", _): return "\(table) is \(detail), so a crash empties it; make it logged again"
        case ("inheritance", _):
            return "\(table) is \(detail), so the store's reads, updates and deletes of one take the other's rows "
                + "too: a fresh store has no inheritance; remove it (ALTER TABLE … NO INHERIT …)"
        case ("function", _):
            let body = detail.range(of: ", body ").map { String(detail[..<$0.lowerBound]) } ?? detail
            return "\(table) is a \(body) that the runtime does not create as it is (its definition or body "
                + "was edited, or it was added): drop it (DROP FUNCTION \(table)) or move it to another schema; a "
                + "function of the runtime's is installed again when the store opens"
        default: return "\(table) \(missing ? "lacks" : "has") \(kind) \(detail)"
        }
    }

    /// The constraints of the current schema's tables that are neither primary nor foreign keys
    /// (checks, unique and exclusion constraints, constraint triggers), as `table NUL kind NUL
    /// definition`, sorted; by definition, not by name. ``StoreSchema`` reads a table's columns,
    /// indexes and keys but not these, and a check the version does not declare can refuse the
    /// values a migration step writes, or a write of the app, so the store is refused for one.
    /// Their names are not compared (a renamed check changes nothing a step or the app does); the
    /// names of keys and indexes are, in ``catalogFacts()``, since a later version's new table of an
    /// old name needs them.
    private func otherConstraints() throws -> [String] {
        let statement = try prepare(
            "SELECT c.relname::text, k.contype::text, pg_get_constraintdef(k.oid) FROM pg_constraint k "
                + "JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
                + "WHERE n.nspname = current_schema() AND k.contype NOT IN ('p', 'f') ORDER BY 1, 2, 3")
        var result: [String] = []
        while try statement.step() {
            result.append([statement.string(0), statement.string(1), statement.string(2)].joined(separator: "\u{0}"))
        }
        return result
    }

    /// One difference of ``otherConstraints()`` as ``StoreSchema/differences(from:)`` words one.
    private static func sentence(_ line: String, _ verb: String) -> String {
        let parts = line.split(separator: "\u{0}", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3 else { return line }
        let kind =
            switch parts[1] {
            case "c": "check constraint"
            case "u": "unique constraint"
            case "x": "exclusion constraint"
            default: "constraint trigger"
            }
        return "\(parts[0]) \(verb) \(kind) \(parts[2])"
    }
}
