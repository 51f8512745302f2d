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

    /// Each engine's connection statements are read as such whatever comes before them.
    @Test func connectionStatementsAreFoundBehindCommentsAndSpace() {
        for rules in [PostgresDialect().handWritten, SQLiteDialect().handWritten] {
            for keyword in rules.connectionStatements {
                for prefix in ["", " \n", "-- c\n", "/* c */ "] {
                    let outline = SQLOutline(prefix + keyword.lowercased() + " x", rules: rules)
                    #expect(outline.changesTheConnection(rules), "\(prefix.debugDescription)\(keyword)")
                }
            }
        }
        let postgres = PostgresDialect().handWritten
        #expect(SQLOutline("/* /* nested */ */ SET x = 1", rules: postgres).changesTheConnection(postgres))
        #expect(!SQLOutline("SELECT 'SET'", rules: postgres).changesTheConnection(postgres))
    }
}
