import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright

/// The PostgreSQL rendering of a migration step (issue 27), over the version pairs the store
/// verification property draws (``StoreSchemas``: inheritance, every simple type, defaults,
/// uniqueness, indexes, to-one, to-many and ordered relationships; then added attributes and
/// entities, renames, new indexes, dropped uniqueness): a store created at the first version on a
/// real server, with rows in every table, runs the step's statements in one transaction and then
/// holds exactly the schema of a fresh store of the second version, its rows still there.
///
/// `MODELWRIGHT_LARGE=1` draws 300 pairs instead of the CI's 5.
@Suite(.enabled(if: PostgresCluster.shared != nil, "PostgreSQL is not installed"))
struct PostgresMigrationStatementsTests {
    private static let caseCount = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 300 : 5

    @Test func everyDrawnStepReachesAFreshStoreOfItsDestinationKeepingItsRows() throws {
        let cluster = try #require(PostgresCluster.shared)
        var checked = 0
        var skipped = 0
        for seed in 0..<UInt64(Self.caseCount) {
            var random = SplitMix64(seed: seed, index: 27)
            let v1 = StoreSchemas.schema(&random, version: 1)
            let v2 = StoreSchemas.nextVersion(of: v1, &random)
            guard let create = try? PostgresDialect.createStatements(for: v1),
                let fresh = try? PostgresDialect.createStatements(for: v2)
            else {
                skipped += 1  // a drawn schema the runtime refuses to lay out
                continue
            }
            let statements = try PostgresDialect.migrationStatements(from: v1, to: v2)
            let migrated = try cluster.createDatabase()
            let expected = try cluster.createDatabase()
            defer {
                _ = try? cluster.psql("DROP DATABASE \(migrated)", database: "postgres")
                _ = try? cluster.psql("DROP DATABASE \(expected)", database: "postgres")
            }
            try cluster.psql(create.joined(separator: ";\n"), database: migrated)
            // A row in every table that takes one with only its ID (the others' required columns have no value).
            let tables = try PostgresDialect.tableDefinitions(for: v1)
            var rows = 0
            for table in tables where table.columns.first?.name == "id" {
                let free = table.columns.dropFirst().allSatisfy {
                    !$0.definition.contains(" NOT NULL") || $0.definition.contains(" DEFAULT ")
                        || $0.name == "_entity"
                }
                guard free else { continue }
                let entity = table.columns.contains { $0.name == "_entity" } ? ", \"_entity\"" : ""
                let value = entity.isEmpty ? "" : ", \(SQLSyntax.string(table.name))"
                try cluster.psql(
                    "INSERT INTO \(table.quotedName) (\"id\"\(entity)) VALUES (gen_random_uuid()\(value))",
                    database: migrated)
                rows += 1
            }
            do {
                try cluster.psql(statements.joined(separator: ";\n"), database: migrated)
            } catch {
                Issue.record("seed \(seed): \(error)\n\(statements.joined(separator: ";\n"))")
                continue
            }
            try cluster.psql(fresh.joined(separator: ";\n"), database: expected)
            let have = try cluster.schemaLines(database: migrated)
            let want = try cluster.schemaLines(database: expected)
            #expect(
                have == want,
                "seed \(seed): extra \(have.subtracting(want)), missing \(want.subtracting(have))\n\(statements.joined(separator: ";\n"))"
            )
            // The drawn steps rename no table, so each keeps its name.
            let count = tables.filter { $0.columns.first?.name == "id" }.map {
                "(SELECT count(*) FROM \($0.quotedName))"
            }
            if !count.isEmpty && rows > 0 {
                let total = try cluster.psql("SELECT " + count.joined(separator: " + "), database: migrated)
                #expect(Int(total.trimmingCharacters(in: .whitespacesAndNewlines)) == rows, "seed \(seed)")
            }
            checked += 1
        }
        print("PostgreSQL migration statements: \(checked) drawn steps checked, \(skipped) schemas not laid out")
        #expect(skipped * 4 < Self.caseCount)
    }
}
