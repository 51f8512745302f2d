import Foundation
import Modelwright

extension PostgresConfiguration {
    /// The configuration the store's connections use: each fixes `search_path` to the store's schema.
    fileprivate var forStore: PostgresConfiguration {
        var configuration = self
        configuration.pinsStoreSchema = true
        return configuration
    }
}

extension Store {
    /// How many read connections a store on PostgreSQL opens unless told otherwise.
    public static let defaultPostgresReaderCount = 2

    /// Opens a store on a PostgreSQL database, creating the schema's tables when the database
    /// has none, and otherwise checking that it holds this schema: a database of another model or
    /// of another version of this one is refused with
    /// ``StoreError/schemaMismatch(storeChecksum:storeVersion:expectedChecksum:expectedVersion:)``
    /// and one with tables but no store in it with ``StoreError/notAStore(path:)``, both untouched.
    ///
    /// ```swift
    /// let store = try Store(postgres: PostgresConfiguration("postgresql://app@db.example.com/trips"), schema: Trips.schema)
    /// let users = try await store.performQuery { try $0.fetch(User.request()) }
    /// ```
    ///
    /// Writes run on one connection; reads take turns on `readers` more (at least one). Commits
    /// of other stores and processes on the same database wake ``observe(_:)`` and results
    /// controllers through `LISTEN`/`NOTIFY`. It blocks the calling thread while it connects, as
    /// `Store(url:…)` does while it opens a file: call it outside Swift's cooperative pool, or
    /// accept that one of its threads waits. Errors never show the password.
    public convenience init(
        postgres configuration: PostgresConfiguration, schema: SchemaDescription, history: HistoryTracking = .disabled,
        readers: Int = Store.defaultPostgresReaderCount
    ) throws {
        try self.init(
            engine: PostgresStoreEngine(configuration: configuration.forStore, readerCount: max(1, readers)),
            schema: schema,
            history: history)
    }

    /// Opens a store on a PostgreSQL database at the plan's current version: creates it when the
    /// database has no tables, and refuses, untouched, a database of a newer or unknown version
    /// with ``MigrationError/unknownStoreVersion(storeChecksum:storeVersion:knownChecksums:)``.
    /// Generated code passes its plan unchanged: `Store(postgres: …, migrationPlan: Trips.migrationPlan(AppMigrations()))`.
    ///
    /// Migrating an earlier version on PostgreSQL runs through the same migrator call as on SQLite
    /// (see ``Store/init(url:migrationPlan:history:progress:)``).
    public convenience init(
        postgres configuration: PostgresConfiguration, migrationPlan: MigrationPlan,
        history: HistoryTracking = .disabled, readers: Int = Store.defaultPostgresReaderCount,
        progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) throws {
        try self.init(
            engine: PostgresStoreEngine(configuration: configuration.forStore, readerCount: max(1, readers)),
            schema: migrationPlan.current, history: history, plan: migrationPlan, progress: progress)
    }
}
