/// Collects the diagnostics of one file, in the order found, up to a limit so that junk input
/// (a 10 MB binary, say) gives a readable report instead of millions of lines.
///
/// What a diagnostic costs is paid only if it is reported: the message and notes are evaluated
/// only when the sink admits the diagnostic, and a "did you mean" hint (a ``Suggestion``) is
/// searched for only then too. A sink that cannot know yet (``init(file:defersSuggestions:)``,
/// for work done in parallel and merged later) keeps the request and searches when
/// ``append(_:)`` admits the diagnostic into the file's sink. So 10,000 misspelt names cost
/// 100 searches, not 10,000.
package struct DiagnosticSink: Sendable {
    /// The most errors reported for one file; past it one last error says the rest were dropped.
    package static let errorLimit = 100

    package let file: SourceFile
    private var found: [Diagnostic] = []
    private var errorCount = 0
    /// Whether hints wait for ``append(_:)``, by position in `found`.
    private let defersSuggestions: Bool
    private var deferred: [Int: Suggestion] = [:]

    /// A sink for `file`; with `defersSuggestions`, hints are searched for only once another
    /// sink admits this one's diagnostics.
    package init(file: SourceFile, defersSuggestions: Bool = false) {
        self.file = file
        self.defersSuggestions = defersSuggestions
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

    /// Reports an error; `message`, `notes` and `suggesting` are evaluated only if it is admitted.
    package mutating func error(
        _ message: @autoclosure () -> String, at offset: Int, notes: @autoclosure () -> [(String, Int)] = [],
        suggesting suggestion: @autoclosure () -> Suggestion? = nil
    ) {
        report(.error, message, at: offset, notes: notes, suggestion: suggestion)
    }

    /// Reports an error that a released (frozen) version gets as a warning, since it can no longer
    /// change (``relaxForReleasedVersion(_:)``): a rule added after versions were released.
    package mutating func errorUnlessReleased(
        _ message: @autoclosure () -> String, at offset: Int, notes: @autoclosure () -> [(String, Int)] = []
    ) {
        let count = found.count
        report(.error, message, at: offset, notes: notes)
        if found.count > count, found[count].severity == .error { found[count].isRelaxedWhenReleased = true }
    }

    /// Turns the errors reported with ``errorUnlessReleased(_:at:notes:)`` into warnings, each with
    /// `note` at its place: the file is a released version, which users cannot change.
    package mutating func relaxForReleasedVersion(_ note: String) {
        for index in found.indices where found[index].isRelaxedWhenReleased && found[index].severity == .error {
            let old = found[index]
            var relaxed = Diagnostic(
                severity: .warning, message: old.message, path: old.path, location: old.location, notes: old.notes)
            if let location = old.location {
                relaxed = relaxed.adding(Diagnostic.Note(message: note, path: old.path, location: location))
            }
            found[index] = relaxed
            errorCount -= 1
        }
    }

    /// Reports a warning; `message`, `notes` and `suggesting` are evaluated only if it is admitted.
    package mutating func warning(
        _ message: @autoclosure () -> String, at offset: Int, notes: @autoclosure () -> [(String, Int)] = [],
        suggesting suggestion: @autoclosure () -> Suggestion? = nil
    ) {
        report(.warning, message, at: offset, notes: notes, suggestion: suggestion)
    }

    /// Adds the diagnostics `other` found for the same file, in order, as if they were reported
    /// here: they count towards this sink's limit, and the error that passes it is replaced by the
    /// "too many errors" one. Lets independent work report into its own sink and merge in a fixed order.
    package mutating func append(_ other: DiagnosticSink) {
        for (index, diagnostic) in other.found.enumerated()
        where admits(diagnostic.severity, at: diagnostic.location) {
            if let suggestion = other.deferred[index], let note = hint(for: suggestion) {
                found.append(diagnostic.adding(note))
            } else {
                found.append(diagnostic)
            }
        }
    }

    /// Reports a diagnostic; `message`, `notes` and `suggestion` are evaluated only if it is admitted.
    package mutating func report(
        _ severity: Diagnostic.Severity, _ message: () -> String, at offset: Int, notes: () -> [(String, Int)],
        notesElsewhere: [Diagnostic.Note] = [], suggestion: () -> Suggestion? = { nil }
    ) {
        let location = file.location(of: offset)
        guard admits(severity, at: location) else { return }
        var notes = notes().map { Diagnostic.Note(message: $0.0, path: file.path, location: file.location(of: $0.1)) }
        notes += notesElsewhere
        if let suggestion = suggestion() {
            if defersSuggestions {
                deferred[found.count] = suggestion
            } else if let note = hint(for: suggestion) {
                notes.append(note)
            }
        }
        found.append(
            Diagnostic(severity: severity, message: message(), path: file.path, location: location, notes: notes))
    }

    /// The "did you mean" note for a reported diagnostic, if a candidate is close enough.
    private func hint(for suggestion: Suggestion) -> Diagnostic.Note? {
        let closest = Suggestions.closest(to: suggestion.name, among: suggestion.candidates())
        guard let message = closest.map({ "did you mean '\(suggestion.prefix)\($0)'?" }) ?? suggestion.otherwise?()
        else { return nil }
        return Diagnostic.Note(message: message, path: file.path, location: file.location(of: suggestion.offset))
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
