import Foundation
import ModelwrightGenerator
import ModelwrightSchema
import ModelwrightTestSupport
import Testing

/// Every Swift snippet of the README and of the DocC catalog compiles, so the documentation cannot
/// drift from the API. Each document's ```swift blocks become one file, type-checked with the code
/// generated from Models/Trips (so the snippets use `User`, `Trip`, `Trips.openStore` …):
///
/// - a block made only of declarations (types, extensions, functions, `@Test`s) is compiled at file
///   scope, where the document's later blocks see it;
/// - any other block is a function body: it runs inside its own `async throws` function, and the
///   constants it declares at its top level count as used (a reader's code would go on to use them);
/// - `import` lines move to the top of the file, and `import Trips` is dropped, because the
///   generated Trips code is part of the checked module;
/// - a block starting with `// swift-tools-version:` is a package manifest, type-checked on its own
///   against the toolchain's PackageDescription;
/// - a block starting with `// Generated in <file>` is an excerpt of generated code: its lines must
///   appear, in order and adjacent, in that file's golden copy (Tests/TripsTests/Golden);
/// - a block starting with `// From <path>` is an excerpt of a file of the repository outside this
///   package's targets (the example packages under Examples/, which CI builds with their own
///   dependencies): its lines must appear, in order and adjacent, in that file;
/// - blocks right after a line `<!-- program: NAME -->` are one program, as a reader who pastes
///   them one after the other into a `main.swift` has it: their statements share one function
///   (so a later block uses what an earlier one declared), and the program is built and run,
///   twice in the same home folder, as a second launch of the app would run it.
///
/// Errors point at the document's own lines (through `#sourceLocation`). Plain ``` blocks that hold
/// a whole schema file (a `model … version …` header, no `...`) must load without errors.
@Suite(.heavy)
struct DocumentationSnippetTests {
    /// A fenced block of Swift in a Markdown document.
    struct Snippet {
        /// The line of the document the block's first line is on, counting from 1.
        let line: Int
        let lines: [String]
        /// The program the block belongs to, from a `<!-- program: NAME -->` line right before it.
        var program: String? = nil
    }

    static let root = GeneratedCodeTypeChecker.root

    /// The README and every article of the catalog, as paths relative to the package root.
    static let documents: [String] = {
        let catalog = "Sources/Modelwright/Modelwright.docc"
        let articles =
            (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(catalog).path)) ?? []
        return ["README.md"] + articles.filter { $0.hasSuffix(".md") }.sorted().map { "\(catalog)/\($0)" }
    }()

    /// The ```swift blocks of a Markdown text, without the fences' indentation.
    static func snippets(in text: String) -> [Snippet] { blocks(in: text, fence: "```swift") }

    /// The fenced blocks of a Markdown text opened by exactly `fence`, without their indentation.
    static func blocks(in text: String, fence: String) -> [Snippet] {
        var snippets: [Snippet] = []
        // Every fence opens a block, whatever its language, so that a closing fence is never
        // taken for an opening one.
        var open: (fence: String, line: Int, indent: Int, lines: [String], program: String?)?
        var previous = ""
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            defer { previous = trimmed }
            if var block = open {
                if trimmed == "```" {
                    if block.fence == fence {
                        snippets.append(Snippet(line: block.line, lines: block.lines, program: block.program))
                    }
                    open = nil
                } else {
                    block.lines.append(String(line.dropFirst(min(block.indent, line.prefix { $0 == " " }.count))))
                    open = block
                }
            } else if trimmed.hasPrefix("```") {
                open = (trimmed, index + 2, line.prefix { $0 == " " }.count, [], program(marker: previous))
            }
        }
        return snippets
    }

    /// The program a `<!-- program: NAME -->` line names.
    static func program(marker line: String) -> String? {
        guard line.hasPrefix("<!-- program:"), line.hasSuffix("-->") else { return nil }
        let name = line.dropFirst("<!-- program:".count).dropLast("-->".count).trimmingCharacters(in: .whitespaces)
        return name.isEmpty ? nil : name
    }

    /// Whether every top-level line of a block is a declaration (or a comment, attribute or brace).
    static func isDeclarations(_ lines: [String]) -> Bool {
        let starts = [
            "struct ", "final class ", "class ", "enum ", "extension ", "func ", "protocol ", "actor ", "@", "}", "//",
            "import ", "public ", "private ",
        ]
        return lines.allSatisfy { line in
            line.first.map { $0 == " " } ?? true || starts.contains { line.hasPrefix($0) }
        }
    }

    /// The app file that holds a document's snippets: declarations at file scope, the rest in
    /// functions.
    static func appFile(document: String, snippets: [Snippet]) -> String {
        var imports: Set<String> = []
        var body = ""
        // Each program's statements, in order, and the constants they declare.
        var programs: [(name: String, code: String, constants: [String])] = []
        for (number, snippet) in snippets.enumerated() {
            let (lines, found) = withoutImports(snippet.lines)
            imports.formUnion(found)
            let location = "#sourceLocation(file: \"\(document)\", line: \(snippet.line))\n"
            let code = lines.joined(separator: "\n")
            if isDeclarations(lines) {
                body += location + code + "\n#sourceLocation()\n"
            } else if let name = snippet.program {
                let block = location + code + "\n#sourceLocation()\n"
                if let index = programs.firstIndex(where: { $0.name == name }) {
                    programs[index].code += block
                    programs[index].constants += constants(in: lines)
                } else {
                    programs.append((name, block, constants(in: lines)))
                }
            } else {
                body += "func snippet\(number)() async throws {\n" + location + code + "\n#sourceLocation()\n"
                body += constants(in: lines).joined() + "}\n"
            }
        }
        for (index, program) in programs.enumerated() {
            body += "func program\(index)() async throws {\n" + program.code + program.constants.joined() + "}\n"
        }
        return (["import Foundation", "import Modelwright"] + imports.sorted()).joined(separator: "\n") + "\n\n" + body
    }

    /// A block's lines with its `import` lines emptied (so the lines after keep their numbers),
    /// and the imports it makes other than `import Trips`, whose code the checked module holds.
    static func withoutImports(_ lines: [String]) -> (lines: [String], imports: Set<String>) {
        var imports: Set<String> = []
        let kept = lines.map { line in
            guard line.hasPrefix("import ") else { return line }
            if line != "import Trips" { imports.insert(line) }
            return ""
        }
        return (kept, imports)
    }

    /// `_ = name` for each constant a block declares at its top level: a reader's code would go on
    /// to use them.
    static func constants(in lines: [String]) -> [String] {
        lines.compactMap { line -> String? in
            guard line.hasPrefix("let "),
                let name = line.dropFirst(4).split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "_" }).first
            else { return nil }
            return "    _ = \(name)\n"
        }
    }

    /// The `main.swift` of a document's program: its declarations, then its statements as top-level
    /// code, in the document's order.
    static func mainFile(document: String, program: [Snippet]) -> String {
        var imports: Set<String> = []
        var declarations = ""
        var statements = ""
        for snippet in program {
            let (lines, found) = withoutImports(snippet.lines)
            imports.formUnion(found)
            let block =
                "#sourceLocation(file: \"\(document)\", line: \(snippet.line))\n"
                + lines.joined(separator: "\n") + "\n#sourceLocation()\n"
            if isDeclarations(lines) { declarations += block } else { statements += block }
        }
        return (["import Foundation", "import Modelwright"] + imports.sorted()).joined(separator: "\n") + "\n\n"
            + declarations + statements
    }

    /// Every program of every document: the document, the program's name and its blocks.
    static let programs: [String] = documents.flatMap { document -> [String] in
        let text = (try? String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)) ?? ""
        var names: [String] = []
        for name in snippets(in: text).compactMap(\.program) where !names.contains(name) { names.append(name) }
        return names.map { "\(document)#\($0)" }
    }

    @Test(arguments: programs)
    func everyProgramBuildsAndRunsTwice(_ program: String) throws {
        let parts = program.split(separator: "#", maxSplits: 1).map(String.init)
        let (document, name) = (parts[0], parts[1])
        let text = try String(contentsOf: Self.root.appendingPathComponent(document), encoding: .utf8)
        let blocks = Self.snippets(in: text).filter { $0.program == name }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("program-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let files = try GeneratedCodeTypeChecker.renderedFiles(
            Self.root.appendingPathComponent("Models/Trips").path, config: GeneratorConfig())
        let main = Self.mainFile(document: document, program: blocks)
        try RenderedFile.write(files + [RenderedFile(name: "main.swift", contents: main)], to: folder.path)
        let executable = folder.appendingPathComponent("program")
        let built = try GeneratedCodeTypeChecker.build(
            files: (files.map(\.name) + ["main.swift"]).map { folder.appendingPathComponent($0) }, to: executable)
        try #require(built.status == 0, "\(program) does not build:\n\(built.errors)")
        // The program's own home, so that the folders an app writes to (Application Support) are
        // this test's, and the second run finds what the first one left.
        let home = folder.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home.path
        environment["XDG_DATA_HOME"] = home.appendingPathComponent(".local/share").path
        environment["XDG_CONFIG_HOME"] = home.appendingPathComponent(".config").path
        for run in 1...2 {
            let ran = try GeneratedCodeTypeChecker.launch(executable, [], environment: environment)
            #expect(ran.status == 0, "\(program), run \(run), exited \(ran.status):\n\(ran.output)\(ran.errors)")
            #expect(!ran.output.isEmpty, "\(program), run \(run), printed nothing")
        }
    }

    @Test(arguments: documents)
    func everySwiftSnippetTypeChecks(_ document: String) throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent(document), encoding: .utf8)
        let all = Self.snippets(in: text)
        let compiled = all.filter { snippet in
            !snippet.lines.contains {
                $0.hasPrefix("// swift-tools-version:") || $0.hasPrefix("// Generated in ") || $0.hasPrefix("// From ")
            }
        }
        guard !compiled.isEmpty else { return }
        let result = try GeneratedCodeTypeChecker.typecheck(app: Self.appFile(document: document, snippets: compiled))
        #expect(result.status == 0, "\(document): a Swift snippet does not compile:\n\(result.errors)")
    }

    @Test(arguments: documents)
    func everyManifestSnippetTypeChecks(_ document: String) throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent(document), encoding: .utf8)
        for snippet in Self.snippets(in: text) where snippet.lines.first?.hasPrefix("// swift-tools-version:") == true {
            let result = try Self.typecheckManifest(snippet.lines.joined(separator: "\n"))
            #expect(result.status == 0, "\(document):\(snippet.line): the manifest does not compile:\n\(result.errors)")
        }
    }

    @Test(arguments: documents)
    func everyExcerptOfGeneratedCodeIsInTheGoldenFile(_ document: String) throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent(document), encoding: .utf8)
        for snippet in Self.snippets(in: text) {
            guard let first = snippet.lines.first, first.hasPrefix("// Generated in ") else { continue }
            let name = first.dropFirst("// Generated in ".count).trimmingCharacters(in: .whitespaces)
            let golden = try String(
                contentsOf: Self.root.appendingPathComponent("Tests/TripsTests/Golden/\(name).golden"), encoding: .utf8)
            #expect(
                Self.isExcerpt(snippet.lines.dropFirst(), of: golden),
                "\(document):\(snippet.line): the excerpt is not in \(name)")
        }
    }

    @Test(arguments: documents)
    func everyExcerptOfAnExampleIsInItsFile(_ document: String) throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent(document), encoding: .utf8)
        for snippet in Self.snippets(in: text) {
            guard let first = snippet.lines.first, first.hasPrefix("// From ") else { continue }
            let path = first.dropFirst("// From ".count).trimmingCharacters(in: .whitespaces)
            let file = try String(contentsOf: Self.root.appendingPathComponent(path), encoding: .utf8)
            #expect(
                Self.isExcerpt(snippet.lines.dropFirst(), of: file),
                "\(document):\(snippet.line): the excerpt is not in \(path)")
        }
    }

    /// Whether `lines` appear in `file`, in order and adjacent, ignoring indentation and blank lines.
    static func isExcerpt(_ lines: some Collection<String>, of file: String) -> Bool {
        let trim = { (lines: [Substring]) in
            lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        let excerpt = trim(lines.map { Substring($0) })
        let whole = trim(file.split(separator: "\n"))
        return !excerpt.isEmpty
            && (0...max(0, whole.count - excerpt.count)).contains {
                Array(whole[$0..<min(whole.count, $0 + excerpt.count)]) == excerpt
            }
    }

    @Test func anExcerptIsFoundOnlyWhereItsLinesAreAdjacent() {
        let file = "func a() {\n    let x = 1\n\n    let y = 2\n}\n"
        #expect(Self.isExcerpt(["let x = 1", "let y = 2"], of: file))
        #expect(Self.isExcerpt(["  let y = 2", "}"], of: file))
        #expect(!Self.isExcerpt(["let x = 1", "}"], of: file))
        #expect(!Self.isExcerpt(["let y = 2", "let x = 1"], of: file))
        #expect(!Self.isExcerpt([String](), of: file))
        #expect(!Self.isExcerpt(["let x = 1", "let y = 2", "}", "more"], of: file))
    }

    @Test(arguments: documents)
    func everyCompleteSchemaFileLoadsWithoutErrors(_ document: String) throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent(document), encoding: .utf8)
        for block in Self.blocks(in: text, fence: "```") {
            let header = block.lines.first { !$0.hasPrefix("//") && !$0.isEmpty }?.split(separator: " ") ?? []
            guard header.count == 4, header[0] == "model", header[2] == "version",
                !block.lines.contains(where: { $0.contains("...") })
            else { continue }
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("schema-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = folder.appendingPathComponent("\(header[1]).v\(header[3]).model")
            try block.lines.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
            let loaded = FrontEnd.run(modelAt: file.path)
            #expect(
                !loaded.hasErrors,
                "\(document):\(block.line): the schema does not load: \(loaded.diagnostics.map(\.description))")
        }
    }

    @Test func theConventionsTellDeclarationsFromStatementsAndFindEveryBlock() {
        let text =
            "a\n```swift\nstruct A {}\n```\n\n  ```swift\n  let x = 1\n  print(x)\n  ```\n```json\n{}\n```\nb\n```\nc\n```\n"
        let found = Self.snippets(in: text)
        #expect(found.map(\.line) == [3, 7])
        #expect(found.map(\.lines) == [["struct A {}"], ["let x = 1", "print(x)"]])
        #expect(Self.blocks(in: text, fence: "```").map(\.lines) == [["c"]])
        #expect(Self.isDeclarations(found[0].lines))
        #expect(!Self.isDeclarations(found[1].lines))
        let file = Self.appFile(document: "D.md", snippets: found)
        #expect(file.contains("#sourceLocation(file: \"D.md\", line: 7)\nlet x = 1"))
        #expect(file.contains("func snippet1() async throws {"))
        #expect(file.contains("    _ = x\n}"))

        // Blocks of one program share a function, so the second sees the first's constants.
        let program = "<!-- program: p -->\n```swift\nlet a = 1\n```\n<!-- program: p -->\n```swift\nprint(a)\n```\n"
        let blocks = Self.snippets(in: program)
        #expect(blocks.map(\.program) == ["p", "p"])
        let joined = Self.appFile(document: "P.md", snippets: blocks)
        #expect(joined.contains("func program0() async throws {") && !joined.contains("func snippet"))
        #expect(Self.mainFile(document: "P.md", program: blocks).hasSuffix("print(a)\n#sourceLocation()\n"))
    }

    /// Type-checks a package manifest against the PackageDescription of the toolchain that runs
    /// the tests (found beside `swiftc` on the PATH).
    static func typecheckManifest(_ manifest: String) throws -> (status: Int32, output: String, errors: String) {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"
        let swiftc = path.split(separator: ":").map {
            URL(fileURLWithPath: String($0)).appendingPathComponent("swiftc")
        }
        .first { FileManager.default.fileExists(atPath: $0.path) }
        let usr = (swiftc ?? URL(fileURLWithPath: "/usr/bin/swiftc")).resolvingSymlinksInPath()
            .deletingLastPathComponent().deletingLastPathComponent()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("manifest-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("Package.swift")
        try manifest.write(to: file, atomically: true, encoding: .utf8)
        let version =
            manifest.split(separator: "\n").first?.split(separator: ":").last?
            .trimmingCharacters(in: .whitespaces) ?? "6.1"
        return try GeneratedCodeTypeChecker.launch(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "swiftc", "-typecheck", "-swift-version", "6", "-I",
                usr.appendingPathComponent("lib/swift/pm/ManifestAPI").path, "-package-description-version", version,
                file.path,
            ])
    }
}
