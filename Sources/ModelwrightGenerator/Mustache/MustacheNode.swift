/// One step of a parsed template. A template is a flat list of nodes: a section's content is the
/// nodes that follow it, up to its `end`, so the renderer walks indices instead of copying nested
/// node lists for every pass.
enum MustacheNode: Sendable {
    /// Text copied to the output as it is.
    case text(String)
    /// The start of a template line, where a partial included on a standalone line adds that
    /// line's indentation; the engine renders it as nothing everywhere else.
    case lineStart
    /// `{{name}}` (escaped) or `{{{name}}}` and `{{& name}}` (not escaped).
    case variable(MustachePath, escaped: Bool, location: MustacheLocation)
    /// `{{#name}}…{{/name}}` or, inverted, `{{^name}}…{{/name}}`; its content is the nodes after it,
    /// up to the index `end`, where the node after the section starts.
    case section(MustachePath, inverted: Bool, end: Int, location: MustacheLocation)
    /// `{{>name}}`; the indentation is `nil` unless the tag stands alone on its line.
    case partial(name: String, indentation: String?, location: MustacheLocation)
}

/// A name as a tag writes it (`user.name`) and the keys it looks up one after another;
/// the implicit iterator `.` has no keys and means the value on top of the context stack.
struct MustachePath: Sendable {
    /// The name as written, without surrounding whitespace.
    let name: String
    /// The dot-separated parts of the name.
    let keys: [String]
}

/// A position in a template, counted from 1 as editors show it.
struct MustacheLocation: Sendable, Equatable {
    /// The line, from 1.
    let line: Int
    /// The column in characters, from 1.
    let column: Int
}
