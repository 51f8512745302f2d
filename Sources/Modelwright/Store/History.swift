import Foundation

/// Whether a store records persistent history, and under which author its writes go by default.
///
/// With history on, every committed write transaction records, in the same SQLite transaction as
/// its data, a ``HistoryTransaction``: a ``HistoryToken``, the time, an author and one
/// ``HistoryChange`` per record inserted, updated or deleted — batch operations, cascades and
/// relationship changes included. Every process that writes to a shared store file should open it
/// with history on, or its writes leave no history.
public enum HistoryTracking: Sendable, Hashable {
    /// No history is recorded (the default); history tables already in the store are left as they are.
    case disabled
    /// History is recorded; writes without an author of their own are recorded under `author`.
    case enabled(author: String)
}

/// A position in a store's history: opaque, ordered like the transactions it names, and
/// `Codable`, so that each target (an app, its widget) can keep the last one it has seen.
public struct HistoryToken: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    let value: Int64

    init(_ value: Int64) {
        self.value = value
    }

    /// Decodes a token written by ``encode(to:)``.
    public init(from decoder: Decoder) throws {
        value = try decoder.singleValueContainer().decode(Int64.self)
    }

    /// Encodes the token as one number.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }

    /// Whether `lhs` names an earlier transaction than `rhs`.
    public static func < (lhs: HistoryToken, rhs: HistoryToken) -> Bool {
        lhs.value < rhs.value
    }

    /// The token as text, for logs.
    public var description: String { "HistoryToken(\(value))" }
}

/// One committed write transaction, as persistent history recorded it.
public struct HistoryTransaction: Sendable, Hashable {
    /// Its position in the history.
    public let token: HistoryToken
    /// When it committed.
    public let timestamp: Date
    /// Who wrote it: the store's author, or the one given to `performAndSave(author:_:)`.
    public let author: String
    /// What it changed, one entry per record, in the order the records were first written.
    public let changes: [HistoryChange]
}

/// What one transaction did to one record.
public struct HistoryChange: Sendable, Hashable {
    /// Whether a record was inserted, updated or deleted.
    public enum Kind: Int, Sendable, Hashable {
        /// The record is new.
        case insert = 0
        /// The record's values changed.
        case update = 1
        /// The record is gone.
        case delete = 2
    }

    /// The name of the record's entity.
    public let entity: String
    /// The record's ID.
    public let recordID: UUID
    /// What happened to it.
    public let kind: Kind
    /// For an update, the stored columns whose values changed: attribute names, to-one
    /// relationship names, and the position columns of ordered relationships; empty otherwise.
    public let changedAttributes: Set<String>
}

/// The changes a write transaction makes, in the order it makes them, for its history: kept only
/// when history is on, and merged per record when the transaction commits.
struct HistoryLog {
    private struct Entry {
        var entity: String
        var id: UUID
        var kind: HistoryChange.Kind
        var columns: Set<String>
    }

    /// Whether anything is recorded at all.
    let isEnabled: Bool
    private var entries: [Entry] = []

    init(isEnabled: Bool) {
        self.isEnabled = isEnabled
    }

    /// How many entries there are: a mark ``truncate(to:)`` can go back to.
    var mark: Int { entries.count }

    mutating func truncate(to mark: Int) {
        if entries.count > mark { entries.removeLast(entries.count - mark) }
    }

    mutating func inserted(_ id: UUID, entity: String) {
        if isEnabled { entries.append(Entry(entity: entity, id: id, kind: .insert, columns: [])) }
    }

    mutating func updated(_ ids: some Sequence<UUID>, columns: some Sequence<String>, entity: String) {
        guard isEnabled else { return }
        let columns = Set(columns)
        for id in ids {
            entries.append(Entry(entity: entity, id: id, kind: .update, columns: columns))
        }
    }

    mutating func deleted(_ ids: some Sequence<UUID>, entity: String) {
        guard isEnabled else { return }
        for id in ids {
            entries.append(Entry(entity: entity, id: id, kind: .delete, columns: []))
        }
    }

    /// One change per record: an insert then updates is an insert, an insert then a delete is
    /// nothing, updates then a delete are a delete, a delete then an insert (the same ID again)
    /// is an update of every column the entity has.
    func merged(allColumns: (String) -> Set<String>) -> [HistoryChange] {
        var merged: [Entry?] = []
        merged.reserveCapacity(entries.count)
        var index: [UUID: Int] = [:]
        index.reserveCapacity(entries.count)
        for entry in entries {
            guard let position = index[entry.id], let earlier = merged[position] else {
                index[entry.id] = merged.count
                merged.append(entry)
                continue
            }
            var combined = earlier
            switch (earlier.kind, entry.kind) {
            case (.insert, .update), (.insert, .insert):
                break
            case (.insert, .delete):
                merged[position] = nil
                index[entry.id] = nil
                continue
            case (.update, .update):
                combined.columns.formUnion(entry.columns)
            case (.update, .delete), (.delete, .delete):
                combined = entry
            case (.delete, .insert):
                combined = Entry(entity: entry.entity, id: entry.id, kind: .update, columns: allColumns(entry.entity))
            case (.delete, .update), (.update, .insert):
                combined.kind = .update
                combined.columns.formUnion(entry.columns)
            }
            merged[position] = combined
        }
        return merged.compactMap { entry in
            entry.map {
                HistoryChange(entity: $0.entity, recordID: $0.id, kind: $0.kind, changedAttributes: $0.columns)
            }
        }
    }
}

/// The history tables and the SQL that writes, reads and purges them.
enum HistorySQL {
    /// The prefix of every history table's name.
    static let tablePrefix = "_mw_history_"
    static let transactions = "_mw_history_transactions"
    static let changes = "_mw_history_changes"

    /// Creates the tables when they are missing: a store gains history the first time it is opened with it.
    ///
    /// The changes table is clustered by token: a transaction's changes are appended at the end and
    /// read as one range. One row holds a run of records with the same entity, kind and changed
    /// attributes, their 16-byte IDs one after the other: a batch of 100,000 inserts is one row,
    /// not 100,000.
    static func create(in dialect: some SQLDialect) -> [String] {
        dialect.createHistoryTables(transactions: transactions, changes: changes)
    }

    /// The format of the history tables, kept in the store's metadata: a runtime refuses a store
    /// whose history another format wrote, rather than misread it.
    static let format = "1"
    static let formatKey = "historyFormat"

    /// The author of the transaction each migration stage records in a store with history.
    static let migrationAuthor = "migration"

    /// Creates the tables when they are missing and records their format, or throws when the store
    /// holds history of another format. Runs inside the transaction that opens the store, so two
    /// processes opening it at once cannot both find the format missing.
    static func prepare(on connection: some DatabaseConnection) throws {
        // Only when one is missing: PostgreSQL reports each `IF NOT EXISTS` that skips a table as a
        // NOTICE, which libpq prints to standard error on every opening of a store with history.
        let exists = try connection.prepare(connection.dialect.tableExists)
        var missing = false
        for table in [transactions, changes] where !missing {
            exists.reset()
            exists.bind(table, 1)
            missing = try !exists.step()
        }
        if missing { try connection.execute(create(in: connection.dialect)) }
        if let found = try StoreMetadata.read(on: connection).values[StoreMetadata.historyFormatKey] {
            guard found == format else {
                throw StoreError.unsupportedHistoryFormat(found: found, supported: format)
            }
            return
        }
        try StoreMetadata.write([(StoreMetadata.historyFormatKey, format)], on: connection)
    }

    /// Records a migration stage as a transaction of ``migrationAuthor`` with no changes, inside the
    /// stage's transaction, when the store keeps history: a target that reads it knows every
    /// record may have changed shape, and fetches again.
    static func recordMigration(on connection: some DatabaseConnection) throws {
        let exists = try connection.prepare(connection.dialect.tableExists)
        exists.bind(transactions, 1)
        guard try exists.step() else { return }
        _ = try record([], author: migrationAuthor, on: connection)
    }

    /// Renames what the changes after `token` (all of them when `nil`) name, inside a migration
    /// stage's transaction, for a reader that has not read them yet and reads them at the
    /// destination version (sync, which stamps local writes from the history): `entity` gives an
    /// entity's new name and `attribute` an attribute's (given the entity's new name), each `nil`
    /// when the stage removed it. A change of a removed entity keeps its name, which no reader at
    /// the destination finds.
    static func rename(
        after token: Int64?, on connection: some DatabaseConnection, entity: (String) -> String?,
        attribute: (_ entity: String, _ name: String) -> String?
    ) throws {
        let marker = connection.dialect.parameter
        let read = try connection.statement(
            "SELECT \"token\", \"seq\", \"entity\", \"changedAttributes\" FROM \(quoted(changes)) WHERE \"token\" > \(marker)"
        )
        read.bind(token ?? Int64.min, 1)
        var renamed: [(token: Int64, seq: Int64, entity: String, attributes: String)] = []
        while try read.step() {
            let oldEntity = read.string(2)
            let oldAttributes = read.string(3)
            guard let newEntity = entity(oldEntity) else { continue }
            let newAttributes = oldAttributes.split(separator: ",").compactMap { attribute(newEntity, String($0)) }
                .sorted().joined(separator: ",")
            if newEntity != oldEntity || newAttributes != oldAttributes {
                renamed.append((read.int64(0), read.int64(1), newEntity, newAttributes))
            }
        }
        read.reset()
        let update = try connection.statement(
            "UPDATE \(quoted(changes)) SET \"entity\" = \(marker), \"changedAttributes\" = \(marker) "
                + "WHERE \"token\" = \(marker) AND \"seq\" = \(marker)")
        defer { update.reset() }
        for row in renamed {
            update.bind(row.entity, 1)
            update.bind(row.attributes, 2)
            update.bind(row.token, 3)
            update.bind(row.seq, 4)
            try update.run()
            update.reset()
        }
    }

    /// Writes one transaction's history on `connection`, inside its open transaction; returns its token.
    static func record(_ changes: [HistoryChange], author: String, on connection: some DatabaseConnection) throws
        -> HistoryToken
    {
        let transaction = try connection.statement(
            "INSERT INTO \(quoted(transactions)) (\"timestamp\", \"author\") VALUES (\(connection.dialect.parameters(2)))"
                + connection.dialect.returning(["\"token\""]))
        defer { transaction.reset() }
        transaction.bind(Date().timeIntervalSince1970, 1)
        transaction.bind(author, 2)
        guard try transaction.step() else { throw StoreError.storeClosed }
        let token = transaction.int64(0)
        transaction.reset()
        let insert = try connection.statement(
            "INSERT INTO \(quoted(Self.changes)) (\"token\", \"seq\", \"entity\", \"recordIDs\", \"kind\", "
                + "\"changedAttributes\") VALUES (\(connection.dialect.parameters(6)))")
        defer { insert.reset() }
        var seq: Int64 = 0
        var start = changes.startIndex
        while start < changes.endIndex {
            let first = changes[start]
            var end = start + 1
            while end < changes.endIndex, changes[end].entity == first.entity, changes[end].kind == first.kind,
                changes[end].changedAttributes == first.changedAttributes
            {
                end += 1
            }
            var ids = Data(capacity: (end - start) * 16)
            for change in changes[start..<end] {
                withUnsafeBytes(of: change.recordID.uuid) { ids.append(contentsOf: $0) }
            }
            insert.reset()
            insert.bind(token, 1)
            insert.bind(seq, 2)
            insert.bind(first.entity, 3)
            insert.bind(ids, 4)
            insert.bind(Int64(first.kind.rawValue), 5)
            insert.bind(first.changedAttributes.sorted().joined(separator: ","), 6)
            try insert.run()
            seq += 1
            start = end
        }
        return HistoryToken(token)
    }

    /// The transactions after `token` (all of them for `nil`), oldest first, filtered as ``Store/fetchHistory(after:author:excludingAuthor:entity:)`` says.
    static func fetch(
        after token: HistoryToken?, author: String?, excludingAuthor: String?, entity: String?,
        on connection: some DatabaseConnection
    ) throws -> [HistoryTransaction] {
        let marker = connection.dialect.parameter
        var tests = ["t.\"token\" > \(marker)"]
        var arguments: [SQLValue] = [.integer(token?.value ?? 0)]
        if let author {
            tests.append("t.\"author\" = \(marker)")
            arguments.append(.text(author))
        }
        if let excludingAuthor {
            tests.append("t.\"author\" <> \(marker)")
            arguments.append(.text(excludingAuthor))
        }
        if let entity {
            // A transaction with no changes (a migration's) concerns every entity.
            tests.append("(c.\"entity\" = \(marker) OR c.\"entity\" IS NULL)")
            arguments.append(.text(entity))
        }
        let sql =
            "SELECT t.\"token\", t.\"timestamp\", t.\"author\", c.\"entity\", c.\"recordIDs\", c.\"kind\", "
            + "c.\"changedAttributes\" FROM \(quoted(transactions)) t LEFT JOIN \(quoted(changes)) c "
            + "ON c.\"token\" = t.\"token\" WHERE \(tests.joined(separator: " AND ")) ORDER BY t.\"token\", c.\"seq\""
        let statement = try connection.statement(sql)
        defer { statement.reset() }
        for (index, argument) in arguments.enumerated() {
            statement.bind(argument, Int32(index + 1))
        }
        var result: [HistoryTransaction] = []
        var current: (token: Int64, timestamp: Double, author: String, changes: [HistoryChange])?
        while try statement.step() {
            let token = statement.int64(0)
            if current?.token != token {
                if let done = current {
                    result.append(
                        HistoryTransaction(
                            token: HistoryToken(done.token), timestamp: Date(timeIntervalSince1970: done.timestamp),
                            author: done.author, changes: done.changes))
                }
                current = (token, statement.double(1), statement.string(2), [])
            }
            let attributes = statement.string(6)
            let entity = statement.string(3)
            let kind = HistoryChange.Kind(rawValue: Int(statement.int64(5))) ?? .update
            let changed = attributes.isEmpty ? [] : Set(attributes.split(separator: ",").map(String.init))
            let ids = statement.data(4)
            ids.withUnsafeBytes { bytes in
                for offset in stride(from: 0, to: bytes.count - 15, by: 16) {
                    var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
                    withUnsafeMutableBytes(of: &uuid) {
                        $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + 16]))
                    }
                    current?.changes.append(
                        HistoryChange(
                            entity: entity, recordID: UUID(uuid: uuid), kind: kind, changedAttributes: changed))
                }
            }
        }
        if let done = current {
            result.append(
                HistoryTransaction(
                    token: HistoryToken(done.token), timestamp: Date(timeIntervalSince1970: done.timestamp),
                    author: done.author, changes: done.changes))
        }
        return result
    }

    /// Deletes the transactions before `token` and their changes; returns how many transactions went.
    static func delete(before token: HistoryToken, on connection: some DatabaseConnection) throws -> Int {
        let marker = connection.dialect.parameter
        let changes = try connection.statement("DELETE FROM \(quoted(Self.changes)) WHERE \"token\" < \(marker)")
        defer { changes.reset() }
        changes.bind(token.value, 1)
        try changes.run()
        let transactions = try connection.statement(
            "DELETE FROM \(quoted(Self.transactions)) WHERE \"token\" < \(marker)")
        defer { transactions.reset() }
        transactions.bind(token.value, 1)
        try transactions.run()
        return connection.changes
    }

    /// The token of the last transaction recorded, if any.
    static func lastToken(on connection: some DatabaseConnection) throws -> HistoryToken? {
        let statement = try connection.statement("SELECT max(\"token\") FROM \(quoted(transactions))")
        defer { statement.reset() }
        guard try statement.step(), !statement.isNull(0) else { return nil }
        return HistoryToken(statement.int64(0))
    }
}
