import Modelwright

extension PostgresStoreEngine {
    /// Takes the transaction's advisory lock of the model (``migrationLockKey(modelName:)``) before
    /// the opening reads the metadata: of several processes opening an older database together, the
    /// first runs a stage and commits, and the others then find the version it recorded, so each
    /// stage runs once. The writer lock every write transaction takes serialises writers already;
    /// this lock names the decision itself, and holds it even for a tool that opens the database
    /// with its own connection and takes only this one.
    func lockForOpening(_ writer: PostgresConnection, modelName: String) throws {
        try writer.execute("SELECT pg_advisory_xact_lock(\(Self.migrationLockKey(modelName: modelName)))")
    }

    /// The advisory lock key of a model's creation and migration: the 64-bit FNV-1a hash of
    /// `modelwright.migrate.` and the model's name in UTF-8, as a signed integer, so every process
    /// and every version of the runtime derives the same key.
    static func migrationLockKey(modelName: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in ("modelwright.migrate." + modelName).utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }
}
