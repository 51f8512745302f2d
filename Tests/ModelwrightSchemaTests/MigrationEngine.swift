import Foundation
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing

@testable import Modelwright

/// The engine a migration runs on in the property suites: each parameterised test runs once per
/// engine from one source. PostgreSQL joins when the test support could start a cluster; each
/// tester then gets a database of its own.
enum MigrationEngine: String, CustomTestStringConvertible, Sendable {
    case sqlite
    case postgres

    /// The engines of this machine.
    static let available: [MigrationEngine] = PostgresCluster.shared == nil ? [.sqlite] : [.sqlite, .postgres]

    var testDescription: String { rawValue }

    /// A tester whose store starts at `start`: a temporary file on SQLite, a new database on PostgreSQL.
    func tester(plan: MigrationPlan, startingAt start: SchemaDescription) throws -> MigrationTester {
        switch self {
        case .sqlite:
            return try MigrationTester(plan: plan, startingAt: start)
        case .postgres:
            let cluster = try #require(PostgresCluster.shared)
            let name = "mw_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())"
            let admin = try PostgresConnection(connectingNow: PostgresConfiguration(cluster.connectionString()))
            try admin.execute("CREATE DATABASE \(name)")
            admin.close()
            let configuration = PostgresConfiguration(cluster.connectionString(database: name))
            return try MigrationTester(
                plan: plan, startingAt: start, connection: PostgresConnection(connectingNow: configuration),
                location: URL(string: "postgresql://127.0.0.1:\(cluster.port)/\(name)") ?? URL(fileURLWithPath: name),
                reconnect: { try PostgresConnection(connectingNow: configuration) },
                open: { plan, progress in
                    try Store(postgres: configuration, migrationPlan: plan, readers: 1, progress: progress)
                })
        }
    }

    /// Opens the tester's migrated store as a plain store of `schema`, which checks its schema as
    /// every opening does.
    func open(_ tester: MigrationTester, schema: SchemaDescription) throws -> Store {
        switch self {
        case .sqlite:
            return try Store(url: tester.url, schema: schema)
        case .postgres:
            let cluster = try #require(PostgresCluster.shared)
            let configuration = PostgresConfiguration(cluster.connectionString(database: tester.url.lastPathComponent))
            return try Store(postgres: configuration, schema: schema, readers: 1)
        }
    }

    /// How the tester's database differs, in the engine's own catalog, from a fresh store of
    /// `schema`: nothing more on SQLite (``MigrationTester/schemaDifferences()`` reads its catalog);
    /// on PostgreSQL every column, index (by name and definition) and constraint (by name and
    /// definition), as `pg_catalog` reports them, one line each.
    func catalogDifferences(of tester: MigrationTester, from schema: SchemaDescription) throws -> [String] {
        guard self == .postgres else { return [] }
        let cluster = try #require(PostgresCluster.shared)
        let fresh = try cluster.createDatabase()
        defer { _ = try? cluster.psql("DROP DATABASE \(fresh)", database: "postgres") }
        try Store(
            postgres: PostgresConfiguration(cluster.connectionString(database: fresh)), schema: schema, readers: 1
        )
        .close()
        let migrated = tester.url.lastPathComponent
        let have = try cluster.schemaLines(database: migrated).union(cluster.constraintLines(database: migrated))
        let want = try cluster.schemaLines(database: fresh).union(cluster.constraintLines(database: fresh))
        return have.subtracting(want).sorted().map { "unexpected " + $0 }
            + want.subtracting(have).sorted().map { "missing " + $0 }
    }

    /// Whether two stored values are the same value of `type` as this engine keeps it: PostgreSQL's
    /// `jsonb` keeps a `Codable` value's JSON, not its text (spacing, escapes, key order).
    func same(_ lhs: SQLValue, _ rhs: SQLValue, as type: AttributeType) -> Bool {
        guard self == .postgres, case .codable = type, case .text(let left) = lhs, case .text(let right) = rhs else {
            return lhs == rhs
        }
        func parsed(_ text: String) -> NSObject? {
            try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) as? NSObject
        }
        return parsed(left).map { $0 == parsed(right) } ?? (left == right)
    }
}
