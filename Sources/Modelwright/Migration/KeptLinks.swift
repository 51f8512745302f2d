import Foundation

/// The links of the relationships a stage keeps (present in both versions, by name or
/// `@renamed`), read before the stage changes anything: the migrator writes them into the new
/// storage when a relationship's links move (a to-one becoming to-many moves them to a join
/// table, a one-to-many becoming many-to-many too), and after the stage every old link that the
/// new shape can hold must still be there.
///
/// A link the new shape can hold is one whose two rows still exist, whose destination row is of
/// the new destination entity (or one below it: narrowing `Set<Animal>` to `Set<Cat>` drops the
/// links to dogs), and that does not share a to-one side with another link (a to-many narrowed
/// to a to-one cannot keep a row's several links; the planner asks for `lossy` or a stage there).
/// The app's code may add links, and move one by giving a side that holds one link another
/// (a pet given to another owner); it may not drop one of those silently.
struct KeptLinks {
    /// Where a relationship's links are stored, from its own side.
    private enum Storage: Equatable {
        /// `column` of `table` holds the destination's ID in the source's row.
        case toOne(table: String, column: String)
        /// `column` of `table` (the destination's) holds the source's ID, with a position column
        /// when the relationship is ordered.
        case inverseColumn(table: String, column: String, position: String?)
        /// A join table, with this side's column and the other side's.
        case joinTable(table: String, source: String, destination: String)

        /// The table the links are written to.
        var table: String {
            switch self {
            case .toOne(let table, _), .inverseColumn(let table, _, _), .joinTable(let table, _, _): table
            }
        }
    }

    /// One relationship of both versions.
    private struct Kept {
        /// The destination entity and relationship names, for errors.
        let entity: String
        let relationship: String
        /// The temporary table its old links are kept in: (`src`, `dst`, `pos`).
        let links: String
        let old: Storage
        let new: Storage
        /// The new version's source and destination entities.
        let source: EntityLayout
        let destination: EntityLayout
        /// Whether a source row (`perSource`) or a destination row (`perDestination`) holds at
        /// most one link in the new version.
        let perSource: Bool
        let perDestination: Bool
        let isOrdered: Bool
        /// Whether the old and new storage differ, so the migrator writes the links again.
        let moves: Bool
        /// Whether the step declares the relationship lossy, so its links are carried, not checked.
        let mayLose: Bool
    }

    /// One side of a kept relationship whose destination rows of some entities leave its
    /// destination's hierarchy in the stage (their entity is removed, or given a parent outside
    /// it): the links to those rows have nowhere to go, wherever the foreign key holding them sits
    /// (on the departing row itself, on the other row, or in a join table).
    private struct Departure {
        /// The source version's entity and relationship names, as a `lossy` line names them.
        let entity: String
        let relationship: String
        let old: Storage
        /// The old destination's table, and the source version's entities whose rows leave it.
        let table: String
        let leaving: [String]
        /// Whether the step declares the loss: the links are then cleared before the stage (a
        /// key set to NULL with its position, a join row deleted), so a row that stays in the same
        /// table keeps no stale key that a later version would read as a link again.
        let declared: Bool
        /// Whether the leaving rows are the relationship's source rows (a declared loss only): a
        /// row leaving the entity that declares the relationship takes its links along.
        var onSource = false
    }

    private let kept: [Kept]
    private let departures: [Departure]

    /// The relationships of a stage from `source` to `destination` whose links are read: every
    /// kept one when `all` (a stage with the app's code, which may write anywhere), otherwise
    /// those whose links move. A relationship `lossy` says may lose links (by the source
    /// version's entity and relationship names, ``MigrationStage/losses``; either side of a pair
    /// with an inverse) is left unchecked
    /// unless its links move, and then only carried.
    ///
    /// Every side of a kept relationship is also checked for links to rows that leave its
    /// destination's hierarchy (``read(_:stage:)`` refuses them unless declared): `entityLost`
    /// says the step declares a whole entity lost (`lossy Cat`, by the source version's name, or
    /// an ancestor's), which accounts for the links of its rows.
    init(
        source: SchemaLayout, destination: SchemaLayout, mapping: TableMapping, all: Bool,
        lossy: (String, String) -> Bool = { _, _ in false }, entityLost: (String) -> Bool = { _ in false }
    ) {
        var kept: [Kept] = []
        var departures: [Departure] = []
        // The destination's entity continuing each source entity, by the source's name.
        let continuing = Dictionary(
            destination.schema.entities.map { ($0.renamedFrom ?? $0.name, $0.name) },
            uniquingKeysWith: { first, _ in first })
        for description in destination.schema.entities {
            guard let entity = destination.entities[description.name],
                let oldEntity = source.entities[description.renamedFrom ?? description.name]
            else { continue }
            for relationship in description.relationships {
                let oldName = relationship.renamedFrom ?? relationship.name
                guard let old = oldEntity.relationships.first(where: { $0.name == oldName }) else { continue }
                let oldStorage = Self.storage(of: old, from: oldEntity, in: source)
                // Either side of a pair declares its loss: a link is one fact, held by both.
                // A relationship declared on an ancestor is declared lossy by the ancestor's name (a
                // relationship moved down to a sub-entity: `lossy Item.tags`).
                let oldOwner = oldEntity.relationshipOwners[oldName] ?? oldEntity.name
                let declared =
                    lossy(oldEntity.name, oldName) || lossy(oldOwner, oldName)
                    || old.inverse.map { lossy(old.destination, $0) } == true
                // The rows below the old destination whose entity is gone or no longer below it
                // (by the old destination's own continuation: narrowing the relationship to a
                // sub-entity is the relationship's change, not a row's departure).
                if let oldTarget = source.entities[old.destination],
                    let newTarget = continuing[old.destination].flatMap({ destination.entities[$0] }),
                    let held = oldStorage ?? Self.keyOnDestination(of: old, in: source)
                {
                    let below = Set(newTarget.entityNames)
                    let leaving = oldTarget.entityNames.filter { name in
                        guard source.entities[name]?.isAbstract == false, declared || !entityLost(name) else {
                            return false
                        }
                        return continuing[name].map { !below.contains($0) } ?? true
                    }
                    if !leaving.isEmpty, oldTarget.hasDiscriminator {
                        departures.append(
                            Departure(
                                entity: oldEntity.name, relationship: oldName, old: held,
                                table: oldTarget.table, leaving: leaving, declared: declared))
                    }
                }
                // The rows of the old source whose entity is gone or no longer below the new one.
                // Those are the rows of the entity that declared it (an ancestor's rows hold it too).
                if declared, let ownerLayout = source.entities[oldOwner], ownerLayout.hasDiscriminator,
                    let held = oldStorage ?? Self.keyOnDestination(of: old, in: source)
                {
                    let below = Set(entity.entityNames)
                    let leaving = ownerLayout.entityNames.filter { name in
                        source.entities[name]?.isAbstract == false
                            && continuing[name].map { !below.contains($0) } ?? true
                    }
                    if !leaving.isEmpty {
                        departures.append(
                            Departure(
                                entity: oldEntity.name, relationship: oldName, old: held, table: oldEntity.table,
                                leaving: leaving, declared: true, onSource: true))
                    }
                }
                guard let target = destination.entities[relationship.destination], let oldStorage,
                    let newStorage = Self.storage(of: relationship, from: entity, in: destination)
                else { continue }
                let moves = !Self.same(oldStorage, newStorage, mapping: mapping)
                // A join table that passes to the other side keeps its rows but trades its columns:
                // the links are compared by meaning (which row links to which) after the stage, as a
                // rename alone once left each link the other way round with the schema unchanged.
                let tradesSides = Self.tradesSides(oldStorage, newStorage, mapping: mapping)
                guard (all && !declared) || moves || (tradesSides && !declared) else { continue }
                let inverse = relationship.inverse.flatMap { name in target.relationships.first { $0.name == name } }
                kept.append(
                    Kept(
                        entity: entity.name, relationship: relationship.name, links: "_mw_links_\(kept.count)",
                        old: oldStorage, new: newStorage, source: entity, destination: target,
                        perSource: relationship.cardinality == .toOne, perDestination: inverse?.cardinality == .toOne,
                        isOrdered: relationship.isOrdered, moves: moves, mayLose: declared))
            }
        }
        // An ordered side writes a shared join table first, so its places are the ones kept.
        self.kept = kept.sorted { $0.isOrdered && !$1.isOrdered }
        self.departures = departures
    }

    /// Whether any relationship's links are read.
    var isEmpty: Bool { kept.isEmpty }

    /// Refuses the stage when a kept relationship holds links to rows that leave its destination's
    /// hierarchy and the step does not declare that loss, then copies the old links of every kept
    /// relationship into temporary tables; runs before the stage changes the store.
    ///
    /// The links are read from the relationship's old storage, whichever side holds the foreign
    /// key: a hand-built plan cannot lose them by deleting or moving the row that holds them.
    func read(_ connection: some DatabaseConnection, stage: String) throws {
        for departure in departures where departure.declared { try clear(departure, connection) }
        for departure in departures where !departure.declared {
            let leaving = departure.leaving.map(SQLSyntax.string).joined(separator: ", ")
            let statement = try connection.prepare(
                "SELECT count(*), min(\(connection.dialect.literal(of: "l.\"src\""))), "
                    + "min(\(connection.dialect.literal(of: "l.\"dst\""))) FROM (\(try Self.select(departure.old, connection))) AS l "
                    + "WHERE l.\"dst\" IN (SELECT d.\"id\" FROM \(quoted(departure.table)) AS d WHERE d.\"_entity\" IN (\(leaving)))"
            )
            if try statement.step(), statement.int64(0) > 0 {
                throw MigrationError.undeclaredLinkLoss(
                    stage: stage, entity: departure.entity, relationship: departure.relationship,
                    rows: Int(statement.int64(0)), row: statement.string(1), destination: statement.string(2))
            }
        }
        // Temporary tables go unqualified: SQLite and PostgreSQL both look in the connection's
        // temporary schema first (SQLite calls it `temp`, PostgreSQL `pg_temp`), and an index goes
        // where its table is.
        for item in kept {
            try connection.execute(
                "CREATE TEMP TABLE \(quoted(item.links)) AS \(try Self.select(item.old, connection))")
            // The checks count each row's links per side: without these, quadratic in the links.
            for side in ["src", "dst"] {
                try connection.execute(
                    "CREATE INDEX \(quoted(item.links + "_" + side)) ON \(quoted(item.links)) (\(quoted(side)))")
            }
        }
    }

    /// Writes the old links of every relationship whose storage moved into its new storage,
    /// where the new shape can hold them and the store does not hold them already; returns the
    /// tables written.
    func carry(_ connection: some DatabaseConnection) throws -> [String] {
        var written: [String] = []
        for item in kept where item.moves {
            let links = "\(quoted(item.links))"
            let fits = fitting(item, alias: "l")
            switch item.new {
            case .toOne(let table, let column):
                let only =
                    "(SELECT count(*) FROM \(links) AS l WHERE l.\"src\" = \(quoted(table)).\"id\" AND \(fits)) = 1"
                try connection.execute(
                    "UPDATE \(quoted(table)) SET \(quoted(column)) = (SELECT l.\"dst\" FROM \(links) AS l WHERE l.\"src\" = \(quoted(table)).\"id\" AND \(fits)) "
                        + "WHERE \(quoted(column)) IS NULL AND \(rows(of: item.source, alias: quoted(table))) AND \(only)"
                )
            case .inverseColumn(let table, let column, let position):
                let match = "FROM \(links) AS l WHERE l.\"dst\" = \(quoted(table)).\"id\" AND \(fits)"
                let place = position.map { ", \(quoted($0)) = (SELECT l.\"pos\" \(match))" } ?? ""
                try connection.execute(
                    "UPDATE \(quoted(table)) SET \(quoted(column)) = (SELECT l.\"src\" \(match))\(place) "
                        + "WHERE \(quoted(column)) IS NULL AND \(rows(of: item.destination, alias: quoted(table))) "
                        + "AND (SELECT count(*) \(match)) = 1")
            case .joinTable(let table, let source, let destination):
                // The table's `source` side owns its positions, counted after the places it holds.
                let owner = source == "source" ? "l.\"src\"" : "l.\"dst\""
                let ordered = try Self.hasPosition(table, connection)
                let place =
                    ordered
                    ? ", (SELECT COALESCE(MAX(j.\"position\"), -1) + 1 FROM \(quoted(table)) AS j WHERE j.\"source\" = \(owner)) "
                        + "+ row_number() OVER (PARTITION BY \(owner) ORDER BY l.\"pos\", \(source == "source" ? "l.\"dst\"" : "l.\"src\"")) - 1"
                    : ""
                try connection.execute(
                    "INSERT INTO \(quoted(table)) (\(quoted(source)), \(quoted(destination))\(ordered ? ", \"position\"" : "")) "
                        + "SELECT l.\"src\", l.\"dst\"\(place) FROM \(links) AS l WHERE \(fits) "
                        + "AND NOT EXISTS (SELECT 1 FROM \(quoted(table)) AS j WHERE j.\(quoted(source)) = l.\"src\" AND j.\(quoted(destination)) = l.\"dst\")"
                )
            }
            if !written.contains(item.new.table) { written.append(item.new.table) }
        }
        return written
    }

    /// Checks that every old link the new shape can hold is still there, then drops the temporary
    /// tables; throws ``MigrationError/linksLost(stage:entity:relationship:rows:row:destination:)``
    /// for the first relationship that lost one.
    func check(_ connection: some DatabaseConnection, stage: String) throws {
        for item in kept where !item.mayLose {
            let statement = try connection.prepare(
                "SELECT count(*), min(\(connection.dialect.literal(of: "l.\"src\""))), "
                    + "min(\(connection.dialect.literal(of: "l.\"dst\""))) FROM \(quoted(item.links)) AS l "
                    + "WHERE \(fitting(item, alias: "l")) AND NOT EXISTS (\(Self.link(item.new, alias: "l")))"
                    + (moved(item, alias: "l").map { " AND NOT (\($0))" } ?? ""))
            if try statement.step(), statement.int64(0) > 0 {
                throw MigrationError.linksLost(
                    stage: stage, entity: item.entity, relationship: item.relationship, rows: Int(statement.int64(0)),
                    row: statement.string(1), destination: statement.string(2))
            }
        }
        for item in kept { try connection.execute("DROP TABLE \(quoted(item.links))") }
    }

    /// Removes the links of a declared departure from the old storage: the rows they lead to leave
    /// the relationship's destination, so the step drops them here, once, wherever the key sits.
    private func clear(_ departure: Departure, _ connection: some DatabaseConnection) throws {
        let leaving = departure.leaving.map(SQLSyntax.string).joined(separator: ", ")
        let rows = "SELECT d.\"id\" FROM \(quoted(departure.table)) AS d WHERE d.\"_entity\" IN (\(leaving))"
        // The column holding the leaving rows' IDs: the source's or the destination's.
        func key(source: String, destination: String) -> String {
            quoted(departure.onSource ? source : destination)
        }
        switch departure.old {
        case .toOne(let table, let column):
            try connection.execute(
                "UPDATE \(quoted(table)) SET \(quoted(column)) = NULL WHERE \(key(source: "id", destination: column)) IN (\(rows))"
            )
        case .inverseColumn(let table, let column, let position):
            let place = position.map { ", \(quoted($0)) = NULL" } ?? ""
            try connection.execute(
                "UPDATE \(quoted(table)) SET \(quoted(column)) = NULL\(place) WHERE \(quoted(column)) IS NOT NULL "
                    + "AND \(key(source: column, destination: "id")) IN (\(rows))")
        case .joinTable(let table, let source, let destination):
            try connection.execute(
                "DELETE FROM \(quoted(table)) WHERE \(key(source: source, destination: destination)) IN (\(rows))")
        }
    }

    // MARK: - Queries

    /// The condition that link `alias` (of the temporary table) fits the new version: both rows
    /// exist as rows of the new source and destination entities, and it is the only link of a
    /// side that holds one.
    private func fitting(_ item: Kept, alias: String) -> String {
        let links = "\(quoted(item.links))"
        var conditions = [ends(item, alias: alias)]
        // Counted among the links that fit the destination: narrowing `Set<Animal>` to `Cat?`
        // keeps a person's one cat when the dogs go.
        if item.perSource {
            conditions.append(
                "(SELECT count(*) FROM \(links) AS o WHERE o.\"src\" = \(alias).\"src\" AND \(ends(item, alias: "o"))) = 1"
            )
        }
        if item.perDestination {
            conditions.append(
                "(SELECT count(*) FROM \(links) AS o WHERE o.\"dst\" = \(alias).\"dst\" AND \(ends(item, alias: "o"))) = 1"
            )
        }
        return conditions.joined(separator: " AND ")
    }

    /// The condition that link `alias` was moved, not lost: a side that holds one link in the new
    /// version now holds another, to a row of the new version (a stage that gives a pet another
    /// owner takes it from the old one); `nil` when no side holds one.
    private func moved(_ item: Kept, alias: String) -> String? {
        let (table, source, destination) = Self.columns(item.new)
        var sides: [String] = []
        if item.perSource {
            sides.append(
                "EXISTS (SELECT 1 FROM \(quoted(table)) AS m WHERE \(source) = \(alias).\"src\" AND \(destination) <> \(alias).\"dst\" "
                    + "AND \(destination) IN (SELECT d.\"id\" FROM \(quoted(item.destination.table)) AS d WHERE \(rows(of: item.destination, alias: "d"))))"
            )
        }
        if item.perDestination {
            sides.append(
                "EXISTS (SELECT 1 FROM \(quoted(table)) AS m WHERE \(destination) = \(alias).\"dst\" AND \(source) <> \(alias).\"src\" "
                    + "AND \(source) IN (SELECT s.\"id\" FROM \(quoted(item.source.table)) AS s WHERE \(rows(of: item.source, alias: "s"))))"
            )
        }
        return sides.isEmpty ? nil : sides.joined(separator: " OR ")
    }

    /// The condition that both rows of link `alias` exist as rows of the new source and destination.
    private func ends(_ item: Kept, alias: String) -> String {
        "\(alias).\"src\" IN (SELECT s.\"id\" FROM \(quoted(item.source.table)) AS s WHERE \(rows(of: item.source, alias: "s"))) "
            + "AND \(alias).\"dst\" IN (SELECT d.\"id\" FROM \(quoted(item.destination.table)) AS d WHERE \(rows(of: item.destination, alias: "d")))"
    }

    private func rows(of entity: EntityLayout, alias: String) -> String {
        entity.discriminatorSQL(alias: alias) ?? "TRUE"
    }

    /// The old links as (`src`, `dst`, `pos`); `pos` is the link's place when the old side was
    /// ordered (a join table's positions belong to its `source` side), so a carry into an ordered
    /// new storage keeps the order instead of renumbering by ID.
    private static func select(_ storage: Storage, _ connection: some DatabaseConnection) throws -> String {
        switch storage {
        case .toOne(let table, let column):
            "SELECT t.\"id\" AS \"src\", t.\(quoted(column)) AS \"dst\", NULL AS \"pos\" FROM \(quoted(table)) AS t WHERE t.\(quoted(column)) IS NOT NULL"
        case .inverseColumn(let table, let column, let position):
            "SELECT t.\(quoted(column)) AS \"src\", t.\"id\" AS \"dst\", \(position.map { "t." + quoted($0) } ?? "NULL") AS \"pos\" FROM \(quoted(table)) AS t WHERE t.\(quoted(column)) IS NOT NULL"
        case .joinTable(let table, let source, let destination):
            "SELECT t.\(quoted(source)) AS \"src\", t.\(quoted(destination)) AS \"dst\", "
                + "\(try source == "source" && hasPosition(table, connection) ? "t.\"position\"" : "NULL") AS \"pos\" FROM \(quoted(table)) AS t"
        }
    }

    /// A query that finds link `alias` in the new storage.
    private static func link(_ storage: Storage, alias: String) -> String {
        switch storage {
        case .toOne(let table, let column):
            "SELECT 1 FROM \(quoted(table)) AS n WHERE n.\"id\" = \(alias).\"src\" AND n.\(quoted(column)) = \(alias).\"dst\""
        case .inverseColumn(let table, let column, _):
            "SELECT 1 FROM \(quoted(table)) AS n WHERE n.\"id\" = \(alias).\"dst\" AND n.\(quoted(column)) = \(alias).\"src\""
        case .joinTable(let table, let source, let destination):
            "SELECT 1 FROM \(quoted(table)) AS n WHERE n.\(quoted(source)) = \(alias).\"src\" AND n.\(quoted(destination)) = \(alias).\"dst\""
        }
    }

    /// The table of a storage and its source and destination ID columns, as `m`'s.
    private static func columns(_ storage: Storage) -> (table: String, source: String, destination: String) {
        switch storage {
        case .toOne(let table, let column): (table, "m.\"id\"", "m.\(quoted(column))")
        case .inverseColumn(let table, let column, _): (table, "m.\(quoted(column))", "m.\"id\"")
        case .joinTable(let table, let source, let destination):
            (table, "m.\(quoted(source))", "m.\(quoted(destination))")
        }
    }

    private static func hasPosition(_ table: String, _ connection: some DatabaseConnection) throws -> Bool {
        let statement = try connection.prepare(connection.dialect.columnNames)
        statement.bind(table, 1)
        while try statement.step() {
            if statement.string(0) == "position" { return true }
        }
        return false
    }

    private static func storage(
        of relationship: RelationshipDescription, from entity: EntityLayout, in layout: SchemaLayout
    ) -> Storage? {
        guard relationship.cardinality == .toMany else {
            guard let column = entity.column(forKey: relationship.name), column.type == nil else { return nil }
            return .toOne(table: entity.table, column: column.name)
        }
        guard let destination = layout.entities[relationship.destination],
            let storage = try? layout.storage(of: relationship, from: entity)
        else { return nil }
        switch storage {
        case .inverseColumn(let column, let position):
            return .inverseColumn(table: destination.table, column: column, position: position)
        case .joinTable(let table, let source, let destination, _):
            return .joinTable(table: table, source: source, destination: destination)
        }
    }

    /// Where a to-one whose key sits on its destination's row (the other side of a one-to-one)
    /// holds its links: the inverse's column, read from this side.
    private static func keyOnDestination(of relationship: RelationshipDescription, in layout: SchemaLayout) -> Storage?
    {
        guard relationship.cardinality == .toOne, let inverse = relationship.inverse,
            let destination = layout.entities[relationship.destination],
            let column = destination.column(forKey: inverse), column.type == nil
        else { return nil }
        return .inverseColumn(table: destination.table, column: column.name, position: nil)
    }

    /// Whether a continued join table holds this side's rows in the other column after the stage
    /// (the other side owns it now, or owned it before).
    private static func tradesSides(_ old: Storage, _ new: Storage, mapping: TableMapping) -> Bool {
        guard case .joinTable(let oldTable, let oldSource, _) = old, case .joinTable(let table, let source, _) = new,
            mapping.sourceTable[table] == oldTable
        else { return false }
        return oldSource != source
    }

    /// Whether the old storage continues as the new one under the stage's renames.
    private static func same(_ old: Storage, _ new: Storage, mapping: TableMapping) -> Bool {
        switch (old, new) {
        case (.toOne(let oldTable, let oldColumn), .toOne(let table, let column)),
            (.inverseColumn(let oldTable, let oldColumn, _), .inverseColumn(let table, let column, _)):
            return mapping.sourceTable[table] == oldTable && mapping.sourceColumn[table]?[column] == oldColumn
        case (.joinTable(let oldTable, _, _), .joinTable(let table, _, _)):
            return mapping.sourceTable[table] == oldTable
        default:
            return false
        }
    }
}
