import Foundation

/// Row-level access to a store's tables while a custom migration step runs.
///
/// In `willMigrate` the tables have the source version's shape; in `didMigrate` they have the
/// destination's new tables and columns, and the columns and tables the destination removes are
/// still there to read until the step returns. Rows are plain values by column name, as the
/// store keeps them (see ``SQLValue``).
///
/// ```swift
/// func splitNameDidMigrate(_ context: MigrationContext) throws {
///     for user in try context.rows(of: "User") {
///         guard case .text(let name) = user["name"] else { continue }
///         let parts = name.split(separator: " ")
///         try context.update("User", id: user.id, set: [
///             "givenName": .text(parts.dropLast().joined(separator: " ")),
///             "familyName": .text(String(parts.last ?? "")),
///         ])
///     }
/// }
/// ```
///
/// A context is only valid while its step runs; it is not `Sendable`.
public final class MigrationContext {
    /// The version whose entities the context's methods name.
    public let schema: SchemaDescription
    private let layout: SchemaLayout
    private let connection: any DatabaseConnection
    /// In `didMigrate`: the source version's layout, the table each entity the stage removes is
    /// read from by now (its table, moved aside or renamed with the table that continues it), and
    /// those whose rows carry ``displacedValue(of:)`` as their `_entity` (a renamed entity took
    /// their name in their table).
    private let removed: (layout: SchemaLayout, tables: [String: String], displaced: Set<String>)?

    /// How the SQL a step writes is spelled on the store's engine.
    var dialect: any SQLDialect { connection.dialect }

    init(
        connection: some DatabaseConnection, layout: SchemaLayout,
        removed: (layout: SchemaLayout, tables: [String: String], displaced: Set<String>)? = nil
    ) {
        self.connection = connection
        self.layout = layout
        self.removed = removed
        schema = layout.schema
    }

    /// Every row of `entity` (with its sub-entities' rows), each column by name. A property that
    /// sibling entities declare with different types has a column per meaning (`title@Reader`);
    /// each row also holds its own entity's value under the property's name.
    ///
    /// In `didMigrate`, an entity the stage removes is still readable by its name in the source
    /// version, with the columns its table has then, unless the destination has an entity of that
    /// name (read it with ``rows(ofRemoved:)``); its table is dropped after the stage's code
    /// returns, in the same transaction.
    public func rows(of entity: String) throws -> [MigrationRow] {
        var (entityLayout, table, layout) = (layout.entities[entity], layout.entities[entity]?.table, layout)
        var displaced: Set<String> = []
        if entityLayout == nil, let removed, let old = removed.layout.entities[entity],
            let current = removed.tables[entity]
        {
            (entityLayout, table, layout, displaced) = (old, current, removed.layout, removed.displaced)
        }
        guard let entityLayout, let table else { throw StoreError.unknownEntity(entity) }
        return try rows(of: entityLayout, in: table, layout: layout, displaced: displaced)
    }

    /// The rows of `entityLayout` of `layout` (and its sub-entities'), read from `table`; the rows
    /// of the `displaced` entities by their ``displacedValue(of:)``, given back under their names.
    private func rows(
        of entityLayout: EntityLayout, in table: String, layout: SchemaLayout, displaced: Set<String> = []
    ) throws -> [MigrationRow] {
        var filter = ""
        if entityLayout.hasDiscriminator {
            let values = entityLayout.entityNames.map { displaced.contains($0) ? Self.displacedValue(of: $0) : $0 }
            filter = " WHERE t0.\"_entity\" IN (\(values.map(SQLSyntax.string).joined(separator: ", ")))"
        }
        let rows = try query("SELECT * FROM \(quoted(table)) AS t0\(filter)")
        return rows.map { row in
            var row = row
            if case .text(let value) = row["_entity"],
                let name = displaced.first(where: { Self.displacedValue(of: $0) == value })
            {
                row.values["_entity"] = .text(name)
            }
            guard case .text(let name) = row["_entity"], let own = layout.entities[name] else { return row }
            for column in own.columns where column.name != column.key {
                row.values[column.key] = row.values[column.name]
            }
            return row
        }
    }

    /// Every row of `entity`, an entity of the source version that the stage removes (by its name
    /// in the source version), as ``rows(of:)`` reads rows, however the step renames tables: read
    /// it in `didMigrate` when a renamed entity takes over the removed one's name, where
    /// ``rows(of:)`` reads the destination's entity of that name.
    ///
    /// ```swift
    /// // Version 2 removes Note, and Memo is renamed Note: keep the old notes' texts.
    /// func keepTextsDidMigrate(_ context: MigrationContext) throws {
    ///     let texts = try context.rows(ofRemoved: "Note").compactMap { row -> String? in
    ///         guard case .text(let text) = row["text"] else { return nil }
    ///         return text
    ///     }
    ///     for note in try context.rows(of: "Note") {
    ///         try context.update("Note", id: note.id, set: ["oldTexts": .text(texts.joined(separator: "\n"))])
    ///     }
    /// }
    /// ```
    ///
    /// In `willMigrate`, the tables still have the source version's shape, and this reads the
    /// source version's entity as ``rows(of:)`` does.
    ///
    /// - Throws: ``StoreError/unknownEntity(_:)`` when the source version has no such entity, or
    ///   (in `didMigrate`) the stage keeps it.
    public func rows(ofRemoved entity: String) throws -> [MigrationRow] {
        guard let removed else {
            guard layout.entities[entity] != nil else { throw StoreError.unknownEntity(entity) }
            return try rows(of: entity)
        }
        guard let old = removed.layout.entities[entity], let table = removed.tables[entity] else {
            throw StoreError.unknownEntity(entity)
        }
        return try rows(of: old, in: table, layout: removed.layout, displaced: removed.displaced)
    }

    /// The `_entity` value the rows of a removed entity carry during the stage when a renamed
    /// entity takes its name in the table they share.
    static func displacedValue(of entity: String) -> String {
        "_mw_removed_" + entity
    }

    /// Sets columns of the row of `entity` with ID `id`, named as the entity's properties name them.
    public func update(_ entity: String, id: SQLValue, set values: [String: SQLValue]) throws {
        guard !values.isEmpty else { return }
        let entityLayout = try layout.entity(entity)
        let names = values.keys.sorted()
        let columns = names.map(entityLayout.columnName).map { "\(quoted($0)) = \(connection.dialect.parameter)" }
        try execute(
            "UPDATE \(quoted(entityLayout.table)) SET \(columns.joined(separator: ", ")) WHERE \"id\" = \(connection.dialect.parameter)",
            names.map { values[$0] ?? .null } + [id]
        )
    }

    /// Inserts a row of `entity`; `values` must hold every required column, and an `id` made with
    /// ``newID()`` unless the row keeps one it had.
    public func insert(into entity: String, values: [String: SQLValue]) throws {
        let entityLayout = try layout.entity(entity)
        var values = values
        if entityLayout.hasDiscriminator { values["_entity"] = .text(entity) }
        let names = values.keys.sorted()
        let columns = names.map { quoted(entityLayout.columnName($0)) }
        try execute(
            "INSERT INTO \(quoted(entityLayout.table)) (\(columns.joined(separator: ", "))) VALUES (\(connection.dialect.parameters(names.count)))",
            names.map { values[$0] ?? .null }
        )
    }

    /// Deletes the row of `entity` with ID `id`. Delete rules are not applied: the step is
    /// working on raw rows.
    public func delete(from entity: String, id: SQLValue) throws {
        try execute(
            "DELETE FROM \(quoted(try layout.entity(entity).table)) WHERE \"id\" = \(connection.dialect.parameter)",
            [id])
    }

    /// A new record ID as the store keeps it, for ``insert(into:values:)``.
    public func newID() -> SQLValue {
        .blob(withUnsafeBytes(of: UUIDVersion7.next().uuid) { Data($0) })
    }

    /// Runs SQL that returns no rows, with `?` parameters: the way out for what the methods above
    /// do not cover.
    public func execute(_ sql: String, _ arguments: [SQLValue] = []) throws {
        let statement = try connection.prepare(sql)
        for (index, argument) in arguments.enumerated() { statement.bind(argument, Int32(index + 1)) }
        try statement.run()
    }

    /// Runs a query with `?` parameters and returns its rows.
    public func query(_ sql: String, _ arguments: [SQLValue] = []) throws -> [MigrationRow] {
        let statement = try connection.prepare(sql)
        for (index, argument) in arguments.enumerated() { statement.bind(argument, Int32(index + 1)) }
        var rows: [MigrationRow] = []
        var names: [String] = []
        while try statement.step() {
            if rows.isEmpty { names = statement.columnNames }
            var values: [String: SQLValue] = [:]
            for (index, name) in names.enumerated() { values[name] = statement.value(Int32(index)) }
            rows.append(MigrationRow(values: values))
        }
        return rows
    }
}

/// One row read during a migration: its columns' values by name.
public struct MigrationRow: Sendable, Equatable {
    /// Every column's value, by column name (a composite's fields as `home.city`).
    public var values: [String: SQLValue]

    /// The row's ID, as ``MigrationContext/update(_:id:set:)`` takes it.
    public var id: SQLValue { values["id"] ?? .null }

    /// The value of `column`, `.null` when the row has no such column.
    public subscript(column: String) -> SQLValue { values[column] ?? .null }

    /// The `Codable` value `column` holds, decoded from its JSON as `type` (the type the version
    /// that wrote it declared); `nil` when the column holds no value.
    ///
    /// ```swift
    /// let tags = try row.json("tags", as: [String].self) ?? []
    /// ```
    public func json<Value: Decodable>(_ column: String, as type: Value.Type) throws -> Value? {
        let value = self[column]
        if case .null = value { return nil }
        return try RowDecoder.decodeJSON(Value.self, from: value)
    }
}
