/// Collects the diagnostics of one file, in the order found, up to a limit so that junk input
/// (a 10 MB binary, say) gives a readable report instead of millions of lines.
package struct DiagnosticSink: Sendable {
    /// The most errors reported for one file; past it one last error says the rest were dropped.
    package static let errorLimit = 100

    package let file: SourceFile
    private var found: [Diagnostic] = []
    private var errorCount = 0

    package init(file: SourceFile) {
        self.file = file
    }

    /// The diagnostics in file order (stable, so several at one place keep the order found).
    package var diagnostics: [Diagnostic] {
        found.enumerated().sorted { lhs, rhs in
            let left = lhs.element.location ?? SourcePosition(line: 0, column: 0)
            let right = rhs.element.location ?? SourcePosition(line: 0, column: 0)
            return left == right ? lhs.offset < rhs.offset : left < right
        }.map(\.element)
    }

    /// Whether the limit was reached, so callers can stop looking for more.
    package var isFull: Bool { errorCount > Self.errorLimit }

    package var hasErrors: Bool { errorCount > 0 }

    package mutating func error(_ message: String, at offset: Int, notes: [(String, Int)] = []) {
        report(.error, message, at: offset, notes: notes)
    }

    package mutating func warning(_ message: String, at offset: Int, notes: [(String, Int)] = []) {
        report(.warning, message, at: offset, notes: notes)
    }

    /// Adds the diagnostics `other` found for the same file, in order, as if they were reported
    /// here: they count towards this sink's limit, and the error that passes it is replaced by the
    /// "too many errors" one. Lets independent work report into its own sink and merge in a fixed order.
    package mutating func append(_ other: DiagnosticSink) {
        for diagnostic in other.found where admits(diagnostic.severity, at: diagnostic.location) {
            found.append(diagnostic)
        }
    }

    package mutating func report(
        _ severity: Diagnostic.Severity, _ message: String, at offset: Int, notes: [(String, Int)],
        notesElsewhere: [Diagnostic.Note] = []
    ) {
        let location = file.location(of: offset)
        guard admits(severity, at: location) else { return }
        found.append(
            Diagnostic(
                severity: severity,
                message: message,
                path: file.path,
                location: location,
                notes: notes.map { Diagnostic.Note(message: $0.0, path: file.path, location: file.location(of: $0.1)) }
                    + notesElsewhere
            )
        )
    }

    /// Whether a diagnostic may be added: not once the sink is full, and not the error past the
    /// limit, which is replaced by the "too many errors" one, at its location.
    private mutating func admits(_ severity: Diagnostic.Severity, at location: SourcePosition?) -> Bool {
        guard !isFull else { return false }
        guard severity == .error else { return true }
        errorCount += 1
        guard errorCount > Self.errorLimit else { return true }
        found.append(
            Diagnostic(
                severity: .error,
                message: "too many errors (\(Self.errorLimit)); stopped reporting on this file",
                path: file.path,
                location: location
            )
        )
        return false
    }
}
