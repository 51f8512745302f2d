import Foundation
import Modelwright
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing

/// A step that removes entities whose tables reference each other (WooCommerce's version 15 drops
/// `ProductVariation` with the three entities that point at it), and that a kept entity pointed at,
/// migrates on PostgreSQL, which refuses to drop a table a foreign key still names: the removed
/// tables go with their rows (the step declares the loss), the kept rows stay, and the database
/// ends as a fresh store of the new version (verified at open).
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresRemovedTableTests {
    /// Version 1: `Keep` and `count` entities `R<n>`, each with a to-one to a later one (drawn) and,
    /// for some (the first always), one back (a cycle), each with its to-many inverse; `Keep` points at one of them when
    /// `kept` is true. Version 2: `Keep` alone, without that relationship.
    static func schemas(seed: UInt64) -> (SchemaDescription, SchemaDescription, removed: [String], kept: Bool) {
        var random = SplitMix64(seed: seed, index: 15)
        let count = random.size(in: 2...5)
        var entities = (0..<count).map { index in
            EntityDescription(name: "R\(index)", attributes: [.init(name: "label", type: .string, isOptional: true)])
        }
        // A to-one gets a foreign key when its inverse has a delete rule: each has a to-many inverse.
        func link(_ from: Int, _ to: Int, _ name: String) {
            entities[from].relationships.append(
                .init(name: name, destination: "R\(to)", inverse: name + "Of", cardinality: .toOne))
            entities[to].relationships.append(
                .init(name: name + "Of", destination: "R\(from)", inverse: name, cardinality: .toMany))
        }
        for index in 0..<(count - 1) {
            let target = random.size(in: (index + 1)...(count - 1))
            link(index, target, "next\(index)")
            // The first removed table is always in a cycle, as WooCommerce's `ProductVariation` is.
            if index == 0 || random.next() % 2 == 0 { link(target, index, "back\(index)") }
        }
        let kept = random.next() % 2 == 0
        var keep = EntityDescription(name: "Keep", attributes: [.init(name: "value", type: .int64)])
        let v2 = SchemaDescription(modelName: "Removal", version: 2, entities: [keep])
        if kept {
            let target = random.size(in: 0...(count - 1))
            keep.relationships.append(
                .init(name: "removed", destination: "R\(target)", inverse: "keepers", cardinality: .toOne))
            entities[target].relationships.append(
                .init(name: "keepers", destination: "Keep", inverse: "removed", cardinality: .toMany))
        }
        let v1 = SchemaDescription(modelName: "Removal", version: 1, entities: [keep] + entities)
        return (v1, v2, entities.map(\.name), kept)
    }

    @Test(arguments: 0..<10 as Range<UInt64>)
    func removingEntitiesThatReferenceEachOtherMigrates(seed: UInt64) async throws {
        let (v1, v2, removed, kept) = Self.schemas(seed: seed)
        let configuration = try await makeDatabase()
        try Store(postgres: configuration, schema: v1, readers: 1).close()
        let connection = try await PostgresConnection(configuration)
        for name in removed {
            _ = try await connection.execute("INSERT INTO \"\(name)\" (id, label) VALUES ($1, 'x')", [.uuid(UUID())])
        }
        _ = try await connection.execute("INSERT INTO \"Keep\" (id, value) VALUES ($1, 7)", [.uuid(UUID())])
        await connection.close()
        let losses = removed.map { MigrationStage.Loss($0) } + (kept ? [MigrationStage.Loss("Keep", "removed")] : [])
        let plan = MigrationPlan(current: v2, stages: [.lightweight(from: v1, to: v2, lossy: losses)])
        try Store(postgres: configuration, migrationPlan: plan, readers: 1).close()
        let reopened = try await PostgresConnection(configuration)
        let values = try await reopened.query("SELECT value FROM \"Keep\"")
        let tables = try await reopened.query(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tablename LIKE 'R%'")
        await reopened.close()
        #expect(values.count == 1 && values[0, 0] == .int64(7))
        #expect(tables[0, 0] == .int64(0))
        // Verified at open against a fresh store of version 2.
        try Store(postgres: configuration, schema: v2, readers: 1).close()
    }

    /// `plan --engine postgres` prints the `DROP TABLE` statements the migrator runs: the
    /// connection's statement log (``PostgresStatementLog``) records every statement the migrator
    /// sends in the step (an event trigger on the server recorded them before the store refused
    /// event triggers), and the printed step holds the same `DROP TABLE` statements (one per removed
    /// table, with `CASCADE`). Run alone in one transaction on another database at version 1 with a
    /// row in every table, the printed step leaves no removed table and keeps the kept row.
    @Test(arguments: 0..<10 as Range<UInt64>)
    func thePrintedStepDropsTheRemovedTablesAsTheMigratorDoes(seed: UInt64) async throws {
        let (v1, v2, removed, kept) = Self.schemas(seed: seed)
        let losses = removed.map { MigrationStage.Loss($0) } + (kept ? [MigrationStage.Loss("Keep", "removed")] : [])
        let statements = try await printedStatements(of: .lightweight(from: v1, to: v2, lossy: losses))
            .filter { !$0.hasPrefix("--") }
        let printed = statements.filter { $0.hasPrefix("DROP TABLE") }
        #expect(printed.count == removed.count, "seed \(seed): \(printed)")

        let migrated = try await makeDatabase()
        try Store(postgres: migrated, schema: v1, readers: 1).close()
        let name = try await databaseName(migrated)
        let plan = MigrationPlan(current: v2, stages: [.lightweight(from: v1, to: v2, lossy: losses)])
        PostgresStatementLog.shared.record(name)
        let opened = Result { try Store(postgres: migrated, migrationPlan: plan, readers: 1).close() }
        let ran = PostgresStatementLog.shared.stop(name).filter { $0.hasPrefix("DROP TABLE") }
        try opened.get()
        #expect(printed.sorted() == ran.sorted(), "seed \(seed): printed \(printed), the migrator ran \(ran)")

        // The printed step alone, in one transaction (psql runs one -c so), on a populated store.
        let cluster = try #require(PostgresCluster.shared)
        let database = try cluster.createDatabase()
        try cluster.psql(
            try SchemaSQL.createStatements(for: v1, in: PostgresDialect()).joined(separator: ";\n"), database: database)
        for name in removed {
            try cluster.psql("INSERT INTO \"\(name)\" (id, label) VALUES (gen_random_uuid(), 'x')", database: database)
        }
        try cluster.psql("INSERT INTO \"Keep\" (id, value) VALUES (gen_random_uuid(), 7)", database: database)
        try cluster.psql(statements.joined(separator: ";\n"), database: database)
        let left = try cluster.psql(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tablename LIKE 'R%'", database: database)
        #expect(left.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "seed \(seed)")
        let values = try cluster.psql("SELECT value FROM \"Keep\"", database: database)
        #expect(values.trimmingCharacters(in: .whitespacesAndNewlines) == "7", "seed \(seed)")
    }
}
