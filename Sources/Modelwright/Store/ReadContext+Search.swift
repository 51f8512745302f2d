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

    /// Reads a snippet whose matches the store marked with `open` and `close`.
    init(marked: String, open: Character, close: Character) {
        var text = ""
        var starts: [String.Index] = []
        var highlights: [Range<String.Index>] = []
        var start: Int?
        var offsets: [(Int, Int)] = []
        var count = 0
        for character in marked {
            if character == open {
                start = count
            } else if character == close, let begin = start {
                offsets.append((begin, count))
                start = nil
            } else {
                text.append(character)
                count += 1
            }
        }
        starts = Array(text.indices) + [text.endIndex]
        highlights = offsets.map { starts[$0.0]..<starts[$0.1] }
        self.text = text
        self.highlights = highlights
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
            .integer(Int64(min(max(snippetWords, 1), 64))), .text(query.ftsText),
        ]
        arguments += innerArguments
        if request.fetchLimit != nil || request.fetchOffset > 0 {
            sql += connection.dialect.limit(marker, offset: marker)
            arguments.append(request.fetchLimit.map { .integer(Int64($0)) } ?? connection.dialect.noLimit)
            arguments.append(.integer(Int64(request.fetchOffset)))
        }
        var matches: [(id: UUID, score: Double, snippet: SearchSnippet)] = []
        let statement = try connection.statement(sql)
        defer { statement.reset() }
        for (number, argument) in arguments.enumerated() {
            statement.bind(argument, Int32(number + 1))
        }
        while try statement.step() {
            guard let id = statement.uuid(0) else {
                throw StoreError.invalidValue(entity: entity.name, message: "a search match has no valid ID")
            }
            let snippet = statement.isNull(2) ? "" : statement.string(2)
            matches.append(
                (id, -statement.double(1), SearchSnippet(marked: snippet, open: Self.open, close: Self.close)))
        }
        guard !matches.isEmpty else { return [] }
        let idField: Field<Target.ID> = FieldPath.root.field("id")
        let records = try fetch(FetchRequest<Target>(condition: idField.in(matches.map { RecordID($0.id) })))
        let byID = Dictionary(records.map { ($0.id.uuid, $0) }, uniquingKeysWith: { first, _ in first })
        return matches.compactMap { match in
            byID[match.id].map { SearchResult(record: $0, score: match.score, snippet: match.snippet) }
        }
    }

    /// The characters the store marks a snippet's matches with: private-use code points, which
    /// the tokenizer keeps inside words, so text is unlikely to hold them (a snippet of text that
    /// does may mark the wrong words, never other records).
    private static let open: Character = "\u{F8F0}"
    private static let close: Character = "\u{F8F1}"
}
