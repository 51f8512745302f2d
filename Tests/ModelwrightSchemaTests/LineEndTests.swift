import Foundation
import ModelwrightTestSupport
import Testing

@testable import ModelwrightSchema

/// The schema language ends lines where Swift does (LF, CR, CRLF): in comments, in string
/// literals and in the line numbers of diagnostics.
struct LineEndTests {
    private static let header = "model Test version 1\n"

    @Test func aBareCarriageReturnEndsADocComment() throws {
        let text = Self.header + "/// A doc\rpublic let injected = 42 //\nentity A {\n    x: Int\n}\n"
        let errors = diagnose(text).filter { $0.contains("error") }
        // The text after the CR is schema text again: a located syntax error on line 3.
        #expect(errors.first?.hasPrefix("3:1: error: expected a declaration") == true, "\(errors)")
    }

    @Test func docCommentsEndAtEveryLineEndAndCarryNoLineBreak() throws {
        let text = Self.header + "/// One\r/// Two\r\n/// Three\nentity A {\n    /// X\r    x: Int\n}\n"
        let graph = try graph(text)
        #expect(graph.entities[0].doc == ["One", "Two", "Three"])
        #expect(graph.entities[0].attributes[0].doc == ["X"])
    }

    @Test func generatedDocCommentsNeverHoldALineBreak() {
        // Doc comments of random pieces, line ends among them; every line the AST keeps is one
        // Swift line, and U+2028, U+2029 and NEL (which do not end a Swift line) are left for
        // the generator's doc-comment escaper.
        let pieces = ["a", " ", "\r", "\n", "\r\n", "\u{2028}", "\u{2029}", "\u{85}", "///", "//", "x: Int", "é", "\t"]
        var random = SplitMix64(seed: 13)
        for _ in 0..<2_000 {
            var doc = "///"
            for _ in 0..<Int.random(in: 1...10, using: &random) {
                doc += pieces[Int.random(in: 0..<pieces.count, using: &random)]
            }
            let file = SourceFile(path: "Test.v1.model", text: Self.header + doc + "\nentity A {\n    x: Int\n}\n")
            var sink = DiagnosticSink(file: file)
            let ast = Parser.parse(file, diagnostics: &sink)
            for declaration in ast.declarations {
                guard case .entity(let entity) = declaration else { continue }
                for line in entity.doc {
                    #expect(!line.unicodeScalars.contains { $0 == "\r" || $0 == "\n" }, "\(doc.debugDescription)")
                }
            }
        }
    }

    @Test func lineNumbersCountLFCRAndCRLFOnce() {
        let pieces = ["a", "\n", "\r", "\r\n", "\n\r", "é", " "]
        var random = SplitMix64(seed: 7)
        for _ in 0..<1_000 {
            var text = ""
            for _ in 0..<Int.random(in: 0...30, using: &random) {
                text += pieces[Int.random(in: 0..<pieces.count, using: &random)]
            }
            let bytes = Array(text.utf8)
            let file = SourceFile(path: "t", bytes: bytes)
            // The reference: walk the bytes, a CR followed by LF being one line end.
            var line = 1
            var column = 1
            var index = 0
            while index < bytes.count {
                #expect(
                    file.location(of: index) == SourcePosition(line: line, column: column),
                    "\(text.debugDescription) @\(index)")
                if bytes[index] == UInt8(ascii: "\r"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "\n") {
                    index += 1
                    column += 1
                    #expect(file.location(of: index) == SourcePosition(line: line, column: column))
                }
                if bytes[index] == UInt8(ascii: "\r") || bytes[index] == UInt8(ascii: "\n") {
                    line += 1
                    column = 1
                } else {
                    column += 1
                }
                index += 1
            }
        }
    }

    @Test func diagnosticsAfterCarriageReturnsAreOnTheRightLine() {
        let text = "model Test version 1\r\rentity A {\r\n    x: Missing\r}\r"
        #expect(diagnose(text) == ["4:8: error: unknown type 'Missing'"])
    }

    @Test func aRawLineEndInAStringLiteralIsAnError() {
        for lineEnd in ["\n", "\r", "\r\n"] {
            let text = Self.header + "entity A {\n    x: String = \"a\(lineEnd)b\"\n}\n"
            let errors = diagnose(text).filter { $0.contains(": error: ") }
            #expect(
                errors.first == "3:17: error: unterminated string literal", "\(lineEnd.debugDescription): \(errors)")
        }
    }

    @Test func escapesDecodeAsInSwift() throws {
        let text =
            Self.header + #"entity A {"# + "\n"
            + #"    x: String = "a\u{41}\u{1F600}\0\r\n\t\'\"\\z""# + "\n}\n"
        let graph = try graph(text)
        #expect(graph.entities[0].attributes[0].defaultValue == .string("aA\u{1F600}\0\r\n\t'\"\\z"))
    }

    @Test func everyInvalidEscapeIsALocatedError() {
        let cases: [(String, String)] = [
            (#"\q"#, "unknown escape sequence '\\q' in string literal"),
            (
                #"\u{D800}"#,
                "'\\u{D800}' is not a Unicode scalar value: surrogates (D800–DFFF) and values above 10FFFF are not"
            ),
            (
                #"\u{110000}"#,
                "'\\u{110000}' is not a Unicode scalar value: surrogates (D800–DFFF) and values above 10FFFF are not"
            ),
            (#"\u{}"#, "expected 1 to 8 hexadecimal digits and '}' in '\\u{…}'"),
            (#"\u{123456789}"#, "expected 1 to 8 hexadecimal digits and '}' in '\\u{…}'"),
            (
                #"\u{FFFFFFFF}"#,
                "'\\u{FFFFFFFF}' is not a Unicode scalar value: surrogates (D800–DFFF) and values above 10FFFF are not"
            ),
            (#"\u{41"#, "expected 1 to 8 hexadecimal digits and '}' in '\\u{…}'"),
            (#"\u41"#, "expected '{' after '\\u', as in '\\u{2028}'"),
        ]
        for (escape, message) in cases {
            let text = Self.header + "entity A {\n    x: String = \"ab\(escape)\"\n}\n"
            #expect(diagnose(text).first == "3:20: error: \(message)", "\(escape)")
        }
    }

    @Test func randomEscapesNeverCrashAndEveryProblemIsLocated() {
        let pieces = [
            "\\", "u", "{", "}", "0", "1", "F", "D800", "10FFFF", "110000", "\"", "\\\"", "n", "r", "\r", "\n", "z",
            "é", "\u{202E}", "\\u{", "123456789",
        ]
        var random = SplitMix64(seed: 99)
        for _ in 0..<3_000 {
            var body = ""
            for _ in 0..<Int.random(in: 1...12, using: &random) {
                body += pieces[Int.random(in: 0..<pieces.count, using: &random)]
            }
            let text =
                Self.header + "entity A {\n    x: String = \"\(body)\"\n}\nrequest r: A where \"x == '\(body)'\"\n"
            let (graph, diagnostics) = checked(SourceFile(path: "Test.v1.model", text: text))
            #expect(graph != nil || diagnostics.contains { $0.severity == .error && $0.location != nil })
            #expect(diagnostics.allSatisfy { $0.location != nil })
        }
    }
}
