import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright

/// Nothing a schema, a bundle or a file name says reaches a terminal raw: controls, escape
/// sequences, bidi overrides, zero-width and every other format character are shown escaped by
/// every command, on standard output and standard error alike. Runs the built executable and
/// scans the bytes it prints.
@Suite(.heavy, .serialized) struct TerminalOutputTests {
    /// What a hostile input writes: terminal escapes (erase line, cursor up, window title),
    /// controls, bidi overrides and isolates, zero-width and other format characters, a tag
    /// character, a variation selector, line separators, private-use and unassigned scalars.
    static let hostile = [
        "\u{1B}[2K", "\u{1B}[1A", "\u{1B}]0;pwned\u{7}", "\u{9B}2K", "\u{0}", "\r", "\u{8}", "\t", "\u{7F}", "\u{85}",
        "\u{202E}", "\u{2066}", "\u{200F}", "\u{61C}", "\u{200D}", "\u{200B}", "\u{2060}", "\u{FEFF}", "\u{AD}",
        "\u{600}", "\u{E0041}", "\u{FE0F}", "\u{3164}", "\u{2028}", "\u{E000}", "\u{378}",
    ]

    /// A few hostile pieces around a letter, so the text also looks like a name.
    static func injected(_ random: inout SplitMix64, fileName: Bool = false) -> String {
        var text = "A"
        for _ in 0..<random.size(in: 1...4) {
            // A file name cannot hold NUL or '/'.
            let piece = random.pick(hostile.filter { !fileName || !$0.contains("\u{0}") })
            text += piece + "B"
        }
        return text
    }

    /// A scalar a terminal would obey or hide; newline is the output's own structure. Written
    /// apart from the product's escaper, so the test does not check the escaper against itself.
    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        if scalar == "\n" { return false }
        if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) { return true }
        switch scalar.properties.generalCategory {
        case .format, .control, .privateUse, .unassigned, .lineSeparator, .paragraphSeparator: return true
        default: return scalar.properties.isDefaultIgnorableCodePoint
        }
    }

    /// Where schema text can carry the hostile text `h`: each returns the two version files.
    static let positions: [(name: String, files: @Sendable (String) -> [String])] = [
        (
            "doc comments, reasons, descriptions, literals (valid)",
            { h in
                [
                    "/// Model \(h)\nmodel M version 1\n/// Entity \(h)\nentity E {\n    /// Attribute \(h)\n    a: String = \"\(h)\"\n    gone: Int = 0\n}\n",
                    "/// Model \(h)\nmodel M version 2\n/// Entity \(h)\nentity E {\n    /// Attribute \(h)\n    a: String = \"\(h)\"\n}\n"
                        + "request r: E where \"a == '\(h)'\"\n"
                        + "migration from 1 {\n    /// Stage \(h)\n    custom fix \"does \(h)\"\n    lossy E.gone \"reason \(h)\"\n}\n",
                ]
            }
        ),
        ("model name", { h in ["model M\(h) version 1\nentity E { a: Int }\n"] }),
        ("entity name", { h in ["model M version 1\nentity E\(h) { a: Int }\n"] }),
        ("attribute name and type", { h in ["model M version 1\nentity E {\n    a\(h): T\(h)\n}\n"] }),
        (
            "enum, case and composite",
            { h in
                [
                    "model M version 1\nenum K\(h): String { c\(h) }\ncomposite C\(h) { f\(h): Int }\nentity E { k: K = .x\(h) }\n"
                ]
            }
        ),
        (
            "request and parameter",
            { h in
                ["model M version 1\nentity E { a: Int }\nrequest r\(h): E where \"a\(h) == $p\(h)\"\n"]
            }
        ),
        (
            "annotations and inverses",
            { h in
                [
                    "model M version 1\nentity E {\n    a: Int @index\(h)\n    f: F? @inverse(g\(h)) @delete(d\(h))\n    @unique(u\(h))\n}\nentity F { e: E? }\n"
                ]
            }
        ),
        (
            "stage name and lossy target",
            { h in
                [
                    "model M version 1\nentity E { a: Int }\n",
                    "model M version 2\nentity E { b: Int = 0 @renamed(from: a\(h)) }\nmigration from 1 {\n    custom s\(h) \"x\"\n    lossy E.a\(h) \"y\"\n}\n",
                ]
            }
        ),
        (
            "unterminated string and stray characters",
            { h in ["model M version 1\nentity E { a: String = \"\(h)\n\(h)\n"] }
        ),
    ]

    @Test func noCommandPrintsARawControlOrFormatCharacter() throws {
        let executable = try #require(ChildProcess.executable, "modelwright is built beside the tests")
        var random = SplitMix64(seed: 24_009)
        let rounds = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 10 : 1
        var runs = 0
        for _ in 0..<rounds {
            for position in Self.positions {
                let h = Self.injected(&random)
                let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("terminal-\(UUID())")
                defer { try? FileManager.default.removeItem(at: scratch) }
                // The folder's own name is hostile too: paths are printed.
                let folder = scratch.appendingPathComponent("M\(Self.injected(&random, fileName: true))")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                for (index, text) in position.files(h).enumerated() {
                    try Data(text.utf8).write(to: folder.appendingPathComponent("M.v\(index + 1).model"))
                }
                // A stray file whose name is hostile.
                try Data().write(
                    to: folder.appendingPathComponent("M\(Self.injected(&random, fileName: true)).v9.modelx"))
                let output = scratch.appendingPathComponent("out\(Self.injected(&random, fileName: true))").path
                let commands = [
                    ["validate", folder.path], ["plan", folder.path], ["plan", folder.path, "--json"],
                    ["generate", folder.path, "--output", output], ["lock", folder.path],
                    ["export-coredata", folder.path, "--output", output + ".xcdatamodeld"],
                    ["new-version", folder.path], ["validate", folder.appendingPathComponent("M.v1.model").path],
                ]
                for arguments in commands {
                    let run = try ChildProcess.run(executable, arguments, scratch: scratch)
                    runs += 1
                    try Self.expectSafe(run, "\(position.name): \(arguments[0])")
                }
            }
            runs += try coreDataBundles(executable, &random)
            runs += try coreDataStores(executable, &random)
        }
        // Usage errors echo arguments.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("terminal-\(UUID())")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        for arguments in [["bogus\(Self.injected(&random))"], ["validate", "-x\(Self.injected(&random))"]] {
            try Self.expectSafe(try ChildProcess.run(executable, arguments, scratch: scratch), "usage")
            runs += 1
        }
        #expect(runs > 70)
    }

    /// Core Data bundles with hostile entity, attribute and version names, userInfo and a
    /// hostile current-version file; returns the number of runs.
    private func coreDataBundles(_ executable: String, _ random: inout SplitMix64) throws -> Int {
        var runs = 0
        for variant in 0..<4 {
            let h = Self.injected(&random).replacingOccurrences(of: "\u{0}", with: "")
            let xmlH = h.unicodeScalars.map { $0.value < 0x20 || $0 == "&" ? "&#\($0.value);" : String($0) }.joined()
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("terminal-\(UUID())")
            defer { try? FileManager.default.removeItem(at: scratch) }
            let bundle = scratch.appendingPathComponent("M\(Self.injected(&random, fileName: true)).xcdatamodeld")
            let version = variant == 3 ? "M \(Self.injected(&random, fileName: true)).xcdatamodel" : "M.xcdatamodel"
            let entity =
                switch variant {
                case 0: "<entity name=\"E\(xmlH)\"><attribute name=\"a\" attributeType=\"String\"/></entity>"
                case 1: "<entity name=\"E\"><attribute name=\"a\(xmlH)\" attributeType=\"Integer 32\"/></entity>"
                case 2:
                    "<entity name=\"E\"><attribute name=\"a\" attributeType=\"String\" defaultValueString=\"\(xmlH)\"/>"
                        + "<userInfo><entry key=\"k\(xmlH)\" value=\"\(xmlH)\"/></userInfo></entity>"
                default:
                    "<entity name=\"E\" parentEntity=\"P\(xmlH)\"><attribute name=\"a\" attributeType=\"Bogus\(xmlH)\"/></entity>"
                }
            let versionFolder = bundle.appendingPathComponent(version)
            try FileManager.default.createDirectory(at: versionFolder, withIntermediateDirectories: true)
            try Data(AdversarialInputs.coreDataModel(entity).utf8).write(
                to: versionFolder.appendingPathComponent("contents"))
            let current = variant == 2 ? "M\(xmlH).xcdatamodel" : version
            try Data(
                "<plist version=\"1.0\"><dict><key>_XCCurrentVersionName</key><string>\(current)</string></dict></plist>"
                    .utf8
            ).write(to: bundle.appendingPathComponent(".xccurrentversion"))
            let output = scratch.appendingPathComponent("out").path
            let run = try ChildProcess.run(
                executable, ["import-coredata", bundle.path, "--output", output], scratch: scratch)
            try Self.expectSafe(run, "Core Data variant \(variant)")
            runs += 1
        }
        return runs
    }

    /// `import-coredata-store` on stores whose file name, store type, entity hashes' names or
    /// `Z_PRIMARYKEY` names are hostile, each of which an error quotes; returns the number of runs.
    private func coreDataStores(_ executable: String, _ random: inout SplitMix64) throws -> Int {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("terminal-\(UUID())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        // The model folder `import-coredata` writes, with the facts the store import reads.
        let bundle = scratch.appendingPathComponent("M.xcdatamodeld")
        let version = bundle.appendingPathComponent("M.xcdatamodel")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        try Data(
            AdversarialInputs.coreDataModel(
                "<entity name=\"E\"><attribute name=\"a\" attributeType=\"String\"/></entity>"
            )
            .utf8
        ).write(to: version.appendingPathComponent("contents"))
        let model = scratch.appendingPathComponent("Model")
        let imported = try ChildProcess.run(
            executable, ["import-coredata", bundle.path, "--output", model.path], scratch: scratch)
        #expect(imported.status == 0, "\(imported.summary)")
        let factsData = try Data(contentsOf: model.appendingPathComponent("M.coredata-store.json"))
        let facts = try JSONDecoder().decode(CoreDataStoreModel.self, from: factsData)
        let hashes = CoreDataVersionHashes.hashes(of: try #require(facts.versions.first))
        var runs = 0
        for variant in 0..<4 {
            let h = Self.injected(&random).replacingOccurrences(of: "\u{0}", with: "")
            let store = scratch.appendingPathComponent("S\(Self.injected(&random, fileName: true)).sqlite")
            if variant == 0 {
                try Data("not a store \(h)".utf8).write(to: store)
            } else {
                var storeHashes = hashes
                if variant == 2 { storeHashes["E\(h)"] = Data(repeating: 1, count: 32) }
                let metadata: [String: Any] = [
                    "NSStoreType": variant == 1 ? "X\(h)" : "SQLite", "NSStoreModelVersionHashesVersion": 3,
                    "NSStoreModelVersionHashes": storeHashes,
                    "NSStoreModelVersionHashesDigest": CoreDataVersionHashes.digest(of: storeHashes),
                ]
                let plist = try PropertyListSerialization.data(fromPropertyList: metadata, format: .binary, options: 0)
                let connection = try SQLiteConnection(path: store.path)
                try connection.execute([
                    "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)",
                    "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)",
                    "CREATE TABLE ZE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZA VARCHAR)",
                ])
                let insert = try connection.statement("INSERT INTO Z_PRIMARYKEY VALUES (1, ?, 0, 0)")
                insert.bind(.text(variant == 3 ? "E\(h)" : "E"), 1)
                try insert.run()
                insert.reset()
                let row = try connection.statement("INSERT INTO Z_METADATA VALUES (1, ?, ?)")
                row.bind(.text("U\(h)"), 1)
                row.bind(.blob(plist), 2)
                try row.run()
                row.reset()
                connection.close()
            }
            for output in ["--dry-run", scratch.appendingPathComponent("out\(variant).store").path] {
                let arguments =
                    ["import-coredata-store", store.path, "--model", model.path]
                    + (output == "--dry-run" ? [output] : ["--output", output])
                let run = try ChildProcess.run(executable, arguments, scratch: scratch)
                try Self.expectSafe(run, "Core Data store variant \(variant)")
                // Every variant is refused: the hostile part is in what the error quotes.
                #expect(run.status == 1, "Core Data store variant \(variant): \(run.summary)")
                runs += 1
            }
        }
        return runs
    }

    /// Every byte printed is UTF-8 and no scalar of it is unsafe.
    private static func expectSafe(_ run: ChildProcess.Run, _ label: String) throws {
        #expect(!run.timedOut && run.status <= 2, "\(label): \(run.summary)")
        for (stream, bytes) in [("stdout", run.standardOutput), ("stderr", run.standardError)] {
            let text = try #require(String(validating: bytes, as: UTF8.self), "\(label): \(stream) is UTF-8")
            let unsafe = text.unicodeScalars.filter(isUnsafe)
            #expect(
                unsafe.isEmpty,
                "\(label): \(stream) shows \(unsafe.map { "U+" + String($0.value, radix: 16, uppercase: true) }) raw in: \(text.debugDescription.prefix(600))"
            )
        }
    }
}
