import Foundation
import Modelwright
import ModelwrightTestSupport
import Testing

/// Foreign keys on PostgreSQL carry the names ``PostgresDialect/foreignKeyName(table:column:)``
/// gives them, whatever the length of the entity and relationship names (PostgreSQL keeps 63
/// bytes of a name and would otherwise cut its own guess where it likes), and a migration step
/// that changes a key drops it by that name: after the step the database holds exactly the keys a
/// fresh store of the new version holds, no stale one beside them.
@Suite(.enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresForeignKeyNameTests: DrawsLongNames {
    /// Two versions: `Source.link` leads to `First` in the first and to `Second` in the second, so
    /// the step replaces the key on a column it keeps.
    private static func versions(seed: UInt64) -> (SchemaDescription, SchemaDescription, table: String, column: String)
    {
        var random = SplitMix64(seed: seed, index: 2)
        let source = name("S", bytes: random.size(in: 20...63), &random)
        let first = name("F", bytes: random.size(in: 10...63), &random)
        let second = name("T", bytes: random.size(in: 10...63), &random)
        let link = name("l", bytes: random.size(in: 5...50), &random)
        func version(_ number: Int, destination: String) -> SchemaDescription {
            func target(_ name: String) -> EntityDescription {
                EntityDescription(
                    name: name, attributes: [.init(name: "value", type: .int64)],
                    relationships: name == destination
                        ? [.init(name: "sources", destination: source, inverse: link, cardinality: .toMany)] : [])
            }
            return SchemaDescription(
                modelName: "Long", version: number,
                entities: [
                    EntityDescription(
                        name: source,
                        relationships: [
                            .init(name: link, destination: destination, inverse: "sources", cardinality: .toOne)
                        ]),
                    target(first), target(second),
                ])
        }
        return (version(1, destination: first), version(2, destination: second), source, link)
    }

    /// Every foreign key of `database`: its table, name and definition.
    private static func foreignKeys(in database: String, _ cluster: PostgresCluster) throws -> [String] {
        try cluster.psql(
            "SELECT conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid) "
                + "FROM pg_constraint WHERE contype = 'f' ORDER BY 1",
            database: database
        ).split(separator: "\n").map(String.init)
    }

    @Test(arguments: 0..<8)
    func longNamesAreExplicitAndDroppedByName(seed: UInt64) throws {
        let cluster = try #require(PostgresCluster.shared)
        let (v1, v2, table, column) = Self.versions(seed: seed)
        let expectedName = PostgresDialect.foreignKeyName(table: table, column: column)
        #expect(expectedName.utf8.count <= PostgresDialect.maximumNameLength)
        let migrated = try cluster.createDatabase()
        let fresh = try cluster.createDatabase()
        defer {
            _ = try? cluster.psql("DROP DATABASE \(migrated)", database: "postgres")
            _ = try? cluster.psql("DROP DATABASE \(fresh)", database: "postgres")
        }
        try cluster.psql(try PostgresDialect.createStatements(for: v1).joined(separator: ";\n"), database: migrated)
        let created = try cluster.psql(
            "SELECT conname FROM pg_constraint WHERE contype = 'f'", database: migrated
        ).split(separator: "\n").map(String.init)
        #expect(created == [expectedName], "\(table).\(column)")
        try cluster.psql(
            try PostgresDialect.migrationStatements(from: v1, to: v2).joined(separator: ";\n"), database: migrated)
        try cluster.psql(try PostgresDialect.createStatements(for: v2).joined(separator: ";\n"), database: fresh)
        let keys = try Self.foreignKeys(in: migrated, cluster)
        #expect(keys == (try Self.foreignKeys(in: fresh, cluster)), "\(table).\(column)")
        #expect(keys.count == 1)
    }

    @Test func namesAreUniqueAndFitOverManyDrawnPairs() {
        var random = SplitMix64(seed: 63)
        var seen: [String: String] = [:]
        for _ in 0..<300 {
            let table = Self.name("t", bytes: random.size(in: 1...63), &random)
            let column = Self.name("c", bytes: random.size(in: 1...63), &random)
            let name = PostgresDialect.foreignKeyName(table: table, column: column)
            #expect(name.utf8.count <= PostgresDialect.maximumNameLength)
            #expect(PostgresDialect.foreignKeyName(table: table, column: column) == name)
            let pair = "\(table)\u{0}\(column)"
            #expect(seen[name, default: pair] == pair, "\(name) names two keys")
            seen[name] = pair
        }
    }
}
