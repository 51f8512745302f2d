import Foundation
import Testing

@testable import ModelwrightSchema

/// Broken input gets diagnostics, never a crash, a hang or a stack overflow.
struct MalformedInputTests {
    private static func check(_ bytes: [UInt8]) -> [Diagnostic] {
        ResolvedFile.compile(SourceFile(path: "Junk.v1.model", bytes: bytes)).diagnostics
    }

    @Test func emptyFile() {
        #expect(diagnose("").first == "1:1: error: empty schema file")
        #expect(diagnose("   \n// only a comment\n").first == "3:1: error: empty schema file")
    }

    @Test func binaryJunkIsReportedWithALimit() {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<100_000).map { _ in UInt8.random(in: 0...0x7F, using: &generator) }
        bytes.insert(contentsOf: Array("model J version 1\n".utf8), at: 0)
        let diagnostics = Self.check(bytes)
        let errors = diagnostics.filter { $0.severity == .error }
        #expect(!errors.isEmpty)
        #expect(errors.count <= DiagnosticSink.errorLimit + 1)
    }

    @Test func errorsInManyEntitiesComeInDeclarationOrderUpToTheLimit() {
        // Entities are resolved in parallel; their errors are merged in the order they are declared.
        let count = DiagnosticSink.errorLimit + 50
        let entities = (0..<count).map { "entity E\($0) {\n    value: Missing\($0)\n}" }
        let diagnostics = Self.check(Array((["model J version 1"] + entities).joined(separator: "\n").utf8))
        #expect(diagnostics.count == DiagnosticSink.errorLimit + 1)
        let lines = diagnostics.compactMap { $0.location?.line }
        #expect(lines == lines.sorted())
        #expect(diagnostics.first?.message.contains("Missing0") == true)
        #expect(diagnostics.dropLast().last?.message.contains("Missing\(DiagnosticSink.errorLimit - 1)") == true)
        #expect(diagnostics.last?.message.hasPrefix("too many errors") == true)
    }

    @Test func invalidUTF8PointsAtTheFirstBadByte() {
        let bytes = Array("model J version 1\nentity A { x: Int }\n".utf8) + [0xFF, 0xFE] + Array("\n".utf8)
        #expect(
            Self.check(bytes).map(\.description) == [
                "Junk.v1.model:3:1: error: the file is not valid UTF-8 (byte 38); schema files are UTF-8 text"
            ]
        )
    }

    @Test func truncatedFilesAtEveryLength() throws {
        let text = try String(
            contentsOf: packageRoot.appendingPathComponent("Models/Trips/Trips.v3.model"), encoding: .utf8)
        let bytes = Array(text.utf8)
        // Cut the example at many points: every cut inside a block must be reported, none may crash.
        for length in stride(from: 0, to: bytes.count, by: 7) {
            let prefix = bytes[0..<length]
            let diagnostics = Self.check(Array(prefix))
            let opened = prefix.filter { $0 == UInt8(ascii: "{") }.count
            let closed = prefix.filter { $0 == UInt8(ascii: "}") }.count
            if opened > closed {
                #expect(diagnostics.contains { $0.severity == .error }, "cut at \(length) reported no error")
            }
        }
        #expect(
            Self.check(Array("model J version 1\nentity A {\n    name: Str".utf8)).map(\.description) == [
                "Junk.v1.model:3:11: error: unknown type 'Str'",
                "Junk.v1.model:3:14: error: expected '}' to close entity 'A'\nJunk.v1.model:2:10: note: entity 'A' opens here",
            ]
        )
    }

    @Test func deepNestingDoesNotOverflowTheStack() {
        let depth = 10_000
        let inputs = [
            "model J version 1\nentity A { x: " + String(repeating: "[", count: depth) + " }",
            "model J version 1\nentity A { x: Codable<" + String(repeating: "[", count: depth) + "> }",
            "model J version 1\n" + String(repeating: "entity A {", count: depth),
            "model J version 1\n" + String(repeating: "/*", count: depth),
            "model J version 1\nentity A { x: Int @sort" + String(repeating: "(", count: depth) + " }",
            String(repeating: "{", count: depth),
        ]
        for input in inputs {
            let errors = diagnose(input).filter { $0.contains("error") }
            #expect(!errors.isEmpty)
            #expect(errors.count <= DiagnosticSink.errorLimit + 1)
        }
        #expect(diagnose(inputs[1]).first == "2:54: error: type nested more than 32 levels deep")
    }

    @Test func aTenMegabyteFileIsParsed() {
        var text = "model Big version 1\n"
        var index = 0
        while text.utf8.count < 10_000_000 {
            text += "entity E\(index) {\n    title: String\n    count: Int32 = 0 @indexed\n}\n"
            index += 1
        }
        let (graph, diagnostics) = checked(SourceFile(path: "Big.v1.model", text: text))
        #expect(diagnostics.isEmpty)
        #expect(graph?.entities.count == index)
    }

    @Test func unterminatedStringsAndComments() {
        #expect(
            diagnose("model J version 1\nentity A { s: String = \"abc\n}") == [
                "2:24: error: unterminated string literal"
            ]
        )
        #expect(diagnose("model J version 1\n/* open").first == "2:1: error: unterminated '/*' comment")
    }

    @Test func aSchemaFileThatIsAFifoOrAFolderIsRefusedWithoutReading() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fifo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // Reading a FIFO nobody writes to would block for ever.
        #expect(mkfifo(folder.appendingPathComponent("M.v1.model").path, 0o600) == 0)
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("M.v2.model"), withIntermediateDirectories: true)
        let messages = FrontEnd.run(modelAt: folder.path).diagnostics.map(\.message)
        #expect(messages.filter { $0.hasPrefix("not a regular file") }.count == 2, "\(messages)")
    }
}
