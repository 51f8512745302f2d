import Foundation
import ModelwrightGenerator
import ModelwrightSchema
import ModelwrightTestSupport
import Testing

/// A model whose doc comments, stage labels, enum raw values and string defaults try every way
/// out of their comment or literal generates code that compiles with `-warnings-as-errors`,
/// declares nothing of its own, and reads back every value exactly.
@Suite(.heavy)
struct HostileModelTests {
    /// Payloads that try to end a comment or a string and declare `injected`: every line end
    /// Swift or an editor knows, a quote joined to U+0600, interpolation, NUL, bidi overrides.
    static let payloads = [
        "x\u{600}\"; let injected = 1 //", "\r\nlet injected = 2 //", "\u{2028}let injected = 3",
        "\u{202E}\u{2066}\0\u{85}\u{0B}\u{0C}\u{FEFF}", "\\(injected)", "*/ let injected = 4 /*",
        "'\u{301}é\u{1F469}\u{200D}",
        "x\u{600}'); ATTACH DATABASE 'victim.sqlite' AS v; --",
    ]

    /// `text` as a schema string literal, using the schema language's escapes.
    static func schemaLiteral(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case _ where scalar.value < 0x20 || (0x7F...0xA0).contains(scalar.value) || scalar.value > 0x7E:
                result += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// A doc comment line holding raw every scalar that Swift does not end a line at, but an
    /// editor or a careless emitter might.
    static let docLine = "/// doc \u{2028}let injected = 5\u{2029}\u{85}\u{202E}\u{0B}\u{0C}\u{FEFF} */ /*"

    static func modelFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let fields = payloads.enumerated().map { index, payload in
            "    \(docLine)\n    text\(index): String = \(schemaLiteral(payload))"
        }
        let cases = payloads.enumerated().map { index, payload in
            "    \(docLine)\n    case\(index) = \(schemaLiteral(payload))"
        }
        let v1 = """
            \(docLine)
            model Hostile version 1
            \(docLine)
            entity Note {
                title: String
            }

            """
        let v2 = """
            \(docLine)
            model Hostile version 2
            \(docLine)
            entity Note {
                title: String
            \(fields.joined(separator: "\n"))
                kind: Kind = .case0
            }
            \(docLine)
            enum Kind: String {
            \(cases.joined(separator: "\n"))
            }
            migration from 1 {
                \(docLine)
                custom fill \(schemaLiteral(payloads.joined()))
            }

            """
        try Data(v1.utf8).write(to: folder.appendingPathComponent("Hostile.v1.model"))
        try Data(v2.utf8).write(to: folder.appendingPathComponent("Hostile.v2.model"))
        return folder
    }

    @Test(
        .enabled(
            if: GeneratedCodeTypeChecker.runtimeObjects != nil,
            "the built Modelwright runtime was not found beside the tests"))
    func hostileTextStaysInsideItsCommentsAndLiteralsAndReadsBackExactly() throws {
        let folder = try Self.modelFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let loaded = FrontEnd.run(modelAt: folder.path)
        #expect(loaded.diagnostics.filter { $0.severity == .error }.map(\.description) == [])
        // The program declares `injected` itself: any declaration that escaped would clash with it.
        let hex = "{ $0.utf8.map { String($0, radix: 16) }.joined(separator: \" \") }"
        let fields = Self.payloads.indices.map { "note.text\($0)" }.joined(separator: ", ")
        let main = """
            import Foundation
            import Modelwright

            let injected = 0
            struct Stages: HostileMigrations {
                func fillDidMigrate(_ context: MigrationContext) throws {}
            }
            let hex: (String) -> String = \(hex)
            let note = Note(title: "t")
            for text in [\(fields)] { print(hex(text)) }
            for kind in Kind.allCases { print(hex(kind.rawValue)) }
            let store = try Store.inMemory(schema: Hostile.schema)
            try await store.performAndSave { try $0.insert(note) }
            let stored = try await store.performQuery { try $0.fetch(Note.request()) }
            for text in [\(fields.replacingOccurrences(of: "note.", with: "stored[0]."))] { print(hex(text)) }
            print(hex(Hostile.migrationPlan(Stages()).stages[0].customSteps[0].label))
            _ = injected
            """
        let (compiled, output) = try GeneratedCodeTypeChecker.run(main: main, model: folder.path)
        #expect(compiled, "\(output)")
        let hexes = Self.payloads.map { $0.utf8.map { String($0, radix: 16) }.joined(separator: " ") }
        let expected =
            hexes + hexes + hexes + [Self.payloads.joined().utf8.map { String($0, radix: 16) }.joined(separator: " ")]
        #expect(output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) == expected)
    }
}
