/// The declarations of a schema file: entities, composites, enums, migration blocks and requests,
/// each parsed into its syntax node (members are parsed in `Parser+Properties.swift`).
extension Parser {
    mutating func parseEntity(diagnostics: inout DiagnosticSink) -> AST.Entity? {
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

    mutating func parseComposite(diagnostics: inout DiagnosticSink) -> AST.Composite? {
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

    mutating func parseEnumeration(diagnostics: inout DiagnosticSink) -> AST.Enumeration? {
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

    mutating func parseMigration(diagnostics: inout DiagnosticSink) -> AST.Migration? {
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
    mutating func parseRequest(diagnostics: inout DiagnosticSink) -> AST.Request? {
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
}
