import Foundation
import Modelwright
import ModelwrightTestSupport
import Testing

@testable import ModelwrightCLI

/// `plan --engine postgres` (issue 27): each step's PostgreSQL statements, deterministic, pinned
/// by a golden file, and each printed step runs on a real server and leaves the store as a fresh
/// one of the step's destination.
struct PostgresPlanTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    private static let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Golden/Trips-plan-postgres.txt")

    private static func run(_ arguments: [String]) -> (ExitCode, BufferConsole) {
        var console = BufferConsole()
        let code = ModelwrightCommand.run(arguments, console: &console)
        return (code, console)
    }

    /// Regenerate with `MODELWRIGHT_UPDATE_GOLDEN=1 swift test --filter PostgresPlanTests`.
    @Test func theTripsPlanPrintsEachStepsPostgreSQLStatementsAsTheGoldenFileSays() throws {
        let trips = Self.root.appendingPathComponent("Models/Trips").path
        let (code, console) = Self.run(["plan", trips, "--engine", "postgres"])
        #expect(code == .success, "\(console.errors)")
        // Deterministic: a second run prints the same bytes.
        #expect(Self.run(["plan", trips, "--engine", "postgres"]).1.output == console.output)
        if ProcessInfo.processInfo.environment["MODELWRIGHT_UPDATE_GOLDEN"] == "1" {
            try console.output.write(to: Self.golden, atomically: true, encoding: .utf8)
        }
        #expect(console.output == (try String(contentsOf: Self.golden, encoding: .utf8)))
        #expect(console.output.contains("PostgreSQL (one transaction):"))
        // SQLite's plan is unchanged without the option, and a wrong engine is a usage error.
        #expect(!Self.run(["plan", trips]).1.output.contains("PostgreSQL"))
        #expect(Self.run(["plan", trips, "--engine", "oracle"]).0 == .usage)
        #expect(Self.run(["plan", trips, "--engine"]).0 == .usage)
        let (jsonCode, json) = Self.run(["plan", trips, "--json", "--engine", "postgres"])
        #expect(jsonCode == .success)
        #expect(json.output.contains("\"postgres\" : ["))
    }

    /// Each printed step, run in one transaction on a store created at the step's source version,
    /// leaves the same columns (type, nullability, default), indexes and foreign keys as a fresh
    /// store of its destination, and records the destination's version and checksum.
    @Test(.enabled(if: PostgresCluster.shared != nil, "PostgreSQL is not installed"))
    func eachPrintedStepRunsOnARealServerAndReachesItsDestination() throws {
        let cluster = try #require(PostgresCluster.shared)
        var console = BufferConsole()
        let model = try #require(
            ModelFolder.plan(Self.root.appendingPathComponent("Models/Trips").path, console: &console))
        let first = try #require(model.steps.first)
        let migrated = try Self.database(cluster)
        try cluster.psql(
            try PostgresDialect.createStatements(for: first.from.schema).joined(separator: ";\n"), database: migrated)
        for step in model.steps {
            let rowWork = step.operations.compactMap { operation -> String? in
                if case .updateRows = operation { operation.description } else { nil }
            }
            let statements = try PostgresDialect.migrationStatements(
                from: step.from.schema, to: step.to.schema, rowWork: rowWork)
            // psql runs the statements of one -c in one transaction.
            try cluster.psql(statements.joined(separator: ";\n"), database: migrated)
            let fresh = try Self.database(cluster)
            try cluster.psql(
                try PostgresDialect.createStatements(for: step.to.schema).joined(separator: ";\n"), database: fresh)
            for (name, query) in Self.catalog {
                let have = Set(try cluster.psql(query, database: migrated).split(separator: "\n"))
                let want = Set(try cluster.psql(query, database: fresh).split(separator: "\n"))
                #expect(
                    have == want,
                    "\(name) after version \(step.to.number): extra \(have.subtracting(want)), missing \(want.subtracting(have))"
                )
                #expect(!want.isEmpty, "\(name)")
            }
            let metadata = try cluster.psql(
                "SELECT \"key\" || '=' || \"value\" FROM \"_modelwright_metadata\" ORDER BY 1", database: migrated)
            #expect(
                metadata.trimmingCharacters(in: .newlines)
                    == "checksum=\(step.to.checksum.hexDigits)\nversion=\(step.to.number)")
        }
    }

    /// What a store's schema is, as lines to compare as sets (column order differs: `ADD COLUMN` appends).
    private static let catalog: [(String, String)] = [
        (
            "columns",
            """
            SELECT c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' '
                || a.attnotnull || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
            FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
            WHERE n.nspname = 'public' AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
            """
        ),
        (
            "indexes",
            """
            SELECT i.relname || ' ' || pg_get_indexdef(i.oid) FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
            JOIN pg_namespace n ON n.oid = i.relnamespace WHERE n.nspname = 'public'
            """
        ),
        (
            "foreign keys",
            """
            SELECT c.relname || ' ' || pg_get_constraintdef(k.oid) FROM pg_constraint k
            JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'public' AND k.contype = 'f'
            """
        ),
    ]

    /// A new empty database on the cluster.
    private static func database(_ cluster: PostgresCluster) throws -> String {
        let name = "mw_plan_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())"
        try cluster.psql("CREATE DATABASE \(name)", database: "postgres")
        return name
    }
}
