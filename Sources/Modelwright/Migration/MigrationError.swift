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
    /// After the last stage, a row does not decode with the app's record type (``MigrationPlan/records``):
    /// a value the store's checks cannot judge, such as JSON of another `Codable` type. The stage
    /// rolled back; the store stays at the version before it.
    case undecodableRecord(stage: String, entity: String, attribute: String, row: String, reason: String)
    /// After the stage, rows of `entity` hold a to-one relationship that points at a row of
    /// another entity than its destination (or one below it), in a table several entities share,
    /// or at a row missing from its destination (`found` is `missing`: the row of an entity that
    /// left the destination's hierarchy).
    case wrongRelationshipTarget(
        stage: String, entity: String, relationship: String, row: String, destination: String, found: String,
        rows: Int)
    /// After the stage, an entity that exists in both versions has fewer rows than before, though
    /// nothing declared its rows lost (the stage's code deleted rows of an entity moved to another parent).
    case rowsLost(stage: String, entity: String, before: Int, after: Int)
    /// After the stage, rows of `entity` point through a one-to-one at rows of `destination`
    /// that do not point back through `inverse`: the stage's code set one side only.
    case oneToOneMismatch(
        stage: String, entity: String, relationship: String, row: String, destination: String, inverse: String,
        rows: Int)
    /// After the stage, `rows` links of a relationship both versions have are gone, though the new
    /// version can hold them (both rows exist and fit): the stage's code dropped them, or did not
    /// carry them into the relationship's new shape. `row` and `destination` name the first.
    case linksLost(stage: String, entity: String, relationship: String, rows: Int, row: String, destination: String)
    /// The stage would drop `rows` links of `entity`.`relationship` (by the source version's names)
    /// to rows that leave its destination's hierarchy, and the stage does not declare the loss
    /// (``MigrationStage/losses``): a plan built by hand, or edited, that `plan` never checked.
    /// `row` and `destination` name the first link. The stage was rolled back.
    case undeclaredLinkLoss(
        stage: String, entity: String, relationship: String, rows: Int, row: String, destination: String)
    /// The stage removes `entity`, whose `rows` rows the store holds, and does not declare them
    /// lost (``MigrationStage/losses``): a plan built by hand, or edited, that `plan` never
    /// checked. Found before the stage changed anything; the store is untouched.
    case undeclaredEntityRemoval(stage: String, entity: String, rows: Int)
    /// After a custom stage, the row `row` of `entity` holds JSON in `attribute` that is not of
    /// the shape the stage's destination version declares (`declared`, from its archived schema:
    /// a type spelled with standard types only). Found right after the stage that wrote it, which
    /// was rolled back.
    case wrongJSONShape(stage: String, entity: String, attribute: String, row: String, declared: String, reason: String)
    /// A row ``MigrationTester`` was asked to write does not fit the version it writes at.
    case invalidFixture(entity: String, version: Int, reason: String)
    /// After the stage, rows hold another value of an attribute the step keeps, or another list
    /// of links of a relationship it keeps, than before (found by tools on synthetic rows).
    case keptDataChanged(stage: String, entity: String, property: String, rows: Int)
    /// A historical version's archived schema (see ``SchemaVersion``) could not be decoded.
    case unreadableSchemaArchive(version: Int, reason: String)
    /// A historical version's archive decodes to a schema whose checksum is not the one recorded
    /// beside it: the generated code was edited, or generated by a runtime with another checksum.
    case archivedSchemaMismatch(version: Int, recordedChecksum: String, archiveChecksum: String)

    /// A sentence that says what went wrong and which version or stage it concerns.
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
        case .undecodableRecord(let stage, let entity, let attribute, let row, let reason):
            "migration \(stage) left the \(entity) row \(row) whose '\(attribute)' the app's \(entity) record cannot decode (\(reason)); the stage was rolled back. Convert the value to the new type in the stage's code (its obligation for \(entity).\(attribute), or didMigrate)"
        case .wrongRelationshipTarget(let stage, let entity, let relationship, let row, let target, let found, let rows):
            "migration \(stage) left \(rows) row\(rows == 1 ? "" : "s") of \(entity) whose '\(relationship)' points at a \(found) row where a \(target) is required (the \(entity) row \(row), for one); the stage was rolled back. Point it at a \(target) row in the stage's code"
        case .rowsLost(let stage, let entity, let before, let after):
            "migration \(stage) left \(after) of the \(before) rows of \(entity); the stage was rolled back. The migration moves an entity's rows to its new table with their IDs; the stage's code must not delete them"
        case .oneToOneMismatch(let stage, let entity, let relationship, let row, let target, let inverse, let rows):
            "migration \(stage) left \(rows) row\(rows == 1 ? "" : "s") of \(entity) whose '\(relationship)' points at a \(target) whose '\(inverse)' does not point back (the \(entity) row \(row), for one); the stage was rolled back. A one-to-one keeps both sides: set \(target).\(inverse) too in the stage's code"
        case .linksLost(let stage, let entity, let relationship, let rows, let row, let destination):
            "migration \(stage) lost \(rows) link\(rows == 1 ? "" : "s") of \(entity).\(relationship) that the new version can hold (the \(entity) row \(row) to \(destination), for one); the stage was rolled back. Keep the links in the stage's code, or declare 'lossy \(entity).\(relationship)' (or its inverse, either side of the pair) and remove the relationship if they should go"
        case .undeclaredLinkLoss(let stage, let entity, let relationship, let rows, let row, let destination):
            "migration \(stage) would drop \(rows) link\(rows == 1 ? "" : "s") of \(entity).\(relationship) to rows that leave its destination's hierarchy (the row \(row) to \(destination), for one), and the stage does not declare that loss; the stage was rolled back. Declare 'lossy \(entity).\(relationship) \"why\"' in the step (MigrationStage.losses), or keep the rows below the relationship's destination"
        case .undeclaredEntityRemoval(let stage, let entity, let rows):
            "migration \(stage) would remove \(entity) and its \(rows) row\(rows == 1 ? "" : "s"), and the stage does not declare that loss; the store is untouched. Declare 'lossy \(entity) \"why\"' in the step (MigrationStage.losses), or keep the entity"
        case .wrongJSONShape(let stage, let entity, let attribute, let row, let declared, let reason):
            "migration \(stage) left the \(entity) row \(row) whose '\(attribute)' is not JSON of \(declared): \(reason); the stage was rolled back. Write a value of the declared type in the stage's code (its obligation for \(entity).\(attribute), or didMigrate)"
        case .invalidFixture(let entity, let version, let reason):
            "cannot write a \(entity) row at version \(version): \(reason)"
        case .keptDataChanged(let stage, let entity, let property, let rows):
            "migration \(stage) changed '\(property)' of \(rows) row\(rows == 1 ? "" : "s") of \(entity), which the step keeps"
        case .unreadableSchemaArchive(let version, let reason):
            "the archived schema of version \(version) cannot be read: \(reason); generate the model's code again"
        case .archivedSchemaMismatch(let version, let recorded, let archived):
            "the archived schema of version \(version) has checksum \(archived), not the \(recorded) recorded beside it; generate the model's code again"
        case .schemaMismatch(let stage, let differences):
            "after migration \(stage), the store differs from a fresh store of that version: \(differences.joined(separator: "; "))"
        }
    }
}
