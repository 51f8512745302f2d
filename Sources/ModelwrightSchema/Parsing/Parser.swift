/// Turns a schema file's tokens into an ``AST/File``, reporting every syntax error it finds.
///
/// A hand-written recursive-descent parser. The grammar has no recursive productions except
/// `Codable<…>` type arguments, which are matched with a depth counter, so no input can
/// overflow the stack. After an error the parser skips to the start of the next line (or a
/// closing brace) and goes on, so one run reports every mistake.
package struct Parser {
    /// The highest version number, so that every step from one version to the next (`N + 1`),
    /// and every store's version, fits comfortably in 32 bits.
    package static let maximumVersion = 1_000_000

    /// How deeply brackets may nest inside `Codable<…>`.
    package static let maximumTypeNesting = 32

    private let tokens: [Token]
    let file: SourceFile
    var index = 0

    private init(file: SourceFile, tokens: [Token]) {
        self.file = file
        self.tokens = tokens
    }

    /// Parses a whole file.
    package static func parse(_ file: SourceFile, diagnostics: inout DiagnosticSink) -> AST.Root {
        var parser = Parser(file: file, tokens: Lexer.tokens(of: file, diagnostics: &diagnostics))
        return parser.parseFile(diagnostics: &diagnostics)
    }

    // MARK: - File and declarations

    private mutating func parseFile(diagnostics: inout DiagnosticSink) -> AST.Root {
        var header: AST.Header?
        if current.isKeyword("model") {
            header = parseHeader(diagnostics: &diagnostics)
        } else if current.kind == .endOfFile {
            diagnostics.error(
                "empty schema file",
                at: current.range.start,
                notes: [("a schema file starts with 'model Name version 1'", current.range.start)]
            )
        } else {
            diagnostics.error(
                "expected 'model Name version N' at the start of the file, found \(current.spelling)",
                at: current.range.start
            )
        }
        var declarations: [AST.Declaration] = []
        while current.kind != .endOfFile, !diagnostics.isFull {
            if let declaration = parseDeclaration(diagnostics: &diagnostics) {
                declarations.append(declaration)
            }
        }
        return AST.Root(path: file.path, header: header, declarations: declarations)
    }

    private mutating func parseHeader(diagnostics: inout DiagnosticSink) -> AST.Header? {
        let doc = current.docComment
        advance()  // model
        guard let name = expectName("the model's name after 'model'", diagnostics: &diagnostics) else {
            skipLine()
            return nil
        }
        guard current.isKeyword("version") else {
            diagnostics.error(
                "expected 'version' after the model's name, found \(current.spelling)",
                at: current.range.start,
                notes: [("write 'model \(name.text) version 1'", current.range.start)]
            )
            skipLine()
            return nil
        }
        advance()
        guard let (version, range) = expectVersionNumber(diagnostics: &diagnostics) else {
            skipLine()
            return nil
        }
        expectEndOfLine(after: "the model header", diagnostics: &diagnostics)
        return AST.Header(name: name, version: version, versionRange: range, doc: doc)
    }

    private mutating func parseDeclaration(diagnostics: inout DiagnosticSink) -> AST.Declaration? {
        let token = current
        if token.isKeyword("entity") || token.isKeyword("abstract") {
            return parseEntity(diagnostics: &diagnostics).map(AST.Declaration.entity)
        } else if token.isKeyword("enum") {
            return parseEnumeration(diagnostics: &diagnostics).map(AST.Declaration.enumeration)
        } else if token.isKeyword("composite") {
            return parseComposite(diagnostics: &diagnostics).map(AST.Declaration.composite)
        } else if token.isKeyword("migration") {
            return parseMigration(diagnostics: &diagnostics).map(AST.Declaration.migration)
        } else if token.isKeyword("request") {
            return parseRequest(diagnostics: &diagnostics).map(AST.Declaration.request)
        } else if token.isKeyword("model") {
            diagnostics.error("a file holds one model header; this one repeats it", at: token.range.start)
        } else if token.kind == .semicolon {
            advance()
            return nil
        } else {
            var notes: [(String, Int)] = []
            if token.kind == .identifier,
                let keyword = Suggestions.closest(
                    to: token.text,
                    among: ["entity", "abstract", "enum", "composite", "migration", "request"]
                )
            {
                notes.append(("did you mean '\(keyword)'?", token.range.start))
            }
            diagnostics.error(
                "expected a declaration ('entity', 'enum', 'composite', 'request' or 'migration'), found \(token.spelling)",
                at: token.range.start,
                notes: notes
            )
        }
        skipToNextDeclaration()
        return nil
    }

    // MARK: - Tokens

    // `mutating get`: the parsing methods are mutating, and a debug build calls a plain getter
    // from them on a copy of the whole parser (retaining the token array and the file each time).

    var current: Token { mutating get { tokens[index] } }

    var peek: Token { mutating get { tokens[min(index + 1, tokens.count - 1)] } }

    var previousEnd: Int { mutating get { index > 0 ? tokens[index - 1].range.end : 0 } }

    mutating func advance() {
        if index < tokens.count - 1 { index += 1 }
    }

    var isDeclarationStart: Bool {
        mutating get {
            guard current.kind == .identifier, peek.kind != .colon else { return false }
            return ["entity", "abstract", "enum", "composite", "migration", "request", "model"].contains(current.text)
        }
    }

    mutating func expect(_ kind: Token.Kind, _ what: String, diagnostics: inout DiagnosticSink) -> Bool {
        guard current.kind == kind else {
            diagnostics.error("expected \(what), found \(current.spelling)", at: current.range.start)
            return false
        }
        advance()
        return true
    }

    mutating func expectName(_ what: String, diagnostics: inout DiagnosticSink) -> AST.Name? {
        guard current.isName else {
            diagnostics.error("expected \(what), found \(current.spelling)", at: current.range.start)
            return nil
        }
        defer { advance() }
        return AST.Name(text: current.text, range: current.range)
    }

    mutating func expectVersionNumber(diagnostics: inout DiagnosticSink) -> (Int, SourceRange)? {
        if current.kind == .integer, current.text.contains(where: { $0 != "0" }),
            Int(current.text).map({ $0 > Self.maximumVersion }) ?? true
        {
            diagnostics.error(
                "version \(current.text) is too high: version numbers go up to \(Self.maximumVersion)",
                at: current.range.start)
            return nil
        }
        guard current.kind == .integer, let version = Int(current.text), version >= 1 else {
            diagnostics.error(
                "expected a version number (1, 2, 3, …), found \(current.spelling)",
                at: current.range.start
            )
            return nil
        }
        defer { advance() }
        return (version, current.range)
    }

    /// Reports anything but a new line, `;` or `}` after a complete member, then skips past it.
    /// `what` is only built for an error: every property interpolated its name for it otherwise.
    mutating func expectEndOfLine(after what: @autoclosure () -> String, diagnostics: inout DiagnosticSink) {
        switch current.kind {
        case .semicolon:
            advance()
        case .rightBrace, .endOfFile:
            break
        default:
            guard !current.isAtLineStart else { return }
            diagnostics.error(
                "expected a new line after \(what()), found \(current.spelling)",
                at: current.range.start
            )
            skipLine()
        }
    }

    /// Skips to the first token of the next line, stopping early at `}` or the end of the file.
    mutating func skipLine() {
        while !current.isAtLineStart && current.kind != .rightBrace && current.kind != .endOfFile {
            advance()
        }
    }

    /// Skips to the next line that starts a declaration.
    mutating func skipToNextDeclaration() {
        repeat {
            advance()
        } while current.kind != .endOfFile && !(current.isAtLineStart && isDeclarationStart)
    }
}
