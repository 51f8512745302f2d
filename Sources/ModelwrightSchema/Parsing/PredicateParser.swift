/// Parses a predicate in `NSPredicate` format (a request's `where "…"`, or a Core Data fetch
/// request template's `predicateString`) into an ``AST/Predicate``.
///
/// The subset is what the runtime's conditions can express: comparisons (`==`, `=`, `!=`, `<>`,
/// `<`, `<=`, `=<`, `>`, `>=`, `=>`), `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE` with `[c]`,
/// `[d]` or `[cd]`, `IN`, `BETWEEN`, `AND`/`&&`, `OR`/`||`, `NOT`/`!`, `ANY`/`SOME`, `ALL`,
/// `NONE`, `@count`, `TRUEPREDICATE`, `FALSEPREDICATE`, `$VARIABLES`, and string (single or double
/// quotes), number, `TRUE`/`YES`, `FALSE`/`NO` and `NIL`/`NULL` constants. Anything else
/// (`SUBQUERY`, `FUNCTION`, `MATCHES`, arithmetic, `SELF`) is an error that names it.
///
/// The parser stops at the first error: a predicate is one line, and one clear message is worth
/// more than a cascade. Nesting is limited, so no input can overflow the stack.
package struct PredicateParser {
    /// How deeply parentheses and `NOT` may nest.
    package static let maximumNesting = 64

    private enum TokenKind: Equatable {
        case word, variable, atWord, string, number
        case symbol(String)
        case end

        var isSymbol: Bool {
            if case .symbol = self { return true }
            return false
        }
    }

    private struct Token {
        var kind: TokenKind
        var text: String
        var start: Int
        var end: Int

        func isKeyword(_ word: String) -> Bool {
            kind == .word && text.uppercased() == word
        }

        var spelling: String {
            switch kind {
            case .end: "the end of the predicate"
            case .string: "a string"
            default: "'\(text)'"
            }
        }
    }

    private struct Failure: Error {
        var message: String
        var offset: Int
    }

    private let bytes: [UInt8]
    /// The file offset of each byte of the text, and one past the end.
    private let offsets: [Int]
    private var tokens: [Token] = []
    private var index = 0
    private var depth = 0

    private init(bytes: [UInt8], offsets: [Int]) {
        self.bytes = bytes
        self.offsets = offsets
    }

    /// The predicate in `text`, whose byte `i` sits at file offset `offsets[i]` (`offsets` has one
    /// more entry, for the end); `nil` after reporting the first problem.
    package static func parse(_ text: String, offsets: [Int], diagnostics: inout DiagnosticSink) -> AST.Predicate? {
        let bytes = Array(text.utf8)
        // One offset per byte and one for the end, whatever the caller gave: an error's place may
        // be approximate, but never out of range.
        var offsets = Array(offsets.prefix(bytes.count + 1))
        while offsets.count < bytes.count + 1 { offsets.append(offsets.last ?? 0) }
        var parser = PredicateParser(bytes: bytes, offsets: offsets)
        do throws(Failure) {
            try parser.tokenize()
            let predicate = try parser.parseOr()
            guard parser.current.kind == .end else {
                throw parser.failure("expected AND, OR or the end of the predicate, found \(parser.current.spelling)")
            }
            return predicate
        } catch {
            diagnostics.error(error.message, at: error.offset)
            return nil
        }
    }

    /// `text` as a predicate whose ranges are offsets into `text`, or the first problem with it,
    /// for callers without a schema file (the Core Data importer).
    package static func parse(_ text: String) -> Result<AST.Predicate, PredicateProblem> {
        var sink = DiagnosticSink(file: SourceFile(path: "", text: text))
        let predicate = parse(text, offsets: Array(0...text.utf8.count), diagnostics: &sink)
        guard let predicate else { return .failure(PredicateProblem(message: sink.diagnostics.first?.message ?? "")) }
        return .success(predicate)
    }

    // MARK: - Grammar

    private mutating func parseOr() throws(Failure) -> AST.Predicate {
        var operands = [try parseAnd()]
        while current.isKeyword("OR") || current.kind == .symbol("||") {
            advance()
            operands.append(try parseAnd())
        }
        return operands.count == 1 ? operands[0] : .or(operands)
    }

    private mutating func parseAnd() throws(Failure) -> AST.Predicate {
        var operands = [try parseNot()]
        while current.isKeyword("AND") || current.kind == .symbol("&&") {
            advance()
            operands.append(try parseNot())
        }
        return operands.count == 1 ? operands[0] : .and(operands)
    }

    private mutating func parseNot() throws(Failure) -> AST.Predicate {
        guard current.isKeyword("NOT") || current.kind == .symbol("!") else { return try parsePrimary() }
        advance()
        return .not(try nested { parser throws(Failure) in try parser.parseNot() })
    }

    private mutating func parsePrimary() throws(Failure) -> AST.Predicate {
        if current.kind == .symbol("(") {
            advance()
            let inner = try nested { parser throws(Failure) in try parser.parseOr() }
            try expect(")", "')' to close '('")
            return inner
        }
        for (word, value) in [("TRUEPREDICATE", true), ("FALSEPREDICATE", false)] where current.isKeyword(word) {
            defer { advance() }
            return .constant(value, range(of: current))
        }
        return .comparison(try parseComparison())
    }

    private mutating func nested<T>(_ parse: (inout PredicateParser) throws(Failure) -> T) throws(Failure) -> T {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maximumNesting else {
            throw failure("the predicate nests more than \(Self.maximumNesting) levels deep")
        }
        return try parse(&self)
    }

    private mutating func parseComparison() throws(Failure) -> AST.Comparison {
        var quantifier: (kind: AST.PredicateQuantifier, range: SourceRange)?
        for (word, kind) in [("ANY", .any), ("SOME", .any), ("ALL", .all), ("NONE", .none)]
            as [(String, AST.PredicateQuantifier)] where current.isKeyword(word)
        {
            quantifier = (kind, range(of: current))
            advance()
            break
        }
        let left = try parseOperand()
        let operatorToken = current
        guard var operation = Self.operators[operatorToken.text.uppercased()],
            operatorToken.kind == .word || operatorToken.kind.isSymbol
        else {
            if operatorToken.isKeyword("MATCHES") {
                throw failure(
                    "MATCHES (regular expressions) is not supported; use LIKE, BEGINSWITH, ENDSWITH or CONTAINS")
            }
            throw failure(
                "expected an operator (==, !=, <, <=, >, >=, BEGINSWITH, ENDSWITH, CONTAINS, LIKE, IN or BETWEEN), found \(operatorToken.spelling)"
            )
        }
        advance()
        var caseInsensitive = false
        var diacriticInsensitive = false
        if current.kind == .symbol("["), current.start == operatorToken.end {
            advance()
            guard current.kind == .word, !current.text.isEmpty,
                current.text.allSatisfy({ "cdn".contains($0) })
            else {
                throw failure("expected c, d or cd between '[' and ']' after \(operatorToken.spelling)")
            }
            caseInsensitive = current.text.contains("c")
            diacriticInsensitive = current.text.contains("d")
            advance()
            try expect("]", "']' to close the options")
        }
        let right = try parseOperand()
        if case .keyPath = right.operand, case .keyPath = left.operand {
            throw Failure(
                message: "comparing two key paths is not supported; compare a key path with a $variable or a constant",
                offset: offsets[right.start(in: self)])
        }
        // `$x == name` reads as `name == $x`: the key path goes on the left.
        var (lhs, rhs) = (left, right)
        if case .keyPath = right.operand, quantifier == nil {
            guard let flipped = Self.flipped[operation] else {
                throw Failure(
                    message: "put the key path on the left of \(operation.rawValue)",
                    offset: offsets[left.start(in: self)])
            }
            operation = flipped
            (lhs, rhs) = (right, left)
        }
        return AST.Comparison(
            quantifier: quantifier, left: lhs.operand, operation: operation, caseInsensitive: caseInsensitive,
            diacriticInsensitive: diacriticInsensitive, operatorRange: range(of: operatorToken), right: rhs.operand)
    }

    /// An operand with the token offsets it spans, so errors can point at it before ranges exist.
    private struct Parsed {
        var operand: AST.Operand
        var firstToken: Int

        func start(in parser: PredicateParser) -> Int { parser.tokens[firstToken].start }
    }

    private mutating func parseOperand() throws(Failure) -> Parsed {
        let first = index
        let token = current
        switch token.kind {
        case .variable:
            advance()
            return Parsed(operand: .variable(name(token, dropping: 1)), firstToken: first)
        case .string:
            advance()
            return Parsed(
                operand: .literal(AST.Literal(kind: .string(token.text), range: range(of: token))), firstToken: first)
        case .number:
            advance()
            let kind: AST.Literal.Kind =
                token.text.contains(where: { ".eE".contains($0) }) ? .float(token.text) : .integer(token.text)
            return Parsed(operand: .literal(AST.Literal(kind: kind, range: range(of: token))), firstToken: first)
        case .symbol("-"):
            advance()
            guard current.kind == .number, current.start == token.end else {
                throw failure("arithmetic is not supported in a request predicate")
            }
            let number = current
            advance()
            let kind: AST.Literal.Kind =
                number.text.contains(where: { ".eE".contains($0) })
                ? .float("-" + number.text) : .integer("-" + number.text)
            return Parsed(
                operand: .literal(
                    AST.Literal(kind: kind, range: SourceRange(start: offsets[token.start], end: offsets[number.end]))),
                firstToken: first)
        case .symbol("{"):
            advance()
            var elements: [AST.Operand] = []
            while current.kind != .symbol("}") {
                // Lists nest like parentheses, and count towards the same limit.
                elements.append(try nested { parser throws(Failure) in try parser.parseOperand() }.operand)
                if current.kind == .symbol(",") {
                    advance()
                } else if current.kind != .symbol("}") {
                    throw failure("expected ',' or '}' in the list, found \(current.spelling)")
                }
            }
            let end = current.end
            advance()
            return Parsed(
                operand: .list(elements, SourceRange(start: offsets[token.start], end: offsets[end])), firstToken: first
            )
        case .word:
            if let literal = Self.constants[token.text.uppercased()] {
                advance()
                return Parsed(operand: .literal(AST.Literal(kind: literal, range: range(of: token))), firstToken: first)
            }
            if let unsupported = Self.unsupportedWords[token.text.uppercased()] {
                throw failure(unsupported)
            }
            return Parsed(operand: .keyPath(try parseKeyPath()), firstToken: first)
        default:
            throw failure("expected a key path, a $variable or a constant, found \(token.spelling)")
        }
    }

    private mutating func parseKeyPath() throws(Failure) -> [AST.Name] {
        var names = [name(current, dropping: 0)]
        advance()
        while current.kind == .symbol(".") {
            advance()
            switch current.kind {
            case .word:
                names.append(name(current, dropping: 0))
            case .atWord where current.text == "@count":
                names.append(name(current, dropping: 0))
            case .atWord:
                throw failure("\(current.text) is not supported; the one collection operator is @count")
            default:
                throw failure("expected a name after '.', found \(current.spelling)")
            }
            advance()
        }
        if current.kind == .symbol("[") && current.start == tokens[index - 1].end {
            throw failure("indexing a key path is not supported")
        }
        if case .symbol(let symbol) = current.kind, ["+", "-", "*", "/", "**"].contains(symbol) {
            throw failure("arithmetic is not supported in a request predicate")
        }
        return names
    }

    private static let operators: [String: AST.PredicateOperator] = [
        "==": .equal, "=": .equal, "!=": .notEqual, "<>": .notEqual, "<": .less, "<=": .lessOrEqual,
        "=<": .lessOrEqual, ">": .greater, ">=": .greaterOrEqual, "=>": .greaterOrEqual,
        "BEGINSWITH": .beginsWith, "ENDSWITH": .endsWith, "CONTAINS": .contains, "LIKE": .like, "IN": .in,
        "BETWEEN": .between,
    ]

    private static let flipped: [AST.PredicateOperator: AST.PredicateOperator] = [
        .equal: .equal, .notEqual: .notEqual, .less: .greater, .lessOrEqual: .greaterOrEqual,
        .greater: .less, .greaterOrEqual: .lessOrEqual,
    ]

    private static let constants: [String: AST.Literal.Kind] = [
        "TRUE": .bool(true), "YES": .bool(true), "FALSE": .bool(false), "NO": .bool(false), "NIL": .null,
        "NULL": .null,
    ]

    private static let unsupportedWords: [String: String] = [
        "SUBQUERY": "SUBQUERY is not supported; use ANY, ALL or NONE with a key path through the to-many relationship",
        "FUNCTION": "FUNCTION is not supported in a request predicate",
        "SELF": "SELF is not supported; compare a to-one relationship with a $variable instead",
        "CAST": "CAST is not supported; pass dates and other values as $variables",
        "NOW": "NOW() is not supported; pass the date as a $variable",
    ]

    // MARK: - Tokens

    private var current: Token { tokens[index] }

    private mutating func advance() {
        if index < tokens.count - 1 { index += 1 }
    }

    private mutating func expect(_ symbol: String, _ what: String) throws(Failure) {
        guard current.kind == .symbol(symbol) else { throw failure("expected \(what), found \(current.spelling)") }
        advance()
    }

    private func failure(_ message: String) -> Failure {
        Failure(message: message, offset: offsets[current.start])
    }

    private func range(of token: Token) -> SourceRange {
        SourceRange(start: offsets[token.start], end: offsets[token.end])
    }

    private func name(_ token: Token, dropping prefix: Int) -> AST.Name {
        AST.Name(
            text: String(token.text.dropFirst(prefix)),
            range: SourceRange(start: offsets[token.start + prefix], end: offsets[token.end]))
    }

    private mutating func tokenize() throws(Failure) {
        var position = 0
        func fail(_ message: String, _ at: Int) -> Failure { Failure(message: message, offset: offsets[at]) }
        while true {
            while position < bytes.count, bytes[position] == 0x20 || bytes[position] == 0x09 || bytes[position] == 0x0A
            {
                position += 1
            }
            guard position < bytes.count else { break }
            let start = position
            let byte = bytes[position]
            if Self.isNameByte(byte) && !Self.isDigit(byte) || byte == UInt8(ascii: "$") || byte == UInt8(ascii: "@") {
                position += 1
                while position < bytes.count, Self.isNameByte(bytes[position]) { position += 1 }
                let text = String(decoding: bytes[start..<position], as: UTF8.self)
                let kind: TokenKind =
                    byte == UInt8(ascii: "$") ? .variable : byte == UInt8(ascii: "@") ? .atWord : .word
                if kind != .word && position == start + 1 {
                    throw fail("expected a name after '\(text)'", start)
                }
                tokens.append(Token(kind: kind, text: text, start: start, end: position))
            } else if Self.isDigit(byte) {
                while position < bytes.count, Self.isDigit(bytes[position]) || bytes[position] == UInt8(ascii: ".") {
                    position += 1
                }
                if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
                    position += 1
                    if position < bytes.count,
                        bytes[position] == UInt8(ascii: "-") || bytes[position] == UInt8(ascii: "+")
                    {
                        position += 1
                    }
                    while position < bytes.count, Self.isDigit(bytes[position]) { position += 1 }
                }
                let text = String(decoding: bytes[start..<position], as: UTF8.self)
                guard Double(text) != nil else { throw fail("'\(text)' is not a number", start) }
                tokens.append(Token(kind: .number, text: text, start: start, end: position))
            } else if byte == UInt8(ascii: "'") || byte == UInt8(ascii: "\"") {
                position += 1
                var value: [UInt8] = []
                while true {
                    guard position < bytes.count else { throw fail("unterminated string in the predicate", start) }
                    let next = bytes[position]
                    position += 1
                    if next == byte { break }
                    if next == UInt8(ascii: "\\"), position < bytes.count {
                        value.append(bytes[position])
                        position += 1
                    } else {
                        value.append(next)
                    }
                }
                tokens.append(
                    Token(kind: .string, text: String(decoding: value, as: UTF8.self), start: start, end: position))
            } else {
                let pair =
                    position + 1 < bytes.count ? String(decoding: bytes[position...position + 1], as: UTF8.self) : ""
                let symbol: String
                if ["==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||", "**"].contains(pair) {
                    symbol = pair
                } else if "=<>!(){},.[]+-*/".utf8.contains(byte) {
                    symbol = String(UnicodeScalar(byte))
                } else {
                    throw fail("unexpected character '\(String(UnicodeScalar(byte)))' in the predicate", start)
                }
                position += symbol.utf8.count
                tokens.append(Token(kind: .symbol(symbol), text: symbol, start: start, end: position))
            }
        }
        tokens.append(Token(kind: .end, text: "", start: bytes.count, end: bytes.count))
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        isDigit(byte) || byte == UInt8(ascii: "_") || byte >= 0x80
            || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
    }
}

/// Why a predicate cannot be read.
package struct PredicateProblem: Error {
    package var message: String
}
