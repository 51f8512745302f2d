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
/// Rows may also be typed by the old version's schema, with no Swift type of that version:
/// ``insertRow(_:_:)`` checks each name and value against it, and ``insertSyntheticRows()`` fills
/// every column of every entity (see <doc:Migrations#Testing-migrations-in-the-app>).
///
/// The store lives in a temporary folder that is removed when the tester is released.
public final class MigrationTester {
    /// The store file.
    public let url: URL
    private let plan: MigrationPlan
    private let start: SchemaLayout
    private let folder: URL
    private var connection: (any DatabaseConnection)?
    /// Opens another connection to the store, for reading it after the migration.
    private let reconnect: () throws -> any DatabaseConnection
    /// Opens the store with the plan, which migrates it.
    private let open: (MigrationPlan, (@Sendable (MigrationProgress) -> Void)?) throws -> Store

    /// Creates a store at version `start`, empty, in a new temporary folder.
    public init(plan: MigrationPlan, startingAt start: SchemaDescription) throws {
        self.plan = plan
        self.start = try SchemaLayout(start)
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("MigrationTester-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        url = folder.appendingPathComponent("\(start.modelName).sqlite")
        let connection = try SQLiteConnection(path: url.path)
        try connection.execute(SchemaSQL.createStatements(for: self.start, in: connection.dialect))
        try StoreMetadata.record(start, on: connection)
        self.connection = connection
        let path = url.path
        reconnect = { try SQLiteConnection(path: path, readOnly: true) }
        let url = url
        open = { plan, progress in try Store(url: url, migrationPlan: plan, progress: progress) }
    }

    /// Creates a store at version `start`, empty, on the database `connection` is open on (a
    /// PostgreSQL database: the tests that run a migration on every engine). `location` names it
    /// (``url``), `reconnect` opens another connection to it and `open` opens a ``Store`` on it with
    /// a plan.
    package init(
        plan: MigrationPlan, startingAt start: SchemaDescription, connection: some DatabaseConnection,
        location: URL, reconnect: @escaping () throws -> any DatabaseConnection,
        open: @escaping (MigrationPlan, (@Sendable (MigrationProgress) -> Void)?) throws -> Store
    ) throws {
        self.plan = plan
        self.start = try SchemaLayout(start)
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("MigrationTester-\(UUID().uuidString)")
        url = location
        try connection.execute(SchemaSQL.createStatements(for: self.start, in: connection.dialect))
        try StoreMetadata.record(start, on: connection)
        self.connection = connection
        self.reconnect = reconnect
        self.open = open
    }

    /// Creates a store at version `start`, decoding its schema if it is archived (as a generated
    /// model's historical versions are).
    public convenience init(plan: MigrationPlan, startingAt start: SchemaVersion) throws {
        try self.init(plan: plan, startingAt: start.schema())
    }

    /// Creates a store at the plan's version `number`, empty, from that version's archived schema:
    /// no Swift type of the old version is needed.
    ///
    /// - Throws: ``MigrationError/invalidPlan(_:)`` when the plan has no such version.
    public convenience init(plan: MigrationPlan, startingAtVersion number: Int) throws {
        let versions = plan.stages.flatMap { [$0.source, $0.destination] } + [SchemaVersion(plan.current)]
        guard let version = versions.first(where: { $0.version == number }) else {
            throw MigrationError.invalidPlan(
                "the plan has no version \(number); its versions are \(Set(versions.map(\.version)).sorted().map(String.init).joined(separator: ", "))"
            )
        }
        try self.init(plan: plan, startingAt: version)
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

    /// Inserts a row of `entity` at the starting version, its values named and typed as that
    /// version's attributes and relationships are (composite fields as `"home.city"`); returns the
    /// row, for relationships of later rows and to find the migrated record.
    ///
    /// ```swift
    /// let tester = try MigrationTester(plan: Trips.migrationPlan(AppMigrations()), startingAtVersion: 1)
    /// let ada = try tester.insertRow(
    ///     "User", ["username": "ada", "name": "Ada Lovelace", "rating": 4, "joinedAt": .date(.now)])
    /// try tester.insertRow(
    ///     "Trip", ["identifier": .uuid(UUID()), "title": "Lisbon", "startsOn": .date(.now), "owner": .to(ada)])
    /// ```
    ///
    /// - Throws: ``MigrationError/invalidFixture(entity:version:reason:)`` for a name the version
    ///   does not have, a value that is not of the attribute's type (an integer out of an
    ///   `Int16`'s range, an enum case the version lacks, JSON that `JSONDecoder` does not read as
    ///   a `Codable` attribute's standard type), a row of another entity for a
    ///   relationship, or a required value left out.
    @discardableResult
    public func insertRow(_ entity: String, _ values: [String: FixtureValue]) throws -> FixtureRow {
        let context = try startingContext()
        let marker = context.dialect.parameter
        let version = start.schema.version
        func refuse(_ reason: String) -> MigrationError {
            .invalidFixture(entity: entity, version: version, reason: reason)
        }
        guard let layout = start.entities[entity] else {
            throw refuse(
                "version \(version) has no entity '\(entity)'; its entities are \(start.schema.entities.map(\.name).sorted().joined(separator: ", "))"
            )
        }
        guard !layout.isAbstract else {
            throw refuse("\(entity) is abstract in version \(version); write a row of a sub-entity")
        }
        // By the names the version's schema gives (a composite's field as `home.city`), and by the
        // SQL name a column takes when a sibling declares the same name with another meaning.
        let columns = Dictionary(
            layout.columns.map { ($0.key, $0) } + layout.columns.map { ($0.name, $0) },
            uniquingKeysWith: { first, _ in first })
        let toMany = Dictionary(
            layout.relationships.filter { $0.cardinality == .toMany }.map { ($0.name, $0) },
            uniquingKeysWith: { first, _ in first })
        func checkTarget(_ row: FixtureRow, of relationship: String) throws {
            guard let destination = layout.relationships.first(where: { $0.name == relationship })?.destination,
                let names = start.entities[destination]?.entityNames, names.contains(row.entity)
            else { throw refuse("'\(relationship)' cannot point at a \(row.entity) row") }
        }
        var stored: [String: SQLValue] = [:]
        var links: [(RelationshipDescription, [FixtureRow])] = []
        var oneToOnes: [(relationship: String, target: FixtureRow)] = []
        for name in values.keys.sorted() {
            guard let value = values[name] else { continue }
            if let column = columns[name] {
                if value == .null {
                    guard column.isOptional else { throw refuse("'\(name)' is required in version \(version)") }
                    stored[column.name] = .null
                } else if let type = column.type {
                    guard let sqlValue = value.stored(as: type) else {
                        throw refuse(
                            "'\(name)' is \(Self.typeName(type)) in version \(version), and \(value.kind) is not one")
                    }
                    // A `Codable` value of a standard type must be JSON `JSONDecoder` reads as
                    // that type, as a custom stage's must (``JSONShape``).
                    if case .codable(let typeName) = type, case .text(let json) = sqlValue,
                        let problem = JSONShape(spelling: typeName)?.problem(inJSON: json)
                    {
                        throw refuse(
                            "'\(name)' is Codable<\(typeName)> in version \(version), and \(json) is not one: \(problem)"
                        )
                    }
                    stored[column.name] = sqlValue
                } else {
                    guard case .to(let row) = value else {
                        throw refuse("'\(name)' is a to-one relationship; give it .to(row), not \(value.kind)")
                    }
                    try checkTarget(row, of: column.key)
                    stored[column.name] = row.id
                    oneToOnes.append((column.key, row))
                }
            } else if let relationship = toMany[name] {
                guard case .toMany(let rows) = value else {
                    throw refuse("'\(name)' is a to-many relationship; give it .toMany([rows]), not \(value.kind)")
                }
                for row in rows { try checkTarget(row, of: name) }
                links.append((relationship, rows))
            } else {
                let known = (layout.columns.map(\.key) + toMany.keys).sorted()
                throw refuse(
                    "version \(version) has no attribute or relationship '\(name)' in \(entity); it has \(known.joined(separator: ", "))"
                )
            }
        }
        for column in layout.columns
        where !column.isOptional && column.defaultLiteral == nil && stored[column.name] == nil {
            throw refuse("'\(column.key)' is required in version \(version) and has no default; give it a value")
        }
        let row = FixtureRow(entity: entity, uuid: UUIDVersion7.next())
        stored["id"] = row.id
        try context.insert(into: entity, values: stored)
        // A one-to-one keeps both sides, as a store write sets them: the target points back, and
        // a row that pointed at the target before lets go of it.
        for (name, target) in oneToOnes {
            guard let relationship = layout.relationships.first(where: { $0.name == name }),
                let inverse = relationship.inverse,
                let destination = start.entities[relationship.destination],
                destination.relationships.first(where: { $0.name == inverse })?.cardinality == .toOne
            else { continue }
            let back = quoted(destination.columnName(inverse))
            let mine = quoted(layout.columnName(name))
            try context.execute(
                "UPDATE \(quoted(layout.table)) SET \(mine) = NULL WHERE \(mine) = \(marker) AND \"id\" <> \(marker)",
                [target.id, row.id])
            try context.execute(
                "UPDATE \(quoted(destination.table)) SET \(back) = \(marker) WHERE \"id\" = \(marker)",
                [row.id, target.id])
        }
        for (relationship, targets) in links {
            let table = try start.entity(relationship.destination).table
            switch try start.storage(of: relationship, from: layout) {
            case .inverseColumn(let column, let position):
                for (place, target) in targets.enumerated() {
                    try context.execute(
                        "UPDATE \(quoted(table)) SET \(quoted(column)) = \(marker)\(position.map { ", \(quoted($0)) = \(place)" } ?? "") WHERE \"id\" = \(marker)",
                        [row.id, target.id])
                }
            case .joinTable(let join, let source, let destination, let position):
                for (place, target) in targets.enumerated() {
                    let columns = [source, destination] + (position.map { [$0] } ?? [])
                    try context.execute(
                        "INSERT INTO \(quoted(join)) (\(columns.map(quoted).joined(separator: ", "))) VALUES (\(context.dialect.parameters(2))\(position == nil ? "" : ", \(place)"))",
                        [row.id, target.id])
                }
            }
        }
        return row
    }

    /// Fills the starting version's store with rows that give every column of every concrete
    /// entity a value (extremes first) and set required relationships, as `plan` does when it
    /// checks a step; returns the rows.
    @discardableResult
    public func insertSyntheticRows() throws -> [FixtureRow] {
        guard let connection else {
            throw MigrationError.invalidPlan("the tester's store was already migrated; rows can only be added before")
        }
        let before = try allRows()
        try SyntheticRows.insert(for: start, into: connection)
        return try allRows().filter { !before.contains($0) }
    }

    /// Every row of every concrete entity at the starting version, oldest entity first.
    private func allRows() throws -> [FixtureRow] {
        let context = try startingContext()
        var rows: [FixtureRow] = []
        for entity in start.schema.entities where start.entities[entity.name]?.isAbstract == false {
            for row in try context.rows(of: entity.name) {
                guard case .blob(let bytes) = row.id, bytes.count == 16,
                    row["_entity"] == .null || row["_entity"] == .text(entity.name)
                else { continue }
                let uuid = bytes.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }
                rows.append(FixtureRow(entity: entity.name, uuid: UUID(uuid: uuid)))
            }
        }
        return rows
    }

    /// The links of `relationship` of `entity` as the store now holds them (after
    /// ``migrate(progress:)``, in the current version's shape): each source row's ID with the IDs
    /// of the rows it leads to, in order for an ordered relationship (by ID otherwise).
    ///
    /// ```swift
    /// let pets = try tester.links(of: "Person", "pets")
    /// #expect(pets[ada.id] == [rex.id])
    /// ```
    public func links(of entity: String, _ relationship: String) throws -> [SQLValue: [SQLValue]] {
        let connection = try reconnect()
        let version = try StoreMetadata.storedVersion(on: connection)
        let layout = version == plan.current.version ? try SchemaLayout(plan.current) : start
        let (description, target) = try layout.destination(of: relationship, from: layout.entity(entity))
        let source = try layout.entity(entity)
        let sql: String
        if description.cardinality == .toOne {
            let column = quoted(source.columnName(relationship))
            sql =
                "SELECT t.\"id\", t.\(column) FROM \(quoted(source.table)) AS t WHERE t.\(column) IS NOT NULL"
                + (source.discriminatorSQL(alias: "t").map { " AND " + $0 } ?? "") + " ORDER BY t.\"id\""
        } else {
            switch try layout.storage(of: description, from: source) {
            case .inverseColumn(let column, let position):
                sql =
                    "SELECT t.\(quoted(column)), t.\"id\" FROM \(quoted(target.table)) AS t WHERE t.\(quoted(column)) IS NOT NULL"
                    + (target.discriminatorSQL(alias: "t").map { " AND " + $0 } ?? "")
                    + " ORDER BY t.\(quoted(column)), \(position.map { "t." + quoted($0) + ", " } ?? "")t.\"id\""
            case .joinTable(let table, let from, let to, let position):
                sql =
                    "SELECT t.\(quoted(from)), t.\(quoted(to)) FROM \(quoted(table)) AS t ORDER BY t.\(quoted(from)), "
                    + "\(position.map { "t." + quoted($0) + ", " } ?? "")t.\(quoted(to))"
            }
        }
        let statement = try connection.prepare(sql)
        var result: [SQLValue: [SQLValue]] = [:]
        while try statement.step() { result[statement.value(0), default: []].append(statement.value(1)) }
        return result
    }

    /// The attribute type as the schema language spells it, with what a value must be, for errors.
    private static func typeName(_ type: AttributeType) -> String {
        switch type {
        case .enumeration(let description):
            "the enum \(description.name) (\(description.cases.map(\.rawValue).joined(separator: ", ")))"
        case .composite(let description): "the composite \(description.name)"
        case .codable: "\(type.schemaSpelling) (JSON text)"
        default: type.schemaSpelling
        }
    }

    /// Runs SQL at the starting version, for what ``insert(_:_:)`` does not cover.
    public func execute(_ sql: String, _ arguments: [SQLValue] = []) throws {
        try startingContext().execute(sql, arguments)
    }

    /// Opens the store with the plan, which migrates it to the current version.
    public func migrate(progress: (@Sendable (MigrationProgress) -> Void)? = nil) throws -> Store {
        connection?.close()
        connection = nil
        return try open(plan, progress)
    }

    /// The rows of `entity` as the store now holds them (after ``migrate(progress:)``, in the
    /// current version's shape).
    public func rows(of entity: String) throws -> [MigrationRow] {
        let connection = try reconnect()
        defer { connection.close() }
        let version = try StoreMetadata.storedVersion(on: connection)
        let layout = version == plan.current.version ? try SchemaLayout(plan.current) : start
        return try MigrationContext(connection: connection, layout: layout).rows(of: entity)
    }

    /// How the store's schema differs from a fresh store of the current version, one sentence
    /// per difference: tables, columns with types, nullability and defaults, indexes, foreign keys.
    public func schemaDifferences() throws -> [String] {
        let connection = try reconnect()
        defer { connection.close() }
        guard connection.dialect.scratchNamespace != nil else {
            return try StoreSchema.read(connection).differences(from: StoreSchema.fresh(SchemaLayout(plan.current)))
        }
        let tables = SchemaSQL.tables(for: try SchemaLayout(plan.current), in: connection.dialect)
        return try connection.inTransaction(.deferred) {
            try StoreSchema.read(connection).differences(from: StoreSchema.fresh(tables, on: connection))
        }
    }

    private func startingContext() throws -> MigrationContext {
        guard let connection else {
            throw MigrationError.invalidPlan("the tester's store was already migrated; rows can only be added before")
        }
        return MigrationContext(connection: connection, layout: start)
    }
}
