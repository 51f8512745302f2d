import Modelwright

/// The members of a declaration: properties, their types and default values, and annotations.
extension Parser {
    // MARK: - Properties and types

    mutating func parseProperty(diagnostics: inout DiagnosticSink) -> AST.Property? {
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
            defaultValue = parseLiteral(for: type, diagnostics: &diagnostics)
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

    /// A literal; `type`, when it is the declared type of the attribute the literal is the default
    /// of, lets a bare word's note offer a value of that type.
    mutating func parseLiteral(for type: AST.TypeReference? = nil, diagnostics: inout DiagnosticSink) -> AST.Literal? {
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
        case .identifier where Self.isResolvedLater(type):
            kind = .bareWord(token.text)
        case .identifier:
            diagnostics.error(
                "expected a value, found \(token.spelling)",
                at: token.range.start,
                notes: [(Self.bareWordNote(token.text, for: type), token.range.start)]
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

    /// Whether a bare word as the value of `type` is reported once the type is resolved: a named
    /// type that is not built in may be an enum, a composite or an entity, and each needs its own note.
    private static func isResolvedLater(_ type: AST.TypeReference?) -> Bool {
        guard let type, case .named(let name) = type.kind else { return false }
        return ScalarType.bySchemaSpelling[name.text] == nil
    }

    /// What to write instead of a bare word as a value: a value of the declared built-in type (the
    /// note's first quoted text is that value), or else remove it.
    private static func bareWordNote(_ word: String, for type: AST.TypeReference?) -> String {
        guard let type, case .named(let name) = type.kind, let scalar = ScalarType.bySchemaSpelling[name.text] else {
            // A Codable, or a to-many (`Set<T>`, `[T]`): neither takes a default value.
            return "this attribute takes no default value: remove '= \(word)'"
        }
        guard let replacement = scalar.literal.replacement(forWord: word) else {
            return "\(scalar.schemaSpelling) attributes take no default value: remove '= \(word)'"
        }
        switch scalar.literal {
        case .bool: return "write '\(replacement)': \(scalar.phrase) is true or false"
        case .integer, .floatingPoint, .decimal: return "write '\(replacement)': \(scalar.phrase) is a number"
        case .instant: return "write '\(replacement)' for the insertion time, or an ISO 8601 date in quotes"
        case .text, .none: return "write '\(replacement)': \(scalar.phrase) is written in quotes"
        }
    }

    // MARK: - Annotations

    mutating func parseAnnotation(diagnostics: inout DiagnosticSink) -> AST.Annotation? {
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
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        var text = Substring(self)
        while text.last == " " { text.removeLast() }
        while text.first == " " { text.removeFirst() }
        return String(text)
    }
}
