import Foundation

// Full-text search (`@searchable`) on PostgreSQL: the index, the `matches` test and ranked search
// with snippets, through the same requirements of `SQLDialect` that FTS5 answers on SQLite.

extension PostgresDialect {
    /// The text search configuration every search uses: `simple`, which lowercases and stems
    /// nothing and has no stop words, as SQLite's `unicode61` tokenizer stems nothing.
    package static let searchConfiguration = "simple"

    /// The most Unicode scalars of a word the index keeps: a longer word is cut to its first ones,
    /// in stored text and in queries alike (``SearchQuery/tsqueryText``). PostgreSQL skips a
    /// word over 2,047 bytes with a notice, and a regular expression repeats at most 255 times.
    package static let searchWordLength = 255

    /// The `tsvector` of the text `column` as the store indexes and searches it, every step an
    /// immutable built-in so that it can be an index's expression (`unaccent` is only stable):
    ///
    /// 1. Unicode NFKC, as ``SearchTokenizer/normalized(_:)`` puts stored text on SQLite;
    /// 2. lowercase by ICU's root locale (`und-x-icu`, whatever the database's locale);
    /// 3. folded as FTS5's `remove_diacritics 2` folds (``searchFolding``): the combining marks it
    ///    drops, and each precomposed letter it reads as another (`é` is `e`, a final `ς` is `σ`,
    ///    `ø` stays); Greek `ό` and Cyrillic `й` keep their marks, as in FTS5;
    /// 4. every run of characters that are not letters or digits (ICU's `[:alnum:]`) made one
    ///    space, so PostgreSQL's parser sees plain words only (it would read `foo-bar` as three
    ///    words, an e-mail address or a URL as one), and each word cut to ``searchWordLength``;
    /// 5. `to_tsvector` with ``searchConfiguration``: a lexeme per word, positions in order.
    package func searchVector(of column: String) -> String {
        let icu = "COLLATE \"und-x-icu\""
        let folding = Self.searchFolding
        var text = "lower((normalize(\(column), NFKC)) \(icu))"
        if !folding.removed.isEmpty { text = "regexp_replace(\(text), '[\(folding.removed)]', '', 'g')" }
        if !folding.from.isEmpty { text = "translate(\(text), \(string(folding.from)), \(string(folding.to)))" }
        text = "regexp_replace((\(text)) \(icu), '[^[:alnum:]]+', ' ', 'g')"
        text = "regexp_replace(\(text), '(\\S{\(Self.searchWordLength)})\\S+', '\\1', 'g')"
        return "to_tsvector('\(Self.searchConfiguration)'::regconfig, \(text))"
    }

    /// What FTS5's `unicode61` tokenizer with `remove_diacritics 2` removes, read from the
    /// tokenizer itself (``FTS5Tokenizer``), so the two engines cannot disagree on a letter it
    /// knows: `removed` holds the combining marks of U+0300–U+036F it drops inside a word (as
    /// `\uXXXX` escapes of a regular expression's class), `from` and `to` each lowercase letter
    /// of the Latin, Greek and Cyrillic blocks (U+00C0–U+052F, U+1E00–U+1FFF) it folds to another
    /// letter, and that letter. Computed once, in code point order: the same text on every run.
    package static let searchFolding: (removed: String, from: String, to: String) = {
        var removed = ""
        for value in UInt32(0x300)...0x36F {
            guard let mark = Unicode.Scalar(value) else { continue }
            if FTS5Tokenizer.words(of: "a\(Character(mark))b".decomposedStringWithCanonicalMapping) == ["ab"] {
                removed += String(format: "\\u%04x", value)
            }
        }
        var from = String.UnicodeScalarView()
        var to = String.UnicodeScalarView()
        for value in Array(UInt32(0xC0)...0x52F) + Array(UInt32(0x1E00)...0x1FFF) {
            guard let scalar = Unicode.Scalar(value), scalar.properties.isLowercase else { continue }
            let folded = FTS5Tokenizer.words(of: String(Character(scalar))).first?.unicodeScalars
            guard let folded, folded.count == 1, let letter = folded.first, letter != scalar else { continue }
            from.append(scalar)
            to.append(letter)
        }
        return (removed, String(from), String(to))
    }()

    /// The table a full-text index covers: its name is ``SchemaSQL/searchIndexName(of:)`` of the
    /// table, which the requirements below receive instead of the table.
    private func searchedTable(_ index: String) -> String {
        String(index.dropFirst(SchemaSQL.searchIndexName(of: "").count))
    }

    package func searchQuery(_ query: SearchQuery) -> String {
        query.tsqueryText
    }

    /// A GIN index over the `tsvector` of each column (``searchVector(of:)``): PostgreSQL keeps it
    /// current on every write, whatever its source (a batch, a migration step, the app's own SQL),
    /// so nothing is noted and nothing is filled by the store. Its name is shortened as every
    /// index name is (``indexName(_:)``).
    package func createSearchIndex(
        _ index: String, of table: String, columns: [String], uniqueKeys: [[String]]
    ) throws -> [String] {
        let vectors = columns.map { "(\(searchVector(of: identifier($0))))" }.joined(separator: ", ")
        return ["CREATE INDEX \(identifier(indexName(index))) ON \(identifier(table)) USING gin (\(vectors))"]
    }

    /// Nothing: the index is PostgreSQL's, current after every statement.
    package func synchronizeSearchIndex(_ index: String, of table: String, columns: [String]) throws -> [String] {
        []
    }

    package func dropSearchIndex(_ index: String, of table: String) throws -> [String] {
        ["DROP INDEX IF EXISTS \(identifier(indexName(index)))"]
    }

    /// None: the index is part of the schema the store compares with a fresh store's when it
    /// opens (`serverSchemaDifferences`), so one dropped or changed by hand refuses the store,
    /// naming it; its content is PostgreSQL's own and cannot drift from the rows.
    package func searchIndexChecks(_ index: String, of table: String, columns: [String]) throws -> [String] {
        []
    }

    /// The row's ID among those whose column's `tsvector` matches the query (a `tsquery`), which
    /// the GIN index answers. The query is bound as text and cast: a parameter typed `tsquery`
    /// would be sent in the binary format, which is not its text.
    package func searchTest(row: String, index: String, column: String, query: String) throws -> String {
        "\(row) IN (SELECT \"id\" FROM \(identifier(searchedTable(index))) WHERE "
            + "\(searchVector(of: identifier(column))) @@ CAST(CAST(\(query) AS text) AS tsquery))"
    }

    /// The matches ranked by `ts_rank` (negated: lower is better, as the requirement says), then
    /// by ID, with a snippet from `ts_headline`: one fragment of at most `words` words around the
    /// best match, its matched words between the marks. The marks and the query are read once,
    /// in the order they are bound, from a `WITH` row.
    package func rankedSearch(
        index: String, column: String, position: Int, query: String, candidates: String,
        marks: (open: String, close: String, ellipsis: String, words: String)
    ) throws -> String {
        let vector = searchVector(of: "s.\(identifier(column))")
        let options =
            "'StartSel=\"' || m.\"open\" || '\", StopSel=\"' || m.\"close\" || '\", FragmentDelimiter=\"' "
            + "|| m.\"ellipsis\" || '\", MaxWords=' || greatest(m.\"words\", 2)::text || ', MinWords=' "
            + "|| greatest(m.\"words\" / 2, 1)::text || ', ShortWord=0, MaxFragments=1'"
        return "WITH m AS (SELECT CAST(\(marks.open) AS text) AS \"open\", CAST(\(marks.close) AS text) AS \"close\", "
            + "CAST(\(marks.ellipsis) AS text) AS \"ellipsis\", CAST(\(marks.words) AS bigint) AS \"words\", "
            + "CAST(CAST(\(query) AS text) AS tsquery) AS \"query\") "
            + "SELECT s.\"id\", -ts_rank(\(vector), m.\"query\"), ts_headline('\(Self.searchConfiguration)'::regconfig, "
            + "s.\(identifier(column)), m.\"query\", \(options)), s.\(identifier(column)) "
            + "FROM \(identifier(searchedTable(index))) AS s CROSS JOIN m WHERE \(vector) @@ m.\"query\" "
            + "AND s.\"id\" IN (\(candidates)) ORDER BY 2, s.\"id\""
    }
}
