import Foundation

/// A check of each migration stage, inside its transaction: every row of every concrete entity
/// that has a `Codable` attribute decodes with the app's record type.
///
/// The store's own value check (``StoredValues``) judges a column by its storage class, an enum's
/// raw values and a composite's completeness; it cannot know the app's `Codable` types, so JSON
/// that is valid but not the app's type (a `[String]` left where the new version reads a
/// `[String: Int]`) passes it. Only the app's types can tell, and the generated plan passes them
/// (``MigrationPlan/records``): a row they cannot decode fails the stage, which rolls back, so the
/// app keeps a store its previous release reads rather than one whose every fetch throws.
///
/// The records are the current version's; an earlier stage is checked with them for the entities
/// whose columns at its destination are the current version's, so the stage that writes a value
/// is the one that fails, and a later stage cannot hide it.
enum RecordDecodingCheck {
    /// Decodes the rows of the entities of `records` in `layout`, for those whose columns in
    /// `layout` are the ones in `current` and whose table is in `changed` (every table when
    /// `nil`); throws ``MigrationError/undecodableRecord(stage:entity:attribute:row:reason:)`` for
    /// the first row that does not decode.
    static func run(
        _ records: [any Record.Type], layout: SchemaLayout, current: SchemaLayout,
        on connection: some DatabaseConnection,
        stage: String, changed: Set<String>? = nil
    ) throws {
        for record in records {
            guard let entity = layout.entities[record.entityName], let now = current.entities[record.entityName],
                changed?.contains(entity.table) ?? true, sameColumns(entity, now)
            else { continue }
            try decodeEveryRow(of: record, layout: layout, on: connection, stage: stage)
        }
    }

    /// Whether a record of `current` reads the rows of `entity` column for column.
    private static func sameColumns(_ entity: EntityLayout, _ current: EntityLayout) -> Bool {
        entity.table == current.table && entity.hasDiscriminator == current.hasDiscriminator
            && entity.columns.map { [$0.name, $0.key, "\($0.isOptional)", "\(String(describing: $0.type))"] }
                == current.columns.map { [$0.name, $0.key, "\($0.isOptional)", "\(String(describing: $0.type))"] }
    }

    private static func decodeEveryRow<Target: Record>(
        of type: Target.Type, layout: SchemaLayout, on connection: some DatabaseConnection, stage: String
    ) throws {
        // The store's value check already reads every other column by the records' own rules
        // (`StoredValues`); only JSON needs the app's types, so entities without it are skipped.
        guard let entity = layout.entities[Target.entityName], !entity.isAbstract,
            entity.columns.contains(where: { if case .codable? = $0.type { true } else { false } })
        else { return }
        // Exactly this entity's rows: a sub-entity's rows are decoded by its own record type.
        let filter = entity.hasDiscriminator ? " WHERE t0.\"_entity\" = \(SQLSyntax.string(entity.name))" : ""
        let statement = try connection.prepare(
            "SELECT \(entity.selectList) FROM \(quoted(entity.table)) AS t0\(filter)")
        while try statement.step() {
            let uuid = statement.uuid(0)
            var row = RowDecoder(statement: statement, firstIndex: 1)
            do {
                guard let uuid else { throw ColumnValueError(message: "the row has no valid ID") }
                _ = try Target(id: RecordID(uuid), row: &row)
            } catch {
                // Every read moves past its column, even one that throws: the column before the
                // decoder's position is the one that failed.
                let index = Int(row.nextIndex) - 2
                let attribute = entity.columns.indices.contains(index) ? entity.columns[index].property : "id"
                throw MigrationError.undecodableRecord(
                    stage: stage, entity: entity.name, attribute: attribute,
                    row: uuid?.uuidString ?? "without an ID", reason: describe(error))
            }
        }
    }

    /// The decoding error in words: what was expected, and where inside the value.
    private static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        let context: DecodingError.Context
        let what: String
        switch error {
        case .typeMismatch(let type, let found):
            (what, context) = ("expected \(type)", found)
        case .valueNotFound(let type, let found):
            (what, context) = ("no value of \(type)", found)
        case .keyNotFound(let key, let found):
            (what, context) = ("no key '\(key.stringValue)'", found)
        case .dataCorrupted(let found):
            (what, context) = ("the data is corrupted", found)
        @unknown default:
            return "\(error)"
        }
        let path = context.codingPath.map(\.stringValue).joined(separator: ".")
        return what + (path.isEmpty ? "" : " at '\(path)'") + ": " + context.debugDescription
    }
}
