/// What the resolve stage produces for one file: its entity graph, with every name, type,
/// inverse and request resolved and checked, and the file's diagnostics so far.
package struct ResolvedFile: Sendable {
    /// The graph, or `nil` when the file did not parse far enough to build one.
    package let graph: EntityGraph?
    /// The file's diagnostics.
    package var sink: DiagnosticSink

    /// Builds the entity graph of one parsed file.
    package static func resolve(_ parsed: ParsedFile) -> ResolvedFile {
        guard let syntax = parsed.syntax else { return ResolvedFile(graph: nil, sink: parsed.sink) }
        var sink = parsed.sink
        let graph = GraphBuilder.build(syntax, diagnostics: &sink)
        return ResolvedFile(graph: graph, sink: sink)
    }

    /// The pipeline's parse and resolve stages for one file, then the check of its store on its
    /// lowered description (``StoreCheck``): every check of a schema file that needs no other
    /// version.
    package static func compile(_ file: SourceFile) -> ResolvedFile {
        var resolved = resolve(.parse(file))
        if let graph = resolved.graph { StoreCheck.check(graph, diagnostics: &resolved.sink) }
        return resolved
    }

    /// The file checked.
    package var file: SourceFile { sink.file }
    /// The graph, when the file has no error.
    package var validGraph: EntityGraph? { sink.hasErrors ? nil : graph }
    /// The file's diagnostics, in file order.
    package var diagnostics: [Diagnostic] { sink.diagnostics }
}
