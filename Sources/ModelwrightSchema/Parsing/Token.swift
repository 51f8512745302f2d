/// One lexical token of a schema file.
struct Token: Sendable {
    enum Kind: Sendable, Equatable {
        /// A name; keywords such as `entity` are names the parser recognises by position.
        case identifier
        /// A name written in backticks, which is never read as a keyword.
        case escapedIdentifier
        case integer
        case float
        case string
        case leftBrace, rightBrace, leftParen, rightParen, leftBracket, rightBracket
        case leftAngle, rightAngle, colon, semicolon, comma, equals, question, at, dot, minus
        case endOfFile
    }

    // The one-byte fields come last: declared first, `kind` was padded to eight bytes and the token
    // took 56 bytes instead of 48, in an array of one token per five bytes of schema.

    /// The token's value: a name without backticks, a string literal's decoded text, a number's digits.
    let text: String
    let range: SourceRange
    /// The `///` lines right before the token, without the slashes.
    let docComment: [String]
    let kind: Kind
    /// Whether the token is the first on its line; the parser uses it to tell a property's trailing
    /// annotations from entity-level ones and to resynchronise after an error.
    let isAtLineStart: Bool

    /// Whether the token is the unescaped word `word`.
    func isKeyword(_ word: String) -> Bool {
        kind == .identifier && text == word
    }

    var isName: Bool { kind == .identifier || kind == .escapedIdentifier }

    /// How the token reads in an error message.
    var spelling: String {
        switch kind {
        case .endOfFile: "end of file"
        case .string: "string literal"
        case .identifier, .integer, .float: "`\(text)`"
        case .escapedIdentifier: "`\(text)`"
        default: "'\(text)'"
        }
    }
}
