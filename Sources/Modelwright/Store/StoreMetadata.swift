/// What a store file says about itself, read under the write lock when it is opened: whether it
/// is empty, a Modelwright store (and then its metadata rows) or some other database.
///
/// The one place that reads and writes the metadata table (`_modelwright_metadata`, one
/// `key`/`value` row per fact): which model, version and checksum the store holds, and the format
/// of its history tables.
enum StoreMetadata: Equatable {
    /// No tables at all: a new file, or one another process has not created the schema in yet.
    case empty
    /// A Modelwright store, with its metadata rows by key.
    case store([String: String])
    /// A database with tables but no metadata table: not a Modelwright store.
    case foreign

    static let modelKey = "model"
    static let versionKey = "version"
    static let checksumKey = "checksum"
    /// The format of the history tables (see `HistorySQL.format`), once a store has them.
    static let historyFormatKey = "historyFormat"

    /// Reads what the file holds. Call it inside the transaction that acts on the answer, so that
    /// no other connection can change the answer first.
    static func read(on connection: some DatabaseConnection) throws -> StoreMetadata {
        let tables = try connection.prepare(connection.dialect.tableNames)
        var names: Set<String> = []
        while try tables.step() {
            names.insert(tables.string(0))
        }
        guard names.contains(SchemaSQL.metadataTable) else { return names.isEmpty ? .empty : .foreign }
        let rows = try connection.prepare("SELECT \"key\", \"value\" FROM \(quoted(SchemaSQL.metadataTable))")
        var values: [String: String] = [:]
        while try rows.step() {
            values[rows.string(0)] = rows.string(1)
        }
        return .store(values)
    }

    /// Begins a transaction of `kind` whose first statement reads the checksum the store records,
    /// and hands it to `check`: the check an open store makes in every transaction (see
    /// `Store.checkSchema`), sent with the `BEGIN` where the engine can, and on PostgreSQL with a
    /// read's first query as well (one round trip for the three).
    static func beginCheckingChecksum(
        _ kind: TransactionKind, on connection: some DatabaseConnection,
        _ check: @escaping (String?) throws -> Void
    ) throws {
        try connection.begin(
            kind, checking: "SELECT \"value\" FROM \(quoted(SchemaSQL.metadataTable)) WHERE \"key\" = '\(checksumKey)'",
            with: check)
    }

    /// The metadata rows, empty unless the file is a store.
    var values: [String: String] {
        if case .store(let values) = self { values } else { [:] }
    }

    /// The checksum of the schema the store holds.
    var checksum: String? { values[Self.checksumKey] }

    /// The version number the store records.
    var version: Int? { values[Self.versionKey].flatMap { Int($0) } }

    /// Records that the store holds `schema`, inside the caller's transaction: the stage or
    /// creation that made it so commits with it.
    static func record(_ schema: SchemaDescription, on connection: some DatabaseConnection) throws {
        try write(
            [
                (modelKey, schema.modelName), (versionKey, String(schema.version)),
                (checksumKey, schema.checksum.hexDigits),
            ], on: connection)
    }

    /// Sets metadata rows, replacing those with the same keys, inside the caller's transaction,
    /// and proves each took: the write changed exactly one row and the row reads back as written.
    /// Otherwise throws ``StoreError/metadataNotRecorded(key:value:found:)``, so that the caller's
    /// transaction rolls back rather than commit tables that the metadata misnames (a trigger or
    /// rule on the table can swallow or alter a write on either engine).
    static func write(_ rows: [(key: String, value: String)], on connection: some DatabaseConnection) throws {
        let insert = try connection.prepare(
            connection.dialect.insertReplacing(
                into: quoted(SchemaSQL.metadataTable), columns: ["\"key\"", "\"value\""], key: ["\"key\""],
                "VALUES (\(connection.dialect.parameters(2)))"))
        let readBack = try connection.prepare(
            "SELECT \"value\" FROM \(quoted(SchemaSQL.metadataTable)) WHERE \"key\" = \(connection.dialect.parameters(1))"
        )
        for (key, value) in rows {
            insert.reset()
            insert.bind(key, 1)
            insert.bind(value, 2)
            try insert.run()
            let changed = connection.changes
            readBack.reset()
            readBack.bind(key, 1)
            var found: [String] = []
            while try readBack.step() { found.append(readBack.string(0)) }
            guard changed == 1, found == [value] else {
                throw StoreError.metadataNotRecorded(key: key, value: value, found: found.first)
            }
        }
    }

    /// The version number a store's metadata records.
    static func storedVersion(on connection: some DatabaseConnection) throws -> Int? {
        try read(on: connection).version
    }
}
