/// Splits a schema file into tokens, reporting characters that belong to no token.
///
/// Works on UTF-8 bytes in one forward pass without recursion, so any input — binary junk,
/// deep nesting, megabytes of text — is lexed in linear time.
///
/// Reads the bytes through a buffer pointer: a debug build (the build plugin's tool usually is one)
/// ran each `Array` subscript as a call, and reading the file byte by byte that way took ten times as long.
/// For the same reason each byte is classified by one load from a table, not by a chain of range
/// tests and `UInt8(ascii:)` calls.
struct Lexer {
    private let bytes: UnsafeBufferPointer<UInt8>
    private let classes: UnsafePointer<ByteClass>
    private var offset = 0
    private var sawNewline = true
    private var pendingDoc: [String] = []
    private let recentNames: UnsafeMutablePointer<RecentName>

    private init(
        bytes: UnsafeBufferPointer<UInt8>, classes: UnsafePointer<ByteClass>,
        recentNames: UnsafeMutablePointer<RecentName>
    ) {
        self.bytes = bytes
        self.classes = classes
        self.recentNames = recentNames
    }

    /// All tokens of the file, ending with `.endOfFile`.
    static func tokens(of file: SourceFile, diagnostics: inout DiagnosticSink) -> [Token] {
        file.bytes.withUnsafeBufferPointer { bytes in
            byteClasses.withUnsafeBufferPointer { classes in
                let recentNames = UnsafeMutablePointer<RecentName>.allocate(capacity: recentNameSlots)
                recentNames.initialize(
                    repeating: RecentName(length: 0, low: 0, high: 0, text: ""), count: recentNameSlots)
                defer {
                    recentNames.deinitialize(count: recentNameSlots)
                    recentNames.deallocate()
                }
                var lexer = Lexer(bytes: bytes, classes: classes.baseAddress!, recentNames: recentNames)
                var tokens: [Token] = []
                while true {
                    // Checked before the append so the token moves into the array instead of being copied.
                    let token = lexer.next(diagnostics: &diagnostics)
                    let isLast = token.kind == .endOfFile
                    tokens.append(token)
                    if isLast { return tokens }
                }
            }
        }
    }

    /// A name of up to 15 bytes already made into a string, kept by its bytes (read as two
    /// little-endian words, zero past its end): a schema repeats its type and property names, and
    /// decoding each name's bytes into a new `String` was a quarter of lexing.
    private struct RecentName {
        var length: Int
        var low: UInt64
        var high: UInt64
        var text: String
    }

    private static let recentNameSlots = 256

    /// What a byte can begin, so that the lexer tells bytes apart with one table load.
    private enum ByteClass {
        case other
        case space
        case newline
        case slash
        case quote
        case backtick
        case digit
        /// Letters, `_`, and any non-ASCII byte: names in other scripts lex as names so that the
        /// checker can say precisely why they are not allowed.
        case nameStart
        case punctuation(Token.Kind)
    }

    private static let byteClasses: [ByteClass] = (0...255).map { (byte: UInt8) -> ByteClass in
        switch byte {
        case UInt8(ascii: " "), UInt8(ascii: "\t"): .space
        // Swift ends a line at LF, CR and CRLF; so does the schema language, or a comment that
        // looks whole here could end early in the generated Swift and let the rest run as code.
        case UInt8(ascii: "\n"), UInt8(ascii: "\r"): .newline
        case UInt8(ascii: "/"): .slash
        case UInt8(ascii: "\""): .quote
        case UInt8(ascii: "`"): .backtick
        case UInt8(ascii: "0")...UInt8(ascii: "9"): .digit
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"), 0x80...:
            .nameStart
        default: punctuation(byte).map(ByteClass.punctuation) ?? .other
        }
    }

    private mutating func next(diagnostics: inout DiagnosticSink) -> Token {
        while true {
            skipTrivia(diagnostics: &diagnostics)
            let start = offset
            guard offset < bytes.count else { return make(.endOfFile, "", from: start) }
            let byte = bytes[offset]
            offset += 1
            switch classes[Int(byte)] {
            case .punctuation(let kind):
                return make(kind, Self.text(of: kind), from: start)
            case .quote:
                if let token = stringLiteral(from: start, diagnostics: &diagnostics) { return token }
            case .backtick:
                if let token = escapedIdentifier(from: start, diagnostics: &diagnostics) { return token }
            case .digit:
                return number(from: start)
            case .nameStart:
                skipNameBytes()
                return make(.identifier, name(from: start), from: start)
            case .other, .space, .newline, .slash:
                diagnostics.error("unexpected character \(Self.describe(byte))", at: start)
            }
        }
    }

    private mutating func make(_ kind: Token.Kind, _ text: String, from start: Int) -> Token {
        defer { sawNewline = false }
        return Token(
            text: text,
            range: SourceRange(start: start, end: offset),
            docComment: pendingDoc,
            kind: kind,
            isAtLineStart: sawNewline
        )
    }

    /// Skips spaces, newlines and comments, collecting `///` lines for the next token.
    private mutating func skipTrivia(diagnostics: inout DiagnosticSink) {
        if !pendingDoc.isEmpty { pendingDoc = [] }
        while offset < bytes.count {
            switch classes[Int(bytes[offset])] {
            case .newline:
                sawNewline = true
                offset += 1
            case .space:
                offset += 1
            case .slash where peek(1) == UInt8(ascii: "/"):
                let isDoc = peek(2) == UInt8(ascii: "/") && peek(3) != UInt8(ascii: "/")
                let textStart = offset + 3
                while offset < bytes.count, bytes[offset] != UInt8(ascii: "\n"), bytes[offset] != UInt8(ascii: "\r") {
                    offset += 1
                }
                if isDoc {
                    var text = text(min(textStart, offset)..<offset)
                    if text.hasPrefix(" ") { text.removeFirst() }
                    pendingDoc.append(text)
                }
            case .slash where peek(1) == UInt8(ascii: "*"):
                skipBlockComment(diagnostics: &diagnostics)
            default:
                return
            }
        }
    }

    /// Moves past the letters, digits, `_` and non-ASCII bytes that continue a name.
    private mutating func skipNameBytes() {
        while offset < bytes.count {
            switch classes[Int(bytes[offset])] {
            case .nameStart, .digit: offset += 1
            default: return
            }
        }
    }

    /// Skips a `/* … */` comment, which may nest; the depth is a counter, not recursion.
    private mutating func skipBlockComment(diagnostics: inout DiagnosticSink) {
        let start = offset
        var depth = 0
        while offset < bytes.count {
            if bytes[offset] == UInt8(ascii: "/"), peek(1) == UInt8(ascii: "*") {
                depth += 1
                offset += 2
            } else if bytes[offset] == UInt8(ascii: "*"), peek(1) == UInt8(ascii: "/") {
                depth -= 1
                offset += 2
                if depth == 0 { return }
            } else {
                offset += 1
            }
        }
        diagnostics.error("unterminated '/*' comment", at: start, notes: [("add '*/' to close it", offset)])
    }

    /// A string literal, decoded by ``StringLiteralDecoder``; its problems are reported here.
    private mutating func stringLiteral(from start: Int, diagnostics: inout DiagnosticSink) -> Token? {
        let decoded = StringLiteralDecoder.decode(bytes, from: offset, recordingOffsets: false)
        for problem in decoded.problems {
            diagnostics.error(problem.message, at: problem.offset, notes: problem.notes)
        }
        offset = decoded.end
        return make(.string, String(decoding: decoded.value, as: UTF8.self), from: start)
    }

    private mutating func escapedIdentifier(from start: Int, diagnostics: inout DiagnosticSink) -> Token? {
        let nameStart = offset
        skipNameBytes()
        guard offset > nameStart, offset < bytes.count, bytes[offset] == UInt8(ascii: "`") else {
            diagnostics.error("expected a name between backticks, as in `default`", at: start)
            return nil
        }
        let name = text(nameStart..<offset)
        offset += 1
        return make(.escapedIdentifier, name, from: start)
    }

    /// An integer or decimal number: digits, an optional fraction, an optional exponent.
    private mutating func number(from start: Int) -> Token {
        var isFloat = false
        while offset < bytes.count, Self.isDigit(bytes[offset]) || bytes[offset] == UInt8(ascii: "_") {
            offset += 1
        }
        if offset + 1 < bytes.count, bytes[offset] == UInt8(ascii: "."), Self.isDigit(bytes[offset + 1]) {
            isFloat = true
            offset += 1
            while offset < bytes.count, Self.isDigit(bytes[offset]) || bytes[offset] == UInt8(ascii: "_") {
                offset += 1
            }
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
            var end = offset + 1
            if end < bytes.count, bytes[end] == UInt8(ascii: "+") || bytes[end] == UInt8(ascii: "-") { end += 1 }
            if end < bytes.count, Self.isDigit(bytes[end]) {
                isFloat = true
                offset = end
                while offset < bytes.count, Self.isDigit(bytes[offset]) { offset += 1 }
            }
        }
        var digits = text(start..<offset)
        if containsSeparator(start..<offset) { digits = digits.filter { $0 != "_" } }
        return make(isFloat ? .float : .integer, digits, from: start)
    }

    /// Whether a `_` separates digits in the range: filtering a string walks it by `Character`,
    /// which is worth doing only for the rare number that has one.
    private mutating func containsSeparator(_ range: Range<Int>) -> Bool {
        var index = range.lowerBound
        while index < range.upperBound {
            if bytes[index] == UInt8(ascii: "_") { return true }
            index += 1
        }
        return false
    }

    /// The text of the name from `start` to the current offset, from `recentNames` when the same
    /// bytes were seen lately. Names near the end of the file, where 16 bytes cannot be read, and
    /// longer names are decoded every time. (Lengths are subtracted, not `Range.count`: a debug
    /// build ran that through generic code at a cost of three decodings.)
    private mutating func name(from start: Int) -> String {
        let length = offset - start
        guard length <= 15, start + 16 <= bytes.count, let base = bytes.baseAddress else {
            return text(start..<offset)
        }
        let raw = UnsafeRawPointer(base + start)
        var low = UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self))
        var high = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        if length < 8 {
            low &= (1 &<< (UInt64(length) &* 8)) &- 1
            high = 0
        } else {
            high &= (1 &<< (UInt64(length &- 8) &* 8)) &- 1
        }
        let mixed = (low ^ (high &* 0x9E37_79B9_7F4A_7C15) ^ UInt64(length)) &* 0x9E37_79B9_7F4A_7C15
        let slot = recentNames + Int(truncatingIfNeeded: mixed &>> 56)
        if slot.pointee.length == length, slot.pointee.low == low, slot.pointee.high == high {
            return slot.pointee.text
        }
        let text = text(start..<offset)
        slot.pointee = RecentName(length: length, low: low, high: high, text: text)
        return text
    }

    private func text(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// Mutating, like its callers: a debug build would otherwise call it on a copy of the lexer.
    private mutating func peek(_ distance: Int) -> UInt8? {
        let index = offset + distance
        return index >= 0 && index < bytes.count ? bytes[index] : nil
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private static func describe(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F { return "'\(UnicodeScalar(byte))'" }
        let hex = String(byte, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: 4 - hex.count) + hex
    }

    private static func punctuation(_ byte: UInt8) -> Token.Kind? {
        switch byte {
        case UInt8(ascii: "{"): .leftBrace
        case UInt8(ascii: "}"): .rightBrace
        case UInt8(ascii: "("): .leftParen
        case UInt8(ascii: ")"): .rightParen
        case UInt8(ascii: "["): .leftBracket
        case UInt8(ascii: "]"): .rightBracket
        case UInt8(ascii: "<"): .leftAngle
        case UInt8(ascii: ">"): .rightAngle
        case UInt8(ascii: ":"): .colon
        case UInt8(ascii: ";"): .semicolon
        case UInt8(ascii: ","): .comma
        case UInt8(ascii: "="): .equals
        case UInt8(ascii: "?"): .question
        case UInt8(ascii: "@"): .at
        case UInt8(ascii: "."): .dot
        case UInt8(ascii: "-"): .minus
        default: nil
        }
    }

    /// How a punctuation token is written (the inverse of `punctuation(_:)`), as a literal: making
    /// a string from the byte ran through `Character` for every brace and colon.
    private static func text(of punctuation: Token.Kind) -> String {
        switch punctuation {
        case .leftBrace: "{"
        case .rightBrace: "}"
        case .leftParen: "("
        case .rightParen: ")"
        case .leftBracket: "["
        case .rightBracket: "]"
        case .leftAngle: "<"
        case .rightAngle: ">"
        case .colon: ":"
        case .semicolon: ";"
        case .comma: ","
        case .equals: "="
        case .question: "?"
        case .at: "@"
        case .dot: "."
        case .minus: "-"
        default: ""
        }
    }
}
