/// Where a migration is: which stage, and how many rows it has copied so far.
public struct MigrationProgress: Sendable, Equatable {
    /// What just happened.
    public enum Event: Sendable, Equatable {
        /// The stage's transaction began.
        case stageStarted
        /// A table was copied into its new shape (`table` names it).
        case tableCopied
        /// The stage's transaction committed: the store is now at `toVersion`.
        case stageCommitted
    }

    /// What just happened.
    public var event: Event
    /// The stage, counted from 1.
    public var stage: Int
    /// How many stages this migration runs.
    public var stageCount: Int
    /// The version the stage starts from.
    public var fromVersion: Int
    /// The version it ends at.
    public var toVersion: Int
    /// The table just copied, for ``Event/tableCopied``.
    public var table: String?
    /// Rows copied in this stage so far.
    public var rowsCopied: Int
}
