import Foundation
import ModelwrightTestSupport
import Testing

@testable import ModelwrightCoreData
@testable import ModelwrightSchema

/// Hostile or broken Core Data input ends in a located error, fast, never in a signal; and every
/// value written back as schema text or XML reads back exactly (issue 13).
@Suite(.heavy)
struct CoreDataHostileInputTests {
    /// The failure of reading `bytes` as a `contents` file, or `nil` when it reads.
    private static func failure(_ bytes: [UInt8]) -> CoreDataReader.Failure? {
        do {
            _ = try CoreDataReader.read(bytes: bytes, path: "contents")
            return nil
        } catch {
            return error
        }
    }

    private static func failure(atPath path: String) -> CoreDataReader.Failure? {
        do {
            _ = try CoreDataReader.read(path: path)
            return nil
        } catch {
            return error
        }
    }

    private static func failure(_ text: String) -> CoreDataReader.Failure? {
        failure(Array(text.utf8))
    }

    // MARK: - The crashes of XMLParser

    @Test func anXMLDeclarationWithoutVersionIsALocatedError() throws {
        let failure = try #require(Self.failure("<?xml?><model/>"))
        #expect(failure.location == CoreDataLocation(line: 1, column: 1))
        #expect(failure.message.contains("no version"))
        #expect(
            failure.description
                == "contents:1:1: error: the XML declaration has no version; write it as <?xml version=\"1.0\" encoding=\"UTF-8\"?>"
        )
    }

    @Test(arguments: [
        ("<?xml version=\"1.0\"?>\n<model><ent", "ity/></model>", 2, 12),
        ("<?xml version=\"1.0\"?>\n<model><entity na", "me=\"x\"/></model>", 2, 18),
        ("<?xml version=\"1.0\"?>\n<model><!-- ", " --></model>", 2, 13),
        ("<?xml version=\"1.0\"?>\n<model><entity name=\"", "\"/></model>", 2, 22),
    ])
    func aByteThatIsNotUTF8IsLocatedAtThatByte(before: String, after: String, line: Int, column: Int) throws {
        for bad: [UInt8] in [[0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0xF5, 0x80, 0x80, 0x80]] {
            let failure = try #require(Self.failure(Array(before.utf8) + bad + Array(after.utf8)))
            #expect(failure.location == CoreDataLocation(line: line, column: column))
            #expect(failure.message.hasPrefix("invalid UTF-8"))
        }
    }

    @Test func fortyThousandNestedElementsFailFastAtTheLimit() throws {
        let depth = 40_000
        let text =
            "<?xml version=\"1.0\"?>\n<model>" + String(repeating: "<a>", count: depth)
            + String(repeating: "</a>", count: depth) + "</model>\n"
        let clock = ContinuousClock()
        var failure: CoreDataReader.Failure?
        let elapsed = clock.measure { failure = Self.failure(text) }
        let found = try #require(failure)
        // `<model>` is depth 1, so the 64th `<a>` is the 65th element.
        #expect(found.location == CoreDataLocation(line: 2, column: 8 + 3 * (XMLReader.maximumDepth - 1)))
        #expect(found.message.contains("nested more than 64 deep"))
        #expect(elapsed < .seconds(1))
    }

    @Test func nestingUpToTheLimitReads() {
        let depth = XMLReader.maximumDepth - 1
        let text =
            "<model>" + String(repeating: "<a>", count: depth) + String(repeating: "</a>", count: depth) + "</model>"
        #expect(Self.failure(text) == nil)
    }

    @Test func documentTypesAndEntityDeclarationsAreRefused() throws {
        let laughs = """
            <?xml version="1.0"?>
            <!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
            <model><entity name="&lol2;"/></model>
            """
        let external = """
            <?xml version="1.0"?>
            <!DOCTYPE model SYSTEM "file:///etc/passwd">
            <model/>
            """
        for text in [laughs, external] {
            let failure = try #require(Self.failure(text))
            #expect(failure.location == CoreDataLocation(line: 2, column: 1))
            #expect(failure.message.contains("document type declaration"))
        }
        let entity = try #require(Self.failure("<model><!ENTITY x \"y\"></model>"))
        #expect(entity.location == CoreDataLocation(line: 1, column: 8))
        let undeclared = try #require(Self.failure("<model>\n  <entity name=\"&xxe;\"/></model>"))
        #expect(undeclared.location == CoreDataLocation(line: 2, column: 17))
        #expect(undeclared.message.contains("unknown entity '&xxe;'"))
    }

    @Test(arguments: [
        ("<?xml version=\"1.1\"?><model/>", 1, 7, "only XML version 1.0"),
        ("<?xml version=\"1.0\" encoding=\"UTF-16\"?><model/>", 1, 21, "only the UTF-8 encoding"),
        ("<?xml encoding=\"UTF-8\" version=\"1.0\"?><model/>", 1, 24, "unexpected 'version'"),
        ("<?xml version=\"1.0\"><model/>", 1, 20, "malformed XML declaration"),
        ("\n<?xml version=\"1.0\"?><model/>", 2, 1, "very first thing"),
        ("<model/><model/>", 1, 9, "second root element"),
        ("<model><entity></model>", 1, 16, "</model> does not close <entity>"),
        ("<model>", 1, 8, "the file ends before <model> is closed"),
        ("", 1, 1, "no root element"),
        ("<model a=\"1\" a=\"2\"/>", 1, 14, "appears twice"),
        ("<model><x a=\"&#1;\"/></model>", 1, 14, "not a character XML 1.0 allows"),
        ("<model>\u{1}</model>", 1, 8, "control character U+0001"),
        ("<plist/>", 1, 1, "the root element is <plist>"),
    ])
    func malformedXMLIsALocatedError(text: String, line: Int, column: Int, message: String) throws {
        let failure = try #require(Self.failure(text))
        #expect(failure.location == CoreDataLocation(line: line, column: column))
        #expect(failure.message.contains(message), "\(failure.message)")
    }

    @Test func attributeValuesFollowXMLNormalisation() throws {
        let text = """
            <model><entity name="E"><attribute name="a" attributeType="String" \
            defaultValueString='a&#9;b&#10;c&#13;d&#13;&#10;e\tf\r\ng&apos;&quot;&lt;&gt;&amp;&#x600;'/></entity></model>
            """
        let model = try CoreDataReader.read(bytes: Array(text.utf8), path: "contents")
        #expect(
            model.entities.first?.attributes.first?.defaultValueString == "a\tb\nc\rd\r\ne f g'\"<>&\u{600}")
    }

    @Test func oversizeFilesAndNonFilesAreRefusedBeforeReading() throws {
        let folder = CoreDataTestSupport.temporaryFolder("hostile")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let large = folder.appendingPathComponent("contents")
        try Data("<model/>".utf8).write(to: large)
        let handle = try FileHandle(forWritingTo: large)
        try handle.truncate(atOffset: UInt64(BoundedFile.maximumSize + 1))  // sparse: nothing is written
        try handle.close()
        let clock = ContinuousClock()
        var failure: CoreDataReader.Failure?
        let elapsed = clock.measure { failure = Self.failure(atPath: large.path) }
        #expect(failure?.location == CoreDataLocation(line: 1, column: 1))
        #expect(failure?.message.contains("over the limit of 33554432 bytes") == true)
        #expect(elapsed < .seconds(1))
        do {
            _ = try CoreDataReader.read(path: folder.path)
            Issue.record("a folder was read as a contents file")
        } catch {
            #expect(error.message.contains("not a regular file"))
        }
    }

    @Test func contentsOutsideTheBundleAreRefused() throws {
        let secret = CoreDataTestSupport.temporaryFolder("secret")
        try FileManager.default.createDirectory(at: secret, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: secret) }
        try Data("<model/>".utf8).write(to: secret.appendingPathComponent("contents"))
        let bundle = try CoreDataTestSupport.makeBundle(versions: ["Model": CoreDataTestSupport.contents("")])
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        try FileManager.default.createSymbolicLink(
            at: bundle.appendingPathComponent("Model 2.xcdatamodel"), withDestinationURL: secret)
        do {
            _ = try CoreDataBundle.open(path: bundle.path)
            Issue.record("a version outside the bundle was accepted")
        } catch {
            #expect(error.message.contains("symbolic link"))
        }
    }

    @Test func aHostileCurrentVersionFileIsAWarningNotACrash() throws {
        for plist in [
            "<?xml?><plist/>", "<!DOCTYPE plist [<!ENTITY a 'b'>]><plist/>", "bplist00\u{1}\u{2}", "<plist><dict>",
        ] {
            let bundle = try CoreDataBundle.open(
                path: try CoreDataTestSupport.makeBundle(
                    versions: ["A": CoreDataTestSupport.contents(""), "A 2": CoreDataTestSupport.contents("")],
                    currentVersionFile: plist
                ).path)
            #expect(bundle.currentIndex == 1)
            let note = try #require(bundle.notes.first)
            #expect(note.severity == .warning)
            #expect(note.location != nil, "\(note)")
        }
        let named = try CoreDataBundle.open(
            path: try CoreDataTestSupport.makeBundle(
                versions: ["A": CoreDataTestSupport.contents(""), "A 2": CoreDataTestSupport.contents("")],
                currentVersionFile: CoreDataTestSupport.currentVersion("A")
            ).path)
        #expect(named.currentIndex == 0)
        #expect(named.notes.isEmpty)
    }

    // MARK: - Escapers

    /// Strings no escaper defined on `Character` gets right.
    static let hostileStrings = [
        "x\u{600}\"); DROP TABLE t; --", "\u{600}'", "a\rb", "a\r\nb", "\u{2028}\u{2029}", "nul\u{0}here",
        "\u{202E}evil\u{202C}", "e\u{301}\"", "tab\tnew\nline", "back\\slash\\", "\u{1B}[31m", "\u{85}\u{7F}",
        "\u{FEFF}", "👩‍👩‍👧", "",
    ]

    @Test func schemaStringLiteralsLexBackToTheSameString() {
        var random = SplitMix64(seed: 13)
        var cases = Self.hostileStrings
        let alphabet: [Unicode.Scalar] = [
            "\"", "\\", "\n", "\r", "\t", "\0", "'", "a", "\u{600}", "\u{301}", "\u{2028}", "\u{202E}", "\u{1}",
            "\u{7F}", "\u{85}", "\u{200D}", "😀", "{", "}", "u",
        ]
        for _ in 0..<500 {
            var text = ""
            for _ in 0..<Int(random.next() % 12) {
                text.unicodeScalars.append(alphabet[Int(random.next() % UInt64(alphabet.count))])
            }
            cases.append(text)
        }
        for text in cases {
            let literal = SchemaText.stringLiteral(text)
            #expect(!literal.unicodeScalars.contains { SchemaText.needsEscape($0) }, "raw control in \(literal)")
            var sink = DiagnosticSink(file: SourceFile(path: "t.model", text: literal))
            let tokens = Lexer.tokens(of: SourceFile(path: "t.model", text: literal), diagnostics: &sink)
            #expect(!sink.hasErrors, "\(sink.diagnostics)")
            #expect(tokens.first?.kind == .string)
            #expect(tokens.first?.text.unicodeScalars.elementsEqual(text.unicodeScalars) == true, "\(literal)")
        }
    }

    @Test func hostileDefaultValuesRoundTripThroughImportAndParse() throws {
        // XML 1.0 cannot carry NUL, so that one is checked at the escaper only (above).
        let values = Self.hostileStrings.filter { !$0.unicodeScalars.contains { !XMLReader.isXMLCharacter($0.value) } }
        var attributes = ""
        for (index, value) in values.enumerated() {
            attributes +=
                "<attribute name=\"a\(index)\" optional=\"YES\" attributeType=\"String\" defaultValueString=\"\(try XMLAttributeText.escaped(value))\"/>\n"
        }
        let bundle = try CoreDataTestSupport.makeBundle(
            versions: [
                "Hostile\nentity Injected {}": CoreDataTestSupport.contents(
                    "<entity name=\"E\" representedClassName=\"E\" syncable=\"YES\">\n\(attributes)</entity>")
            ])
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let imported = try CoreDataTestSupport.importModel(bundle.path)
        defer { try? FileManager.default.removeItem(at: imported.folder) }
        #expect(!imported.loaded.hasErrors, "\(imported.loaded.diagnostics)")
        let text = imported.text(1)
        #expect(!text.contains("\r") && !text.contains("\u{2028}") && !text.contains("\u{600}"))
        // The version name, which came from the file system, stayed inside its comment.
        #expect(text.hasPrefix("/// Imported from Core Data: version 'Hostile\\u{A}entity Injected {}'"))
        var sink = DiagnosticSink(file: SourceFile(path: "t.model", text: text))
        let tokens = Lexer.tokens(of: SourceFile(path: "t.model", text: text), diagnostics: &sink)
        #expect(!tokens.contains { $0.kind == .identifier && $0.text == "Injected" })
        // Xcode's order puts `a10` before `a2`: compare the defaults in any order, scalar by scalar.
        let strings = tokens.filter { $0.kind == .string }.map { $0.text.unicodeScalars.map(\.value) }
        #expect(
            strings.sorted { $0.lexicographicallyPrecedes($1) }
                == values.map { $0.unicodeScalars.map(\.value) }.sorted { $0.lexicographicallyPrecedes($1) })
    }

    /// Version names are folder names, which may hold any character: the migration block an
    /// import writes for a step (its comment, its custom stage and lossy lines) escapes them with
    /// the one schema-text escaper, so no name can end a comment or a literal early.
    @Test(arguments: [
        "M\"o\\d\u{202E}el\nentity Injected { x: String }\n# ", "A\u{2028}entity Injected {}\r", "x\"\u{600} ",
    ])
    func hostileVersionNamesStayInsideTheMigrationBlock(name: String) throws {
        let bundle = try CoreDataTestSupport.makeBundle(
            versions: [
                "\(name)1": CoreDataTestSupport.contents(
                    "<entity name=\"E\" representedClassName=\"E\" syncable=\"YES\">\n"
                        + "<attribute name=\"old\" optional=\"YES\" attributeType=\"String\"/>\n</entity>"),
                "\(name)2": CoreDataTestSupport.contents(
                    "<entity name=\"E\" representedClassName=\"E\" syncable=\"YES\">\n"
                        + "<attribute name=\"count\" attributeType=\"Integer 64\" usesScalarValueType=\"YES\"/>\n"
                        + "</entity>"),
            ])
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let imported = try CoreDataTestSupport.importModel(bundle.path)
        defer { try? FileManager.default.removeItem(at: imported.folder) }
        let text = imported.text(2)
        #expect(text.contains("custom toVersion2"), "the step needs a custom stage:\n\(text)")
        #expect(text.contains("lossy E.old"), "the step drops data:\n\(text)")
        var sink = DiagnosticSink(file: SourceFile(path: "t.model", text: text))
        let tokens = Lexer.tokens(of: SourceFile(path: "t.model", text: text), diagnostics: &sink)
        #expect(!sink.hasErrors, "\(sink.diagnostics)")
        #expect(!tokens.contains { $0.kind == .identifier && $0.text == "Injected" }, "\(text)")
        let strings = tokens.filter { $0.kind == .string }.map(\.text)
        #expect(
            strings.contains("Convert the data as Core Data's mapping from '\(name)1' to '\(name)2' did"),
            "\(strings)")
        #expect(strings.contains { $0.hasSuffix("dropped by Core Data's migration from '\(name)1'") }, "\(strings)")
    }

    @Test func xmlAttributeTextReadsBackExactly() throws {
        var random = SplitMix64(seed: 4)
        let alphabet: [Unicode.Scalar] = [
            "&", "<", ">", "\"", "'", "\t", "\n", "\r", " ", "a", "\u{600}", "\u{301}", "\u{2028}", "\u{FFFD}", "😀",
        ]
        for _ in 0..<500 {
            var value = ""
            for _ in 0..<Int(random.next() % 16) {
                value.unicodeScalars.append(alphabet[Int(random.next() % UInt64(alphabet.count))])
            }
            let xml = "<model a=\"\(try XMLAttributeText.escaped(value))\"/>"
            let model = try CoreDataReader.read(bytes: Array(xml.utf8), path: "contents")
            #expect(model.rootAttributes.first?.value.unicodeScalars.elementsEqual(value.unicodeScalars) == true)
        }
        for unwritable: Unicode.Scalar in ["\0", "\u{1}", "\u{1F}", "\u{FFFE}", "\u{FFFF}"] {
            #expect(throws: XMLAttributeText.Unwritable.self) { try XMLAttributeText.escaped("a\(unwritable)") }
        }
    }

    // MARK: - Mutations

    /// Every `contents` of the fixtures and, when present, the corpus.
    private static func seeds() throws -> [[UInt8]] {
        var roots = [CoreDataTestSupport.fixtures.path]
        if CoreDataTestSupport.corpusIsAvailable { roots.append(CoreDataTestSupport.corpus.path) }
        var files: [String] = []
        for root in roots {
            let enumerator = FileManager.default.enumerator(atPath: root)
            while let relative = enumerator?.nextObject() as? String {
                if relative.hasSuffix("/contents") || relative == "contents" { files.append(root + "/" + relative) }
            }
        }
        return try files.sorted().map { try BoundedFile.read($0) }
    }

    /// A seeded, deterministic campaign: byte flips, truncation, duplicated ranges, invalid UTF-8,
    /// deep nesting and declaration tricks over every seed file. Each result is a model or a
    /// located failure; a crash fails the whole test run, and the time is bounded.
    @Test func mutatedModelsReadOrFailWithALocation() throws {
        let seeds = try Self.seeds()
        try #require(!seeds.isEmpty)
        var random = SplitMix64(seed: 20_240_613)
        var (read, refused) = (0, 0)
        let clock = ContinuousClock()
        let start = clock.now
        for round in 0..<1000 {
            var bytes = seeds[round % seeds.count]
            let mutations = 1 + Int(random.next() % 3)
            for _ in 0..<mutations {
                bytes = Self.mutate(bytes, &random)
            }
            do {
                let model = try CoreDataReader.read(bytes: bytes, path: "contents")
                read += 1
                if round % 10 == 0 {
                    _ = CoreDataVersionTranslator.translate(
                        model, modelName: "Fuzz", number: 1, header: "fuzz", previous: nil)
                }
            } catch {
                refused += 1
                #expect(error.location != nil, "\(error)")
                if let location = error.location { #expect(location.line >= 1 && location.column >= 1) }
            }
        }
        #expect(read > 0 && refused > 0)
        #expect(clock.now - start < .seconds(60))
    }

    private static func mutate(_ input: [UInt8], _ random: inout SplitMix64) -> [UInt8] {
        var bytes = input
        func position() -> Int { bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count)) }
        switch random.next() % 8 {
        case 0:
            if !bytes.isEmpty { bytes[position()] ^= UInt8(1 << (random.next() % 8)) }
        case 1:
            bytes.removeSubrange(position()...)
        case 2:
            let from = position()
            let length = min(Int(random.next() % 256), bytes.count - from)
            bytes.insert(contentsOf: bytes[from..<(from + length)], at: position())
        case 3:
            let invalid: [[UInt8]] = [[0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF8], [0x80], [0xE2, 0x28, 0xA1]]
            bytes.insert(contentsOf: invalid[Int(random.next() % UInt64(invalid.count))], at: position())
        case 4:
            let depth = Int(random.next() % 200)
            let nest = Array(String(repeating: "<e>", count: depth).utf8)
            bytes.insert(contentsOf: nest, at: position())
        case 5:
            let tricks = [
                "<?xml?>", "<!DOCTYPE m [<!ENTITY e \"x\">]>", "&e;", "<![CDATA[", "]]>", "<!--", "-->", "&#0;",
                "&#x110000;", "\r", "\"", "'", "<", "/>", "</model>", "<?x ?>",
            ]
            bytes.insert(contentsOf: Array(tricks[Int(random.next() % UInt64(tricks.count))].utf8), at: position())
        case 6:
            if !bytes.isEmpty { bytes.remove(at: position()) }
        default:
            if !bytes.isEmpty { bytes[position()] = UInt8(truncatingIfNeeded: random.next()) }
        }
        return bytes
    }
}
