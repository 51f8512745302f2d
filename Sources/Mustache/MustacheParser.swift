/// Turns template source into nodes in three passes: it splits the source into tokens with the
/// delimiters in force, removes the standalone lines the specification removes, and matches each
/// section with its closing tag.
///
/// It works on the source's UTF-8 bytes: delimiters are arbitrary strings, and byte offsets make
/// matching them cheap. Nothing here recurses, so hostile input cannot exhaust the stack.
struct MustacheParser {
    private static let newline = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")
    private static let space = UInt8(ascii: " ")
    private static let tab = UInt8(ascii: "\t")

    private let bytes: [UInt8]
    private let templateName: String
    /// The byte offset at which each line starts, for turning offsets into lines and columns.
    private let lineStarts: [Int]

    init(source: String, templateName: String) {
        bytes = Array(source.utf8)
        self.templateName = templateName
        var lineStarts = [0]
        for (offset, byte) in bytes.enumerated() where byte == Self.newline {
            lineStarts.append(offset + 1)
        }
        self.lineStarts = lineStarts
    }

    /// Parses the whole template.
    func parse() throws(MustacheError) -> MustacheProgram {
        try buildProgram(from: removingStandaloneLines(from: tokenize()))
    }

    // MARK: - Tokens

    private func tokenize() throws(MustacheError) -> [Token] {
        var tokens: [Token] = []
        var delimiters = Delimiters(opening: Array("{{".utf8), closing: Array("}}".utf8))
        var textStart = 0
        var index = 0
        while index < bytes.count {
            guard matches(delimiters.opening, at: index) else {
                index += 1
                continue
            }
            appendText(from: textStart, upTo: index, to: &tokens)
            let tag = try scanTag(at: index, delimiters: delimiters)
            tokens.append(tag.token)
            delimiters = tag.newDelimiters ?? delimiters
            index = tag.end
            textStart = index
        }
        appendText(from: textStart, upTo: bytes.count, to: &tokens)
        return tokens
    }

    /// Adds text as one token per line, so that every newline ends a token.
    private func appendText(from start: Int, upTo end: Int, to tokens: inout [Token]) {
        var lineStart = start
        for index in start..<end where bytes[index] == Self.newline {
            tokens.append(Token(kind: .text(text(lineStart...index)), offset: lineStart))
            lineStart = index + 1
        }
        if lineStart < end {
            tokens.append(Token(kind: .text(text(lineStart..<end)), offset: lineStart))
        }
    }

    private func scanTag(at start: Int, delimiters: Delimiters) throws(MustacheError) -> ScannedTag {
        let sigilOffset = start + delimiters.opening.count
        let sigil = sigilOffset < bytes.count ? Unicode.Scalar(bytes[sigilOffset]) : " "
        var terminator = delimiters.closing
        var contentStart = sigilOffset
        switch sigil {
        case "{", "=":
            terminator = Array(String(sigil == "{" ? "}" : "=").utf8) + delimiters.closing
            contentStart += 1
        case "!", "#", "^", "/", ">", "&", "<", "$":
            contentStart += 1
        default:
            break
        }
        guard let contentEnd = firstIndex(of: terminator, from: contentStart) else {
            throw error(.unclosedTag(closing: String(decoding: terminator, as: UTF8.self)), at: start)
        }
        let content = text(contentStart..<contentEnd)
        let end = contentEnd + terminator.count

        let kind: Token.Kind
        var newDelimiters: Delimiters?
        switch sigil {
        case "!":
            kind = .comment
        case "=":
            kind = .delimiters
            newDelimiters = try parseDelimiters(content, at: start)
        case "#", "^":
            kind = .sectionStart(try path(content, at: start), inverted: sigil == "^")
        case "/":
            kind = .sectionEnd(try path(content, at: start).name)
        case ">":
            kind = .partial(try partialName(content, at: start), indentation: nil)
        case "<", "$":
            throw error(.unsupportedTag(String(sigil)), at: start)
        case "{", "&":
            kind = .variable(try path(content, at: start), escaped: false)
        default:
            kind = .variable(try path(content, at: start), escaped: true)
        }
        return ScannedTag(token: Token(kind: kind, offset: start), end: end, newDelimiters: newDelimiters)
    }

    private func parseDelimiters(_ content: String, at offset: Int) throws(MustacheError) -> Delimiters {
        let parts = content.split(whereSeparator: \.isWhitespace)
        guard parts.count == 2 else {
            throw error(.invalidDelimiters(Self.trimmed(content)), at: offset)
        }
        return Delimiters(opening: Array(parts[0].utf8), closing: Array(parts[1].utf8))
    }

    private func path(_ content: String, at offset: Int) throws(MustacheError) -> MustachePath {
        let name = try partialName(content, at: offset)
        if name == "." {
            return MustachePath(name: name, keys: [])
        }
        let keys = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !keys.contains(where: \.isEmpty) else {
            throw error(.invalidName(name), at: offset)
        }
        return MustachePath(name: name, keys: keys)
    }

    /// A partial's name may hold dots (`Record.swift`), so it is only checked for emptiness and spaces.
    private func partialName(_ content: String, at offset: Int) throws(MustacheError) -> String {
        let name = Self.trimmed(content)
        guard !name.isEmpty else {
            throw error(.emptyTag, at: offset)
        }
        guard !name.contains(where: \.isWhitespace) else {
            throw error(.invalidName(name), at: offset)
        }
        return name
    }

    // MARK: - Standalone lines

    /// Drops each standalone line's whitespace and newline, keeping its tag; marks where every
    /// other line starts, for the indentation of standalone partials.
    private func removingStandaloneLines(from tokens: [Token]) -> [Token] {
        var result: [Token] = []
        var line: [Token] = []
        for token in tokens {
            line.append(token)
            if case .text(let text) = token.kind, text.utf8.last == Self.newline {
                appendLine(line, to: &result)
                line.removeAll(keepingCapacity: true)
            }
        }
        if !line.isEmpty {
            appendLine(line, to: &result)
        }
        return result
    }

    private func appendLine(_ line: [Token], to result: inout [Token]) {
        if let tag = standaloneTag(in: line) {
            result.append(tag)
        } else {
            result.append(Token(kind: .lineStart, offset: line[0].offset))
            result.append(contentsOf: line)
        }
    }

    /// The line's tag when the line is standalone: a single section, closing, partial, comment or
    /// set-delimiter tag with nothing but spaces and tabs around it. A partial keeps the whitespace
    /// before it as the indentation of every line it includes.
    private func standaloneTag(in line: [Token]) -> Token? {
        var tag: Token?
        var indentation = ""
        for token in line {
            switch token.kind {
            case .text(let text):
                guard Self.isBlank(text) else { return nil }
                if tag == nil {
                    indentation += text
                }
            case .sectionStart, .sectionEnd, .partial, .comment, .delimiters:
                guard tag == nil else { return nil }
                tag = token
            case .variable, .lineStart:
                return nil
            }
        }
        guard let tag else { return nil }
        if case .partial(let name, _) = tag.kind {
            return Token(kind: .partial(name, indentation: indentation), offset: tag.offset)
        }
        return tag
    }

    /// Whether text holds only spaces and tabs, before an optional `\n` or `\r\n` at its end.
    private static func isBlank(_ text: String) -> Bool {
        var bytes = Array(text.utf8)
        if bytes.last == newline {
            bytes.removeLast()
            if bytes.last == carriageReturn {
                bytes.removeLast()
            }
        }
        return bytes.allSatisfy { $0 == space || $0 == tab }
    }

    // MARK: - Program

    /// Lays the nodes out flat, each section before its content, and fills in where each section
    /// ends once its closing tag is found.
    private func buildProgram(from tokens: [Token]) throws(MustacheError) -> MustacheProgram {
        var nodes: [MustacheNode] = []
        var texts: [String] = []
        var paths: [MustachePath] = []
        var partials: [MustachePartialTag] = []
        var openSections: [OpenSection] = []
        // Adjacent text merges into one node, but never across a section's start or end.
        var lastIsText = false
        for token in tokens {
            switch token.kind {
            case .text(let text):
                if lastIsText {
                    texts[texts.count - 1] += text
                } else {
                    nodes.append(.text(texts.count))
                    texts.append(text)
                }
                lastIsText = true
                continue
            case .lineStart:
                nodes.append(.lineStart)
            case .variable(let path, let escaped):
                nodes.append(.variable(path: paths.count, escaped: escaped, location: location(of: token.offset)))
                paths.append(path)
            case .partial(let name, let indentation):
                nodes.append(.partial(partials.count))
                partials.append(
                    MustachePartialTag(name: name, indentation: indentation, location: location(of: token.offset))
                )
            case .sectionStart(let path, let inverted):
                // Deeper trees would make rendering, and even freeing the tree, recurse too deeply.
                guard openSections.count < MustacheTemplate.maximumDepth else {
                    throw error(.nestingTooDeep(limit: MustacheTemplate.maximumDepth), at: token.offset)
                }
                openSections.append(
                    OpenSection(path: path, inverted: inverted, offset: token.offset, nodeIndex: nodes.count)
                )
                // A placeholder until the closing tag says where the content ends.
                nodes.append(.lineStart)
            case .sectionEnd(let name):
                guard let section = openSections.popLast() else {
                    throw error(.unexpectedClosingTag(name: name), at: token.offset)
                }
                guard section.path.name == name else {
                    throw error(.mismatchedClosingTag(expected: section.path.name, found: name), at: token.offset)
                }
                nodes[section.nodeIndex] = .section(
                    path: paths.count,
                    inverted: section.inverted,
                    end: nodes.count,
                    location: location(of: section.offset)
                )
                paths.append(section.path)
            case .comment, .delimiters:
                // Text on either side of a comment or a set-delimiter tag still merges.
                continue
            }
            lastIsText = false
        }
        if let section = openSections.last {
            throw error(.unclosedSection(name: section.path.name), at: section.offset)
        }
        return MustacheProgram(name: templateName, nodes: nodes, texts: texts, paths: paths, partials: partials)
    }

    // MARK: - Bytes and locations

    private func matches(_ pattern: [UInt8], at index: Int) -> Bool {
        guard index + pattern.count <= bytes.count else { return false }
        for offset in pattern.indices where bytes[index + offset] != pattern[offset] {
            return false
        }
        return true
    }

    private func firstIndex(of pattern: [UInt8], from start: Int) -> Int? {
        var index = start
        while index + pattern.count <= bytes.count {
            if matches(pattern, at: index) {
                return index
            }
            index += 1
        }
        return nil
    }

    private func text<Range: RangeExpression<Int>>(_ range: Range) -> String {
        String(decoding: bytes[range], as: UTF8.self)
    }

    private func location(of offset: Int) -> MustacheLocation {
        // The last line that starts at or before the offset.
        var low = 0
        var high = lineStarts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if lineStarts[middle] <= offset {
                low = middle
            } else {
                high = middle - 1
            }
        }
        let column = text(lineStarts[low]..<offset).count + 1
        return MustacheLocation(line: low + 1, column: column)
    }

    private func error(_ kind: MustacheError.Kind, at offset: Int) -> MustacheError {
        MustacheError(kind, in: templateName, at: location(of: offset))
    }

    private static func trimmed(_ text: String) -> String {
        var text = Substring(text)
        while text.first?.isWhitespace == true {
            text.removeFirst()
        }
        while text.last?.isWhitespace == true {
            text.removeLast()
        }
        return String(text)
    }
}

/// A run of text or a tag, at a byte offset in the source. A text token holds a newline only as its
/// last character, so the standalone pass can take the tokens line by line.
private struct Token {
    enum Kind {
        case text(String)
        case lineStart
        case variable(MustachePath, escaped: Bool)
        case sectionStart(MustachePath, inverted: Bool)
        case sectionEnd(String)
        case partial(String, indentation: String?)
        case comment
        case delimiters
    }

    let kind: Kind
    let offset: Int
}

/// The opening and closing delimiters in force; set-delimiter tags change them.
private struct Delimiters {
    let opening: [UInt8]
    let closing: [UInt8]
}

/// A tag found in the source, where the text after it starts, and the delimiters it sets, if any.
private struct ScannedTag {
    let token: Token
    let end: Int
    let newDelimiters: Delimiters?
}

/// A section whose closing tag is still to come, and where its node is.
private struct OpenSection {
    let path: MustachePath
    let inverted: Bool
    let offset: Int
    let nodeIndex: Int
}
