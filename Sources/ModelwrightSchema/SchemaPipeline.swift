/// The schema pipeline in one place: source text → ``AST`` → ``EntityGraph`` → `SchemaDescription`.
///
/// ```
/// bytes ──UTF8Check──▶ SourceFile ──Parser──▶ AST.File ──GraphBuilder──▶ EntityGraph ──SchemaLowering──▶ SchemaDescription
///                                                                              └── VersionChecker (across versions, in ModelLoader)
/// ```
package enum SchemaPipeline {
    /// The largest schema file read, in bytes: every check is linear or n·log n, and this keeps
    /// even those within a couple of seconds.
    package static let maximumFileSize = 16 * 1024 * 1024

    /// Parses and resolves one schema file, reporting every problem in it.
    package static func check(_ file: SourceFile) -> (graph: EntityGraph?, diagnostics: [Diagnostic]) {
        let (graph, sink) = compile(file)
        return (sink.hasErrors ? nil : graph, sink.diagnostics)
    }

    /// Parses and resolves one file, keeping the sink so version checks can add to it.
    package static func compile(_ file: SourceFile) -> (EntityGraph?, DiagnosticSink) {
        var sink = DiagnosticSink(file: file)
        guard file.bytes.count <= maximumFileSize else {
            sink.error(
                "the file is \(file.bytes.count) bytes; a schema file may hold at most \(maximumFileSize) bytes (16 MiB)",
                at: 0)
            return (nil, sink)
        }
        if let offset = UTF8Check.firstInvalidOffset(in: file.bytes) {
            sink.error("the file is not valid UTF-8 (byte \(offset)); schema files are UTF-8 text", at: offset)
            return (nil, sink)
        }
        let ast = Parser.parse(file, diagnostics: &sink)
        let graph = GraphBuilder.build(ast, diagnostics: &sink)
        releaseInBackground(ast)
        return (graph, sink)
    }
}

/// Finds where bytes stop being UTF-8, so the error can point at the exact place.
enum UTF8Check {
    static func firstInvalidOffset(in bytes: [UInt8]) -> Int? {
        // Schema files are nearly all ASCII: skip it with a pointer and a counted loop, which even
        // a debug build runs quickly, and decode only from the first byte above 0x7F.
        let asciiPrefix = bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return 0 }
            var offset = 0
            while offset < buffer.count, base[offset] < 0x80 {
                offset += 1
            }
            return offset
        }
        guard asciiPrefix < bytes.count else { return nil }
        var iterator = bytes[asciiPrefix...].makeIterator()
        var decoder = UTF8()
        var offset = asciiPrefix
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): offset += UTF8.width(scalar)
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }
}
