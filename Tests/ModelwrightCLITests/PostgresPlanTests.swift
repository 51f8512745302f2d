import Foundation
import Modelwright
import ModelwrightTestSupport
import Testing

@testable import ModelwrightCLI

#if canImport(ModelwrightPostgres)
    import ModelwrightPostgres
#endif

/// `plan --engine postgres` (issue 27): each step's PostgreSQL statements are those the migrator
/// sends when it runs the step on a real server (a scratch schema in a transaction rolled back),
/// deterministic whichever server runs them, pinned by a golden file; run alone, the printed
/// statements take a store of the step's source version to a fresh one of its destination.
@Suite(.heavy)
struct PostgresPlanTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    private static let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Golden/Trips-plan-postgres.txt")
    private static let trips = root.appendingPathComponent("Models/Trips").path

    private static func run(_ arguments: [String]) -> (ExitCode, BufferConsole) {
        var console = BufferConsole()
        let code = ModelwrightCommand.run(arguments, console: &console)
        return (code, console)
    }

    /// Regenerate with `MODELWRIGHT_UPDATE_GOLDEN=1 swift test --filter PostgresPlanTests`.
    @Test(.enabled(if: PostgresCluster.shared != nil, "PostgreSQL is not installed"))
    func theTripsPlanPrintsWhatTheMigratorSendsAsTheGoldenFileSays() throws {
        let cluster = try #require(PostgresCluster.shared)
        let database = try cluster.createDatabase()
        defer { _ = try? cluster.psql("DROP DATABASE \(database)", database: "postgres") }
        let server = cluster.url(database: database)
        let (code, console) = Self.run(["plan", Self.trips, "--engine", "postgres", "--postgres", server])
        #expect(code == .success, "\(console.errors)")
        // Deterministic: a second run prints the same bytes, and nothing of the first stayed.
        #expect(
            Self.run(["plan", Self.trips, "--engine", "postgres", "--postgres", server]).1.output == console.output)
        let left = try cluster.psql(
            "SELECT count(*) FROM pg_namespace WHERE nspname LIKE '\\_mw\\_%'", database: database)
        #expect(left.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        if ProcessInfo.processInfo.environment["MODELWRIGHT_UPDATE_GOLDEN"] == "1" {
            try console.output.write(to: Self.golden, atomically: true, encoding: .utf8)
        }
        #expect(console.output == (try String(contentsOf: Self.golden, encoding: .utf8)))
        #expect(console.output.contains("PostgreSQL (one transaction):"))
        // SQLite's plan is unchanged without the option, and a wrong engine is a usage error.
        #expect(!Self.run(["plan", Self.trips]).1.output.contains("PostgreSQL"))
        #expect(Self.run(["plan", Self.trips, "--engine", "oracle"]).0 == .usage)
        #expect(Self.run(["plan", Self.trips, "--engine"]).0 == .usage)
        #expect(Self.run(["plan", Self.trips, "--postgres", server]).0 == .usage)
        #expect(Self.run(["plan", Self.trips, "--engine", "postgres", "--postgres"]).0 == .usage)
        let (jsonCode, json) = Self.run(["plan", Self.trips, "--json", "--engine", "postgres", "--postgres", server])
        #expect(jsonCode == .success)
        #expect(json.output.contains("\"postgres\" : ["))
    }

    /// Without `--postgres`, `plan` starts a throwaway cluster of its own (the product's
    /// `ThrowawayCluster`, as the tests start theirs), prints the same, and removes it.
    @Test(.enabled(if: PostgresCluster.shared != nil, "PostgreSQL is not installed"))
    func withoutANamedServerAThrowawayClusterPrintsTheSame() throws {
        let before = Self.clusterFolders()
        let (code, console) = Self.run(["plan", Self.trips, "--engine", "postgres"])
        #expect(code == .success, "\(console.errors)")
        let golden = try String(contentsOf: Self.golden, encoding: .utf8)
        let first = zip(console.output.split(separator: "\n"), golden.split(separator: "\n"))
            .first { $0.0 != $0.1 }
        #expect(console.output == golden, "first difference: \(first.map { "\($0.0)\n  golden: \($0.1)" } ?? "length")")
        #expect(Self.clusterFolders().subtracting(before).isEmpty, "the throwaway cluster's folder is left")
    }

    /// A server that cannot be reached is an error at the model's file that says how to get the
    /// printout, with exit code 1 and nothing on standard output.
    @Test func anUnreachableServerIsALocatedErrorThatSaysWhatToDo() {
        // Port 1 on the loopback: nothing listens there, so the connection is refused at once.
        let (code, console) = Self.run([
            "plan", Self.trips, "--engine", "postgres", "--postgres",
            "host=127.0.0.1 port=1 user=nobody password=secret-word connect_timeout=2",
        ])
        #expect(code == .invalidInput)
        #expect(console.output.isEmpty)
        #expect(console.errors.contains("Trips.v2.model: error: no PostgreSQL server to run the steps on"))
        #expect(console.errors.contains("--postgres"))
        #expect(!console.errors.contains("secret-word"))
    }

    #if canImport(ModelwrightPostgres)
        /// Each printed step, its statements run alone by psql in one transaction on a store created
        /// at the step's source version, leaves the same columns (type, nullability, default), indexes
        /// and foreign keys as a fresh store of its destination: the printout is complete as well as
        /// true.
        @Test(.enabled(if: PostgresCluster.shared != nil, "PostgreSQL is not installed"))
        func eachPrintedStepRunsAloneOnARealServerAndReachesItsDestination() throws {
            let cluster = try #require(PostgresCluster.shared)
            var console = BufferConsole()
            let model = try #require(ModelFolder.plan(Self.trips, console: &console))
            let scratch = try cluster.createDatabase()
            let (code, json) = Self.run([
                "plan", Self.trips, "--json", "--engine", "postgres", "--postgres", cluster.url(database: scratch),
            ])
            #expect(code == .success, "\(json.errors)")
            let plan = try #require(
                try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
            let steps = try #require(plan["steps"] as? [[String: Any]])
            #expect(steps.count == model.steps.count)
            let first = try #require(model.steps.first)
            // Created as a store creates its tables.
            func store(_ schema: SchemaDescription) throws -> String {
                let database = try cluster.createDatabase()
                let configuration = PostgresConfiguration(cluster.connectionString(database: database))
                try Store(postgres: configuration, schema: schema, readers: 1).close()
                return database
            }
            let migrated = try store(first.from.schema)
            for (step, printed) in zip(model.steps, steps) {
                let statements = try #require(printed["postgres"] as? [String]).filter { !$0.hasPrefix("--") }
                // psql runs the statements of one -c in one transaction.
                try cluster.psql(statements.joined(separator: ";\n"), database: migrated)
                let fresh = try store(step.to.schema)
                let have = try cluster.schemaLines(database: migrated)
                let want = try cluster.schemaLines(database: fresh)
                #expect(
                    have == want,
                    "after version \(step.to.number): extra \(have.subtracting(want)), missing \(want.subtracting(have))"
                )
                #expect(want.count > 30)
            }
        }
    #endif

    /// The throwaway clusters' folders in the temporary folder.
    private static func clusterFolders() -> Set<String> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path))
        return Set((names ?? []).filter { $0.hasPrefix("modelwright-pg-") && !$0.hasPrefix("modelwright-pg-output") })
    }
}
