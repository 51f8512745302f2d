/// How a store of any earlier version of a model becomes a store of the current version: one
/// stage per pair of adjacent versions, keyed by the version the store records it was written at.
///
/// The generator writes the plan of a model (`Trips.migrationPlan(…)`); opening a store with it
/// migrates an older store stage by stage:
///
/// ```swift
/// let store = try Store(url: url, migrationPlan: Trips.migrationPlan(AppMigrations())) { progress in
///     print("stage \(progress.stage) of \(progress.stageCount): \(progress.rowsCopied) rows copied")
/// }
/// ```
///
/// ## Topics
///
/// ### Contents
/// - ``current``
/// - ``stages``
/// - ``stages(fromVersion:checksum:)``
public struct MigrationPlan: Sendable {
    /// The schema the plan ends at: the app's current version.
    public let current: SchemaDescription
    /// One stage per pair of adjacent versions, oldest first.
    public let stages: [MigrationStage]
    /// The app's record types of the current version, which decode every row of the entities with
    /// a `Codable` attribute before the last stage commits: a value the store's own checks cannot
    /// judge (JSON that is valid but not the app's `Codable` type) fails the stage, which rolls
    /// back, instead of every fetch after.
    public let records: [any Record.Type]

    /// Creates a plan from its stages; the last stage must end at `current`. The generated plan
    /// passes every record type of the current version as `records`.
    public init(current: SchemaDescription, stages: [MigrationStage], records: [any Record.Type] = []) {
        self.current = current
        self.stages = stages
        self.records = records
    }

    /// The stages that take a store to the current version, in order: empty when it is current,
    /// `nil` when no chain of stages starts there (a store from a newer or unknown version).
    ///
    /// Stages are keyed by version number, so versions with the same structure (a history that
    /// adds something and removes it again) are told apart by the number the store records.
    /// A store whose recorded number is missing, or names a version with another checksum,
    /// resolves by `checksum` alone to the newest version that has it (a number past the current
    /// version is a newer app's store, and `nil`); when several versions do,
    /// the steps between them must change no data (no custom stage, nothing at both ends removed,
    /// retyped or moved in between), else it throws ``StoreError/unresolvableStoreVersion(checksum:versions:reason:)``.
    /// A plan with two stages leaving the same version throws ``MigrationError/invalidPlan(_:)``.
    ///
    /// ```swift
    /// let stages = try plan.stages(fromVersion: 87, checksum: storeChecksum)
    /// ```
    public func stages(fromVersion version: Int?, checksum: SchemaChecksum) throws -> [MigrationStage]? {
        // A number past the current version is a newer app's store: resolving it by checksum
        // would record an older number over it, and the newer app would run its stages again.
        if let version, version > current.version { return nil }
        let bySource = try stagesBySourceVersion()
        let start: Int
        if let version, self.checksum(ofVersion: version, bySource: bySource) == checksum {
            start = version
        } else {
            guard let resolved = try resolve(checksum, bySource: bySource) else { return nil }
            start = resolved
        }
        var path: [MigrationStage] = []
        var position = start
        while position != current.version {
            guard let stage = bySource[position], path.count < stages.count else { return nil }
            path.append(stage)
            position = stage.destination.version
        }
        return path
    }

    /// The plan's stages by the version they start from.
    private func stagesBySourceVersion() throws -> [Int: MigrationStage] {
        var bySource: [Int: MigrationStage] = [:]
        for stage in stages {
            let source = stage.source.version
            guard bySource[source] == nil else {
                throw MigrationError.invalidPlan(
                    "two stages start at version \(source); each version needs one stage to the next")
            }
            bySource[source] = stage
        }
        return bySource
    }

    /// The checksum the plan knows for version `version`, without decoding any archive.
    private func checksum(ofVersion version: Int, bySource: [Int: MigrationStage]) -> SchemaChecksum? {
        if version == current.version { return current.checksum }
        if let stage = bySource[version] { return stage.source.checksum }
        return stages.first { $0.destination.version == version }?.destination.checksum
    }

    /// The version a store with `checksum` and no usable version number is at: the newest that
    /// has the checksum, when the steps from the oldest such version to it change no data.
    private func resolve(_ checksum: SchemaChecksum, bySource: [Int: MigrationStage]) throws -> Int? {
        var versions = Set(stages.flatMap { [$0.source.version, $0.destination.version] })
        versions.insert(current.version)
        let candidates = versions.filter { self.checksum(ofVersion: $0, bySource: bySource) == checksum }.sorted()
        guard let oldest = candidates.first, let newest = candidates.last else { return nil }
        guard oldest != newest else { return newest }
        var between: [MigrationStage] = []
        var position = oldest
        while position != newest {
            guard let stage = bySource[position], between.count < stages.count else {
                throw StoreError.unresolvableStoreVersion(
                    checksum: checksum.hexDigits, versions: candidates,
                    reason: "the plan has no stage from version \(position)")
            }
            between.append(stage)
            position = stage.destination.version
        }
        if let reason = try NetZeroSteps.problem(in: between) {
            throw StoreError.unresolvableStoreVersion(
                checksum: checksum.hexDigits, versions: candidates, reason: reason)
        }
        return newest
    }
}

/// One step of a migration plan: from one version to the next.
///
/// A lightweight stage is inferred entirely from the two schemas. A custom stage also runs the
/// app's code: each ``CustomStep``'s `willMigrate` sees the tables of the source version, its
/// `didMigrate` sees the destination's new tables and columns while removed columns and tables
/// are still there to read. Everything runs in one transaction.
public struct MigrationStage: Sendable {
    /// Code the app runs during a custom stage.
    public typealias Handler = @Sendable (MigrationContext) throws -> Void

    /// One custom step of a stage, declared in the schema as `custom name "label"`.
    public struct CustomStep: Sendable {
        /// The step's name in the schema.
        public let name: String
        /// What it does, for people.
        public let label: String
        /// Runs before the store's tables change.
        public let willMigrate: Handler?
        /// Runs after new tables and columns exist, before removed ones are dropped, and after
        /// the step's ``obligations`` are met.
        public let didMigrate: Handler
        /// What the step does for each change of its stage that only the app's code can make.
        public let obligations: [Obligation]

        /// Creates a custom step.
        public init(
            name: String, label: String, obligations: [Obligation] = [], willMigrate: Handler? = nil,
            didMigrate: @escaping Handler
        ) {
            self.name = name
            self.label = label
            self.obligations = obligations
            self.willMigrate = willMigrate
            self.didMigrate = didMigrate
        }
    }

    /// The app's code for one change of a custom stage that the schemas alone cannot migrate: a
    /// retyped attribute, a new required attribute without a default, a relationship that changes
    /// storage. The generated stage protocol requires one per change, so an app that forgets one
    /// does not compile.
    ///
    /// Obligations run after the new tables and columns exist and before the step's `didMigrate`.
    public struct Obligation: Sendable {
        /// The entity, by its name in the destination version.
        public let entity: String
        /// The attribute or relationship, by its name in the destination; `nil` for the entity's own change.
        public let property: String?
        let work: Work

        enum Work: Sendable {
            case value(onlyRowsWithoutValue: Bool, @Sendable (MigrationRow) throws -> SQLValue)
            case hook(Handler)
        }

        /// Gives `attribute` of every row of `entity` (its sub-entities' rows included) the value
        /// `body` returns for the row, or, with `onlyRowsWithoutValue`, of the rows that hold none.
        ///
        /// `body` sees the row as `didMigrate` would: the source version's values (retyped
        /// attributes still hold their old values), under the destination's names, with removed
        /// columns still there to read.
        public static func value<Value: ColumnValue>(
            of entity: String, _ attribute: String, onlyRowsWithoutValue: Bool = false,
            _ body: @escaping @Sendable (MigrationRow) throws -> Value
        ) -> Obligation {
            Obligation(
                entity: entity, property: attribute,
                work: .value(onlyRowsWithoutValue: onlyRowsWithoutValue) { try body($0).sqlValue })
        }

        /// Gives the `Codable` attribute `attribute` of every row of `entity` (or, with
        /// `onlyRowsWithoutValue`, of the rows that hold none) the value `body` returns, stored as
        /// records store it (JSON); `nil` leaves the attribute without a value.
        ///
        /// ```swift
        /// .json(of: "Book", "tags") { row in
        ///     Dictionary((try row.json("tags", as: [String].self) ?? []).map { ($0, 1) }, uniquingKeysWith: +)
        /// }
        /// ```
        public static func json<Value: Encodable & Sendable>(
            of entity: String, _ attribute: String, onlyRowsWithoutValue: Bool = false,
            _ body: @escaping @Sendable (MigrationRow) throws -> Value?
        ) -> Obligation {
            Obligation(
                entity: entity, property: attribute,
                work: .value(onlyRowsWithoutValue: onlyRowsWithoutValue) { row in
                    try body(row).map { .text(try RowEncoder.jsonText($0)) } ?? .null
                })
        }

        /// An obligation the app's code is not there for, which only a run with stubs meets
        /// (`value` says whether it is a value, and for which rows): how tools describe a stage
        /// the app has not compiled yet.
        package static func stubbed(of entity: String, _ property: String?, value onlyRowsWithoutValue: Bool?)
            -> Obligation
        {
            let missing: Handler = { _ in
                throw MigrationError.invalidPlan("the obligation for \(entity).\(property ?? "") has no code")
            }
            guard let onlyRowsWithoutValue else { return hook(of: entity, property, missing) }
            return Obligation(
                entity: entity, property: property,
                work: .value(onlyRowsWithoutValue: onlyRowsWithoutValue) { _ in
                    throw MigrationError.invalidPlan("the obligation for \(entity).\(property ?? "") has no code")
                })
        }

        /// Runs `body` for a change of `entity` (or its `property`) that no single value answers.
        public static func hook(of entity: String, _ property: String?, _ body: @escaping Handler) -> Obligation {
            Obligation(entity: entity, property: property, work: .hook(body))
        }
    }

    /// Data the step declares it may drop (`lossy Entity.property "why"` in the schema), by the
    /// source version's names. The generated plan carries the same list `plan` checked the step
    /// with, so the runtime honours exactly what the schema declares: links of a declared
    /// relationship may go (to rows that leave its destination's hierarchy, or in the app's
    /// code); links of any other relationship may not, and the stage throws instead.
    public struct Loss: Sendable, Hashable {
        /// The entity, by its name in the source version.
        public let entity: String
        /// The attribute or relationship, by its name in the source version; `nil` for the whole entity.
        public let property: String?

        /// Declares that `property` of `entity` (or the whole entity) may lose data in the stage.
        public init(_ entity: String, _ property: String? = nil) {
            self.entity = entity
            self.property = property
        }
    }

    /// The version the stage starts from.
    public let source: SchemaVersion
    /// The version it ends at.
    public let destination: SchemaVersion
    /// The app's code, in order; empty for a lightweight stage.
    public let customSteps: [CustomStep]
    /// What the step declares it may lose (see ``Loss``).
    public let losses: [Loss]

    /// Whether the stage is inferred from the schemas alone.
    public var isLightweight: Bool { customSteps.isEmpty }

    /// A stage inferred from the two schemas (Core Data's `NSLightweightMigrationStage`).
    public static func lightweight(
        from source: SchemaDescription, to destination: SchemaDescription, lossy losses: [Loss] = []
    ) -> Self {
        lightweight(from: SchemaVersion(source), to: SchemaVersion(destination), lossy: losses)
    }

    /// A stage inferred from the two versions, whose schemas are decoded only when it runs.
    public static func lightweight(
        from source: SchemaVersion, to destination: SchemaVersion, lossy losses: [Loss] = []
    ) -> Self {
        MigrationStage(source: source, destination: destination, customSteps: [], losses: losses)
    }

    /// A stage that runs the app's code (Core Data's `NSCustomMigrationStage`).
    public static func custom(
        from source: SchemaDescription, to destination: SchemaDescription, steps: [CustomStep],
        lossy losses: [Loss] = []
    ) -> Self {
        custom(from: SchemaVersion(source), to: SchemaVersion(destination), steps: steps, lossy: losses)
    }

    /// A stage that runs the app's code, between two versions whose schemas are decoded only when it runs.
    public static func custom(
        from source: SchemaVersion, to destination: SchemaVersion, steps: [CustomStep], lossy losses: [Loss] = []
    ) -> Self {
        MigrationStage(source: source, destination: destination, customSteps: steps, losses: losses)
    }

    /// Whether the step declares that `property` of `entity` (both by the source version's names)
    /// may lose data: a loss names it, an ancestor declaring it, or the whole entity; with
    /// `property` `nil`, whether it declares the whole entity (or an ancestor) lost.
    func declaresLoss(of entity: String, _ property: String?, in schema: SchemaDescription) -> Bool {
        guard let description = schema.entity(named: entity) else {
            return losses.contains { $0.entity == entity && ($0.property == nil || $0.property == property) }
        }
        let names = Set(TableMapping.lineage(of: description, in: schema).map(\.name))
        return losses.contains { names.contains($0.entity) && ($0.property == nil || $0.property == property) }
    }

    /// What the stage does to a store's tables, found by running it, with each custom step's
    /// obligations met by stubs and its own code left out, on an empty in-memory store of the source version; the result is checked against a
    /// fresh store of the destination. Tools use it to show a stage's cost before any store sees it.
    public func operations() throws -> [MigrationOperation] {
        try operations(freshSchemas: nil)
    }

    /// ``operations()``, with what fresh stores look like remembered in `freshSchemas` across
    /// calls: the planner of a long history runs hundreds of stages whose tables mostly repeat.
    /// With `syntheticRows`, the store holds ``SyntheticRows`` first, so the stage's check of
    /// values runs too: a stage that leaves a value the destination cannot read throws, and so
    /// does one that changes a value or a link the step keeps (``KeptData``).
    package func operations(freshSchemas: FreshSchemaCache?, syntheticRows: Bool = false) throws
        -> [MigrationOperation]
    {
        let connection = try SQLiteConnection(path: nil)
        let source = try SchemaLayout(self.source.schema())
        try connection.execute(SchemaSQL.createStatements(for: source, in: connection.dialect))
        var kept: KeptData?
        if syntheticRows {
            try SyntheticRows.insert(for: source, into: connection)
            kept = KeptData(
                source: source, destination: try SchemaLayout(destination.schema()),
                owed: customSteps.flatMap(\.obligations).map { ($0.entity, $0.property) }
            ) { entity, relationship in
                self.declaresLoss(of: entity, relationship, in: source.schema)
            }
            try kept?.readBefore(connection)
        }
        let operations = try shadow.run(on: connection, freshSchemas: freshSchemas)
        try kept?.compare(connection, stage: "from version \(self.source.version) to \(destination.version)")
        return operations
    }

    /// The stage as tools run it before any app implements it: the app's code is not there, so
    /// each obligation is met by a stub and `willMigrate` and `didMigrate` do nothing; what the
    /// stage does besides is the same.
    private var shadow: MigrationStage {
        let stubs = customSteps.map {
            CustomStep(name: $0.name, label: $0.label, obligations: $0.obligations, didMigrate: { _ in })
        }
        return MigrationStage(source: source, destination: destination, customSteps: stubs, losses: losses)
    }

    /// Runs the stage with stubs (as ``operations()`` does) in its own transaction on `connection`.
    private func run(on connection: some DatabaseConnection, freshSchemas: FreshSchemaCache?) throws
        -> [MigrationOperation]
    {
        var migrator = Migrator(connection: connection, progress: nil)
        migrator.stubsObligations = true
        return try migrator.run(self, number: 1, of: 1, freshSchemas: freshSchemas)
    }

    /// Runs the stage as ``operations()`` does, on a fresh store of the source version that it
    /// creates with `connection` (in the namespace the connection names unqualified tables in) and
    /// fills with ``SyntheticRows``,
    /// inside the caller's open transaction, which the caller rolls back: how `plan` learns what
    /// the migrator sends to an engine whose DDL is transactional (PostgreSQL), from the migrator
    /// itself. `willRun` is called once the store and its rows exist, right before the stage's first
    /// statement (an engine that checks foreign keys at commit checks the rows there, as a store's
    /// committed rows were);
    /// `onOperation` is told of each operation as the stage records it, after its statement ran.
    package func runOnFreshStore(
        inOpenTransactionOn connection: some DatabaseConnection, willRun: () throws -> Void,
        onOperation: @escaping (MigrationOperation) -> Void
    ) throws -> [MigrationOperation] {
        let layout = try SchemaLayout(source.schema())
        try connection.execute(SchemaSQL.createStatements(for: layout, in: connection.dialect))
        try StoreMetadata.record(layout.schema, on: connection)
        // Rows in every table, as a store being migrated has, so the row work runs where it would.
        try SyntheticRows.insert(for: layout, into: connection)
        try willRun()
        var migrator = Migrator(connection: connection, progress: nil)
        migrator.stubsObligations = true
        migrator.onOperation = onOperation
        return try migrator.runInOpenTransaction(shadow, number: 1, of: 1).operations
    }
}
