/// What can stop a migration. Whatever the error, the store is left at the last version whose
/// stage committed.
public enum MigrationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The store's checksum starts no chain of stages to the current version: the store was
    /// written by a newer app, or by a version this app does not know. The file is untouched.
    case unknownStoreVersion(storeChecksum: String, storeVersion: Int?, knownChecksums: [String])
    /// The plan itself is inconsistent.
    case invalidPlan(String)
    /// A required column still holds `NULL` in some rows when the stage ends.
    case missingValues(stage: String, table: String, column: String, rows: Int)
    /// A row refers to a row that does not exist when the stage ends.
    case foreignKeyViolation(stage: String, table: String, parent: String, rows: Int)
    /// After the stage, the store's schema differs from a fresh store of the version it reached.
    case schemaMismatch(stage: String, differences: [String])
    /// After the stage, rows of an entity hold values its record cannot read: a type change the
    /// stage did not convert, or a required value it left empty.
    case unreadableValues(stage: String, entity: String, attribute: String, rows: Int)

    public var description: String {
        switch self {
        case .unknownStoreVersion(let checksum, let version, let known):
            "the store has schema checksum \(checksum)\(version.map { " (version \($0))" } ?? ""), which is not a version this app can migrate from; it may come from a newer app. Known checksums: \(known.joined(separator: ", ")). The store was left untouched."
        case .invalidPlan(let reason):
            "invalid migration plan: \(reason)"
        case .missingValues(let stage, let table, let column, let rows):
            "migration \(stage) left \(rows) row\(rows == 1 ? "" : "s") of \(table) without a value for the required column '\(column)'; a custom stage must fill it"
        case .foreignKeyViolation(let stage, let table, let parent, let rows):
            "migration \(stage) left \(rows) row\(rows == 1 ? "" : "s") of \(table) pointing at missing rows of \(parent)"
        case .unreadableValues(let stage, let entity, let attribute, let rows):
            "migration \(stage) left \(rows) row\(rows == 1 ? "" : "s") of \(entity) whose '\(attribute)' the new version cannot read; a custom stage must convert them"
        case .schemaMismatch(let stage, let differences):
            "after migration \(stage), the store differs from a fresh store of that version: \(differences.joined(separator: "; "))"
        }
    }
}
