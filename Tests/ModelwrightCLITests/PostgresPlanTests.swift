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
        let migrated = try cluster.createDatabase()
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
            let fresh = try cluster.createDatabase()
            try cluster.psql(
                try PostgresDialect.createStatements(for: step.to.schema).joined(separator: ";\n"), database: fresh)
            let have = try cluster.schemaLines(database: migrated)
            let want = try cluster.schemaLines(database: fresh)
            #expect(
                have == want,
                "after version \(step.to.number): extra \(have.subtracting(want)), missing \(want.subtracting(have))")
            #expect(want.count > 30)
            let metadata = try cluster.psql(
                "SELECT \"key\" || '=' || \"value\" FROM \"_modelwright_metadata\" ORDER BY 1", database: migrated)
            #expect(
                metadata.trimmingCharacters(in: .newlines)
                    == "checksum=\(step.to.checksum.hexDigits)\nversion=\(step.to.number)")
        }
    }
}
