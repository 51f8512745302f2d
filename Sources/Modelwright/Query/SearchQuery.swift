import Foundation

/// What a full-text search looks for in a `@searchable` attribute: words, word prefixes, phrases,
/// combined with `AND`, `OR`, `NOT` and parentheses.
///
/// ```swift
/// let query = try SearchQuery("swift conc* NOT \"objective c\"")
/// let books = try context.fetch(Book.request().filter { $0.title.matches(query) })
/// ```
///
/// The grammar, from the loosest binding to the tightest:
///
/// - `a OR b`: either side;
/// - `a AND b`, or `a b`: both sides;
/// - `a NOT b`: `a` without `b` (`NOT` is binary, as in SQLite's FTS5; a query cannot start with it);
/// - a word (`swift`), a word prefix (`conc*`), a phrase in double quotes (`"structured concurrency"`,
///   its words next to each other in that order), or a group in parentheses.
///
/// The keywords are `AND`, `OR` and `NOT` in capitals; `and` is a word. Words are compared as the
/// store compares them: in Unicode NFKC (so `ﬁle` is `file`, full-width `ＡＢ` is `AB`, decomposed
/// and composed spellings are one), split by SQLite FTS5's `unicode61` tokenizer at every
/// character that is not a letter or a digit, without case and without diacritics. A word of several such parts
/// (`foo-bar`, `c++`) is the phrase of its parts. There is no stemming: `run` does not find `runs`
/// (use `run*`).
///
/// A query is bounded so that every query the parser accepts is one the store's FTS5 parser
/// accepts too, and every walk over it (its description, ``matches(_:)``, hashing) stays shallow:
/// at most ``maximumLength`` Unicode scalars, ``maximumTerms`` words, prefixes and phrases, and
/// ``maximumNesting`` levels of operators and groups (a chain `a NOT b NOT c` nests one level per
/// `NOT`). Text beyond a bound throws ``SearchQueryError`` at the place it is crossed.
///
/// Text that does not follow the grammar throws ``SearchQueryError``, which says where and what to
/// write instead. For text typed into a search field, ``init(words:)`` never throws: it searches for
/// every word of the text, each as a prefix of a word or a whole word.
///
/// The query reaches the store as one bound parameter, rebuilt from its parsed form with every word
/// quoted: no text of the user's is read as SQL or as FTS5 syntax.
public struct SearchQuery: Sendable, Hashable, CustomStringConvertible {
    /// The parsed query.
    private let root: Node

    /// The most Unicode scalars a query's text may have (a character is one or more scalars).
    public static let maximumLength = 10_000
    /// The most words, prefixes and phrases a query may have; ``init(words:)`` keeps the first ones.
    public static let maximumTerms = 256
    /// How deeply a query's operators and groups may nest: SQLite FTS5's own parser refuses queries
    /// nested about 35 levels deep, so this bound leaves it room.
    public static let maximumNesting = 16

    /// Parses `text` in the grammar above.
    ///
    /// - Throws: ``SearchQueryError`` naming the position (a character offset from 0) and the fix.
    public init(_ text: String) throws(SearchQueryError) {
        // Counted in scalars: a character can hold any number of them (a letter and its marks).
        guard text.unicodeScalars.count <= Self.maximumLength else {
            throw SearchQueryError(
                offset: min(Self.maximumLength, text.count),
                message: "the search text has more than \(Self.maximumLength) Unicode scalars",
                fix: "shorten it to at most \(Self.maximumLength) scalars (letters, digits, marks, spaces)")
        }
        var parser = Parser(text)
        root = try parser.parseQuery()
    }

    /// A query that finds every word of `text` (all of them, in any order), the last one also as the
    /// start of a longer word, so results follow what someone is typing. Punctuation and the
    /// keywords `AND`, `OR` and `NOT` are read as plain text; text with no letter or digit matches
    /// nothing.
    public init(words text: String) {
        let words = SearchTokenizer.tokens(of: text).prefix(Self.maximumTerms)
        guard let last = words.last else {
            root = .nothing
            return
        }
        var terms = words.dropLast().map { Node.phrase([$0], prefix: false) }
        terms.append(.phrase([last], prefix: true))
        root = terms.count == 1 ? terms[0] : .and(terms)
    }

    /// The query in SQLite FTS5's syntax, every word quoted: what the store binds.
    package var ftsText: String { root.ftsText }

    /// The query as PostgreSQL's `tsquery` input: every word one quoted lexeme (its quotes doubled,
    /// its backslashes escaped, so nothing in it is an operator), a phrase's words joined by `<->`,
    /// the last one a prefix (`:*`) for `conc*`, and `&`, `|` and `& !` for `AND`, `OR` and `NOT`.
    /// Each lexeme is the word as FTS5 folds it, cut to ``PostgresDialect/searchWordLength``
    /// scalars as the store's `tsvector` cuts a stored word (<doc:Runtime#Full-text-search> lists
    /// where PostgreSQL's search differs from SQLite's).
    package var tsqueryText: String { root.tsqueryText }

    /// The query in its canonical spelling (every group in parentheses).
    public var description: String { root.ftsText }

    /// Whether `text` matches the query, compared as the store's tokenizer compares words: the
    /// evaluation a request's search makes, without a store.
    public func matches(_ text: String) -> Bool {
        root.matches(SearchTokenizer.indexedTerms(of: text))
    }

    /// A parsed query: each word already split as the tokenizer splits it, lowercased and folded.
    fileprivate indirect enum Node: Sendable, Hashable {
        /// A word, phrase or prefix: `text` is the phrase the store's FTS5 receives (its words,
        /// separated by spaces), `terms` what FTS5's tokenizer reads from that very text, which
        /// must follow one another in a match; `prefix` lets the last one start a longer term.
        case term(text: String, terms: [[UInt8]], prefix: Bool)
        case and([Node])
        case or([Node])
        /// The first without the second.
        case without(Node, Node)
        /// Matches nothing (an empty ``SearchQuery/init(words:)``).
        case nothing

        /// The term of the words `words`, read back as FTS5 reads the phrase they make.
        static func phrase(_ words: [String], prefix: Bool) -> Node {
            let text = words.joined(separator: " ")
            return .term(text: text, terms: SearchTokenizer.queryTerms(of: text), prefix: prefix)
        }

        var ftsText: String {
            switch self {
            case .term(let text, _, let prefix):
                // A tokenizer's word holds no quote; doubled anyway, FTS5's escape, so none could
                // end the phrase.
                return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" + (prefix ? "*" : "")
            case .and(let nodes): return "(" + nodes.map(\.ftsText).joined(separator: " AND ") + ")"
            case .or(let nodes): return "(" + nodes.map(\.ftsText).joined(separator: " OR ") + ")"
            case .without(let kept, let removed): return "(" + kept.ftsText + " NOT " + removed.ftsText + ")"
            // A phrase of one character no tokenizer keeps: FTS5 reads it as a phrase with no
            // tokens, which matches no row.
            case .nothing: return "\"\u{1}\""
            }
        }

        var tsqueryText: String {
            switch self {
            case .term(_, let terms, let prefix):
                let lexemes = terms.map { bytes in
                    let word = String(decoding: bytes, as: UTF8.self)
                    let cut = String(
                        String.UnicodeScalarView(word.unicodeScalars.prefix(PostgresDialect.searchWordLength)))
                    return "'"
                        + cut.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "''")
                        + "'"
                }
                guard !lexemes.isEmpty else { return Node.nothing.tsqueryText }
                return "(" + lexemes.joined(separator: " <-> ") + (prefix ? ":*" : "") + ")"
            case .and(let nodes): return "(" + nodes.map(\.tsqueryText).joined(separator: " & ") + ")"
            case .or(let nodes): return "(" + nodes.map(\.tsqueryText).joined(separator: " | ") + ")"
            case .without(let kept, let removed): return "(" + kept.tsqueryText + " & !" + removed.tsqueryText + ")"
            // A lexeme no stored text holds: the store's `tsvector` keeps letters and digits only.
            case .nothing: return "'!'"
            }
        }

        /// Whether a text of the terms `words` (as ``SearchTokenizer/indexedTerms(of:)`` reads it)
        /// matches, comparing bytes as FTS5 does.
        func matches(_ words: [[UInt8]]) -> Bool {
            switch self {
            case .term(_, let tokens, let prefix):
                guard !tokens.isEmpty, words.count >= tokens.count else { return false }
                for start in 0...(words.count - tokens.count) {
                    let found = tokens.indices.allSatisfy { offset in
                        let word = words[start + offset]
                        return prefix && offset == tokens.count - 1
                            ? word.starts(with: tokens[offset]) : word == tokens[offset]
                    }
                    if found { return true }
                }
                return false
            case .and(let nodes): return nodes.allSatisfy { $0.matches(words) }
            case .or(let nodes): return nodes.contains { $0.matches(words) }
            case .without(let kept, let removed): return kept.matches(words) && !removed.matches(words)
            case .nothing: return false
            }
        }
    }

    /// A recursive-descent parser over the query's characters. Every node it builds carries its
    /// height, and the parser refuses a node higher than ``SearchQuery/maximumNesting`` where it
    /// would be built, so neither its own recursion nor any later walk over the tree goes deep.
    private struct Parser {
        /// A node with its height: 0 for a term, one more than its highest operand otherwise.
        private struct Parsed {
            let node: Node
            let height: Int
        }

        private let characters: [Character]
        private var position = 0
        private var terms = 0
        private var depth = 0

        init(_ text: String) {
            characters = Array(text)
        }

        mutating func parseQuery() throws(SearchQueryError) -> Node {
            skipSpaces()
            guard position < characters.count else {
                throw SearchQueryError(offset: 0, message: "the search text is empty", fix: "write at least one word")
            }
            let node = try parseOr().node
            skipSpaces()
            if position < characters.count {
                if characters[position] == ")" {
                    throw error("this ')' closes no '('", fix: "remove it, or add the '(' it closes")
                }
                throw error("unexpected '\(characters[position])'", fix: "put a word, phrase or group here")
            }
            return node
        }

        private mutating func parseOr() throws(SearchQueryError) -> Parsed {
            let start = position
            var operands = [try parseAnd()]
            while keyword("OR") { operands.append(try parseAnd()) }
            guard operands.count > 1 else { return operands[0] }
            return try nested(.or(operands.map(\.node)), over: operands, at: start)
        }

        private mutating func parseAnd() throws(SearchQueryError) -> Parsed {
            let start = position
            var operands = [try parseNot()]
            while true {
                if keyword("AND") {
                    operands.append(try parseNot())
                } else if startsOperand() {
                    operands.append(try parseNot())
                } else {
                    break
                }
            }
            guard operands.count > 1 else { return operands[0] }
            return try nested(.and(operands.map(\.node)), over: operands, at: start)
        }

        private mutating func parseNot() throws(SearchQueryError) -> Parsed {
            var parsed = try parsePrimary()
            while true {
                skipSpaces()
                let start = position
                guard keyword("NOT") else { break }
                let removed = try parsePrimary()
                parsed = try nested(.without(parsed.node, removed.node), over: [parsed, removed], at: start)
            }
            return parsed
        }

        /// `node`, whose operands are `operands`, unless it nests deeper than a query may.
        private func nested(_ node: Node, over operands: [Parsed], at offset: Int) throws(SearchQueryError) -> Parsed {
            let height = 1 + operands.reduce(0) { max($0, $1.height) }
            guard height <= SearchQuery.maximumNesting else {
                throw SearchQueryError(
                    offset: offset,
                    message: "the query nests operators and groups deeper than \(SearchQuery.maximumNesting) levels",
                    fix: "split it into simpler queries, or remove some operators or parentheses")
            }
            return Parsed(node: node, height: height)
        }

        /// A term, unless the query already has as many as it may.
        private mutating func term(_ tokens: [String], at offset: Int) throws(SearchQueryError) -> Parsed {
            terms += 1
            guard terms <= SearchQuery.maximumTerms else {
                throw SearchQueryError(
                    offset: offset, message: "the query has more than \(SearchQuery.maximumTerms) words and phrases",
                    fix: "search for fewer words")
            }
            return Parsed(node: .phrase(tokens, prefix: readStar()), height: 0)
        }

        private mutating func parsePrimary() throws(SearchQueryError) -> Parsed {
            skipSpaces()
            guard position < characters.count else {
                throw error("the search text ends where a word, phrase or group is expected", fix: "add a word")
            }
            for word in ["AND", "OR", "NOT"] where peekKeyword(word) {
                throw error(
                    "'\(word)' needs a word, phrase or group before it",
                    fix: word == "NOT"
                        ? "write 'a NOT b' (NOT takes away from what comes before it)" : "add a word before it")
            }
            let start = position
            switch characters[position] {
            case "(":
                // A group is as deep as what it holds, but each '(' costs the parser a call: one
                // more open group than the nesting bound can only hold redundant parentheses.
                depth += 1
                guard depth <= SearchQuery.maximumNesting else {
                    throw error(
                        "groups nest deeper than \(SearchQuery.maximumNesting) levels", fix: "remove some parentheses")
                }
                position += 1
                let inner = try parseOr()
                skipSpaces()
                guard position < characters.count, characters[position] == ")" else {
                    throw SearchQueryError(
                        offset: start, message: "this '(' is never closed", fix: "add a ')' after the group")
                }
                position += 1
                depth -= 1
                return inner
            case ")":
                throw error("this ')' comes where a word, phrase or group is expected", fix: "remove it")
            case "\"":
                position += 1
                var text = ""
                while position < characters.count, characters[position] != "\"" {
                    text.append(characters[position])
                    position += 1
                }
                guard position < characters.count else {
                    throw SearchQueryError(
                        offset: start, message: "this phrase's '\"' is never closed", fix: "add a '\"' after it")
                }
                position += 1
                let tokens = SearchTokenizer.tokens(of: text)
                guard !tokens.isEmpty else {
                    throw SearchQueryError(
                        offset: start, message: "this phrase has no letter or digit to search for",
                        fix: "write a word inside the quotes, or remove them")
                }
                return try term(tokens, at: start)
            case "*":
                throw error("'*' must follow a word, as in 'conc*'", fix: "write it right after a word")
            default:
                var text = ""
                while position < characters.count, !Self.endsWord(characters[position]) {
                    text.append(characters[position])
                    position += 1
                }
                let tokens = SearchTokenizer.tokens(of: text)
                guard !tokens.isEmpty else {
                    throw SearchQueryError(
                        offset: start, message: "'\(text)' has no letter or digit to search for",
                        fix: "remove it, or put it inside a word")
                }
                return try term(tokens, at: start)
            }
        }

        private mutating func readStar() -> Bool {
            guard position < characters.count, characters[position] == "*" else { return false }
            position += 1
            return true
        }

        private static func endsWord(_ character: Character) -> Bool {
            character.isWhitespace || character == "(" || character == ")" || character == "\"" || character == "*"
        }

        private mutating func startsOperand() -> Bool {
            skipSpaces()
            guard position < characters.count, characters[position] != ")" else { return false }
            return !peekKeyword("OR") && !peekKeyword("NOT") && !peekKeyword("AND")
        }

        /// Whether the keyword stands next, as a whole word.
        private mutating func peekKeyword(_ word: String) -> Bool {
            skipSpaces()
            let letters = Array(word)
            guard position + letters.count <= characters.count,
                Array(characters[position..<position + letters.count]) == letters
            else { return false }
            let after = position + letters.count
            return after == characters.count || Self.endsWord(characters[after]) && characters[after] != "*"
        }

        private mutating func keyword(_ word: String) -> Bool {
            guard peekKeyword(word) else { return false }
            position += word.count
            return true
        }

        private mutating func skipSpaces() {
            while position < characters.count, characters[position].isWhitespace { position += 1 }
        }

        private func error(_ message: String, fix: String) -> SearchQueryError {
            SearchQueryError(offset: position, message: message, fix: fix)
        }
    }
}

/// Search text that does not follow ``SearchQuery``'s grammar: where, what, and what to write instead.
public struct SearchQueryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The position of the problem, in characters from the start of the text (0 for the first).
    public let offset: Int
    /// What is wrong.
    public let message: String
    /// What to write instead.
    public let fix: String

    /// The error as one sentence: `search text, character 4: this '(' is never closed (add a ')' …)`.
    public var description: String {
        "search text, character \(offset + 1): \(message) (\(fix))"
    }
}

/// The one rule for what a word of a search is, for the stored text and for queries alike: the
/// text in Unicode NFKC (``normalized(_:)``, the form the store's index holds), split and folded by
/// SQLite FTS5's own tokenizer, configured as the store's indexes are (``FTS5Tokenizer``): runs of
/// letters and digits, lowercased, diacritics removed, as FTS5's tables of Unicode 6.1 say. No
/// rule of this module imitates the tokenizer, so the store and ``SearchQuery/matches(_:)`` cannot
/// read a word differently.
package enum SearchTokenizer {
    /// `text` in Unicode NFKC: composed (`e` + U+0301 is `é`, conjoining jamo are their Hangul
    /// syllable) and with compatibility characters replaced (U+212B ANGSTROM SIGN is `Å`, `ﬁ` is
    /// `fi`, full-width `Ａ` is `A`). The store indexes each searchable attribute in this form
    /// (its SQL function `mw_search_text`), since FTS5's tokenizer normalises nothing.
    ///
    /// The text is first put in Unicode's Stream-Safe Text Format (UAX #15): a U+034F COMBINING
    /// GRAPHEME JOINER, a starter, after every 30 non-starters in a row. Normalisation reorders a
    /// run of non-starters as a whole, in time growing with the square of its length, so one record
    /// or query of a letter and 100,000 marks held a writer for minutes; with runs cut at 30 the
    /// cost grows with the text's length. The joiner is a mark to FTS5's tokenizer, so a word stays
    /// one word, and the store and ``SearchQuery/matches(_:)`` read it through this same function.
    package static func normalized(_ text: String) -> String {
        streamSafe(text).precomposedStringWithCompatibilityMapping
    }

    /// The longest run of non-starters ``streamSafe(_:)`` leaves (UAX #15's limit).
    static let longestMarkRun = 30

    /// `text` with U+034F after every ``longestMarkRun`` non-starters in a row (scalars of a
    /// canonical combining class other than 0); `text` itself when it has no such run.
    static func streamSafe(_ text: String) -> String {
        // Every scalar below U+0300 is a starter, and UTF-8 encodes those with bytes below 0xCC.
        guard text.utf8.contains(where: { $0 >= 0xCC }) else { return text }
        var run = 0
        var result = String.UnicodeScalarView()
        var changed = false
        for scalar in text.unicodeScalars {
            if scalar.properties.canonicalCombiningClass == .notReordered {
                run = 0
            } else {
                if run == longestMarkRun {
                    result.append("\u{034F}")
                    changed = true
                    run = 0
                }
                run += 1
            }
            result.append(scalar)
        }
        return changed ? String(result) : text
    }

    /// The words of `text`, in order, whole: what a query is built from.
    package static func tokens(of text: String) -> [String] {
        FTS5Tokenizer.words(of: normalized(text))
    }

    /// The terms the store's index holds for `text` stored in a searchable attribute, as the bytes
    /// FTS5 compares.
    static func indexedTerms(of text: String) -> [[UInt8]] {
        FTS5Tokenizer.tokens(of: normalized(text))
    }

    /// The terms FTS5 reads from `phrase`, the text of one quoted phrase of a query (bound as it is,
    /// without normalising), as the bytes it compares.
    static func queryTerms(of phrase: String) -> [[UInt8]] {
        FTS5Tokenizer.tokens(of: phrase)
    }
}
