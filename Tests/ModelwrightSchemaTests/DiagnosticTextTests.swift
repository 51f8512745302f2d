import Foundation
import ModelwrightTestSupport
import Testing

@testable import ModelwrightSchema

/// Text echoed into diagnostics is shown, never obeyed: controls and bidi characters escaped,
/// long names capped.
struct DiagnosticTextTests {
    @Test func controlAndBidiCharactersAreEscaped() {
        #expect(DiagnosticText.escaped("a\u{202E}b") == "a\\u{202E}b")
        #expect(
            DiagnosticText.escaped("\0\t\n\r\u{1B}[2J\u{7F}\u{85}\u{9F}")
                == "\\0\\t\\n\\r\\u{1B}[2J\\u{7F}\\u{85}\\u{9F}")
        #expect(
            DiagnosticText.escaped("\u{61C}\u{200E}\u{200F}\u{2066}\u{2069}\u{2028}\u{2029}")
                == "\\u{61C}\\u{200E}\\u{200F}\\u{2066}\\u{2069}\\u{2028}\\u{2029}")
        // A combining mark joined to a control character in one grapheme cluster is still escaped.
        #expect(DiagnosticText.escaped("e\u{301}\u{202E}\u{301}") == "e\u{301}\\u{202E}\u{301}")
        // U+0600 (a prepended format character) is escaped itself, and hides nothing after it.
        #expect(DiagnosticText.escaped("\u{600}'\u{1B}") == "\\u{600}'\\u{1B}")
        // The message's own punctuation stays readable.
        #expect(DiagnosticText.escaped("unknown type 'Año' (`x`, \"y\")") == "unknown type 'Año' (`x`, \"y\")")
    }

    @Test func invisibleAndUnassignedScalarsAreEscaped() {
        // 'A<ZWJ>B' must not show as 'AB': every format character, the other invisible ones,
        // private-use and unassigned scalars are shown by number.
        #expect(DiagnosticText.escaped("'A\u{200D}B'") == "'A\\u{200D}B'")
        #expect(
            DiagnosticText.escaped("\u{AD}\u{200B}\u{2060}\u{E0041}\u{FE0F}\u{3164}\u{E000}\u{10FFFD}\u{FFFF}\u{378}")
                == "\\u{AD}\\u{200B}\\u{2060}\\u{E0041}\\u{FE0F}\\u{3164}\\u{E000}\\u{10FFFD}\\u{FFFF}\\u{378}")
        // Letters, marks, symbols and emoji of every script stay as they are.
        #expect(DiagnosticText.escaped("Año Ωμέγα 名前 e\u{301} 🙂 ‘q’") == "Año Ωμέγα 名前 e\u{301} 🙂 ‘q’")
        // Every Cf scalar of the whole code space is escaped.
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value), scalar.properties.generalCategory == .format else { continue }
            #expect(DiagnosticText.needsEscaping(scalar), "U+\(String(value, radix: 16))")
        }
    }

    @Test func standardOutputKeepsItsLinesAndJSONStaysJSON() throws {
        let text = "lossy A.y [gone\u{1B}[2K\u{1B}[1A]\n\u{1B}]0;title\u{7} A\u{200D}B\t"
        #expect(
            DiagnosticText.escapedLines(text)
                == "lossy A.y [gone\\u{1B}[2K\\u{1B}[1A]\n\\u{1B}]0;title\\u{7} A\\u{200D}B\\t")
        let long = String(repeating: "x", count: 10_000)
        #expect(DiagnosticText.escapedLines(long) == long)
        let value = "a\u{1B}[2K\u{85}\u{200D}\u{E0041}\u{202E}z"
        let json = String(decoding: try JSONEncoder().encode(["reason": value]), as: UTF8.self)
        let escaped = DiagnosticText.escapedJSON(json)
        #expect(!escaped.unicodeScalars.contains(where: DiagnosticText.needsEscaping))
        let decoded = try JSONDecoder().decode([String: String].self, from: Data(escaped.utf8))
        #expect(decoded == ["reason": value])
    }

    @Test func invalidUTF8IsShownByteByByte() {
        #expect(DiagnosticText.escaped(bytes: [0x61, 0xFF, 0x62]) == "a\\x{FF}b")
        #expect(DiagnosticText.escaped(bytes: [0xED, 0xA0, 0x80]) == "\\x{ED}\\x{A0}\\x{80}")  // a surrogate
        #expect(DiagnosticText.escaped(bytes: [0xC0, 0xAF]) == "\\x{C0}\\x{AF}")  // overlong
        #expect(DiagnosticText.escaped(bytes: Array("é\u{2028}".utf8)) == "é\\u{2028}")
    }

    @Test func noEscapedOutputHoldsAnUnsafeScalar() {
        var random = SplitMix64(seed: 2028)
        for _ in 0..<2_000 {
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0...40, using: &random) {
                let value = UInt32.random(in: 0...0x2100, using: &random)
                scalars.append(Unicode.Scalar(value) ?? "?")
            }
            let escaped = DiagnosticText.escaped(String(scalars))
            #expect(!escaped.unicodeScalars.contains(where: DiagnosticText.needsEscaping))
            let bytes = (0..<Int.random(in: 0...40, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            #expect(!DiagnosticText.escaped(bytes: bytes).unicodeScalars.contains(where: DiagnosticText.needsEscaping))
        }
    }

    @Test func longNamesAndMessagesAreCapped() {
        let name = String(repeating: "Q", count: 100_000)
        let escaped = DiagnosticText.escaped("unknown type '\(name)'")
        #expect(escaped == "unknown type '\(String(repeating: "Q", count: DiagnosticText.maximumRun))…'")
        let words = String(repeating: "ab ", count: 10_000)
        #expect(DiagnosticText.escaped(words).unicodeScalars.count <= DiagnosticText.maximumLength + 1)
    }

    @Test func diagnosticsFromTheInputAreEscapedWhereTheyAreMade() {
        let text =
            "model Test version 1\nentity A {\n    x: Ab\u{202E}cd\n    y: \(String(repeating: "Z", count: 100_000))\n}\n"
        let diagnostics = ResolvedFile.compile(SourceFile(path: "T\u{1B}.v1.model", text: text)).diagnostics
        #expect(!diagnostics.isEmpty)
        for diagnostic in diagnostics {
            #expect(!diagnostic.description.unicodeScalars.contains(where: DiagnosticText.needsEscaping))
            #expect(diagnostic.description.utf8.count < 1_000)
            #expect(diagnostic.description.hasPrefix("T\\u{1B}.v1.model:"))
        }
        #expect(diagnostics.contains { $0.message.contains("Ab\\u{202E}cd") })
    }
}
