import Foundation

// Sync's view of a store's rows: a row's columns as ``SyncValue``s, the links of its join tables
// as ``LinkKey``s, and a merged ``RowChange`` written back into the tables. Both the device
// engine and the server write through these, so a row looks the same on every engine.
extension WriteContext {
    /// The join-table relationship of `entity` named `relationship`, described from the side that
    /// owns the table (whose `source` column holds this side's IDs): the one spelling of a link that
    /// every node uses, whichever side a write went through.
    struct SyncLinkTable {
        /// The join table.
        let table: String
        /// The entity and relationship that own it.
        let ownerEntity: String
        let ownerRelationship: String
        /// The table of the rows its `destination` column points at.
        let destinationTable: String
        /// Whether `entity` is the owner's side.
        let isOwnerSide: Bool
    }

    /// The join-table relationship `relationship` of `entity`, or `nil` when it is not one.
    func syncLinkTable(_ relationship: String, of entity: EntityLayout) throws -> SyncLinkTable? {
        guard let description = entity.relationships.first(where: { $0.name == relationship }),
            description.cardinality == .toMany,
            case .joinTable(let table, let source, _, _) = try layout.storage(of: description, from: entity)
        else { return nil }
        let destination = try layout.entity(description.destination)
        if source == "source" {
            return SyncLinkTable(
                table: table, ownerEntity: entity.relationshipOwners[relationship] ?? entity.name,
                ownerRelationship: relationship, destinationTable: destination.table, isOwnerSide: true)
        }
        let inverse = description.inverse ?? relationship
        return SyncLinkTable(
            table: table, ownerEntity: destination.relationshipOwners[inverse] ?? destination.name,
            ownerRelationship: inverse, destinationTable: entity.table, isOwnerSide: false)
    }

    /// The concrete entity of row `id` in `entity`'s table, or `nil` when the row is not there.
    func concreteEntity(of id: UUID, in entity: EntityLayout) throws -> EntityLayout? {
        let discriminator = entity.hasDiscriminator ? "\"_entity\"" : "\"id\""
        let statement = try connection.statement(
            "SELECT \(discriminator) FROM \(quoted(entity.table)) WHERE \"id\" = \(marker)")
        defer { statement.reset() }
        statement.bind(id, 1)
        guard try statement.step() else { return nil }
        return entity.hasDiscriminator ? try layout.entity(statement.string(0)) : entity
    }

    /// The values of row `id` of `entity`, by column key, or `nil` when the row is not there.
    func syncValues(of id: UUID, in entity: EntityLayout) throws -> [String: SyncValue]? {
        guard !entity.columns.isEmpty else {
            return try concreteEntity(of: id, in: entity) == nil ? nil : [:]
        }
        let list = entity.columns.map { quoted($0.name) }.joined(separator: ", ")
        let statement = try connection.statement(
            "SELECT \(list) FROM \(quoted(entity.table)) WHERE \"id\" = \(marker)")
        defer { statement.reset() }
        statement.bind(id, 1)
        guard try statement.step() else { return nil }
        var values: [String: SyncValue] = [:]
        for (index, column) in entity.columns.enumerated() {
            values[column.key] = try Self.syncValue(statement, Int32(index), storage: column.storage)
        }
        return values
    }

    /// `row` with the values its table's row holds for the columns `row` does not name, stamped
    /// as its insert: a device at an older model version inserts rows without the attributes
    /// added since, and the store fills in their defaults, which every replica must then hold.
    func syncCompleted(_ row: RowChange) throws -> RowChange {
        guard row.isAlive, let inserted = row.inserted, let entity = layout.entities[row.key.entity],
            entity.columns.contains(where: { row.attributes[$0.key] == nil }),
            let values = try syncValues(of: row.key.id, in: entity)
        else { return row }
        return row.merged(with: .update(row.key, values: values.filter { row.attributes[$0.key] == nil }, at: inserted))
    }

    /// Makes the tables hold `row` as sync knows it: inserted, updated or deleted, its join-table
    /// links added or removed, each change recorded for observers and history as a local write
    /// would be. A link whose other end is not in the store is left out until that row arrives.
    func materialize(_ row: RowChange) throws {
        let entity = try layout.entity(row.key.entity)
        let id = row.key.id
        let existing = try syncValues(of: id, in: entity)
        guard row.isAlive else {
            if existing != nil {
                try run("DELETE FROM \(quoted(entity.table)) WHERE \"id\" = \(marker)", entity: entity) { statement in
                    statement.bind(id, 1)
                }
                try rowsDeleted([id], from: entity)
                try forgetLinks(of: id, entity: entity)
            }
            return
        }
        let wanted = row.values.filter { entity.column(forKey: $0.key) != nil }
        if let existing {
            let changed = entity.columns.filter { column in
                wanted[column.key].map { $0 != existing[column.key] } ?? false
            }
            if !changed.isEmpty {
                let assignments = changed.map { "\(quoted($0.name)) = \(marker)" }.joined(separator: ", ")
                try run("UPDATE \(quoted(entity.table)) SET \(assignments) WHERE \"id\" = \(marker)", entity: entity) {
                    statement in
                    for (index, column) in changed.enumerated() {
                        Self.bind(wanted[column.key] ?? .null, to: statement, Int32(index + 1), storage: column.storage)
                    }
                    statement.bind(id, Int32(changed.count + 1))
                }
                rowsUpdated([id], columns: changed.map(\.name), in: entity)
            }
        } else {
            let columns = entity.columns.filter { wanted[$0.key] != nil }
            var names = ["\"id\""]
            if entity.hasDiscriminator { names.append("\"_entity\"") }
            names += columns.map { quoted($0.name) }
            try run(
                "INSERT INTO \(quoted(entity.table)) (\(names.joined(separator: ", "))) VALUES (\(connection.dialect.parameters(names.count)))",
                entity: entity
            ) { statement in
                statement.bind(id, 1)
                var next: Int32 = 2
                if entity.hasDiscriminator {
                    statement.bind(entity.name, 2)
                    next = 3
                }
                for column in columns {
                    Self.bind(wanted[column.key] ?? .null, to: statement, next, storage: column.storage)
                    next += 1
                }
            }
            changes.rowsInsertedOrDeleted(in: entity.table)
            history.inserted(id, entity: entity.name)
            try restoreLinks(to: id, entity: entity)
        }
        for (link, stamps) in row.links.sorted(by: { $0.key < $1.key }) {
            try setLink(from: id, entity: entity, link, present: stamps.isPresent)
        }
    }

    /// Adds or removes one link in its join table (and in sync's record of the join tables).
    private func setLink(from id: UUID, entity: EntityLayout, _ link: LinkKey, present: Bool) throws {
        guard let table = try syncLinkTable(link.relationship, of: entity), table.isOwnerSide else {
            throw StoreError.unknownProperty(entity: entity.name, property: link.relationship)
        }
        let pair = [id, link.target]
        if present {
            let sql = connection.dialect.insertIgnoringConflicts(
                into: quoted(table.table), columns: ["\"source\"", "\"destination\""],
                "SELECT \(marker), \(marker) WHERE EXISTS (SELECT 1 FROM \(quoted(table.destinationTable)) WHERE \"id\" = \(marker))"
            )
            try run(sql, entity: entity) { statement in
                statement.bind(id, 1)
                statement.bind(link.target, 2)
                statement.bind(link.target, 3)
            }
            guard connection.changes > 0 else { return }
        } else {
            try run(
                "DELETE FROM \(quoted(table.table)) WHERE \"source\" = \(marker) AND \"destination\" = \(marker)",
                entity: entity
            ) { statement in
                statement.bind(id, 1)
                statement.bind(link.target, 2)
            }
            guard connection.changes > 0 else { return }
        }
        try SyncBookkeeping.setLink(pair, present: present, in: table.table, on: connection)
        changes.rowsInsertedOrDeleted(in: table.table)
        history.updated([id], columns: [link.relationship], entity: entity.name)
    }

    /// A row just arrived (pulled, or inserted again on this device to undo its delete): the links
    /// other rows hold to it in sync's records, which could not be added while it was missing,
    /// are added now.
    func restoreLinks(to id: UUID, entity: EntityLayout) throws {
        for source in layout.entities.values where !source.isAbstract {
            for relationship in source.relationships where relationship.cardinality == .toMany {
                guard try layout.entity(relationship.destination).table == entity.table,
                    let table = try syncLinkTable(relationship.name, of: source), table.isOwnerSide
                else { continue }
                for change in try SyncBookkeeping.rowsLinking(to: id, through: relationship.name, on: connection)
                where change.key.entity == source.name {
                    try setLink(
                        from: change.key.id, entity: source, LinkKey(relationship: relationship.name, target: id),
                        present: true)
                }
            }
        }
    }

    /// A row went: its join-table rows went with it (`ON DELETE CASCADE`); sync's record of them goes too.
    func forgetLinks(of id: UUID, entity: EntityLayout) throws {
        for relationship in entity.relationships where relationship.cardinality == .toMany {
            guard let table = try syncLinkTable(relationship.name, of: entity) else { continue }
            let column = table.isOwnerSide ? "source" : "destination"
            for pair in try SyncBookkeeping.links(in: table.table, where: column, is: id, on: connection) {
                try SyncBookkeeping.setLink(pair, present: false, in: table.table, on: connection)
            }
        }
        for source in layout.entities.values {
            for relationship in source.relationships where relationship.cardinality == .toMany {
                guard try layout.entity(relationship.destination).table == entity.table,
                    let table = try syncLinkTable(relationship.name, of: source), table.isOwnerSide
                else { continue }
                for pair in try SyncBookkeeping.links(in: table.table, where: "destination", is: id, on: connection) {
                    try SyncBookkeeping.setLink(pair, present: false, in: table.table, on: connection)
                }
            }
        }
    }

    /// The links of the join table of `relationship` that changed for row `id` since sync last
    /// looked, as changes of the owner side's rows; sync's record of the table is brought up to date.
    func localLinkChanges(
        of id: UUID, entity: EntityLayout, relationship: String
    ) throws -> [(source: RowKey, link: LinkKey, present: Bool)] {
        guard let table = try syncLinkTable(relationship, of: entity) else { return [] }
        let column = table.isOwnerSide ? "source" : "destination"
        let statement = try connection.statement(
            "SELECT \"source\", \"destination\" FROM \(quoted(table.table)) WHERE \(quoted(column)) = \(marker)")
        defer { statement.reset() }
        statement.bind(id, 1)
        var now: Set<[UUID]> = []
        while try statement.step() {
            if let source = statement.uuid(0), let destination = statement.uuid(1) {
                now.insert([source, destination])
            }
        }
        statement.reset()
        let known = try SyncBookkeeping.links(in: table.table, where: column, is: id, on: connection)
        var result: [(RowKey, LinkKey, Bool)] = []
        let owner = try layout.entity(table.ownerEntity)
        for (pair, present) in now.subtracting(known).map({ ($0, true) }) + known.subtracting(now).map({ ($0, false) })
        {
            try SyncBookkeeping.setLink(pair, present: present, in: table.table, on: connection)
            // The source row's concrete entity; a source row that is gone is deleted, and its
            // tombstone says all there is to say.
            guard let source = try concreteEntity(of: pair[0], in: owner) else { continue }
            result.append(
                (
                    RowKey(entity: source.name, id: pair[0]),
                    LinkKey(relationship: table.ownerRelationship, target: pair[1]), present
                ))
        }
        return result.sorted { ($0.0, $0.1) < ($1.0, $1.1) }
    }

    // MARK: - Uniqueness

    /// The constraint and the ID of another stored row that holds `row`'s values for one of the
    /// uniqueness constraints of its table, or `nil` when `row` breaks none (or is not alive).
    /// A constraint with a `NULL` among `row`'s values is never broken, as in SQL.
    func syncUniquenessConflict(of row: RowChange) throws -> (constraint: [String], id: UUID)? {
        guard row.isAlive else { return nil }
        let entity = try layout.entity(row.key.entity)
        let values = row.values
        for constraint in uniquenessConstraints(coveredBy: entity) {
            let parts = constraint.compactMap { key in
                entity.column(forKey: key).flatMap { column in values[key].map { (column, $0) } }
            }
            guard parts.count == constraint.count, !parts.contains(where: { $0.1 == .null }) else { continue }
            let tests = parts.map { "\(quoted($0.0.name)) = \(marker)" }.joined(separator: " AND ")
            let statement = try connection.statement(
                "SELECT \"id\" FROM \(quoted(entity.table)) WHERE \(tests) AND \"id\" <> \(marker)")
            defer { statement.reset() }
            for (index, part) in parts.enumerated() {
                Self.bind(part.1, to: statement, Int32(index + 1), storage: part.0.storage)
            }
            statement.bind(row.key.id, Int32(parts.count + 1))
            var found: [UUID] = []
            while try statement.step() {
                if let id = statement.uuid(0) { found.append(id) }
            }
            if let first = found.min(by: { $0.precedes($1) }) { return (constraint, first) }
        }
        return nil
    }

    /// The `@sync(unique: …)` rule that applies to `entity`: its own, or the nearest ancestor's.
    func syncUniqueness(of entity: EntityLayout) -> SyncUniqueness? {
        var name: String? = entity.name
        var seen: Set<String> = []
        while let current = name, seen.insert(current).inserted,
            let description = layout.schema.entities.first(where: { $0.name == current })
        {
            if let rule = description.syncUniqueness { return rule }
            name = description.parent
        }
        return nil
    }

    /// What resolving a uniqueness conflict between `loser` and `survivor` (rows of one entity
    /// with the same values for `constraint`) by `rule` changes, stamped `stamp`: the loser's
    /// tombstone first, then (for ``SyncUniqueness/merge``) the survivor with the loser's
    /// attributes and links merged in by timestamp and every row that referred to the loser
    /// (a to-one link, or a to-many link) pointed at the survivor instead. The caller writes
    /// them in that order. Server and device resolve with this one function, so they agree.
    func syncResolve(
        _ loser: RowChange, into survivor: RowChange, by rule: SyncUniqueness, constraint: [String],
        at stamp: HybridTimestamp
    ) throws -> (rows: [RowChange], resolution: ConstraintResolution) {
        var tombstone = loser
        tombstone.merge(RowChange.delete(loser.key, at: stamp))
        guard rule == .merge else {
            return (
                [tombstone],
                .rejected(entity: loser.key.entity, constraint: constraint, row: loser.key.id, kept: survivor.key.id)
            )
        }
        let entity = try layout.entity(survivor.key.entity)
        var folded = survivor
        folded.merge(
            RowChange(
                key: survivor.key,
                attributes: loser.attributes.filter { entity.column(forKey: $0.key) != nil },
                links: loser.links))
        var rows = [tombstone, folded]
        let loserTable = try layout.entity(loser.key.entity).table
        for referrer in try SyncBookkeeping.rows(mentioning: loser.key.id, on: connection)
        where referrer.isAlive && referrer.key != loser.key && referrer.key != survivor.key {
            let referring = try layout.entity(referrer.key.entity)
            var moved = RowChange(key: referrer.key)
            for column in referring.columns where column.storage == .uuid {
                guard let destination = column.destination, try layout.entity(destination).table == loserTable,
                    referrer.attributes[column.key]?.value == .uuid(loser.key.id)
                else { continue }
                moved.merge(.update(referrer.key, values: [column.key: .uuid(survivor.key.id)], at: stamp))
            }
            for (link, stamps) in referrer.links where link.target == loser.key.id && stamps.isPresent {
                moved.merge(.unlink(referrer.key, link.relationship, from: loser.key.id, at: stamp))
                moved.merge(.link(referrer.key, link.relationship, to: survivor.key.id, at: stamp))
            }
            if moved != RowChange(key: referrer.key) { rows.append(referrer.merged(with: moved)) }
        }
        return (
            rows,
            .merged(entity: loser.key.entity, constraint: constraint, merged: loser.key.id, survivor: survivor.key.id)
        )
    }

    // MARK: - References to deleted rows

    /// Settles every to-one link with a foreign key that points at a row the store does not hold
    /// (deleted by another device, or never arrived), by the delete rule of the link's inverse,
    /// as a local delete would have applied it: `nullify` clears the link (a required link
    /// cascades instead), `cascade` deletes the referring row, and `deny` brings the deleted row
    /// back (the delete loses; a row sync never knew is cleared instead). Each outcome is stamped
    /// with a new `stamp()`, merged into what sync knows of the row, materialized and handed to
    /// `write`, until nothing dangles; a cascade or a row brought back can leave more to settle.
    /// `onlyDeleted` leaves alone the links whose target sync has no tombstone for (a device
    /// whose pull has not brought the target yet). `check` sees each outcome before it is
    /// materialized, with the row whose delete caused it (`nil` when sync never knew that row),
    /// and may throw to refuse it (the server refuses a push whose effects leave the pusher's
    /// scope); sync's record of the outcome's row still holds it as it was. Returns how many rows
    /// changed.
    @discardableResult
    func syncSettleDanglingReferences(
        onlyDeleted: Bool, stamp: () throws -> HybridTimestamp,
        check: (_ outcome: RowChange, _ cause: RowKey?) throws -> Void = { _, _ in },
        write: (RowChange) throws -> Void
    ) throws -> Int {
        var settled = 0
        for _ in 0..<64 {
            let found = try danglingReferences(onlyDeleted: onlyDeleted)
            guard !found.isEmpty else { return settled }
            for dangling in found {
                let now = try stamp()
                let outcome: RowChange
                switch dangling.rule {
                case .deny:
                    if let target = dangling.target {
                        outcome = target.merged(with: RowChange(key: target.key, inserted: now))
                    } else {
                        outcome = dangling.referrer.merged(with: .delete(dangling.referrer.key, at: now))
                    }
                case .cascade:
                    outcome = dangling.referrer.merged(with: .delete(dangling.referrer.key, at: now))
                case .nullify, .noAction:
                    // Cleared as of the delete: the rule applies to the link as it stood then, so a
                    // later write of the link (made where the target was already gone, and pulled
                    // in a later page) wins over the clearing, as it does where the delete was made.
                    let written = dangling.referrer.attributes[dangling.column]?.stamp
                    let stamp =
                        if let deleted = dangling.target?.deleted, written.map({ $0 < deleted }) ?? true {
                            deleted
                        } else {
                            now
                        }
                    outcome = dangling.referrer.merged(
                        with: .update(dangling.referrer.key, values: [dangling.column: .null], at: stamp))
                }
                try check(outcome, dangling.target?.key)
                try materialize(outcome)
                try write(outcome)
                settled += 1
            }
        }
        return settled
    }

    /// One to-one link that points at a missing row: the referring row as sync knows it, the
    /// link's column key, the rule that settles it, and the missing row's last known state.
    private struct DanglingReference {
        let referrer: RowChange
        let column: String
        let rule: RelationshipDescription.DeleteRule
        let target: RowChange?
    }

    /// The to-one links with a foreign key whose target row is not in the store, in a fixed order.
    private func danglingReferences(onlyDeleted: Bool) throws -> [DanglingReference] {
        var result: [DanglingReference] = []
        for entity in layout.entities.values.sorted(by: { $0.name < $1.name }) {
            for column in entity.columns where column.references != nil && column.declaringEntity == entity.name {
                guard let destinationName = column.destination else { continue }
                let destination = try layout.entity(destinationName)
                let statement = try connection.statement(
                    "SELECT t.\"id\", t.\(quoted(column.name)) FROM \(quoted(entity.table)) t WHERE t.\(quoted(column.name)) IS NOT NULL "
                        + "AND NOT EXISTS (SELECT 1 FROM \(quoted(destination.table)) d WHERE d.\"id\" = t.\(quoted(column.name))) "
                        + "ORDER BY t.\"id\"")
                var pairs: [(UUID, UUID)] = []
                while try statement.step() {
                    if let id = statement.uuid(0), let target = statement.uuid(1) { pairs.append((id, target)) }
                }
                statement.reset()
                let relationship = entity.relationships.first { $0.name == column.key }
                let inverseRule = relationship?.inverse.flatMap { inverse in
                    destination.relationships.first { $0.name == inverse }?.deleteRule
                }
                for (id, targetID) in pairs {
                    guard let concrete = try concreteEntity(of: id, in: entity),
                        let referrer = try SyncBookkeeping.change(
                            of: RowKey(entity: concrete.name, id: id), on: connection)
                    else { continue }
                    var target: RowChange?
                    for name in destination.entityNames {
                        if let known = try SyncBookkeeping.change(
                            of: RowKey(entity: name, id: targetID), on: connection)
                        {
                            target = known
                        }
                    }
                    if onlyDeleted, target?.deleted == nil { continue }
                    var rule = inverseRule ?? .nullify
                    if rule == .nullify && !column.isOptional { rule = .cascade }
                    if rule == .deny, target?.inserted == nil { rule = column.isOptional ? .nullify : .cascade }
                    result.append(
                        DanglingReference(referrer: referrer, column: column.key, rule: rule, target: target))
                }
            }
        }
        return result
    }

    // MARK: - Values

    /// The value of column `index` as sync carries a value of `storage`.
    static func syncValue(_ statement: any DatabaseStatement, _ index: Int32, storage: ColumnStorage) throws
        -> SyncValue
    {
        if statement.isNull(index) { return .null }
        switch storage {
        case .uuid:
            guard let id = statement.uuid(index) else {
                throw ColumnValueError.mismatch(statement.value(index), UUID.self)
            }
            return .uuid(id)
        default:
            break
        }
        let value = statement.value(index)
        switch (storage, value) {
        case (.boolean, .integer(let number)): return .bool(number != 0)
        case (.integer16, .integer(let number)), (.integer32, .integer(let number)),
            (.integer64, .integer(let number)):
            return .integer(number)
        case (.double, .real(let number)), (.float, .real(let number)): return .real(number)
        case (.double, .integer(let number)), (.float, .integer(let number)): return .real(Double(number))
        case (.timestamp, .real(let seconds)): return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case (.timestamp, .integer(let seconds)): return .date(Date(timeIntervalSinceReferenceDate: Double(seconds)))
        case (.decimal, .text(let text)): return .decimal(text)
        case (.text, .text(let text)), (.json, .text(let text)): return .text(text)
        case (.bytes, .blob(let data)): return .bytes(data)
        default: throw ColumnValueError.mismatch(value, SyncValue.self)
        }
    }

    /// Binds a sync value to parameter `index` of a column of `storage`.
    static func bind(_ value: SyncValue, to statement: any DatabaseStatement, _ index: Int32, storage: ColumnStorage) {
        switch value {
        case .null: statement.bindNull(index)
        case .bool(let flag): statement.bind(Int64(flag ? 1 : 0), index)
        case .integer(let number): statement.bind(number, index)
        case .real(let number): statement.bind(number, index)
        case .decimal(let text), .text(let text): statement.bind(text, index)
        case .bytes(let data): statement.bind(data, index)
        case .date(let date): statement.bind(date.timeIntervalSinceReferenceDate, index)
        case .uuid(let id): statement.bind(id, index)
        }
    }
}
