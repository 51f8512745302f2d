/// How an engine reads the text of a statement written by hand (``SQLQuery``), as far as the store
/// needs to: which quotes and comments it has, which first words a statement may start with, and
/// how an interpolated value's marker is spelled. Each dialect gives its own
/// (``SQLDialect/handWritten``); ``SQLOutline`` reads a statement by them.
package struct HandWrittenSQLRules: Sendable {
    /// The only first words (in upper case) a statement may start with, `(` for a parenthesis:
    /// statements that read or write rows. Every other statement (`PRAGMA`, `EXPLAIN`, `CREATE`,
    /// `SET`, `DECLARE`, transaction control …) is refused, whatever the engine adds to its
    /// language later: an allowlist, so a statement the store did not foresee cannot change the
    /// connection, the session or the schema and outlive the transaction it runs in.
    package var statementWords: Set<String>
    /// Functions (in lower case) whose effect outlives the transaction or reaches outside the
    /// store (PostgreSQL's session advisory locks, `set_config`, `pg_notify`, large objects),
    /// refused wherever their name appears outside strings; empty where the engine has none.
    package var refusedFunctions: Set<String> = []
    /// The most bytes an interpolated name may have, where the engine would otherwise cut a
    /// longer one silently (PostgreSQL's 63); `nil` where names have no such limit.
    package var nameByteLimit: Int?
    /// The most parameters one statement may have, where the engine would fail worse than with an
    /// error on more (PostgreSQL's protocol counts them in 16 bits); `nil` where the engine
    /// refuses more itself with an error that leaves the connection working (SQLite).
    package var parameterLimit: Int?
    /// Whether `` `name` `` and `[name]` are quoted names (SQLite).
    package var bracketedNames = false
    /// Whether `E'…'` strings take backslash escapes, so `E'\''` is one string (PostgreSQL).
    package var escapeStrings = false
    /// Whether `$$…$$` and `$tag$…$tag$` quote a string (PostgreSQL).
    package var dollarQuotes = false
    /// Whether `/* /* */ */` nests (PostgreSQL).
    package var nestedComments = false
    /// Whether each interpolated value's marker is numbered (``SQLDialect/parameter(_:)``, `$1`),
    /// rather than the dialect's plain ``SQLDialect/parameter``.
    package var numberedMarkers = false

    /// Rules that admit statements starting with `statementWords` and otherwise read standard SQL
    /// (`'text'`, `"name"`, `--` and `/* */` comments).
    package init(statementWords: Set<String>) {
        self.statementWords = statementWords
    }
}

/// What the store needs of a hand-written statement's text without parsing it: its first keyword,
/// the text up to its last token (without a trailing comment or semicolon, so that it can be
/// wrapped in a subquery), and the parameter markers outside strings, quoted names and comments,
/// read by the engine's ``HandWrittenSQLRules``.
package struct SQLOutline {
    /// The whole statement, as written.
    package let text: String
    /// The first word, in upper case; otherwise the first token's first character (`(`, `\` for a
    /// backslash command, a quote); empty for a statement with no token.
    package private(set) var firstWord = ""
    /// The first word that makes the statement more than a read or write of rows wherever it
    /// stands: `INTO` other than `INSERT`'s (`SELECT … INTO` creates a table on PostgreSQL), or
    /// the name of one of the rules' ``HandWrittenSQLRules/refusedFunctions``, bare or quoted.
    package private(set) var refusedInside: String?
    /// The text up to the end of its last token other than a semicolon.
    package private(set) var body = ""
    /// The parameter markers outside strings, quoted names and comments, in order: `?` and `?1`,
    /// `$1`, and (where the engine takes named ones) `:name`, `@name`, `$name`.
    package private(set) var markers: [String] = []

    /// The outline of `sql` as an engine with `rules` reads it.
    package init(_ sql: String, rules: HandWrittenSQLRules) {
        text = sql
        let bytes = Array(sql.utf8)
        var reader = Reader(bytes: bytes, rules: rules)
        reader.read(into: &self)
        body = String(decoding: bytes[..<reader.end], as: UTF8.self)
    }

    /// The word for which `rules` refuse the statement: its first word when that is not one of the
    /// ``HandWrittenSQLRules/statementWords``, else a word refused wherever it stands
    /// (``refusedInside``); `nil` when the statement may run.
    package func refusedWord(_ rules: HandWrittenSQLRules) -> String? {
        guard rules.statementWords.contains(firstWord) else {
            return firstWord.isEmpty ? "an empty statement" : firstWord
        }
        return refusedInside
    }

    /// The lexer behind an outline: one pass over the bytes.
    private struct Reader {
        let bytes: [UInt8]
        let rules: HandWrittenSQLRules
        var index = 0
        /// Where the last token other than a semicolon ends.
        var end = 0
        var seenToken = false
        /// The word before the current token, in upper case; empty after any other token.
        var previousWord = ""
        /// Where the byte being read starts, so a token knows its first character.
        var tokenStart = 0
        /// The words after which `INTO` names the table a row goes into.
        static let insertWords: Set<String> = ["INSERT", "REPLACE", "IGNORE", "ABORT", "FAIL", "ROLLBACK"]

        init(bytes: [UInt8], rules: HandWrittenSQLRules) {
            self.bytes = bytes
            self.rules = rules
        }

        func byte(at position: Int) -> UInt8 {
            position < bytes.count ? bytes[position] : 0
        }

        static func isWordByte(_ byte: UInt8) -> Bool {
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x5F || byte >= 0x80
        }

        static func isDigit(_ byte: UInt8) -> Bool {
            byte >= 0x30 && byte <= 0x39
        }

        mutating func read(into outline: inout SQLOutline) {
            while index < bytes.count {
                let current = bytes[index]
                let following = byte(at: index + 1)
                tokenStart = index
                switch current {
                case UInt8(ascii: "-") where following == UInt8(ascii: "-"):
                    while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { index += 1 }
                case UInt8(ascii: "/") where following == UInt8(ascii: "*"):
                    skipBlockComment()
                case 0x20, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, UInt8(ascii: ";"):
                    index += 1
                case UInt8(ascii: "'"):
                    skipQuoted(closing: current, backslashEscapes: false)
                    token(into: &outline)
                case UInt8(ascii: "\""):
                    let start = index
                    skipQuoted(closing: current, backslashEscapes: false)
                    quotedName(from: start, into: &outline)
                    token(into: &outline)
                case UInt8(ascii: "`") where rules.bracketedNames:
                    skipQuoted(closing: current, backslashEscapes: false)
                    token(into: &outline)
                case UInt8(ascii: "[") where rules.bracketedNames:
                    skipQuoted(closing: UInt8(ascii: "]"), backslashEscapes: false)
                    token(into: &outline)
                case UInt8(ascii: "E"), UInt8(ascii: "e"):
                    if rules.escapeStrings, following == UInt8(ascii: "'") {
                        index += 1
                        skipQuoted(closing: following, backslashEscapes: true)
                        token(into: &outline)
                    } else {
                        word(into: &outline)
                    }
                case UInt8(ascii: "$") where rules.dollarQuotes && !Self.isDigit(following):
                    if !skipDollarQuoted() { marker(into: &outline) }
                    token(into: &outline)
                case UInt8(ascii: "?"), UInt8(ascii: "$"), UInt8(ascii: ":"), UInt8(ascii: "@"):
                    marker(into: &outline)
                    token(into: &outline)
                case UInt8(ascii: "\\"):
                    index += 1
                    token(into: &outline)
                default:
                    if Self.isWordByte(current) {
                        word(into: &outline)
                    } else {
                        index += 1
                        token(into: &outline)
                    }
                }
            }
        }

        /// Marks a token other than a word as ending at `index`; the first one's first character
        /// is the outline's ``SQLOutline/firstWord``.
        mutating func token(into outline: inout SQLOutline) {
            if !seenToken, tokenStart < bytes.count {
                outline.firstWord = String(decoding: [bytes[tokenStart]], as: UTF8.self)
            }
            seenToken = true
            previousWord = ""
            end = index
        }

        /// A quoted name ending at `index`: a refused function's name is refused quoted too.
        mutating func quotedName(from start: Int, into outline: inout SQLOutline) {
            guard !rules.refusedFunctions.isEmpty, index - start >= 2 else { return }
            let inner = String(decoding: bytes[(start + 1)..<(index - 1)], as: UTF8.self)
                .replacingOccurrences(of: "\"\"", with: "\"").lowercased()
            if rules.refusedFunctions.contains(inner), outline.refusedInside == nil { outline.refusedInside = inner }
        }

        /// A word (a keyword or a bare name), which takes digits and `$` after its first byte.
        mutating func word(into outline: inout SQLOutline) {
            let start = index
            while index < bytes.count, Self.isWordByte(bytes[index]) || bytes[index] == UInt8(ascii: "$") {
                index += 1
            }
            let word = String(decoding: bytes[start..<index], as: UTF8.self).uppercased()
            if !seenToken { outline.firstWord = word }
            if outline.refusedInside == nil {
                if word == "INTO", !Self.insertWords.contains(previousWord) {
                    outline.refusedInside = word
                } else if rules.refusedFunctions.contains(word.lowercased()) {
                    outline.refusedInside = word.lowercased()
                }
            }
            seenToken = true
            previousWord = word
            end = index
        }

        /// A parameter marker: `?` and `?NNN`, `$NNN`; `:name`, `@name` and `$name` (which only an
        /// engine that takes named parameters reads so; elsewhere they are operators or casts, and
        /// a `::` cast is never one).
        mutating func marker(into outline: inout SQLOutline) {
            let start = index
            let sigil = bytes[index]
            index += 1
            if sigil == UInt8(ascii: ":"), byte(at: index) == UInt8(ascii: ":") {
                index += 1
                return
            }
            let named = sigil != UInt8(ascii: "?")
            while index < bytes.count, named ? Self.isWordByte(bytes[index]) : Self.isDigit(bytes[index]) {
                index += 1
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            let numbered = text.utf8.dropFirst().allSatisfy(Self.isDigit)
            // Where `:x` and `@x` are operators (PostgreSQL), only `?` and `$n` are markers.
            if sigil == UInt8(ascii: "?") || (sigil == UInt8(ascii: "$") && numbered && text.utf8.count > 1)
                || (!rules.dollarQuotes && text.utf8.count > 1)
            {
                outline.markers.append(text)
            }
        }

        /// Skips a quoted string or name up to its closing quote; a doubled quote stays inside, and
        /// so does a quote after a backslash where `backslashEscapes`.
        mutating func skipQuoted(closing: UInt8, backslashEscapes: Bool) {
            index += 1
            while index < bytes.count {
                let current = bytes[index]
                if backslashEscapes, current == UInt8(ascii: "\\") {
                    index += 2
                    continue
                }
                index += 1
                if current == closing {
                    guard byte(at: index) == closing, closing != UInt8(ascii: "]") else { return }
                    index += 1
                }
            }
            index = min(index, bytes.count)
        }

        /// Skips `$tag$ … $tag$` when a dollar quote starts at `index`; `false` (nothing skipped)
        /// when the `$` starts none.
        mutating func skipDollarQuoted() -> Bool {
            var close = index + 1
            while close < bytes.count, Self.isWordByte(bytes[close]) { close += 1 }
            guard close < bytes.count, bytes[close] == UInt8(ascii: "$") else { return false }
            let tag = Array(bytes[index...close])
            index = close + 1
            while index < bytes.count {
                if bytes[index] == UInt8(ascii: "$"), bytes[index...].starts(with: tag) {
                    index += tag.count
                    return true
                }
                index += 1
            }
            return true
        }

        /// Skips a `/* … */` comment, nested ones too where the engine nests them.
        mutating func skipBlockComment() {
            index += 2
            var depth = 1
            while index < bytes.count {
                if bytes[index] == UInt8(ascii: "*"), byte(at: index + 1) == UInt8(ascii: "/") {
                    index += 2
                    depth -= 1
                    if depth == 0 || !rules.nestedComments { return }
                } else if rules.nestedComments, bytes[index] == UInt8(ascii: "/"),
                    byte(at: index + 1) == UInt8(ascii: "*")
                {
                    index += 2
                    depth += 1
                } else {
                    index += 1
                }
            }
        }
    }
}
