import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright

/// A hand-written statement's outline, read by each engine's rules: drawn statements of strings,
/// quoted names, comments, casts and markers (PostgreSQL's `E'…'` escapes, dollar quotes and
/// nested comments too) give exactly the markers written outside them, the first word, and the
/// text up to the last token before a trailing comment or semicolon.
struct SQLOutlineTests {
    static let cases = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 2000 : 200

    /// What the content of a string, name or comment is drawn from: every piece that would be read
    /// as something else outside it.
    static let contentPieces = [
        "?", "?1", "$1", "$2", ":x", "@x", "$x", "'", "\"", "--", "/*", "*/", ";", "\\", "$$", "$t$", "E'", "x", " ",
        "é", "\n",
    ]

    /// A drawn token and the markers it holds.
    struct Token {
        let text: String
        let markers: [String]
    }

    static func content(_ random: inout SplitMix64, avoiding forbidden: [String] = []) -> String {
        var text = ""
        for _ in 0..<random.next(below: 6) {
            let piece = random.pick(contentPieces)
            if !forbidden.contains(where: { piece.contains($0) }) { text += piece }
        }
        return text
    }

    static func token(_ random: inout SplitMix64, postgres: Bool) -> Token {
        switch random.next(below: postgres ? 12 : 9) {
        case 0:
            return Token(text: random.pick(["a", "x$1", "tag", "E", "e", "col_2", "é"]), markers: [])
        case 1:
            let text = content(&random).replacingOccurrences(of: "'", with: "''")
            return Token(text: "'\(text)'", markers: [])
        case 2:
            let text = content(&random).replacingOccurrences(of: "\"", with: "\"\"")
            return Token(text: "\"\(text)\"", markers: [])
        case 3:
            return Token(text: "-- \(content(&random, avoiding: ["\n"]))\n", markers: [])
        case 4:
            return Token(text: "/* \(content(&random, avoiding: ["*/", "/*"])) */", markers: [])
        case 5:
            return Token(text: "::text", markers: [])
        case 6, 7:
            let marker =
                postgres
                ? random.pick(["?", "$1", "$2", "$17"]) : random.pick(["?", "?1", "?12", ":x", "@name", "$v", ":a1"])
            return Token(text: marker, markers: [marker])
        case 8:
            return Token(text: random.pick(["=", "(", ")", ",", "+", "||"]), markers: [])
        case 9:
            let text = content(&random).replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(
                of: "'", with: "\\'")
            return Token(text: "E'\(text)'", markers: [])
        case 10:
            let tag = random.pick(["", "t", "body"])
            return Token(text: "$\(tag)$\(content(&random, avoiding: ["$\(tag)$", "$"]))$\(tag)$", markers: [])
        default:
            let inner = "/* \(content(&random, avoiding: ["*/", "/*"])) */"
            return Token(text: "/* a \(inner) b */", markers: [])
        }
    }

    @Test(arguments: [false, true])
    func markersFirstWordAndBodyAreReadAsTheEngineReadsThem(postgres: Bool) {
        let rules = postgres ? PostgresDialect().handWritten : SQLiteDialect().handWritten
        for index in 0..<Self.cases {
            var random = SplitMix64(seed: postgres ? 91 : 92, index: index)
            let first = random.pick(["select", "SELECT", "Update", "with"])
            let tokens = (0..<random.next(below: 12)).map { _ in Self.token(&random, postgres: postgres) }
            let body = ([first] + tokens.map(\.text) + ["end_word"]).joined(separator: " ")
            let tail = (0..<random.next(below: 4)).map { _ in
                random.pick([";", " ", "\n", "-- a ? comment", "/* $1 */", ";\n--\n"])
            }.joined()
            let outline = SQLOutline(body + tail, rules: rules)
            let label = "\(postgres ? "PostgreSQL" : "SQLite") case \(index): \((body + tail).debugDescription)"
            #expect(outline.markers == tokens.flatMap(\.markers), "\(label)")
            #expect(outline.firstWord == first.uppercased(), "\(label)")
            #expect(outline.body == body, "\(label)")
        }
    }

    /// A statement is admitted by its first word alone from each engine's allowlist, found
    /// behind space and comments; any other first word or token is the word refused, and a
    /// word refused wherever it stands (`SELECT … INTO`, PostgreSQL's functions with lasting
    /// effects) is found outside strings only.
    @Test(arguments: [false, true])
    func onlyTheAllowlistsFirstWordsAreAdmitted(postgres: Bool) {
        let rules = postgres ? PostgresDialect().handWritten : SQLiteDialect().handWritten
        let others = [
            "PRAGMA", "EXPLAIN", "CREATE", "DROP", "ALTER", "ATTACH", "SET", "DECLARE", "BEGIN", "TABLE", "MERGE",
            "TRUNCATE", "COPY", "\\", "'", "\"", ")", "SELECTX", "WITHOUT", "REPLACE",
        ]
        for index in 0..<Self.cases {
            var random = SplitMix64(seed: postgres ? 93 : 94, index: index)
            let prefix = random.pick(["", " \n", "-- c\n", "/* c */ ", ";"])
            let first = random.pick(Array(rules.statementWords) + others)
            let spelled = random.chance(0.5) ? first.lowercased() : first
            let outline = SQLOutline(prefix + spelled + " x", rules: rules)
            let admitted = rules.statementWords.contains(first)
            #expect(
                outline.refusedWord(rules) == (admitted ? nil : first),
                "\(postgres) case \(index): \((prefix + spelled).debugDescription)")
        }
        #expect(SQLOutline("SELECT 1 INTO t", rules: rules).refusedWord(rules) == "INTO")
        #expect(SQLOutline("INSERT INTO t SELECT 1", rules: rules).refusedWord(rules) == nil)
        #expect(SQLOutline("SELECT 'INTO'", rules: rules).refusedWord(rules) == nil)
        let postgresRules = PostgresDialect().handWritten
        for function in postgresRules.refusedFunctions {
            #expect(SQLOutline("SELECT \(function)(1)", rules: postgresRules).refusedWord(postgresRules) == function)
            #expect(
                SQLOutline("SELECT \"\(function)\"(1)", rules: postgresRules).refusedWord(postgresRules) == function)
            #expect(SQLOutline("SELECT '\(function)'", rules: postgresRules).refusedWord(postgresRules) == nil)
        }
    }
}
