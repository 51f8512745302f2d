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
    private let file: SourceFile
    private var index = 0

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

    private mutating func parseEntity(diagnostics: inout DiagnosticSink) -> AST.Entity? {
        let start = current.range.start
        let doc = current.docComment
        var isAbstract = false
        if current.isKeyword("abstract") {
            isAbstract = true
            advance()
            guard current.isKeyword("entity") else {
                diagnostics.error(
                    "expected 'entity' after 'abstract', found \(current.spelling)", at: current.range.start)
                skipToNextDeclaration()
                return nil
            }
        }
        advance()  // entity
        guard let name = expectName("the entity's name", diagnostics: &diagnostics) else {
            skipToNextDeclaration()
            return nil
        }
        var parent: AST.Name?
        if current.kind == .colon {
            advance()
            parent = expectName("the parent entity's name after ':'", diagnostics: &diagnostics)
        }
        var properties: [AST.Property] = []
        var annotations: [AST.Annotation] = []
        let end = parseBlock(of: "entity '\(name.text)'", diagnostics: &diagnostics) { parser, diagnostics in
            if parser.current.kind == .at {
                if let annotation = parser.parseAnnotation(diagnostics: &diagnostics) {
                    annotations.append(annotation)
                }
                parser.expectEndOfLine(after: "an entity annotation", diagnostics: &diagnostics)
            } else if let property = parser.parseProperty(diagnostics: &diagnostics) {
                properties.append(property)
            }
        }
        return AST.Entity(
            name: name,
            isAbstract: isAbstract,
            parent: parent,
            properties: properties,
            annotations: annotations,
            doc: doc,
            range: SourceRange(start: start, end: end)
        )
    }

    private mutating func parseComposite(diagnostics: inout DiagnosticSink) -> AST.Composite? {
        let start = current.range.start
        let doc = current.docComment
        advance()  // composite
        guard let name = expectName("the composite's name", diagnostics: &diagnostics) else {
            skipToNextDeclaration()
            return nil
        }
        var fields: [AST.Property] = []
        let end = parseBlock(of: "composite '\(name.text)'", diagnostics: &diagnostics) { parser, diagnostics in
            if let field = parser.parseProperty(diagnostics: &diagnostics) {
                fields.append(field)
            }
        }
        return AST.Composite(name: name, fields: fields, doc: doc, range: SourceRange(start: start, end: end))
    }

    private mutating func parseEnumeration(diagnostics: inout DiagnosticSink) -> AST.Enumeration? {
        let start = current.range.start
        let doc = current.docComment
        advance()  // enum
        guard let name = expectName("the enum's name", diagnostics: &diagnostics) else {
            skipToNextDeclaration()
            return nil
        }
        var rawType: AST.Name?
        if current.kind == .colon {
            advance()
            rawType = expectName("the raw type after ':' ('String' or 'Int')", diagnostics: &diagnostics)
        } else {
            diagnostics.error(
                "enum '\(name.text)' needs a raw type, because its cases are stored by raw value",
                at: current.range.start,
                notes: [("write 'enum \(name.text): String' or 'enum \(name.text): Int'", name.range.end)]
            )
        }
        var cases: [AST.EnumCase] = []
        let end = parseBlock(of: "enum '\(name.text)'", diagnostics: &diagnostics) { parser, diagnostics in
            if parser.current.kind == .comma {
                parser.advance()
                return
            }
            let caseDoc = parser.current.docComment
            if parser.current.isKeyword("case") { parser.advance() }
            guard let caseName = parser.expectName("a case name", diagnostics: &diagnostics) else {
                parser.skipLine()
                return
            }
            var rawValue: AST.Literal?
            if parser.current.kind == .equals {
                parser.advance()
                rawValue = parser.parseLiteral(diagnostics: &diagnostics)
            }
            cases.append(AST.EnumCase(name: caseName, rawValue: rawValue, doc: caseDoc))
            if parser.current.kind != .comma, parser.current.kind != .rightBrace {
                parser.expectEndOfLine(after: "an enum case", diagnostics: &diagnostics)
            }
        }
        return AST.Enumeration(
            name: name,
            rawType: rawType,
            cases: cases,
            doc: doc,
            range: SourceRange(start: start, end: end)
        )
    }

    private mutating func parseMigration(diagnostics: inout DiagnosticSink) -> AST.Migration? {
        let start = current.range.start
        advance()  // migration
        guard current.isKeyword("from") else {
            diagnostics.error(
                "expected 'from' after 'migration', found \(current.spelling)",
                at: current.range.start,
                notes: [("write 'migration from 1 { … }'", current.range.start)]
            )
            skipToNextDeclaration()
            return nil
        }
        advance()
        guard let (version, versionRange) = expectVersionNumber(diagnostics: &diagnostics) else {
            skipToNextDeclaration()
            return nil
        }
        var stages: [AST.CustomStage] = []
        var losses: [AST.AcceptedLoss] = []
        let end = parseBlock(of: "migration", diagnostics: &diagnostics) { parser, diagnostics in
            let stageDoc = parser.current.docComment
            if parser.current.isKeyword("lossy") {
                if let loss = parser.parseAcceptedLoss(diagnostics: &diagnostics) { losses.append(loss) }
                return
            }
            guard parser.current.isKeyword("custom") else {
                diagnostics.error(
                    "expected a stage ('custom name \"what it does\"') or an accepted loss ('lossy Entity.property \"why\"'), found \(parser.current.spelling)",
                    at: parser.current.range.start
                )
                parser.skipLine()
                return
            }
            parser.advance()
            guard let name = parser.expectName("the custom stage's name", diagnostics: &diagnostics) else {
                parser.skipLine()
                return
            }
            guard parser.current.kind == .string else {
                diagnostics.error(
                    "expected a quoted description of custom stage '\(name.text)', found \(parser.current.spelling)",
                    at: parser.current.range.start,
                    notes: [("write 'custom \(name.text) \"what the stage does\"'", parser.current.range.start)]
                )
                parser.skipLine()
                return
            }
            var stage = AST.CustomStage(name: name, label: parser.current.text, doc: stageDoc)
            parser.advance()
            if parser.current.isKeyword("covers"), !parser.current.isAtLineStart {
                parser.advance()
                guard let covers = parser.parseCoveredChanges(of: name.text, diagnostics: &diagnostics) else {
                    parser.skipLine()
                    return
                }
                stage.covers = covers
            }
            stages.append(stage)
            parser.expectEndOfLine(after: "a custom stage", diagnostics: &diagnostics)
        }
        return AST.Migration(
            fromVersion: version,
            fromRange: versionRange,
            customStages: stages,
            acceptedLosses: losses,
            range: SourceRange(start: start, end: end)
        )
    }

    /// `request name: Entity` with an optional `where "predicate"` in `NSPredicate` format.
    private mutating func parseRequest(diagnostics: inout DiagnosticSink) -> AST.Request? {
        let start = current.range.start
        let doc = current.docComment
        advance()  // request
        guard let name = expectName("the request's name after 'request'", diagnostics: &diagnostics),
            expect(.colon, "':' and the entity after the request's name", diagnostics: &diagnostics),
            let entity = expectName("the entity the request fetches", diagnostics: &diagnostics)
        else {
            skipLine()
            return nil
        }
        var request = AST.Request(
            name: name, entity: entity, predicate: nil, predicateText: nil, doc: doc,
            range: SourceRange(start: start, end: entity.range.end))
        if current.isKeyword("where"), !current.isAtLineStart {
            advance()
            guard current.kind == .string else {
                diagnostics.error(
                    "expected the predicate as a string after 'where', found \(current.spelling)",
                    at: current.range.start,
                    notes: [("write 'where \"title == $title\"'", current.range.start)]
                )
                skipLine()
                return nil
            }
            request.predicateText = current.text
            request.predicate = PredicateParser.parse(
                current.text, offsets: stringOffsets(of: current), diagnostics: &diagnostics)
            request.range = SourceRange(start: start, end: current.range.end)
            advance()
        }
        expectEndOfLine(after: "a request", diagnostics: &diagnostics)
        return request
    }

    /// The file offset of each byte of a string literal's decoded text, and of its end, from the
    /// same decoder the lexer used, so a predicate's errors point at the right bytes.
    private func stringOffsets(of token: Token) -> [Int] {
        file.bytes.withUnsafeBufferPointer { bytes in
            StringLiteralDecoder.decode(bytes, from: token.range.start + 1, recordingOffsets: true).offsets
        }
    }

    /// `Book.rating, Book.subtitle, Author` after `covers`: the changes a custom stage takes on.
    private mutating func parseCoveredChanges(of stage: String, diagnostics: inout DiagnosticSink)
        -> [AST.CoveredChange]?
    {
        var covers: [AST.CoveredChange] = []
        repeat {
            if !covers.isEmpty { advance() }  // ,
            guard
                let entity = expectName("an entity after 'covers' (custom stage '\(stage)')", diagnostics: &diagnostics)
            else { return nil }
            var property: AST.Name?
            if current.kind == .dot {
                advance()
                guard let name = expectName("the property the stage covers", diagnostics: &diagnostics) else {
                    return nil
                }
                property = name
            }
            covers.append(AST.CoveredChange(entity: entity, property: property))
        } while current.kind == .comma && !current.isAtLineStart
        return covers
    }

    /// `lossy User.name "why"` or `lossy Draft`: data the step may drop, accepted on purpose.
    private mutating func parseAcceptedLoss(diagnostics: inout DiagnosticSink) -> AST.AcceptedLoss? {
        let start = current.range.start
        advance()  // lossy
        guard let entity = expectName("the entity whose data may be lost", diagnostics: &diagnostics) else {
            skipLine()
            return nil
        }
        var property: AST.Name?
        if current.kind == .dot {
            advance()
            guard let name = expectName("the property whose data may be lost", diagnostics: &diagnostics) else {
                skipLine()
                return nil
            }
            property = name
        }
        var reason: String?
        if current.kind == .string {
            reason = current.text
            advance()
        }
        expectEndOfLine(after: "an accepted loss", diagnostics: &diagnostics)
        return AST.AcceptedLoss(
            entity: entity, property: property, reason: reason,
            range: SourceRange(start: start, end: (property ?? entity).range.end))
    }

    /// Parses `{ member… }`, calling `member` for each member, and returns the offset after the
    /// closing brace. A missing brace is reported and the block ends at the next declaration.
    /// `what` is only built for an error: interpolating it for every block was measurable.
    private mutating func parseBlock(
        of what: @autoclosure () -> String,
        diagnostics: inout DiagnosticSink,
        member: (inout Parser, inout DiagnosticSink) -> Void
    ) -> Int {
        guard current.kind == .leftBrace else {
            diagnostics.error("expected '{' to open \(what()), found \(current.spelling)", at: current.range.start)
            skipToNextDeclaration()
            return current.range.start
        }
        let open = current.range.start
        advance()
        while !diagnostics.isFull {
            switch current.kind {
            case .rightBrace:
                let end = current.range.end
                advance()
                return end
            case .endOfFile:
                diagnostics.error(
                    "expected '}' to close \(what())",
                    at: current.range.start,
                    notes: [("\(what()) opens here", open)]
                )
                return current.range.start
            case .semicolon:
                advance()
            default:
                if current.isAtLineStart, isDeclarationStart {
                    diagnostics.error(
                        "expected '}' to close \(what()) before the next declaration",
                        at: current.range.start,
                        notes: [("\(what()) opens here", open)]
                    )
                    return current.range.start
                }
                let before = index
                member(&self, &diagnostics)
                if index == before {
                    // The member's first token was the mistake: step over it so the loop moves on.
                    advance()
                    skipLine()
                }
            }
        }
        return current.range.start
    }

    // MARK: - Properties and types

    private mutating func parseProperty(diagnostics: inout DiagnosticSink) -> AST.Property? {
        let doc = current.docComment
        guard current.isName else {
            diagnostics.error(
                "expected a property ('name: Type') or an annotation, found \(current.spelling)",
                at: current.range.start
            )
            skipLine()
            return nil
        }
        let name = AST.Name(text: current.text, range: current.range)
        advance()
        guard current.kind == .colon else {
            diagnostics.error(
                "expected ':' and a type after property '\(name.text)', found \(current.spelling)",
                at: current.range.start,
                notes: [("write '\(name.text): String', for instance", current.range.start)]
            )
            skipLine()
            return nil
        }
        advance()
        guard let type = parseType(diagnostics: &diagnostics) else {
            skipLine()
            return nil
        }
        var defaultValue: AST.Literal?
        if current.kind == .equals {
            advance()
            defaultValue = parseLiteral(diagnostics: &diagnostics)
            if defaultValue == nil {
                skipLine()
                return nil
            }
        }
        var annotations: [AST.Annotation] = []
        while current.kind == .at, !current.isAtLineStart {
            guard let annotation = parseAnnotation(diagnostics: &diagnostics) else {
                skipLine()
                break
            }
            annotations.append(annotation)
        }
        expectEndOfLine(after: "property '\(name.text)'", diagnostics: &diagnostics)
        return AST.Property(name: name, type: type, defaultValue: defaultValue, annotations: annotations, doc: doc)
    }

    private mutating func parseType(diagnostics: inout DiagnosticSink) -> AST.TypeReference? {
        let start = current.range.start
        let kind: AST.TypeReference.Kind
        if current.kind == .leftBracket {
            advance()
            guard let element = expectName("an entity name inside '[…]'", diagnostics: &diagnostics) else {
                return nil
            }
            guard expect(.rightBracket, "']' to close the ordered to-many type", diagnostics: &diagnostics) else {
                return nil
            }
            kind = .array(element)
        } else if current.isName, current.text == "Set", peek.kind == .leftAngle {
            advance()
            advance()
            guard let element = expectName("an entity name inside 'Set<…>'", diagnostics: &diagnostics) else {
                return nil
            }
            guard expect(.rightAngle, "'>' to close 'Set<…>'", diagnostics: &diagnostics) else { return nil }
            kind = .set(element)
        } else if current.isName, current.text == "Codable", peek.kind == .leftAngle {
            advance()
            guard let swiftType = parseCodableArgument(diagnostics: &diagnostics) else { return nil }
            kind = .codable(swiftType)
        } else if current.isName {
            kind = .named(AST.Name(text: current.text, range: current.range))
            advance()
        } else {
            diagnostics.error("expected a type, found \(current.spelling)", at: current.range.start)
            return nil
        }
        var isOptional = false
        if current.kind == .question {
            isOptional = true
            advance()
        }
        return AST.TypeReference(kind: kind, isOptional: isOptional, range: SourceRange(start: start, end: previousEnd))
    }

    /// The Swift type between `Codable<` and its matching `>`, as written (spaces normalised).
    /// Brackets are matched with an explicit stack of expected closers, never by recursion.
    private mutating func parseCodableArgument(diagnostics: inout DiagnosticSink) -> String? {
        let open = current.range.start
        advance()  // <
        var closers: [Token.Kind] = [.rightAngle]
        var text = ""
        while let expected = closers.last {
            let token = current
            if token.isAtLineStart {
                diagnostics.error(
                    "expected '>' to close 'Codable<…>' on the same line, found \(token.spelling)",
                    at: token.range.start,
                    notes: [("'Codable<' opens here", open)]
                )
                return nil
            }
            switch token.kind {
            case .leftAngle, .leftBracket, .leftParen:
                guard closers.count < Self.maximumTypeNesting else {
                    diagnostics.error(
                        "type nested more than \(Self.maximumTypeNesting) levels deep", at: token.range.start)
                    return nil
                }
                closers.append(Self.closer(of: token.kind))
            case .rightAngle, .rightBracket, .rightParen:
                guard token.kind == expected else {
                    diagnostics.error(
                        "mismatched \(token.spelling) in 'Codable<…>'; expected '\(Self.spelling(of: expected))'",
                        at: token.range.start
                    )
                    return nil
                }
                closers.removeLast()
            case .identifier, .escapedIdentifier, .dot, .comma, .colon, .question:
                break
            default:
                diagnostics.error(
                    "expected a Swift type inside 'Codable<…>', found \(token.spelling)",
                    at: token.range.start,
                    notes: [("'Codable<' opens here", open)]
                )
                return nil
            }
            advance()
            if closers.isEmpty { break }
            switch token.kind {
            case .comma, .colon: text += token.text + " "
            default: text += token.text
            }
        }
        let swiftType = text.trimmingSpaces()
        guard !swiftType.isEmpty else {
            diagnostics.error("expected a Swift type inside 'Codable<…>'", at: open)
            return nil
        }
        return swiftType
    }

    private static func closer(of opener: Token.Kind) -> Token.Kind {
        switch opener {
        case .leftBracket: .rightBracket
        case .leftParen: .rightParen
        default: .rightAngle
        }
    }

    private static func spelling(of closer: Token.Kind) -> String {
        switch closer {
        case .rightBracket: "]"
        case .rightParen: ")"
        default: ">"
        }
    }

    private mutating func parseLiteral(diagnostics: inout DiagnosticSink) -> AST.Literal? {
        let token = current
        let kind: AST.Literal.Kind
        var end = token.range.end
        switch token.kind {
        case .integer: kind = .integer(token.text)
        case .float: kind = .float(token.text)
        case .string: kind = .string(token.text)
        case .minus where peek.kind == .integer || peek.kind == .float:
            advance()
            kind = current.kind == .integer ? .integer("-" + current.text) : .float("-" + current.text)
            end = current.range.end
        case .dot where peek.isName:
            advance()
            kind = .enumCase(current.text)
            end = current.range.end
        case .identifier where token.text == "true": kind = .bool(true)
        case .identifier where token.text == "false": kind = .bool(false)
        case .identifier where token.text == "nil": kind = .null
        case .identifier where token.text == "now": kind = .now
        case .identifier:
            diagnostics.error(
                "expected a value, found \(token.spelling)",
                at: token.range.start,
                notes: [("an enum case is written with a leading dot: '.\(token.text)'", token.range.start)]
            )
            return nil
        default:
            diagnostics.error(
                "expected a value (a number, a string, true, false, nil, now or .case), found \(token.spelling)",
                at: token.range.start
            )
            return nil
        }
        advance()
        return AST.Literal(kind: kind, range: SourceRange(start: token.range.start, end: end))
    }

    // MARK: - Annotations

    private mutating func parseAnnotation(diagnostics: inout DiagnosticSink) -> AST.Annotation? {
        let start = current.range.start
        advance()  // @
        guard current.isName, current.range.start == start + 1 else {
            diagnostics.error("expected an annotation name right after '@'", at: current.range.start)
            return nil
        }
        let name = AST.Name(text: current.text, range: current.range)
        advance()
        guard current.kind == .leftParen, current.range.start == name.range.end else {
            return AST.Annotation(name: name, arguments: nil, range: SourceRange(start: start, end: name.range.end))
        }
        advance()
        var arguments: [AST.Argument] = []
        while current.kind != .rightParen {
            guard let argument = parseArgument(diagnostics: &diagnostics) else { return nil }
            arguments.append(argument)
            if current.kind == .comma {
                advance()
            } else if current.kind != .rightParen {
                diagnostics.error(
                    "expected ',' or ')' in '@\(name.text)(…)', found \(current.spelling)",
                    at: current.range.start
                )
                return nil
            }
        }
        let end = current.range.end
        advance()
        return AST.Annotation(name: name, arguments: arguments, range: SourceRange(start: start, end: end))
    }

    private mutating func parseArgument(diagnostics: inout DiagnosticSink) -> AST.Argument? {
        let start = current.range.start
        var label: AST.Name?
        if current.isName, peek.kind == .colon {
            label = AST.Name(text: current.text, range: current.range)
            advance()
            advance()
        }
        if current.isName,
            !["true", "false", "nil", "now"].contains(current.text) || current.kind == .escapedIdentifier
        {
            var words: [AST.Name] = []
            while current.isName {
                words.append(AST.Name(text: current.text, range: current.range))
                advance()
            }
            return AST.Argument(
                label: label, words: words, literal: nil, range: SourceRange(start: start, end: previousEnd))
        }
        if current.kind == .comma || current.kind == .rightParen || current.isAtLineStart {
            diagnostics.error("expected an argument, found \(current.spelling)", at: current.range.start)
            return nil
        }
        guard let literal = parseLiteral(diagnostics: &diagnostics) else { return nil }
        return AST.Argument(
            label: label, words: [], literal: literal, range: SourceRange(start: start, end: previousEnd))
    }

    // MARK: - Tokens

    // `mutating get`: the parsing methods are mutating, and a debug build calls a plain getter
    // from them on a copy of the whole parser (retaining the token array and the file each time).

    private var current: Token { mutating get { tokens[index] } }

    private var peek: Token { mutating get { tokens[min(index + 1, tokens.count - 1)] } }

    private var previousEnd: Int { mutating get { index > 0 ? tokens[index - 1].range.end : 0 } }

    private mutating func advance() {
        if index < tokens.count - 1 { index += 1 }
    }

    private var isDeclarationStart: Bool {
        mutating get {
            guard current.kind == .identifier, peek.kind != .colon else { return false }
            return ["entity", "abstract", "enum", "composite", "migration", "request", "model"].contains(current.text)
        }
    }

    private mutating func expect(_ kind: Token.Kind, _ what: String, diagnostics: inout DiagnosticSink) -> Bool {
        guard current.kind == kind else {
            diagnostics.error("expected \(what), found \(current.spelling)", at: current.range.start)
            return false
        }
        advance()
        return true
    }

    private mutating func expectName(_ what: String, diagnostics: inout DiagnosticSink) -> AST.Name? {
        guard current.isName else {
            diagnostics.error("expected \(what), found \(current.spelling)", at: current.range.start)
            return nil
        }
        defer { advance() }
        return AST.Name(text: current.text, range: current.range)
    }

    private mutating func expectVersionNumber(diagnostics: inout DiagnosticSink) -> (Int, SourceRange)? {
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
    private mutating func expectEndOfLine(after what: @autoclosure () -> String, diagnostics: inout DiagnosticSink) {
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
    private mutating func skipLine() {
        while !current.isAtLineStart && current.kind != .rightBrace && current.kind != .endOfFile {
            advance()
        }
    }

    /// Skips to the next line that starts a declaration.
    private mutating func skipToNextDeclaration() {
        repeat {
            advance()
        } while current.kind != .endOfFile && !(current.isAtLineStart && isDeclarationStart)
    }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        var text = Substring(self)
        while text.last == " " { text.removeLast() }
        while text.first == " " { text.removeFirst() }
        return String(text)
    }
}
