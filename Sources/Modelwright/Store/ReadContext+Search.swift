import Foundation

/// One match of a full-text search: the record, how well it matched, and the words around the
/// match with the matched words marked.
///
/// ```swift
/// let query = try SearchQuery("swift conc*")
/// let results = try await store.performQuery { try $0.search(Trip.request(), for: query, in: { $0.title }) }
/// for result in results {
///     print(result.record.title, result.score, result.snippet.text)
/// }
/// ```
public struct SearchResult<Target: Record>: Sendable {
    /// The record that matched.
    public let record: Target
    /// How well it matched (SQLite FTS5's BM25, negated): higher is better. Scores compare only
    /// within one search.
    public let score: Double
    /// The matched attribute around the match, with the matched words marked.
    public let snippet: SearchSnippet
}

/// A short passage of a searched attribute with the words a search matched marked: text to show
/// in a list of results, highlights and all.
public struct SearchSnippet: Sendable, Hashable {
    /// The passage, with `…` where text before or after it was left out.
    public let text: String
    /// The matched words, as ranges of `text`, in order.
    public let highlights: [Range<String.Index>]

    /// The passage in parts, in order, each with whether the search matched it: what a view
    /// styles (bold, a background) part by part.
    public var parts: [(text: Substring, isMatch: Bool)] {
        var parts: [(Substring, Bool)] = []
        var position = text.startIndex
        for range in highlights {
            if position < range.lowerBound { parts.append((text[position..<range.lowerBound], false)) }
            parts.append((text[range], true))
            position = range.upperBound
        }
        if position < text.endIndex { parts.append((text[position...], false)) }
        return parts
    }

    /// Reads a snippet whose matches the store marked with `open` and `close`, scalar by scalar:
    /// a marker joins the characters around it into one grapheme (after U+0600, before U+200D, in
    /// a Hangul syllable), so characters would hide it. The caller chooses markers the stored
    /// text does not hold; a marker out of place is dropped, never trusted as an offset.
    init(marked: String, open: Unicode.Scalar, close: Unicode.Scalar) {
        var scalars = String.UnicodeScalarView()
        var offsets: [(start: Int, end: Int)] = []
        var start: Int?
        var count = 0
        for scalar in marked.unicodeScalars {
            if scalar == open {
                start = count
            } else if scalar == close {
                if let begin = start, begin < count { offsets.append((begin, count)) }
                start = nil
            } else {
                scalars.append(scalar)
                count += 1
            }
        }
        let text = String(scalars)
        let starts = Array(text.unicodeScalars.indices) + [text.endIndex]
        self.text = text
        self.highlights = offsets.map { starts[$0.start]..<starts[$0.end] }
    }

    /// A snippet of `text` with no highlights.
    init(plain text: String) {
        self.text = text
        self.highlights = []
    }
}

extension ReadContext {
    /// The records `request` matches whose `field` matches `query`, best match first (then by ID),
    /// each with its score and a snippet of `field`. The request's limit and offset apply to the
    /// ranked matches; its sort order is not used.
    ///
    /// The field must be `@searchable` in the schema. The snippet has at most `snippetWords` words
    /// (1 to 64) around the best match.
    ///
    /// - Throws: ``StoreError/unsupportedQuery(_:)`` when the field has no full-text index.
    public func search<Target: Record, Value: StringField>(
        _ request: FetchRequest<Target>,
        for query: SearchQuery,
        in field: (Target.Fields) -> Field<Value>,
        snippetWords: Int = 12
    ) throws -> [SearchResult<Target>] {
        let entity = try layout.entity(Target.entityName)
        let path = field(Target.Fields(path: .root)).path
        guard path.hops.isEmpty, let column = entity.column(forKey: path.column),
            let index = SchemaSQL.searchIndexes(for: layout).first(where: {
                $0.table == entity.table && $0.columns.contains(column.name)
            }),
            let position = index.columns.firstIndex(of: column.name)
        else {
            throw StoreError.unsupportedQuery(
                "'\(path.keyPath)' of \(entity.name) has no full-text index: mark it @searchable in the schema to search it"
            )
        }
        var candidates = request
        candidates.sortKeys = []
        candidates.fetchLimit = nil
        candidates.fetchOffset = 0
        let (inner, innerArguments) = try select("t0.\"id\"", candidates, entity: entity, defaultSort: false)
        var sql = try connection.dialect.rankedSearch(
            index: index.name, column: column.name, position: position, query: marker, candidates: inner,
            marks: (marker, marker, marker, marker))
        var arguments: [SQLValue] = [
            .text(String(Self.open)), .text(String(Self.close)), .text("…"),
            .integer(Int64(min(max(snippetWords, 1), 64))), .text(connection.dialect.searchQuery(query)),
        ]
        arguments += innerArguments
        sql += limitClause(of: request)
        appendLimit(of: request, to: &arguments)
        var matches: [(id: UUID, score: Double, snippet: SearchSnippet)] = []
        // Rows whose stored text holds a marker: their snippets are made again with markers it lacks.
        var remarked: [(match: Int, stored: String)] = []
        do {
            let statement = try connection.statement(sql)
            defer { statement.reset() }
            for (number, argument) in arguments.enumerated() {
                statement.bind(argument, Int32(number + 1))
            }
            while try statement.step() {
                guard let id = statement.uuid(0) else {
                    throw StoreError.invalidValue(entity: entity.name, message: "a search match has no valid ID")
                }
                let marked = statement.isNull(2) ? "" : statement.string(2)
                let stored = statement.isNull(3) ? "" : statement.string(3)
                if stored.unicodeScalars.contains(where: { $0 == Self.open || $0 == Self.close }) {
                    remarked.append((matches.count, stored))
                }
                matches.append(
                    (id, -statement.double(1), SearchSnippet(marked: marked, open: Self.open, close: Self.close)))
            }
        }
        for (match, stored) in remarked {
            matches[match].snippet = try snippet(
                of: matches[match].id, text: stored, index: index.name, column: column.name, position: position,
                query: query, words: arguments[3])
        }
        guard !matches.isEmpty else { return [] }
        let idField: Field<Target.ID> = FieldPath.root.field("id")
        let records = try fetch(FetchRequest<Target>(condition: idField.in(matches.map { RecordID($0.id) })))
        let byID = Dictionary(records.map { ($0.id.uuid, $0) }, uniquingKeysWith: { first, _ in first })
        return matches.compactMap { match in
            byID[match.id].map { SearchResult(record: $0, score: match.score, snippet: match.snippet) }
        }
    }

    /// The snippet of one row whose stored `text` holds ``open`` or ``close``, marked with two
    /// private-use scalars `text` does not hold (a text holding every one of them, over 130,000
    /// scalars, gets its text without highlights).
    private func snippet(
        of id: UUID, text: String, index: String, column: String, position: Int, query: SearchQuery,
        words: SQLValue
    ) throws -> SearchSnippet {
        let present = Set(text.unicodeScalars.map(\.value))
        let free = (UInt32(0xF_0000)...0x10_FFFD).lazy.filter { !present.contains($0) && $0 & 0xFFFE != 0xFFFE }
            .compactMap { Unicode.Scalar($0) }.prefix(2)
        let marks = Array(free)
        guard marks.count == 2 else { return SearchSnippet(plain: text) }
        let sql = try connection.dialect.rankedSearch(
            index: index, column: column, position: position, query: marker, candidates: marker,
            marks: (marker, marker, marker, marker))
        let statement = try connection.statement(sql)
        defer { statement.reset() }
        let arguments: [SQLValue] = [
            .text(String(marks[0])), .text(String(marks[1])), .text("…"), words,
            .text(connection.dialect.searchQuery(query)), .blob(withUnsafeBytes(of: id.uuid) { Data($0) }),
        ]
        for (number, argument) in arguments.enumerated() {
            statement.bind(argument, Int32(number + 1))
        }
        guard try statement.step(), !statement.isNull(2) else { return SearchSnippet(plain: "") }
        return SearchSnippet(marked: statement.string(2), open: marks[0], close: marks[1])
    }

    /// The scalars the store marks a snippet's matches with: private-use code points. A row whose
    /// stored text holds either gets its snippet made again with markers it does not hold.
    private static let open: Unicode.Scalar = "\u{F8F0}"
    private static let close: Unicode.Scalar = "\u{F8F1}"
}
