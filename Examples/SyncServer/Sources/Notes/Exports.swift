@_exported import Modelwright

/// The custom migration stages of the Notes model: version 1 has none.
public struct NotesStages: NotesMigrations {
    /// The stages (none).
    public init() {}
}
