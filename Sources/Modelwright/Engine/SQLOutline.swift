/// How an engine reads the text of a statement written by hand (``SQLQuery``), as far as the store
/// needs to: which quotes and comments it has, which first words change the connection rather than
/// the data, and how an interpolated value's marker is spelled. Each dialect gives its own
/// (``SQLDialect/handWritten``); ``SQLOutline`` reads a statement by them.
package struct HandWrittenSQLRules: Sendable {
    /// The first words (in upper case) of statements that change the connection's state rather than
    /// its data, and would outlive the transaction they run in; `\` stands for a client's
    /// backslash command (psql's `\copy`, `\set`).
    package var connectionStatements: Set<String>
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

    /// Rules with the connection statements `connectionStatements` and otherwise standard SQL
    /// (`'text'`, `"name"`, `--` and `/* */` comments).
    package init(connectionStatements: Set<String>) {
        self.connectionStatements = connectionStatements
    }
}

/// What the store needs of a hand-written statement's text without parsing it: its first keyword,
/// the text up to its last token (without a trailing comment or semicolon, so that it can be
/// wrapped in a subquery), and the parameter markers outside strings, quoted names and comments,
/// read by the engine's ``HandWrittenSQLRules``.
package struct SQLOutline {
    /// The whole statement, as written.
    package let text: String
    /// The first word, in upper case (`\` for a backslash command); empty when the statement starts
    /// otherwise.
    package private(set) var firstWord = ""
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

    /// Whether the statement changes the connection rather than the data, by `rules`.
    package func changesTheConnection(_ rules: HandWrittenSQLRules) -> Bool {
        rules.connectionStatements.contains(firstWord)
    }

    /// The lexer behind an outline: one pass over the bytes.
    private struct Reader {
        let bytes: [UInt8]
        let rules: HandWrittenSQLRules
        var index = 0
        /// Where the last token other than a semicolon ends.
        var end = 0
        var seenToken = false

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
                switch current {
                case UInt8(ascii: "-") where following == UInt8(ascii: "-"):
                    while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { index += 1 }
                case UInt8(ascii: "/") where following == UInt8(ascii: "*"):
                    skipBlockComment()
                case 0x20, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, UInt8(ascii: ";"):
                    index += 1
                case UInt8(ascii: "'"), UInt8(ascii: "\""):
                    skipQuoted(closing: current, backslashEscapes: false)
                    token()
                case UInt8(ascii: "`") where rules.bracketedNames:
                    skipQuoted(closing: current, backslashEscapes: false)
                    token()
                case UInt8(ascii: "[") where rules.bracketedNames:
                    skipQuoted(closing: UInt8(ascii: "]"), backslashEscapes: false)
                    token()
                case UInt8(ascii: "E"), UInt8(ascii: "e"):
                    if rules.escapeStrings, following == UInt8(ascii: "'") {
                        index += 1
                        skipQuoted(closing: following, backslashEscapes: true)
                        token()
                    } else {
                        word(into: &outline)
                    }
                case UInt8(ascii: "$") where rules.dollarQuotes && !Self.isDigit(following):
                    if !skipDollarQuoted() { marker(into: &outline) }
                    token()
                case UInt8(ascii: "?"), UInt8(ascii: "$"), UInt8(ascii: ":"), UInt8(ascii: "@"):
                    marker(into: &outline)
                    token()
                case UInt8(ascii: "\\"):
                    if !seenToken { outline.firstWord = "\\" }
                    index += 1
                    token()
                default:
                    if Self.isWordByte(current) {
                        word(into: &outline)
                    } else {
                        index += 1
                        token()
                    }
                }
            }
        }

        /// Marks a token as ending at `index`.
        mutating func token() {
            seenToken = true
            end = index
        }

        /// A word (a keyword or a bare name), which takes digits and `$` after its first byte.
        mutating func word(into outline: inout SQLOutline) {
            let start = index
            while index < bytes.count, Self.isWordByte(bytes[index]) || bytes[index] == UInt8(ascii: "$") {
                index += 1
            }
            if !seenToken {
                outline.firstWord = String(decoding: bytes[start..<index], as: UTF8.self).uppercased()
            }
            token()
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
