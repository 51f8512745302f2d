import Foundation
import Modelwright
import ModelwrightTestSupport
import Testing

@testable import ModelwrightGenerator

/// Text from a model reaches generated Swift only as a string literal that the Swift compiler
/// reads back as exactly that text, or as comment text that cannot end its comment.
@Suite(.heavy)
struct SwiftSpellingTests {
    /// Scalars that have broken quoting elsewhere: quotes, backslashes, interpolation, a prepend
    /// character that joins the next scalar into its grapheme cluster, combining marks, joiners,
    /// every line end Swift or an editor knows, NUL, bidi overrides and comment punctuation.
    private static let hostile: [Unicode.Scalar] = [
        "\"", "\\", "(", ")", "#", "\u{600}", "\u{301}", "\u{200D}", "\u{FE0F}", "\r", "\n", "\u{2028}", "\u{2029}",
        "\u{85}", "\u{0B}", "\u{0C}", "\0", "\u{7F}", "\u{202E}", "\u{2066}", "\u{FEFF}", "\u{E000}", "/", "*",
        "\u{1F469}", "a", " ", "\t", "'", "`", "é",
    ]

    private static func samples(count: Int, seed: UInt64) -> [String] {
        var random = SplitMix64(seed: seed)
        func next(_ bound: Int) -> Int { random.next(below: bound) }
        return (0..<count).map { _ in
            var text = String.UnicodeScalarView()
            for _ in 0..<next(16) { text.append(hostile[next(hostile.count)]) }
            return String(text)
        }
    }

    /// Compiles and runs `source` as a program, returning what it printed.
    private static func run(_ source: String) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "swift-literals-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("main.swift")
        try Data(source.utf8).write(to: file)
        let compile = Process()
        compile.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        compile.arguments = [
            "swiftc", "-swift-version", "6", "-warnings-as-errors", file.path, "-o",
            folder.appendingPathComponent("main").path,
        ]
        let errors = Pipe()
        compile.standardError = errors
        try compile.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        compile.waitUntilExit()
        guard compile.terminationStatus == 0 else {
            return "compile failed: " + String(decoding: message, as: UTF8.self)
        }
        let program = Process()
        program.executableURL = folder.appendingPathComponent("main")
        let output = Pipe()
        program.standardOutput = output
        try program.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        program.waitUntilExit()
        return String(decoding: printed, as: UTF8.self)
    }

    /// The UTF-8 bytes of each text in hexadecimal, one text per line.
    private static func hexLines(_ texts: [String]) -> String {
        texts.map { text in text.utf8.map { String($0, radix: 16) }.joined(separator: " ") + "\n" }.joined()
    }

    @Test func stringLiteralsCompileBackToTheirExactText() throws {
        let texts = Self.samples(count: 400, seed: 21) + ["x\u{600}\"; let injected = 1 //", "\u{301}", "\\(1)"]
        var source = "// A comment holding model text: "
        source += texts.map(SwiftSpelling.commentText).joined(separator: " ")
        source += "\nlet injected = 0\nlet texts: [String] = [\n"
        for text in texts {
            source += "    " + SwiftSpelling.string(text) + ",\n"
        }
        source +=
            "]\nfor text in texts {\n    print(text.utf8.map { String($0, radix: 16) }.joined(separator: \" \"))\n}\n"
        source += "_ = injected\n"
        #expect(try Self.run(source) == Self.hexLines(texts))
    }

    @Test func commentTextHoldsNoLineEndAndNothingInvisible() {
        for text in Self.samples(count: 2_000, seed: 22) {
            let comment = SwiftSpelling.commentText(text)
            #expect(
                !comment.unicodeScalars.contains { scalar in
                    scalar != "\t"
                        && (scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
                            || [.format, .lineSeparator, .paragraphSeparator, .privateUse].contains(
                                scalar.properties.generalCategory))
                }, "\(Array(text.unicodeScalars))")
            // Printable ASCII stays as it is, so ordinary doc comments read the same.
            let printable = String(text.unicodeScalars.filter { (0x20..<0x7F).contains($0.value) })
            #expect(SwiftSpelling.commentText(printable) == printable)
        }
    }

    /// A negative zero default stays negative: the integer literal `-0` is +0.0 in Swift, so the
    /// point is kept; a positive integral value may drop it.
    @Test func negativeZeroKeepsItsSign() {
        #expect(SwiftSpelling.expression(for: .floatingPoint(-0.0), type: .double) == "-0.0")
        #expect(SwiftSpelling.expression(for: .floatingPoint(-0.0), type: .float) == "-0.0")
        #expect(SwiftSpelling.expression(for: .floatingPoint(0), type: .double) == "0")
        #expect(SwiftSpelling.expression(for: .floatingPoint(-3), type: .double) == "-3.0")
    }

    /// An enum default names its type, so `.none` on an optional attribute is the enum's case and
    /// not `Optional.none`.
    @Test func enumCasesAreQualifiedWithTheirType() {
        let mood = EnumDescription(name: "Mood", rawType: .string, cases: [.init(name: "none", rawValue: "none")])
        #expect(
            SwiftSpelling.expression(for: .enumCase("none"), type: .enumeration(mood), typeName: "Mood") == "Mood.none")
    }
}
