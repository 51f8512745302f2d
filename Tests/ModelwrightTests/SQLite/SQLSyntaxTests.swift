import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright

/// Text from a schema reaches SQL only through ``SQLSyntax``, and SQLite reads back exactly that
/// text; no built statement can run a second one or reach another database file.
struct SQLSyntaxTests {
    /// Scalars that have broken quoting elsewhere: quotes, a prepend character that joins the next
    /// scalar into its grapheme cluster, combining marks, joiners, line ends of every kind, NUL,
    /// and SQL's own comment and statement punctuation.
    private static let hostile: [Unicode.Scalar] = [
        "'", "\"", "\u{600}", "\u{301}", "\u{200D}", "\u{FE0F}", "\r", "\n", "\u{2028}", "\u{2029}", "\u{85}",
        "\0", ";", "-", "/", "*", "\u{202E}", "\u{FFFD}", "\u{1F469}", "a", " ", "\\", "`", "[", "]",
    ]

    /// Strings of 0 to 12 hostile scalars, the same ones on every run.
    private static func samples(count: Int, seed: UInt64) -> [String] {
        var random = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            var text = String.UnicodeScalarView()
            for _ in 0..<random.next(below: 13) { text.append(hostile[random.next(below: hostile.count)]) }
            return String(text)
        }
    }

    @Test func everyStringLiteralReadsBackExactly() throws {
        let connection = try SQLiteConnection(path: nil)
        var texts = Self.samples(count: 3_000, seed: 13)
        texts += [
            "x\u{600}'); ATTACH DATABASE 'victim.sqlite' AS v; DELETE FROM v.secrets; --", "\u{600}'", "'\u{301}",
        ]
        texts.append(String(decoding: [0x61, 0xFF, 0x27, 0xC0, 0x27], as: UTF8.self))  // invalid UTF-8, decoded
        for text in texts {
            let statement = try connection.statement("SELECT \(SQLSyntax.string(text))")
            #expect(try statement.step())
            #expect(statement.value(0) == .text(text), "\(Array(text.unicodeScalars))")
        }
    }

    @Test func everyIdentifierNamesExactlyItsTable() throws {
        let connection = try SQLiteConnection(path: nil)
        // SQLite's identifiers end at NUL, so names never hold one; the schema's names are ASCII anyway.
        let names = Set(Self.samples(count: 500, seed: 14).filter { !$0.isEmpty && !$0.utf8.contains(0) })
        for (number, name) in names.sorted().enumerated() {
            let table = "\(number)" + name
            try connection.execute("CREATE TABLE \(quoted(table)) (\(quoted(name)) TEXT)")
            let statement = try connection.statement(
                "SELECT name FROM pragma_table_info(\(SQLSyntax.string(table)))")
            #expect(try statement.step())
            #expect(statement.string(0) == name)
        }
    }

    @Test func aStatementNeverChainsAnother() throws {
        let connection = try SQLiteConnection(path: nil)
        try connection.execute("CREATE TABLE t (x)")
        for sql in [
            "SELECT 1; DELETE FROM t", "SELECT 1;SELECT 2", "SELECT 1; -- a comment", "SELECT 1\0; DROP TABLE t",
        ] {
            #expect(throws: SQLiteError.self, "\(sql)") { try connection.execute(sql) }
            #expect(throws: SQLiteError.self, "\(sql)") { try connection.statement(sql) }
        }
        try connection.execute("SELECT 1; \n\t")
        #expect(try connection.statement("SELECT count(*) FROM t").step())
    }

    @Test func noConnectionCanAttachAFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("attach-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let victim = folder.appendingPathComponent("victim.sqlite").path
        for connection in [
            try SQLiteConnection(path: nil), try SQLiteConnection(path: folder.appendingPathComponent("s").path),
        ] {
            #expect(throws: SQLiteError.self) {
                try connection.execute("ATTACH DATABASE \(SQLSyntax.string(victim)) AS v")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: victim))
    }

    @Test func aHostileDefaultIsStoredAsItsTextAndTouchesNoOtherFile() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("payload-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let victim = folder.appendingPathComponent("victim.sqlite").path
        let setup = try SQLiteConnection(path: victim)
        try setup.execute("CREATE TABLE secrets (x)")
        try setup.execute("INSERT INTO secrets VALUES (1)")
        let payloads = [
            "x\u{600}'); ATTACH DATABASE '\(victim)' AS v; DELETE FROM v.secrets; --",
            "x\u{600}'\u{301}); DELETE FROM secrets; --", "nul\0byte", "\r\n\u{2028}",
        ]
        let attributes = payloads.enumerated().map { index, payload in
            AttributeDescription(name: "t\(index)", type: .string, defaultValue: .string(payload))
        }
        let schema = SchemaDescription(
            modelName: "M", version: 1,
            entities: [EntityDescription(name: "T", attributes: attributes, relationships: [])])
        let url = folder.appendingPathComponent("store.sqlite")
        _ = try Store(url: url, schema: schema)
        let connection = try SQLiteConnection(path: url.path)
        try connection.execute("INSERT INTO \"T\" (\"id\") VALUES (X'00')")
        for (index, payload) in payloads.enumerated() {
            let statement = try connection.statement("SELECT \"t\(index)\" FROM \"T\"")
            #expect(try statement.step())
            #expect(statement.value(0) == .text(payload))
        }
        let secrets = try setup.statement("SELECT count(*) FROM secrets")
        #expect(try secrets.step())
        #expect(secrets.int64(0) == 1)
    }
}
