/// A Mustache template, parsed once and rendered any number of times.
///
/// The engine implements the required modules of the Mustache specification (interpolation,
/// sections, inverted sections, comments, partials, set delimiters), standalone lines and partial
/// indentation included. Lambdas, dynamic names and template inheritance are left out: the data
/// is plain ``MustacheValue``s that the generator computes beforehand.
///
/// ```swift
/// let record = try MustacheTemplate(
///     """
///     package struct {{name}}: Record {
///         {{#attributes}}
///         package let {{name}}: {{type}}
///         {{/attributes}}
///     }
///     """,
///     name: "Record.mustache"
/// )
/// let source = try record.render([
///     "name": "User",
///     "attributes": [["name": "username", "type": "String"]],
/// ])
/// ```
///
/// Parsing reports a malformed template (an unclosed tag or section, a closing tag that does not
/// match, a bad set-delimiter tag) as a ``MustacheError`` with the template's name, line and column.
///
/// `{{name}}` escapes `&`, `"`, `<` and `>` for HTML, as the specification requires; templates
/// that write Swift should use `{{{name}}}` or `{{& name}}`, which insert text unchanged.
///
/// ## Topics
///
/// ### Parsing
/// - ``init(_:name:)``
/// - ``name``
///
/// ### Rendering
/// - ``render(_:partials:)``
package struct MustacheTemplate: Sendable {
    /// How many levels deep sections and partials may nest. Partials may include themselves (to
    /// render a tree, say); this bound turns a recursion the data never ends into an error.
    static let maximumDepth = 100

    /// The name errors use to point at this template, typically its file name.
    package let name: String
    /// The parsed template.
    let program: MustacheProgram

    /// Parses a template.
    ///
    /// - Parameters:
    ///   - source: The template text.
    ///   - name: The name errors show for this template, typically its file name.
    /// - Throws: ``MustacheError`` when the template is malformed.
    package init(_ source: String, name: String = "template") throws(MustacheError) {
        self.name = name
        program = try MustacheParser(source: source, templateName: name).parse()
    }

    /// Renders the template.
    ///
    /// - Parameters:
    ///   - context: The data that tags look up.
    ///   - partials: The templates `{{>name}}` tags include, by name. A missing partial renders
    ///     as nothing, as the specification asks.
    /// - Returns: The rendered text.
    /// - Throws: ``MustacheError`` when sections and partials nest more than 100 levels deep, or
    ///   when `{{name}}` names a list or an object, which have no text form.
    package func render(_ context: MustacheValue, partials: [String: MustacheTemplate] = [:]) throws(MustacheError)
        -> String
    {
        var renderer = MustacheRenderer(context: context, partials: partials)
        try renderer.render(program)
        return renderer.output
    }
}
