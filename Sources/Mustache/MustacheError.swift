/// A problem in a Mustache template, found while parsing or rendering it, with the place it happened.
///
/// Its ``description`` reads the way Xcode and SwiftPM show diagnostics:
///
/// ```
/// Record.mustache:12:5: error: section `attributes` is never closed; add `{{/attributes}}` where it ends
/// ```
///
/// ## Topics
///
/// ### Where
/// - ``templateName``
/// - ``line``
/// - ``column``
///
/// ### What
/// - ``kind``
/// - ``Kind``
/// - ``message``
/// - ``description``
package struct MustacheError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    package enum Kind: Sendable, Equatable {
        /// A tag opens and its closing delimiter never follows.
        case unclosedTag(closing: String)
        /// A section opens and its closing tag never follows.
        case unclosedSection(name: String)
        /// A closing tag appears where no section is open.
        case unexpectedClosingTag(name: String)
        /// A closing tag names a section other than the innermost open one.
        case mismatchedClosingTag(expected: String, found: String)
        /// A tag holds no name.
        case emptyTag
        /// A tag's name holds whitespace, or an empty part between dots.
        case invalidName(String)
        /// A set-delimiter tag does not hold exactly two delimiters.
        case invalidDelimiters(String)
        /// A tag from an optional part of the specification this engine leaves out.
        case unsupportedTag(String)
        /// Sections and partials nest deeper than the engine allows.
        case nestingTooDeep(limit: Int)
        /// An interpolation names a list or an object, which have no text form.
        case notInterpolatable(name: String, kind: String)
    }

    /// What went wrong.
    package let kind: Kind
    /// The name of the template the problem is in, as given to ``MustacheTemplate/init(_:name:)``.
    package let templateName: String
    /// The line of the tag at fault, counted from 1.
    package let line: Int
    /// The column of the tag at fault, counted in characters from 1.
    package let column: Int

    init(_ kind: Kind, in templateName: String, at location: MustacheLocation) {
        self.kind = kind
        self.templateName = templateName
        line = location.line
        column = location.column
    }

    /// What is wrong and how to fix it, in the template author's terms.
    package var message: String {
        switch kind {
        case .unclosedTag(let closing):
            "tag is never closed; add `\(closing)` after its name"
        case .unclosedSection(let name):
            "section `\(name)` is never closed; add `{{/\(name)}}` where it ends"
        case .unexpectedClosingTag(let name):
            "closing tag `/\(name)` has no open section to close; remove it, or open the section with `#\(name)`"
        case .mismatchedClosingTag(let expected, let found):
            "closing tag `/\(found)` does not match the open section `\(expected)`; close `\(expected)` first"
        case .emptyTag:
            "tag has no name; write a name between the delimiters, as in `{{name}}`"
        case .invalidName(let name):
            "`\(name)` is not a valid name; a name has no spaces, and dots only between its parts (`user.name`)"
        case .invalidDelimiters(let content):
            "`\(content)` does not set delimiters; give two delimiters separated by a space, as in `{{=<% %>=}}`"
        case .unsupportedTag(let sigil):
            "`\(sigil)` tags (template inheritance) are not supported; use a partial (`{{>name}}`) instead"
        case .nestingTooDeep(let limit):
            "sections and partials nest more than \(limit) levels deep; "
                + "a partial that includes itself needs data that ends the recursion"
        case .notInterpolatable(let name, let kind):
            "`\(name)` is a \(kind), which has no text to show; "
                + "use a section (`{{#\(name)}}…{{/\(name)}}`) to show its contents"
        }
    }

    /// The problem as `template:line:column: error: message`.
    package var description: String {
        "\(templateName):\(line):\(column): error: \(message)"
    }
}
