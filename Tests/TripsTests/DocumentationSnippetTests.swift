import Foundation
import ModelwrightGenerator
import ModelwrightSchema
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
///   appear, in order and adjacent, in that file's golden copy (Tests/TripsTests/Golden).
///
/// Errors point at the document's own lines (through `#sourceLocation`). Plain ``` blocks that hold
/// a whole schema file (a `model … version …` header, no `...`) must load without errors.
struct DocumentationSnippetTests {
    /// A fenced block of Swift in a Markdown document.
    struct Snippet {
        /// The line of the document the block's first line is on, counting from 1.
        let line: Int
        let lines: [String]
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
        var open: (fence: String, line: Int, indent: Int, lines: [String])?
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if var block = open {
                if trimmed == "```" {
                    if block.fence == fence { snippets.append(Snippet(line: block.line, lines: block.lines)) }
                    open = nil
                } else {
                    block.lines.append(String(line.dropFirst(min(block.indent, line.prefix { $0 == " " }.count))))
                    open = block
                }
            } else if trimmed.hasPrefix("```") {
                open = (trimmed, index + 2, line.prefix { $0 == " " }.count, [])
            }
        }
        return snippets
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
        for (number, snippet) in snippets.enumerated() {
            // An import leaves an empty line, so the lines after it keep their numbers.
            let lines = snippet.lines.map { line in
                guard line.hasPrefix("import ") else { return line }
                if line != "import Trips" { imports.insert(line) }
                return ""
            }
            let location = "#sourceLocation(file: \"\(document)\", line: \(snippet.line))\n"
            let code = lines.joined(separator: "\n")
            if isDeclarations(lines) {
                body += location + code + "\n#sourceLocation()\n"
            } else {
                let constants = lines.compactMap { line -> String? in
                    guard line.hasPrefix("let "),
                        let name = line.dropFirst(4).split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "_" }
                        ).first
                    else { return nil }
                    return "    _ = \(name)\n"
                }
                body += "func snippet\(number)() async throws {\n" + location + code + "\n#sourceLocation()\n"
                body += constants.joined() + "}\n"
            }
        }
        return (["import Foundation", "import Modelwright"] + imports.sorted()).joined(separator: "\n") + "\n\n" + body
    }

    @Test(arguments: documents)
    func everySwiftSnippetTypeChecks(_ document: String) throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent(document), encoding: .utf8)
        let all = Self.snippets(in: text)
        let compiled = all.filter { snippet in
            !snippet.lines.contains { $0.hasPrefix("// swift-tools-version:") || $0.hasPrefix("// Generated in ") }
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
            let trim = { (lines: [Substring]) in
                lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            }
            let excerpt = trim(snippet.lines.dropFirst().map { Substring($0) })
            let generated = trim(golden.split(separator: "\n"))
            let found = (0...max(0, generated.count - excerpt.count)).contains {
                Array(generated[$0..<min(generated.count, $0 + excerpt.count)]) == excerpt
            }
            #expect(!excerpt.isEmpty && found, "\(document):\(snippet.line): the excerpt is not in \(name)")
        }
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
