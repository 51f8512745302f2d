/// What a store's metadata table says about the schema it holds: the model, the version number it
/// was written at and that version's checksum. The one reader and writer of those rows, so the
/// open path (whatever lock it holds) and the migrator agree on them.
struct StoreMetadata: Equatable {
    /// The model's name, when recorded.
    var model: String?
    /// The version number the store was last written at; `nil` for a store that records none.
    var version: Int?
    /// The checksum of the schema the store holds; `nil` when none is recorded.
    var checksum: String?

    /// Reads the metadata of the database on `connection`: `nil` when it has no metadata table (an
    /// empty database, or one Modelwright did not create).
    static func read(on connection: SQLiteConnection) throws -> StoreMetadata? {
        let exists = try SQLiteStatement(
            connection: connection, sql: "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
        exists.bind(SchemaSQL.metadataTable, 1)
        guard try exists.step() else { return nil }
        let rows = try SQLiteStatement(
            connection: connection, sql: "SELECT \"key\", \"value\" FROM \(quoted(SchemaSQL.metadataTable))")
        var values: [String: String] = [:]
        while try rows.step() {
            values[rows.string(0)] = rows.string(1)
        }
        return StoreMetadata(
            model: values["model"], version: values["version"].flatMap { Int($0) }, checksum: values["checksum"])
    }

    /// Records that the store holds `schema`: its model, version number and checksum.
    static func record(_ schema: SchemaDescription, on connection: SQLiteConnection) throws {
        try record(model: schema.modelName, version: schema.version, checksum: schema.checksum, on: connection)
    }

    /// Records that the store holds version `version` of `model`, whose checksum is `checksum`.
    static func record(model: String, version: Int, checksum: SchemaChecksum, on connection: SQLiteConnection) throws {
        let insert = try SQLiteStatement(
            connection: connection,
            sql: "INSERT OR REPLACE INTO \(quoted(SchemaSQL.metadataTable)) (\"key\", \"value\") VALUES (?, ?)")
        for (key, value) in [("model", model), ("version", String(version)), ("checksum", checksum.hexDigits)] {
            insert.reset()
            insert.bind(key, 1)
            insert.bind(value, 2)
            try insert.run()
        }
    }
}
