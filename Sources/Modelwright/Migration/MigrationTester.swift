import Foundation

/// Tests a migration the way it will run on a user's device: a store file at an old version,
/// rows written with that version's raw values, the app's migration plan, and checks of the
/// migrated rows and schema (Room's `MigrationTestHelper`, Drift's `SchemaVerifier`).
///
/// ```swift
/// let tester = try MigrationTester(plan: Trips.migrationPlan(AppMigrations()), startingAt: Trips.version2)
/// let ines = try tester.insert("User", ["username": .text("ines"), "name": .text("Inês Ortega")])
/// let store = try tester.migrate()
/// let user = try tester.rows(of: "User").first { $0.id == ines }
/// #expect(user?["familyName"] == .text("Ortega"))
/// #expect(try tester.schemaDifferences().isEmpty)
/// ```
///
/// The store lives in a temporary folder that is removed when the tester is released.
public final class MigrationTester {
    /// The store file.
    public let url: URL
    private let plan: MigrationPlan
    private let start: SchemaLayout
    private let folder: URL
    private var connection: SQLiteConnection?

    /// Creates a store at version `start`, empty, in a new temporary folder.
    public init(plan: MigrationPlan, startingAt start: SchemaDescription) throws {
        self.plan = plan
        self.start = try SchemaLayout(start)
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("MigrationTester-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        url = folder.appendingPathComponent("\(start.modelName).sqlite")
        let connection = try SQLiteConnection(path: url.path)
        try connection.execute(SchemaSQL.createStatements(for: self.start))
        try StoreMetadata.record(start, on: connection)
        self.connection = connection
    }

    /// Creates a store at version `start`, decoding its schema if it is archived (as a generated
    /// model's historical versions are).
    public convenience init(plan: MigrationPlan, startingAt start: SchemaVersion) throws {
        try self.init(plan: plan, startingAt: start.schema())
    }

    deinit {
        connection = nil
        try? FileManager.default.removeItem(at: folder)
    }

    /// Inserts a row of `entity` at the starting version, with raw column values; an `id` is
    /// made when `values` has none. Returns the row's ID.
    @discardableResult
    public func insert(_ entity: String, _ values: [String: SQLValue]) throws -> SQLValue {
        let context = try startingContext()
        var values = values
        if values["id"] == nil { values["id"] = context.newID() }
        try context.insert(into: entity, values: values)
        return values["id"] ?? .null
    }

    /// Runs SQL at the starting version, for what ``insert(_:_:)`` does not cover.
    public func execute(_ sql: String, _ arguments: [SQLValue] = []) throws {
        try startingContext().execute(sql, arguments)
    }

    /// Opens the store with the plan, which migrates it to the current version.
    public func migrate(progress: (@Sendable (MigrationProgress) -> Void)? = nil) throws -> Store {
        connection = nil
        return try Store(url: url, migrationPlan: plan, progress: progress)
    }

    /// The rows of `entity` as the store now holds them (after ``migrate(progress:)``, in the
    /// current version's shape).
    public func rows(of entity: String) throws -> [MigrationRow] {
        let connection = try SQLiteConnection(path: url.path, readOnly: true)
        let version = try StoreMetadata.storedVersion(on: connection)
        let layout = version == plan.current.version ? try SchemaLayout(plan.current) : start
        return try MigrationContext(connection: connection, layout: layout).rows(of: entity)
    }

    /// How the store's schema differs from a fresh store of the current version, one sentence
    /// per difference: tables, columns with types, nullability and defaults, indexes, foreign keys.
    public func schemaDifferences() throws -> [String] {
        let connection = try SQLiteConnection(path: url.path, readOnly: true)
        return try StoreSchema.read(connection).differences(from: StoreSchema.fresh(SchemaLayout(plan.current)))
    }

    private func startingContext() throws -> MigrationContext {
        guard let connection else {
            throw MigrationError.invalidPlan("the tester's store was already migrated; rows can only be added before")
        }
        return MigrationContext(connection: connection, layout: start)
    }
}
