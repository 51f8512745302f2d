/// Collects the diagnostics of one file, in the order found, up to a limit so that junk input
/// (a 10 MB binary, say) gives a readable report instead of millions of lines.
struct DiagnosticSink: Sendable {
    /// The most errors reported for one file; past it one last error says the rest were dropped.
    static let errorLimit = 100

    let file: SourceFile
    private var found: [Diagnostic] = []
    private var errorCount = 0

    init(file: SourceFile) {
        self.file = file
    }

    /// The diagnostics in file order (stable, so several at one place keep the order found).
    var diagnostics: [Diagnostic] {
        found.enumerated().sorted { lhs, rhs in
            let left = lhs.element.location ?? SourcePosition(line: 0, column: 0)
            let right = rhs.element.location ?? SourcePosition(line: 0, column: 0)
            return left == right ? lhs.offset < rhs.offset : left < right
        }.map(\.element)
    }

    /// Whether the limit was reached, so callers can stop looking for more.
    var isFull: Bool { errorCount > Self.errorLimit }

    var hasErrors: Bool { errorCount > 0 }

    mutating func error(_ message: String, at offset: Int, notes: [(String, Int)] = []) {
        report(.error, message, at: offset, notes: notes)
    }

    mutating func warning(_ message: String, at offset: Int, notes: [(String, Int)] = []) {
        report(.warning, message, at: offset, notes: notes)
    }

    /// Adds the diagnostics `other` found for the same file, in order, as if they were reported
    /// here: they count towards this sink's limit, and the error that passes it is replaced by the
    /// "too many errors" one. Lets independent work report into its own sink and merge in a fixed order.
    mutating func append(_ other: DiagnosticSink) {
        for diagnostic in other.found {
            guard !isFull else { return }
            if diagnostic.severity == .error {
                errorCount += 1
                if errorCount > Self.errorLimit {
                    found.append(
                        Diagnostic(
                            severity: .error,
                            message: "too many errors (\(Self.errorLimit)); stopped reporting on this file",
                            path: file.path,
                            location: diagnostic.location
                        )
                    )
                    return
                }
            }
            found.append(diagnostic)
        }
    }

    mutating func report(
        _ severity: Diagnostic.Severity, _ message: String, at offset: Int, notes: [(String, Int)],
        notesElsewhere: [Diagnostic.Note] = []
    ) {
        guard !isFull else { return }
        if severity == .error {
            errorCount += 1
            if errorCount > Self.errorLimit {
                found.append(
                    Diagnostic(
                        severity: .error,
                        message: "too many errors (\(Self.errorLimit)); stopped reporting on this file",
                        path: file.path,
                        location: file.location(of: offset)
                    )
                )
                return
            }
        }
        found.append(
            Diagnostic(
                severity: severity,
                message: message,
                path: file.path,
                location: file.location(of: offset),
                notes: notes.map { Diagnostic.Note(message: $0.0, path: file.path, location: file.location(of: $0.1)) }
                    + notesElsewhere
            )
        )
    }
}
