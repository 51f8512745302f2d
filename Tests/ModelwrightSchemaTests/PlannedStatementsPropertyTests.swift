import Foundation
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright
@testable import ModelwrightSchema

/// What `plan --engine postgres` prints for a step is what the migrator sends to a real server
/// when it migrates a store with rows (issue 27: one source of truth, by construction, since
/// `plan` records the migrator itself on a scratch store, `MigrationStage.postgresStatements(on:)`).
///
/// On drawn version pairs — the many-to-many and self-referencing pairs of
/// ``ManyToManyMigrationPropertyTests`` (where a join table's side swap was once printed wrongly)
/// and the general pairs of ``MigrationPropertyTests`` (type changes, moves up and down an
/// inheritance hierarchy, attribute renames, removals and additions, lost enum cases, Codable
/// retypes, entities split off into a new entity) — a store at version 1 with rows in every table
/// migrates on PostgreSQL while ``PostgresStatementLog`` records what the migrator sends, and the
/// schema changes it ran (``PostgresStatementLog/printed(_:)``, outside the opening's own work)
/// must be the printed step's, statement for statement and in order. Steps with custom stages
/// are left out (the app's code writes rows; the printout runs stubs), and counted.
///
/// Then the printed statements alone, run by psql in one transaction on an empty store of
/// version 1, must leave the columns, indexes and constraints of a fresh store of version 2.
///
/// CI draws 3 pairs of each link kind and 6 general pairs; `MODELWRIGHT_LARGE=1` draws 40 and 150.
@Suite(.enabled(if: MigrationEngine.available.contains(.postgres), "PostgreSQL is not installed"))
struct PlannedStatementsPropertyTests {
    private static let large = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1"

    /// The statements the opening sends around the migration (the change feed, `unaccent`), which
    /// are not the step's.
    static func isOpeningWork(_ statement: String) -> Bool {
        statement.hasPrefix("CREATE OR REPLACE FUNCTION _mw_notify_changes") || statement.hasPrefix("DO $install$")
            || statement.contains("unaccent")
    }

    @Test(arguments: ["many-to-many", "self-referencing", "general"])
    func thePrintedStepIsWhatTheMigratorRuns(kind: String) throws {
        let count = kind == "general" ? (Self.large ? 150 : 6) : (Self.large ? 40 : 3)
        var compared = 0
        var refused = 0
        var withStages = 0
        var statements = 0
        for seed in 1...UInt64(count) {
            let files: [String: String]
            var links: ManyToManyMigrationPropertyTests.Pair?
            switch kind {
            case "general":
                let pair = MigrationPropertyTests.pair(seed: seed)
                files = ["Pairs.v1.model": pair.v1, "Pairs.v2.model": pair.v2]
            default:
                let pair =
                    kind == "many-to-many"
                    ? ManyToManyMigrationPropertyTests.pair(seed: seed)
                    : ManyToManyMigrationPropertyTests.selfPair(seed: seed)
                links = pair
                files = ["Links.v1.model": pair.text(version: 1), "Links.v2.model": pair.text(version: 2)]
            }
            let folder = try temporaryModelFolder(named: links == nil ? "Pairs" : "Links", files: files)
            defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
            guard let model = FrontEnd.run(modelAt: folder.path).model, model.versions.count == 2 else {
                refused += 1
                continue
            }
            let step = model.steps[0]
            guard step.customStages.isEmpty else {
                withStages += 1
                continue
            }
            let (v1, v2) = (model.versions[0].schema, model.versions[1].schema)
            let failure = "\(kind) seed \(seed)\n" + files.sorted { $0.key < $1.key }.map(\.value).joined()

            // What plan prints, on a database of its own.
            let cluster = try #require(PostgresCluster.shared)
            let scratch = try cluster.createDatabase()
            defer { _ = try? cluster.psql("DROP DATABASE \(scratch)", database: "postgres") }
            let connection = try PostgresConnection(
                connectingNow: PostgresConfiguration(cluster.connectionString(database: scratch)))
            let printed = try step.shadowStage.postgresStatements(on: connection)
            connection.close()

            // What the migrator runs on a store with rows.
            let tester = try MigrationEngine.postgres.tester(
                plan: MigrationPlan(current: v2, stages: [.lightweight(from: v1, to: v2, lossy: step.losses)]),
                startingAt: v1)
            if let links {
                let target = try tester.insertRow(links.v1.1.entity, ["name": .string("b")])
                _ = try tester.insertRow(
                    links.v1.0.entity, ["name": .string("a"), links.v1.0.relationship: .toMany([target])])
            } else {
                for entity in v1.entities where !entity.isAbstract {
                    for row in 0..<2 {
                        var values: [String: SQLValue] = [:]
                        for attribute in TableMapping.lineage(of: entity, in: v1).flatMap(\.attributes)
                        where !(attribute.isOptional && row == 1) {
                            values[attribute.name] = MigrationPropertyTests.value(of: attribute.type, row: row)
                        }
                        _ = try tester.insert(entity.name, values)
                    }
                }
            }
            let database = tester.url.lastPathComponent
            PostgresStatementLog.shared.record(database)
            let migrated = Result { try tester.migrate().close() }
            let ran = PostgresStatementLog.printed(PostgresStatementLog.shared.stop(database)).filter {
                !Self.isOpeningWork($0)
            }
            try migrated.get()
            compared += 1
            let expected = printed.filter { !$0.hasPrefix("--") || $0.hasPrefix("-- records ") }
            statements += expected.count
            #expect(
                ran == expected,
                "printed:\n\(expected.joined(separator: "\n"))\nran:\n\(ran.joined(separator: "\n"))\n\(failure)")

            // The printout alone takes an empty store of version 1 to a fresh one of version 2.
            let alone = try cluster.createDatabase()
            let fresh = try cluster.createDatabase()
            defer {
                _ = try? cluster.psql("DROP DATABASE \(alone)", database: "postgres")
                _ = try? cluster.psql("DROP DATABASE \(fresh)", database: "postgres")
            }
            try cluster.psql(try PostgresDialect.createStatements(for: v1).joined(separator: ";\n"), database: alone)
            try cluster.psql(printed.filter { !$0.hasPrefix("--") }.joined(separator: ";\n"), database: alone)
            try cluster.psql(try PostgresDialect.createStatements(for: v2).joined(separator: ";\n"), database: fresh)
            let have = try cluster.schemaLines(database: alone).union(cluster.constraintLines(database: alone))
            let want = try cluster.schemaLines(database: fresh).union(cluster.constraintLines(database: fresh))
            #expect(
                have == want,
                "extra \(have.subtracting(want).sorted()), missing \(want.subtracting(have).sorted())\n\(failure)")
        }
        print(
            "\(kind) pairs: \(count) drawn, \(compared) compared on PostgreSQL (\(statements) printed statements, "
                + "each as the migrator sent it), \(withStages) with custom stages left out, \(refused) refused by plan")
        #expect(compared >= count / 3, "only \(compared) of \(count) pairs were compared")
    }
}
