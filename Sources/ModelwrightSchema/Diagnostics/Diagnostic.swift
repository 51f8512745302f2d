/// A problem found in a schema, located in its file, in the format Xcode and SwiftPM show inline.
///
/// ```
/// Models/Trips/Trips.v2.model:14:16: error: unknown type 'Organisation'
/// Models/Trips/Trips.v2.model:14:16: note: did you mean 'Organization'?
/// ```
public struct Diagnostic: Sendable, Equatable, CustomStringConvertible {
    /// How serious a diagnostic is.
    public enum Severity: String, Sendable, Equatable {
        /// The model cannot be used.
        case error
        /// The model can be used, but probably not as meant.
        case warning
        /// Extra information attached to an error or warning.
        case note
    }

    /// A secondary message, such as a fix-it hint or where a conflicting declaration is.
    public struct Note: Sendable, Equatable {
        /// The note's text.
        public let message: String
        /// The file the note points into.
        public let path: String
        /// Where the note points.
        public let location: SourcePosition

        /// Creates a note; the message is made safe to print by ``DiagnosticText``.
        package init(message: String, path: String, location: SourcePosition) {
            self.message = DiagnosticText.escaped(message)
            self.path = path
            self.location = location
        }
    }

    /// Error or warning.
    public let severity: Severity
    /// What is wrong, in the user's terms.
    public let message: String
    /// The file the problem is in.
    public let path: String
    /// Where in the file; `nil` for a problem with a whole file or folder.
    public let location: SourcePosition?
    /// Hints and related places.
    public private(set) var notes: [Note]
    /// Whether the error comes from a rule newer than some released versions, which a frozen
    /// version (one its users' stores were created with, and that can no longer change) gets as
    /// a warning instead (``DiagnosticSink/relaxForReleasedVersion(_:)``).
    package var isRelaxedWhenReleased = false

    /// Creates a diagnostic; the message is made safe to print by ``DiagnosticText``, so text
    /// echoed from the input can never move the cursor, reorder the line or flood the terminal.
    package init(severity: Severity, message: String, path: String, location: SourcePosition?, notes: [Note] = []) {
        self.severity = severity
        self.message = DiagnosticText.escaped(message)
        self.path = path
        self.location = location
        self.notes = notes
    }

    /// The same diagnostic with one more note (a hint found once the diagnostic was admitted).
    package func adding(_ note: Note) -> Diagnostic {
        var copy = self
        copy.notes.append(note)
        return copy
    }

    /// The diagnostic and its notes, one `path:line:column: severity: message` line each. Paths
    /// come from the file system, which may hold any byte: they are escaped here, when printed.
    public var description: String {
        let shownPath = DiagnosticText.escapedPath(path)
        let place = location.map { "\(shownPath):\($0)" } ?? shownPath
        var lines = ["\(place): \(severity.rawValue): \(message)"]
        for note in notes {
            lines.append("\(DiagnosticText.escapedPath(note.path)):\(note.location): note: \(note.message)")
        }
        return lines.joined(separator: "\n")
    }
}

/// A position in a schema file.
public struct SourcePosition: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The line, from 1.
    public let line: Int
    /// The column, from 1, in UTF-8 bytes.
    public let column: Int

    /// Creates a location.
    package init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    /// `line:column`.
    public var description: String { "\(line):\(column)" }

    /// Earlier in the file.
    public static func < (lhs: SourcePosition, rhs: SourcePosition) -> Bool {
        (lhs.line, lhs.column) < (rhs.line, rhs.column)
    }
}
