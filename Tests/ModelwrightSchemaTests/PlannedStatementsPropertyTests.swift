import Foundation
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright
@testable import ModelwrightSchema

/// What `plan --engine postgres` prints for a step against what the migrator sends to a real
/// server for the same step (issue 27: a printout built apart from what runs is a second source of
/// truth). On drawn many-to-many version pairs (``ManyToManyMigrationPropertyTests``'s generators,
/// where the red team found a join table's side swap printed wrongly), a store at version 1 with
/// links migrates on PostgreSQL while ``PostgresStatementLog`` records every statement the
/// migrator sends; the schema changes it ran (`CREATE`, `ALTER`, `DROP`, `DO` blocks, outside the
/// scratch schemas of its checks) are compared, as multisets of statement texts, with the
/// printout's statements (`PostgresDialect.migrationStatements`, what `plan` prints; its row work
/// is comments, and the metadata row is written by both and left out).
///
/// They disagree today: the printout is not yet made from the migrator's planning, so the draw
/// runs as one known issue (each disagreeing pair recorded in it), and the test fails once no pair
/// disagrees, which is when this becomes a plain expectation. CI draws 3 pairs of each kind;
/// `MODELWRIGHT_LARGE=1` draws 40.
@Suite(.enabled(if: MigrationEngine.available.contains(.postgres), "PostgreSQL is not installed"))
struct PlannedStatementsPropertyTests {
    private static let count = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 40 : 3

    /// The statements of `log` that change the schema, outside the scratch schemas the migrator's
    /// checks create and roll back or drop.
    static func schemaChanges(in log: [String]) -> [String] {
        var result: [String] = []
        var scratch = false
        for statement in log {
            if statement.hasPrefix("CREATE SCHEMA ") { scratch = true }
            if scratch {
                if statement.hasPrefix("DROP SCHEMA ") || statement.hasPrefix("ROLLBACK TO SAVEPOINT") {
                    scratch = false
                }
                continue
            }
            let word = statement.prefix { $0 != " " }
            guard ["CREATE", "ALTER", "DROP", "DO"].contains(word) else { continue }
            // The opening's own work after the migration: the change feed and `unaccent`.
            if statement.hasPrefix("CREATE OR REPLACE FUNCTION _mw_notify_changes")
                || statement.hasPrefix("DO $install$") || statement.contains("unaccent")
            {
                continue
            }
            result.append(statement)
        }
        return result
    }

    /// The printed statements the comparison reads: no comment (row work) and no metadata row.
    static func printedChanges(_ statements: [String]) -> [String] {
        statements.filter { !$0.hasPrefix("--") && !$0.contains(SchemaSQL.metadataTable) }
    }

    @Test(arguments: ["many-to-many", "self-referencing"])
    func thePrintedStepIsWhatTheMigratorRuns(kind: String) throws {
        var agreed = 0
        var compared = 0
        // One known issue over the whole draw: it fails the run when no pair disagrees any more.
        withKnownIssue("plan --engine postgres is built apart from the migrator (issue 27)") {
            try compare(kind: kind, agreed: &agreed, compared: &compared)
        }
        print("\(kind) pairs: \(compared) compared on PostgreSQL, \(agreed) printed as the migrator ran them")
    }

    private func compare(kind: String, agreed: inout Int, compared: inout Int) throws {
        for seed in 1...UInt64(Self.count) {
            let draw =
                kind == "many-to-many"
                ? ManyToManyMigrationPropertyTests.pair(seed:) : ManyToManyMigrationPropertyTests.selfPair(seed:)
            let pair = draw(seed)
            let (v1Text, v2Text) = (pair.text(version: 1), pair.text(version: 2))
            let folder = try temporaryModelFolder(
                named: "Links", files: ["Links.v1.model": v1Text, "Links.v2.model": v2Text])
            defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
            guard let model = FrontEnd.run(modelAt: folder.path).model, model.versions.count == 2,
                model.steps[0].customStages.isEmpty
            else { continue }
            let (v1, v2, step) = (model.versions[0].schema, model.versions[1].schema, model.steps[0])
            let printed = Self.printedChanges(try PostgresDialect.migrationStatements(from: v1, to: v2))
            let tester = try MigrationEngine.postgres.tester(
                plan: MigrationPlan(current: v2, stages: [.lightweight(from: v1, to: v2, lossy: step.losses)]),
                startingAt: v1)
            let target = try tester.insertRow(pair.v1.1.entity, ["name": .string("b")])
            _ = try tester.insertRow(
                pair.v1.0.entity, ["name": .string("a"), pair.v1.0.relationship: .toMany([target])])
            let database = tester.url.lastPathComponent
            PostgresStatementLog.shared.record(database)
            let migrated = Result { try tester.migrate().close() }
            let ran = Self.schemaChanges(in: PostgresStatementLog.shared.stop(database))
            try migrated.get()
            compared += 1
            let missing = Self.difference(printed, ran)
            let extra = Self.difference(ran, printed)
            if missing.isEmpty && extra.isEmpty {
                agreed += 1
                continue
            }
            let report =
                "seed \(seed): printed but not run:\n\(missing.joined(separator: "\n"))\n"
                + "run but not printed:\n\(extra.joined(separator: "\n"))\n\(v1Text)\(v2Text)"
            Issue.record("\(report)")
        }
    }

    /// The statements of `lines` that `other` lacks, counted as a multiset.
    private static func difference(_ lines: [String], _ other: [String]) -> [String] {
        var left = Dictionary(other.map { ($0, 1) }, uniquingKeysWith: +)
        return lines.filter { line in
            guard let count = left[line], count > 0 else { return true }
            left[line] = count - 1
            return false
        }
    }
}
