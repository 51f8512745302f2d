import Foundation
import ModelwrightEngineTestSupport
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright

/// Full-text search on PostgreSQL against SQLite's and against `SearchQuery.matches`: random texts
/// of words in several scripts and cases, with and without diacritics, very long words and
/// hostile text between them (tsquery's operators `& | ! <-> : * ( )`, quotes, backslashes,
/// emoji), searched with random queries drawn from their words and with hostile query text. Each
/// engine must select exactly what `matches` selects. Where the engines are known to differ, a
/// test below pins the difference (Runtime.md lists them), and the drawn texts stay outside it.
@Suite(.heavy)
struct FullTextSearchEngineTests {
    /// Words both engines read alike: final sigma, diacritics of U+0300–U+036F, ß, ø, CJK, digits.
    private static let words = [
        "swift", "sweet", "Swim", "café", "CAFÉ", "cafe", "naïve", "Ünïcode", "ΟΔΟΣ", "οδός", "Ὀδυσσεύς", "йод",
        "ĳssel", "Łódź", "ǅemal", "ıi", "Ωmega", "привет",
        "Привет", "Straße", "øre", "日本語", "2024", "x1y2", "résumé", "ﬁle", "ＡＢ", "e\u{301}clair", "İstanbul",
    ]
    /// Text between words: every one of them is a separator to both engines.
    private static let separators = [
        " ", "\n", "\t", " & ", "|", "!", "<->", ":", "*", "(", ")", "'", "\"", "\\", "--", "@", ".", "-", "+",
        "\u{1F600}", ", ", ":*", "''", "\\'",
    ]

    /// Queries drawn per run: a few seconds' worth in CI, many more with `MODELWRIGHT_LARGE=1`.
    private static let rounds = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 2_000 : 120

    @Test func postgreSQLSelectsWhatSQLiteAndMatchesSelect() async throws {
        guard TestEngine.available.contains(.postgres) else { return }
        var random = SplitMix64(seed: 0x9F75)
        var long: [String] = []
        var texts: [String] = []
        for _ in 0..<150 {
            var text = ""
            for index in 0..<(1 + Int(random.next() % 8)) {
                if index > 0 { text += Self.separators[Int(random.next() % UInt64(Self.separators.count))] }
                if random.next() % 12 == 0 {
                    // A very long word (256 to 400 letters), its first 255 drawn so no two share them.
                    let word = String(
                        (0..<(256 + Int(random.next() % 145))).map { _ in random.next() % 2 == 0 ? "a" : "b" })
                    long.append(word)
                    text += word
                } else {
                    text += Self.words[Int(random.next() % UInt64(Self.words.count))]
                }
            }
            texts.append(text)
        }
        let notes = texts.enumerated().map { SearchedNote(title: $0.element, rank: Int64($0.offset)) }
        let vocabulary = Self.words + long
        try await TestEngine.postgres.withStore(schema: SearchedNote.schema) { postgres in
            try await TestEngine.sqlite.withStore(schema: SearchedNote.schema) { sqlite in
                for store in [postgres, sqlite] {
                    try await store.performAndSave { context in
                        for note in notes { try context.insert(note) }
                    }
                }
                var compared = 0
                var selecting = 0
                for round in 0..<Self.rounds {
                    let query: SearchQuery
                    if round % 4 == 3 {
                        // What someone types: any text, operators and all, between words (two words
                        // side by side would make one longer than 255 letters, a pinned difference).
                        query = SearchQuery(
                            words: (0..<Int(random.next() % 5)).map { _ in
                                Self.separators[Int(random.next() % UInt64(Self.separators.count))]
                                    + vocabulary[Int(random.next() % UInt64(vocabulary.count))]
                            }.joined())
                    } else {
                        guard let parsed = try? SearchQuery(Self.query(&random, vocabulary, depth: 2)) else { continue }
                        query = parsed
                    }
                    let expected = Set(notes.filter { query.matches($0.title) }.map(\.id))
                    for (engine, store) in [("SQLite", sqlite), ("PostgreSQL", postgres)] {
                        let fetched = try await store.performQuery { context in
                            Set(try context.fetch(SearchedNote.request().filter { $0.title.matches(query) }).map(\.id))
                        }
                        let differing = notes.filter { fetched.symmetricDifference(expected).contains($0.id) }.map(
                            \.title)
                        #expect(
                            fetched == expected,
                            "\(engine): \(query.description.prefix(300)) selects \(fetched.count), not \(expected.count): \(differing.first?.debugDescription.prefix(400) ?? "")"
                        )
                        let negated = try await store.performQuery { context in
                            Set(try context.fetch(SearchedNote.request().filter { !$0.title.matches(query) }).map(\.id))
                        }
                        #expect(
                            negated == Set(notes.map(\.id)).subtracting(expected),
                            "\(engine): NOT \(query.description.prefix(300))")
                    }
                    let ranked = try await postgres.performQuery { context in
                        try context.search(SearchedNote.request(), for: query, in: { $0.title })
                    }
                    #expect(
                        Set(ranked.map(\.record.id)) == expected,
                        "ranked on PostgreSQL: \(query.description.prefix(300))")
                    #expect(zip(ranked, ranked.dropFirst()).allSatisfy { $0.score >= $1.score }, "best first")
                    compared += 1
                    selecting += expected.isEmpty ? 0 : 1
                }
                #expect(
                    compared > Self.rounds * 4 / 5 && selecting > compared / 3,
                    "\(selecting) of \(compared) queries select rows")
                let rows = try await postgres.performQuery { try $0.count(SearchedNote.request()) }
                #expect(rows == notes.count, "no query text changed the store")
            }
        }
    }

    /// A query of the grammar over `vocabulary`: words (quoted when they hold what the grammar
    /// reads), prefixes, phrases, `AND`, `OR`, `NOT`.
    private static func query(_ random: inout SplitMix64, _ vocabulary: [String], depth: Int) -> String {
        let pick = { (random: inout SplitMix64) in vocabulary[Int(random.next() % UInt64(vocabulary.count))] }
        switch depth == 0 ? random.next() % 3 : random.next() % 6 {
        case 0:
            let word = pick(&random)
            return String(word.prefix(1 + Int(random.next() % 4))) + "*"
        case 1: return "\"" + pick(&random) + "\""
        case 2: return "\"" + pick(&random) + " " + pick(&random) + "\""
        case 3:
            return "(\(query(&random, vocabulary, depth: depth - 1)) \(query(&random, vocabulary, depth: depth - 1)))"
        case 4:
            return
                "(\(query(&random, vocabulary, depth: depth - 1)) OR \(query(&random, vocabulary, depth: depth - 1)))"
        default:
            return
                "(\(query(&random, vocabulary, depth: depth - 1)) NOT \(query(&random, vocabulary, depth: depth - 1)))"
        }
    }

    /// The differences between the engines that Runtime.md states, each pinned: a text, a query,
    /// and what each engine answers. A change to either engine's reading of words shows here.
    @Test func theDifferencesFromSQLiteAreTheStatedOnes() async throws {
        guard TestEngine.available.contains(.postgres) else { return }
        let long = String(repeating: "x", count: PostgresDialect.searchWordLength)
        // (text, query, SQLite and `matches` select it, PostgreSQL selects it)
        let cases: [(String, String, Bool, Bool)] = [
            // A word is compared by its first 255 scalars on PostgreSQL, its first 32,768 bytes on SQLite.
            (long + "a", "\"\(long)b\"", false, true),
            // A scalar unassigned in Unicode 6.1 (or after it) stays inside a word in FTS5; ICU splits there.
            ("a\u{378}b", "\"a\u{378}b\"", true, false),
            ("a\u{378}b", "b", false, true),
            // A private-use character is a letter to FTS5, a separator to ICU's [:alnum:].
            ("a\u{E000}b", "\"a\u{E000}b\"", true, false),
            ("a\u{E000}b", "b", false, true),
            // PostgreSQL keeps positions up to 16,383: words after it share that position, so no phrase.
            (String(repeating: "w ", count: 16_400) + "x y", "\"x y\"", true, false),
        ]
        let notes = cases.map { SearchedNote(title: $0.0, rank: 0) }
        try await TestEngine.postgres.withStore(schema: SearchedNote.schema) { postgres in
            try await TestEngine.sqlite.withStore(schema: SearchedNote.schema) { sqlite in
                for store in [postgres, sqlite] {
                    try await store.performAndSave { context in
                        for note in notes { try context.insert(note) }
                    }
                }
                for (number, (text, queryText, onSQLite, onPostgres)) in cases.enumerated() {
                    let query = try SearchQuery(queryText)
                    let id = notes[number].id
                    #expect(query.matches(text) == onSQLite, "matches: \(text.debugDescription) \(queryText)")
                    for (store, expected) in [(sqlite, onSQLite), (postgres, onPostgres)] {
                        let found = try await store.performQuery { context in
                            try context.fetch(SearchedNote.request().filter { $0.title.matches(query) }).map(\.id)
                        }
                        #expect(found.contains(id) == expected, "\(text.debugDescription) \(queryText)")
                    }
                }
                // Snippets: PostgreSQL's `ts_headline` marks a word only as its own parser spells it,
                // so an accented word a folded query found is not marked, and it adds no `…`.
                let cafe = SearchedNote(
                    title: "Un café au lait " + String(repeating: "mot ", count: 40) + "fin", rank: 1)
                for store in [postgres, sqlite] {
                    try await store.performAndSave { try $0.insert(cafe) }
                }
                let query = try SearchQuery("cafe")
                let snippets = try await [sqlite, postgres].asyncMap { store in
                    try await store.performQuery { context in
                        try context.search(
                            SearchedNote.request().filter { $0.rank == 1 }, for: query, in: { $0.title },
                            snippetWords: 6)
                    }.map(\.snippet)
                }
                #expect(snippets[0].count == 1 && snippets[1].count == 1, "both find it")
                #expect(snippets[0].first.map { $0.highlights.count == 1 && $0.text.hasSuffix("…") } == true)
                #expect(snippets[1].first.map { $0.highlights.isEmpty && !$0.text.contains("…") } == true)
                // A text whose `tsvector` passes 1 MB (here 120,000 different words) is refused by
                // PostgreSQL, stored by SQLite: a large run only, it takes seconds.
                guard ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" else { return }
                let many = SearchedNote(
                    title: (0..<120_000).map { String($0, radix: 36) + "q" }.joined(separator: " "), rank: 2)
                try await sqlite.performAndSave { try $0.insert(many) }
                await #expect(throws: (any Error).self) {
                    try await postgres.performAndSave { try $0.insert(many) }
                }
            }
        }
    }
}

extension Array {
    /// The results of `transform` on each element, in order, one after the other.
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}

/// A record with one searchable attribute.
struct SearchedNote: Record, Equatable {
    typealias ID = RecordID<SearchedNote>
    static let entityName = "Note"
    static let schema = SchemaDescription(
        modelName: "EngineSearch", version: 1,
        entities: [
            EntityDescription(
                name: "Note",
                attributes: [
                    AttributeDescription(name: "title", type: .string),
                    AttributeDescription(name: "rank", type: .int64),
                ],
                searchableAttributes: ["title"])
        ])

    let id: ID
    var title: String
    var rank: Int64

    init(id: ID = ID(), title: String, rank: Int64) {
        self.id = id
        self.title = title
        self.rank = rank
    }

    func encode(to row: inout RowEncoder) throws {
        try row.encode(title)
        try row.encode(rank)
    }

    init(id: ID, row: inout RowDecoder) throws {
        self.id = id
        title = try row.decode()
        rank = try row.decode()
    }

    struct Fields: RecordFields {
        typealias Target = SearchedNote
        let path: FieldPath
        var title: Field<String> { path.field("title") }
        var rank: Field<Int64> { path.field("rank") }
    }
}
