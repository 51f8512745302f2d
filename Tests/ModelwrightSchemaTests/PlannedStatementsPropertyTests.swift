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
/// must be the printed step's, statement for statement and in order. A step with a custom stage
/// migrates with the app's code as an app would write it (a value of the new type for each row an
/// obligation names, a new part for each row an entity is split from), while `plan` runs stubs:
/// the rows differ, the statements that change the schema must not.
///
/// Then the printed statements alone, run by psql in one transaction on an empty store of
/// version 1, must leave the columns, indexes and constraints the migrator left.
///
/// CI draws 2 pairs of each link kind and 8 general pairs; `MODELWRIGHT_LARGE=1` draws 40 and 150.
@Suite(.heavy, .enabled(if: MigrationEngine.available.contains(.postgres), "PostgreSQL is not installed"))
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
        let count = kind == "general" ? (Self.large ? 150 : 8) : (Self.large ? 40 : 2)
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
            let (v1, v2) = (model.versions[0].schema, model.versions[1].schema)
            if !step.customStages.isEmpty { withStages += 1 }
            let failure = "\(kind) seed \(seed)\n" + files.sorted { $0.key < $1.key }.map(\.value).joined()

            // What plan prints, on a database of its own.
            let cluster = try #require(PostgresCluster.shared)
            let scratch = try cluster.createDatabase()
            defer { _ = try? cluster.psql("DROP DATABASE \(scratch)", database: "postgres") }
            let connection = try PostgresConnection(
                connectingNow: PostgresConfiguration(cluster.connectionString(database: scratch)))
            let planned = Result { try step.shadowStage.postgresStatements(on: connection) }
            connection.close()
            guard case .success(let printed) = planned else {
                Issue.record("plan's run on PostgreSQL failed: \(planned)\n\(failure)")
                continue
            }

            // What the migrator runs on a store with rows.
            let tester = try MigrationEngine.postgres.tester(
                plan: MigrationPlan(current: v2, stages: [Self.appStage(for: step, from: v1, to: v2)]), startingAt: v1)
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
            guard case .success = migrated else {
                Issue.record("the migration failed: \(migrated)\n\(failure)")
                continue
            }
            compared += 1
            let expected = printed.filter { !$0.hasPrefix("--") || $0.hasPrefix("-- records ") }
            statements += expected.count
            #expect(
                ran == expected,
                "printed:\n\(expected.joined(separator: "\n"))\nran:\n\(ran.joined(separator: "\n"))\n\(failure)")

            // The printout alone, run by psql on an empty store of version 1, leaves the schema the
            // migrator left: it is complete, not only true.
            let alone = try cluster.createDatabase()
            defer { _ = try? cluster.psql("DROP DATABASE \(alone)", database: "postgres") }
            // Created as a store creates it (`PostgresDialect.createStatements` spells defaults otherwise).
            try Store(
                postgres: PostgresConfiguration(cluster.connectionString(database: alone)), schema: v1, readers: 1
            )
            .close()
            try cluster.psql(printed.filter { !$0.hasPrefix("--") }.joined(separator: ";\n"), database: alone)
            let have = try cluster.schemaLines(database: alone).union(cluster.constraintLines(database: alone))
            let want = try cluster.schemaLines(database: database).union(cluster.constraintLines(database: database))
            #expect(
                have == want,
                "extra \(have.subtracting(want).sorted()), missing \(want.subtracting(have).sorted())\n\(failure)")
        }
        print(
            "\(kind) pairs: \(count) drawn, \(compared) compared on PostgreSQL (\(statements) printed statements, "
                + "each as the migrator sent it), \(withStages) of them with custom stages, \(refused) refused by plan")
        #expect(compared >= count / 5, "only \(compared) of \(count) pairs were compared")
    }

    /// A value a custom stage returns, as the store keeps it.
    private struct Stored: ColumnValue {
        let sqlValue: SQLValue
    }

    /// The step's stage with the app's code, as ``MigrationPropertyTests`` writes it: each value
    /// obligation gives every row a value of the new type, and an entity split off `Solo` gets a
    /// new `Part` for each row, linked both ways.
    static func appStage(for step: PlannedStep, from v1: SchemaDescription, to v2: SchemaDescription)
        -> MigrationStage
    {
        let stages = step.customStages.map { stage in
            MigrationStage.CustomStep(
                name: stage.name, label: stage.label,
                obligations: step.obligations.filter { $0.stage == stage.name }.compactMap { obligation in
                    if obligation.entity == "Solo", obligation.property == "part", let part = v2.entity(named: "Part") {
                        return .hook(of: "Solo", "part") { context in
                            for solo in try context.rows(of: "Solo") {
                                let id = context.newID()
                                var values: [String: SQLValue] = ["id": id]
                                for attribute in part.attributes where !attribute.isOptional {
                                    values[attribute.name] = MigrationPropertyTests.value(of: attribute.type, row: 1)
                                }
                                if part.relationships.contains(where: { $0.name == "solo" }) {
                                    values["solo"] = solo.id
                                }
                                try context.insert(into: "Part", values: values)
                                try context.update("Solo", id: solo.id, set: ["part": id])
                            }
                        }
                    }
                    guard case .value(let type, _, let onlyRowsWithoutValue) = obligation.work,
                        let property = obligation.property
                    else { return nil }
                    return .value(of: obligation.entity, property, onlyRowsWithoutValue: onlyRowsWithoutValue) { _ in
                        Stored(sqlValue: MigrationPropertyTests.value(of: type, row: 1))
                    }
                },
                didMigrate: { _ in })
        }
        return stages.isEmpty
            ? .lightweight(from: v1, to: v2, lossy: step.losses)
            : .custom(from: v1, to: v2, steps: stages, lossy: step.losses)
    }
}
