import Foundation

/// What a stage promises to keep, read before it runs and compared after: the values of every
/// attribute the same entity declares in both versions with the same type, and the links of
/// every relationship it keeps (to-one columns, to-many through the inverse's column or a join
/// table, ordered ones in their order), for the rows that exist on both sides.
///
/// Tools run it around a stage on ``SyntheticRows``, so a step that would reorder a list, drop a
/// link or change a kept value in a table rebuild fails at generation time, not on a device.
/// What a custom stage's obligation writes is the app's to decide and is left out.
struct KeptData {
    /// One thing kept: the query that reads it in each version, as (row ID, value) pairs in order.
    private struct Item {
        let entity: String
        let property: String
        let before: String
        let after: String
        /// The rows (or, for a link, the rows it leads to) that exist on both sides.
        let rows: (before: String, after: String)
        let targets: (before: String, after: String)?
    }

    private let items: [Item]
    private var read: [[SQLValue: [SQLValue]]] = []
    private var rowsBefore: [[SQLValue]] = []
    private var targetsBefore: [[SQLValue]?] = []

    /// The items of a stage from `source` to `destination`; `owed` lists the (entity, property)
    /// pairs obligations write (`nil` property: the whole entity); `lossy` says the step declares a
    /// relationship's loss (by the source version's entity and relationship names), whose links
    /// are then not kept.
    init(
        source: SchemaLayout, destination: SchemaLayout, owed: [(entity: String, property: String?)],
        lossy: (String, String) -> Bool = { _, _ in false }
    ) {
        var items: [Item] = []
        for entity in destination.schema.entities {
            guard let new = destination.entities[entity.name],
                let oldEntity = source.schema.entity(named: entity.renamedFrom ?? entity.name),
                let old = source.entities[oldEntity.name]
            else { continue }
            let family = Set(new.entityNames)
            func isOwed(_ property: String) -> Bool {
                owed.contains { owed in
                    (owed.property == nil || owed.property == property)
                        && (family.contains(owed.entity)
                            || destination.entities[owed.entity].map { !family.isDisjoint(with: $0.entityNames) }
                                == true)
                }
            }
            let rows = (Self.rows(of: old), Self.rows(of: new))
            for attribute in entity.attributes where !isOwed(attribute.name) {
                let oldName = attribute.renamedFrom ?? attribute.name
                guard let before = oldEntity.attributes.first(where: { $0.name == oldName }),
                    before.type == attribute.type
                else { continue }
                for column in new.columns where column.property == attribute.name {
                    let oldColumn = oldName + column.name.dropFirst(attribute.name.count)
                    guard old.columns.contains(where: { $0.name == oldColumn }) else { continue }
                    items.append(
                        Item(
                            entity: entity.name, property: column.name,
                            before: Self.values(oldColumn, of: old), after: Self.values(column.name, of: new),
                            rows: rows, targets: nil))
                }
            }
            for relationship in entity.relationships where !isOwed(relationship.name) {
                // Code owed for the inverse changes the same links.
                if let inverse = relationship.inverse, let target = destination.entities[relationship.destination],
                    owed.contains(where: { owed in
                        (owed.property == nil || owed.property == inverse)
                            && destination.entities[owed.entity].map {
                                !Set(target.entityNames).isDisjoint(with: $0.entityNames)
                            } == true
                    })
                {
                    continue
                }
                let oldName = relationship.renamedFrom ?? relationship.name
                guard
                    let before = oldEntity.relationships.first(where: {
                        $0.name == oldName && $0.cardinality == relationship.cardinality
                            && $0.isOrdered == relationship.isOrdered
                    }),
                    !lossy(oldEntity.name, oldName), before.inverse.map({ lossy(before.destination, $0) }) != true,
                    let newTarget = destination.entities[relationship.destination],
                    let oldTarget = source.entities[before.destination],
                    destination.schema.entity(named: relationship.destination).map({ $0.renamedFrom ?? $0.name })
                        == before.destination,
                    let readBefore = Self.links(before, of: old, in: source),
                    let readAfter = Self.links(relationship, of: new, in: destination)
                else { continue }
                items.append(
                    Item(
                        entity: entity.name, property: relationship.name,
                        before: readBefore, after: readAfter, rows: rows,
                        targets: (Self.rows(of: oldTarget), Self.rows(of: newTarget))))
            }
        }
        self.items = items
    }

    /// Reads every item in the source version's store.
    mutating func readBefore(_ connection: some DatabaseConnection) throws {
        read = try items.map { try Self.pairs($0.before, connection) }
        rowsBefore = try items.map { try Self.ids($0.rows.before, connection) }
        targetsBefore = try items.map { item in try item.targets.map { try Self.ids($0.before, connection) } }
    }

    /// Compares every item with what was read before; throws for the first that changed.
    func compare(_ connection: some DatabaseConnection, stage: String) throws {
        for (index, item) in items.enumerated() {
            let after = try Self.pairs(item.after, connection)
            let rows = Set(rowsBefore[index]).intersection(try Self.ids(item.rows.after, connection))
            let targets = try item.targets.map {
                Set(targetsBefore[index] ?? []).intersection(try Self.ids($0.after, connection))
            }
            var changed = 0
            for row in rows {
                // Both queries list an unordered relationship's links in ID order.
                let expected = (read[index][row] ?? []).filter { $0 != .null && targets?.contains($0) != false }
                let actual = (after[row] ?? []).filter { $0 != .null }
                if item.targets != nil && expected.isEmpty && actual.isEmpty { continue }
                if item.targets == nil && expected.isEmpty { continue }
                if expected != actual { changed += 1 }
            }
            if changed > 0 {
                throw MigrationError.keptDataChanged(
                    stage: stage, entity: item.entity, property: item.property, rows: changed)
            }
        }
    }

    // MARK: - Queries

    private static func rows(of entity: EntityLayout) -> String {
        "SELECT t0.\"id\" FROM \(quoted(entity.table)) AS t0"
            + (entity.discriminatorSQL(alias: "t0").map { " WHERE " + $0 } ?? "")
    }

    private static func values(_ column: String, of entity: EntityLayout) -> String {
        "SELECT t0.\"id\", t0.\(quoted(column)) FROM \(quoted(entity.table)) AS t0"
            + (entity.discriminatorSQL(alias: "t0").map { " WHERE " + $0 } ?? "")
    }

    /// The query for a relationship's links as (source ID, destination ID), in order.
    private static func links(
        _ relationship: RelationshipDescription, of entity: EntityLayout, in layout: SchemaLayout
    ) -> String? {
        guard relationship.cardinality == .toMany else {
            guard entity.columns.contains(where: { $0.name == relationship.name }) else { return nil }
            return values(relationship.name, of: entity)
        }
        guard let destination = layout.entities[relationship.destination],
            let storage = try? layout.storage(of: relationship, from: entity)
        else { return nil }
        switch storage {
        case .inverseColumn(let inverse, let position):
            let filter = destination.discriminatorSQL(alias: "d").map { " AND " + $0 } ?? ""
            return
                "SELECT d.\(quoted(inverse)), d.\"id\" FROM \(quoted(destination.table)) AS d WHERE d.\(quoted(inverse)) IS NOT NULL\(filter) ORDER BY d.\(quoted(inverse)), \(position.map { "d." + quoted($0) + ", " } ?? "")d.\"id\""
        case .joinTable(let table, let source, let target, let position):
            return
                "SELECT j.\(quoted(source)), j.\(quoted(target)) FROM \(quoted(table)) AS j ORDER BY j.\(quoted(source)), \(position.map { "j." + quoted($0) + ", " } ?? "")j.\(quoted(target))"
        }
    }

    private static func pairs(_ sql: String, _ connection: some DatabaseConnection) throws -> [SQLValue: [SQLValue]] {
        let statement = try connection.prepare(sql)
        var result: [SQLValue: [SQLValue]] = [:]
        while try statement.step() { result[statement.value(0), default: []].append(statement.value(1)) }
        return result
    }

    private static func ids(_ sql: String, _ connection: some DatabaseConnection) throws -> [SQLValue] {
        let statement = try connection.prepare(sql)
        var result: [SQLValue] = []
        while try statement.step() { result.append(statement.value(0)) }
        return result
    }
}
