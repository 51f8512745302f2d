/// A model's diagnostics as the stages add to them: first those of the files that did not get
/// through (unreadable files, files with errors, the lock file), then each version's file, in
/// version order.
package struct ModelDiagnostics: Sendable {
    /// Problems outside the versions that got through.
    package var others: [Diagnostic] = []
    /// The diagnostics of each version's file, in version order, once versions are checked.
    package var versions: [DiagnosticSink] = []

    /// No diagnostics yet.
    package init() {}

    /// Every diagnostic, in the order they are printed.
    package var all: [Diagnostic] { others + versions.flatMap(\.diagnostics) }
    /// Whether any diagnostic is an error.
    package var hasErrors: Bool {
        others.contains { $0.severity == .error } || versions.contains(where: \.hasErrors)
    }
}
