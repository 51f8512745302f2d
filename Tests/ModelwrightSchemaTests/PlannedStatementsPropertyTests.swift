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
/// Then the printed statements alone, run by psql in one transaction on the same store of
/// version 1 with the same rows, must leave the columns, indexes and constraints the migrator left
/// and the same rows and links: the printout is complete, so the migrator's own row work (links
/// carried through temporary tables, defaults filled before `SET NOT NULL`) is in it. A step with
/// a custom stage, whose rows are the app's Swift code, runs alone on the store emptied.
/// ``DefaultFills`` draws steps where the migrator fills rows itself, with links to keep.
///
/// CI draws 3 pairs of each link kind, 3 of default fills and 12 general pairs, on one database
/// for plan's runs; `MODELWRIGHT_LARGE=1` draws 40 and 150.
@Suite(.heavy, .enabled(if: MigrationEngine.available.contains(.postgres), "PostgreSQL is not installed"))
struct PlannedStatementsPropertyTests {
    private static let large = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1"

    /// The statements the opening sends around the migration (the change feed, `unaccent`), which
    /// are not the step's.
    static func isOpeningWork(_ statement: String) -> Bool {
        statement.hasPrefix("CREATE OR REPLACE FUNCTION _mw_notify_changes") || statement.hasPrefix("DO $install$")
            || statement.contains("unaccent")
    }

    @Test(arguments: ["many-to-many", "self-referencing", "general", "default fills"])
    func thePrintedStepIsWhatTheMigratorRuns(kind: String) throws {
        let count = kind == "general" ? (Self.large ? 150 : 12) : (Self.large ? 40 : 3)
        var compared = 0
        var refused = 0
        var withStages = 0
        var statements = 0
        var withRows = 0
        // One database for every pair's plan: plan's run is rolled back, so it leaves nothing.
        let cluster = try #require(PostgresCluster.shared)
        let scratch = try cluster.createDatabase()
        defer { _ = try? cluster.psql("DROP DATABASE \(scratch)", database: "postgres") }
        let connection = try PostgresConnection(
            connectingNow: PostgresConfiguration(cluster.connectionString(database: scratch)))
        defer { connection.close() }
        // `MODELWRIGHT_SEED=68` draws that pair alone, to reproduce a failure.
        let seeds = ProcessInfo.processInfo.environment["MODELWRIGHT_SEED"].flatMap(UInt64.init).map { [$0] }
        for seed in seeds ?? Array(1...UInt64(count)) {
            let files: [String: String]
            var links: ManyToManyMigrationPropertyTests.Pair?
            var fills: DefaultFills?
            switch kind {
            case "default fills":
                let pair = DefaultFills(seed: seed)
                fills = pair
                files = ["Fills.v1.model": pair.text(version: 1), "Fills.v2.model": pair.text(version: 2)]
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
            let folder = try temporaryModelFolder(
                named: fills != nil ? "Fills" : links == nil ? "Pairs" : "Links", files: files)
            defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
            guard let model = FrontEnd.run(modelAt: folder.path).model, model.versions.count == 2 else {
                refused += 1
                continue
            }
            let step = model.steps[0]
            let (v1, v2) = (model.versions[0].schema, model.versions[1].schema)
            if !step.customStages.isEmpty { withStages += 1 }
            let failure = "\(kind) seed \(seed)\n" + files.sorted { $0.key < $1.key }.map(\.value).joined()

            // What plan prints.
            let planned = Result { try step.shadowStage.postgresStatements(on: connection) }
            guard case .success(let printed) = planned else {
                Issue.record("plan's run on PostgreSQL failed: \(planned)\n\(failure)")
                continue
            }

            // What the migrator runs on a store with rows.
            let tester = try MigrationEngine.postgres.tester(
                plan: MigrationPlan(current: v2, stages: [Self.appStage(for: step, from: v1, to: v2)]), startingAt: v1)
            if let fills {
                try fills.insertRows(into: tester)
            } else if let links {
                // Several links per row, in both directions, so a lost or turned link shows.
                let targets = try (0..<3).map { try tester.insertRow(links.v1.1.entity, ["name": .string("b\($0)")]) }
                for (number, linked) in [[0, 1, 2], [2, 0], [1]].enumerated() {
                    _ = try tester.insertRow(
                        links.v1.0.entity,
                        ["name": .string("a\(number)"), links.v1.0.relationship: .toMany(linked.map { targets[$0] })])
                }
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
            // The same store, rows and all, for the printout to run on alone.
            let alone = try cluster.createDatabase()
            defer { _ = try? cluster.psql("DROP DATABASE \(alone)", database: "postgres") }
            // Created as a store creates it, then given the tester's rows.
            try Store(
                postgres: PostgresConfiguration(cluster.connectionString(database: alone)), schema: v1, readers: 1
            )
            .close()
            try Self.copyRows(from: database, to: alone, on: cluster)
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

            // The printout alone, run by psql on the same store of version 1 with the same rows,
            // leaves the schema the migrator left and the same rows and links: it is complete, not
            // only true. A custom stage's rows are the app's Swift code, which the printout names
            // in comments only: with one, the printout runs on the store emptied instead.
            let hasRowWork = !step.customStages.isEmpty
            if hasRowWork { try Self.emptyTables(of: alone, on: cluster) }
            let script = printed.filter { !$0.hasPrefix("--") }.joined(separator: ";\n")
            do {
                try cluster.psql(script, database: alone)
            } catch {
                Issue.record("the printout alone failed: \(error)\n\(script)\n\(failure)")
                continue
            }
            let have = try cluster.schemaLines(database: alone).union(cluster.constraintLines(database: alone))
            let want = try cluster.schemaLines(database: database).union(cluster.constraintLines(database: database))
            #expect(
                have == want,
                "extra \(have.subtracting(want).sorted()), missing \(want.subtracting(have).sorted())\n\(failure)")
            if !hasRowWork {
                withRows += 1
                let rows = try Self.rows(of: alone, on: cluster)
                let migratedRows = try Self.rows(of: database, on: cluster)
                #expect(!migratedRows.isEmpty)
                let difference =
                    "rows after the printout:\n\(rows.joined(separator: "\n"))\nafter the migrator:\n"
                    + "\(migratedRows.joined(separator: "\n"))\n\(script)\n\(failure)"
                #expect(rows == migratedRows, "\(difference)")
            }
        }
        print(
            "\(kind) pairs: \(seeds?.count ?? count) drawn, \(compared) compared on PostgreSQL (\(statements) printed statements, "
                + "each as the migrator sent it), \(withStages) of them with custom stages, \(refused) refused by plan, "
                + "\(withRows) printouts run alone on the store with its rows and compared row by row")
        #expect(seeds != nil || compared >= count / 5, "only \(compared) of \(count) pairs were compared")
    }

    /// The store's tables in `database` (its rows' tables and join tables; not the metadata, the
    /// history or the change feed's), quoted.
    private static func tables(of database: String, on cluster: PostgresCluster) throws -> [String] {
        try cluster.psql(
            "SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = 'public' "
                + "AND tablename NOT LIKE '\\_mw\\_%' AND tablename NOT LIKE '\\_modelwright\\_%' ORDER BY 1",
            database: database
        ).split(separator: "\n").map(String.init)
    }

    /// Copies every row of the store in `source` into the same tables in `destination` (a store of
    /// the same version, empty), through JSON, which keeps each value of every column type exactly.
    private static func copyRows(from source: String, to destination: String, on cluster: PostgresCluster) throws {
        var script: [String] = []
        for table in try tables(of: source, on: cluster) {
            let rows = try cluster.psql("SELECT coalesce(json_agg(t), '[]') FROM \(table) t", database: source)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let literal = "'" + rows.replacingOccurrences(of: "'", with: "''") + "'"
            script.append("INSERT INTO \(table) SELECT * FROM json_populate_recordset(NULL::\(table), \(literal))")
        }
        try cluster.psql(script.joined(separator: ";\n"), database: destination)
    }

    /// Deletes every row of the store in `database`.
    private static func emptyTables(of database: String, on cluster: PostgresCluster) throws {
        let tables = try tables(of: database, on: cluster)
        guard !tables.isEmpty else { return }
        try cluster.psql("TRUNCATE \(tables.joined(separator: ", ")) CASCADE", database: database)
    }

    /// Every row of every table of the store in `database`, as its table's name and the row's
    /// `jsonb` (keys sorted, so column order does not count), sorted.
    private static func rows(of database: String, on cluster: PostgresCluster) throws -> [String] {
        var result: [String] = []
        for table in try tables(of: database, on: cluster) {
            result += try cluster.psql("SELECT to_jsonb(t)::text FROM \(table) t", database: database)
                .split(separator: "\n").map { "\(table) \($0)" }
        }
        return result.sorted()
    }

    /// A step the migrator fills rows in itself, with links to keep across it: `Owner`'s optional
    /// attributes of drawn types become required with a default (or gain one), some renamed, so
    /// the rows without a value take the default (`UPDATE … SET … = COALESCE(…)` on PostgreSQL,
    /// before `SET NOT NULL`); and its many-to-many `tags` is renamed, made ordered or unordered,
    /// or kept, so the join table is made again through a temporary table of its links, or not.
    struct DefaultFills {
        /// Each attribute: version 1's name, its type and default, version 2's name, whether version
        /// 2 still lets it be empty (then it only gains the default).
        var attributes: [(name: String, type: String, value: String, renamed: String?, optional: Bool)] = []
        var relationship = "tags"
        var ordered = (false, false)

        private static let types: [(type: String, value: String)] = [
            ("String", "\"d\""), ("Int16", "7"), ("Int32", "-3"), ("Int64", "9000000000"), ("Double", "1.5"),
            ("Float", "0.25"), ("Bool", "true"), ("Decimal", "2.25"), ("Kind", ".b"),
        ]

        init(seed: UInt64) {
            var random = SplitMix64(seed: seed &+ 7_919)
            func roll(_ count: Int) -> Int { Int(random.next() % UInt64(count)) }
            for number in 0..<(1 + roll(3)) {
                let (type, value) = Self.types[roll(Self.types.count)]
                attributes.append(
                    ("a\(number)", type, value, roll(3) == 0 ? "b\(number)" : nil, roll(4) == 0))
            }
            switch roll(4) {
            case 0: relationship = "labels"
            case 1: ordered = (false, true)
            case 2: ordered = (true, false)
            default: break
            }
        }

        func text(version: Int) -> String {
            var lines = ["model Fills version \(version)", "enum Kind: String {", "    case a, b, c", "}"]
            lines.append("entity Owner {")
            lines.append("    name: String")
            for attribute in attributes {
                if version == 1 {
                    lines.append("    \(attribute.name): \(attribute.type)?")
                } else {
                    let name = attribute.renamed ?? attribute.name
                    let renamed = attribute.renamed == nil ? "" : " @renamed(from: \(attribute.name))"
                    lines.append(
                        "    \(name): \(attribute.type)\(attribute.optional ? "?" : "") = \(attribute.value)\(renamed)")
                }
            }
            let ordered = version == 1 ? self.ordered.0 : self.ordered.1
            let name = version == 1 ? "tags" : relationship
            let renamed = name == "tags" ? "" : " @renamed(from: tags)"
            lines.append("    \(name): \(ordered ? "[Tag]" : "Set<Tag>") @inverse(owners)\(renamed)")
            lines.append("}")
            lines.append("entity Tag {")
            lines.append("    name: String")
            lines.append("    owners: Set<Owner> @inverse(\(name))")
            lines.append("}")
            if version == 2, self.ordered.0, !self.ordered.1 {
                lines += ["migration from 1 {", "    lossy Owner.\(relationship)", "}"]
            }
            return lines.joined(separator: "\n") + "\n"
        }

        /// Three tags and four owners, each attribute empty in some rows and set in others, each
        /// owner linked to a different set of tags.
        func insertRows(into tester: MigrationTester) throws {
            let tags = try (0..<3).map { try tester.insertRow("Tag", ["name": .string("t\($0)")]) }
            for (row, linked) in [[0, 1, 2], [2, 0], [], [1]].enumerated() {
                var values: [String: FixtureValue] = [
                    "name": .string("o\(row)"), "tags": .toMany(linked.map { tags[$0] }),
                ]
                for (number, attribute) in attributes.enumerated() where (row + number) % 2 == 1 {
                    values[attribute.name] = Self.value(of: attribute.type, row: row)
                }
                _ = try tester.insertRow("Owner", values)
            }
        }

        private static func value(of type: String, row: Int) -> FixtureValue {
            switch type {
            case "String": .string("s\(row)")
            case "Int16", "Int32", "Int64": .integer(Int64(row) + 1)
            case "Double", "Float": .double(Double(row) + 0.5)
            case "Bool": .bool(row % 2 == 0)
            case "Decimal": .decimal(Decimal(row) + 0.75)
            default: .string(["a", "b", "c"][row % 3])
            }
        }
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
                        return MigrationPropertyTests.splitHook(part: part)
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
