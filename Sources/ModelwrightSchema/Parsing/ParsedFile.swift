/// What the parse stage produces for one file: its syntax tree, and the file's diagnostics so far.
package struct ParsedFile: Sendable {
    /// The syntax tree, or `nil` when the bytes are not schema text at all (too large, not UTF-8).
    package let syntax: AST.Root?
    /// The file's diagnostics.
    package var sink: DiagnosticSink

    /// Parses one file, reporting every syntax error in it.
    package static func parse(_ file: SourceFile) -> ParsedFile {
        var sink = DiagnosticSink(file: file)
        guard file.bytes.count <= SourceFile.maximumSize else {
            sink.error(
                "the file is \(file.bytes.count) bytes; a schema file may hold at most \(SourceFile.maximumSize) bytes (16 MiB)",
                at: 0)
            return ParsedFile(syntax: nil, sink: sink)
        }
        if let offset = UTF8Check.firstInvalidOffset(in: file.bytes) {
            sink.error("the file is not valid UTF-8 (byte \(offset)); schema files are UTF-8 text", at: offset)
            return ParsedFile(syntax: nil, sink: sink)
        }
        let syntax = Parser.parse(file, diagnostics: &sink)
        return ParsedFile(syntax: syntax, sink: sink)
    }
}

/// Finds where bytes stop being UTF-8, so the error can point at the exact place.
enum UTF8Check {
    static func firstInvalidOffset(in bytes: [UInt8]) -> Int? {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var offset = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): offset += UTF8.width(scalar)
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }
}
