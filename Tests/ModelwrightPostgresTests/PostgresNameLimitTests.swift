import Foundation
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing

@testable import Modelwright

/// Every name a PostgreSQL store is created and migrated with stays within the 63 bytes PostgreSQL
/// keeps and apart from every other after its cut (issue 27, red team rtpg2: the creation path
/// did not check names, and two join tables of a long entity collided, `42P07`). One path creates
/// a store on every engine (``SchemaSQL``): on PostgreSQL it names the primary and foreign keys
/// itself, shortened with a digest past 63 bytes as index names are, and refuses a table or
/// column name PostgreSQL would cut, as `validate` does.
///
/// Drawn: names of exactly 63 bytes in every position (two entities' tables, two join tables,
/// attributes' columns, an ordered side's position column, a composite field's column) that
/// share all but their last byte, so that each key, index and full-text index PostgreSQL would
/// name after them by cutting shares its first 63 bytes with another; spelled in ASCII or in
/// characters of 2, 3 or 4 bytes. The store is created with rows, opened again (the schema check
/// compares it with a fresh one), and migrated (both entities and a join table renamed to other
/// such names, a column added), after which the catalog, constraint names included, is a fresh store's
/// and the rows and links are kept. A name one byte longer is refused before anything is created.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresNameLimitTests {
    private static let limit = PostgresDialect.maximumNameLength

    /// A name of exactly `bytes` bytes starting with `start`: `character` repeated, padded with
    /// `x` where its bytes do not fill the name exactly.
    static func name(_ start: String, bytes: Int, _ character: Character) -> String {
        var name = start
        while name.utf8.count + String(character).utf8.count <= bytes { name.append(character) }
        while name.utf8.count < bytes { name.append("x") }
        return name
    }

    /// The two versions: every name at the limit, pairs of names that differ in their last byte.
    static func schemas(_ character: Character) -> (v1: SchemaDescription, v2: SchemaDescription) {
        let entity = { (last: String) in name("E", bytes: limit - 1, character) + last }
        let attribute = { (last: String) in name("a", bytes: limit - 1, character) + last }
        // `_J_` and the relationship's name: the join table's name is 63 bytes.
        let link = { (last: String) in name("r", bytes: limit - 4, character) + last }
        // The inverse of an ordered side: its position column (`name._position`) is 63 bytes.
        let owner = name("o", bytes: limit - "._position".utf8.count, character)
        // A composite field's column (`place.field`) is 63 bytes.
        let field = name("f", bytes: limit - "place.".utf8.count, character)
        let spot = CompositeDescription(name: "Spot", fields: [.init(name: field, type: .int64, isOptional: true)])
        func version(_ number: Int) -> SchemaDescription {
            let first = number == 1 ? entity("1") : entity("3")
            // Renamed too: created second, PostgreSQL's own name for its key was `…_pkey1`.
            let other = number == 1 ? entity("2") : entity("4")
            let joined = number == 1 ? link("1") : link("3")
            var second = [
                AttributeDescription(name: attribute("1"), type: .string),
                AttributeDescription(name: attribute("2"), type: .int64, isOptional: true),
            ]
            if number == 2 { second.append(.init(name: attribute("3"), type: .int64, defaultValue: .integer(4))) }
            return SchemaDescription(
                modelName: "Limits", version: number,
                entities: [
                    EntityDescription(
                        name: first,
                        attributes: [
                            .init(name: attribute("1"), type: .string),
                            .init(name: attribute("2"), type: .string, isOptional: true),
                            .init(name: "place", type: .composite(spot), isOptional: true),
                        ],
                        relationships: [.init(name: entity("2"), destination: other, cardinality: .toOne)],
                        uniquenessConstraints: [[attribute("1")]], indexes: [[attribute("2")]],
                        searchableAttributes: [attribute("1"), attribute("2")],
                        renamedFrom: number == 1 ? nil : entity("1")),
                    EntityDescription(
                        name: other, attributes: second,
                        relationships: [.init(name: owner, destination: "J", inverse: "items", cardinality: .toOne)],
                        uniquenessConstraints: [[attribute("1")]] + (number == 2 ? [[attribute("3")]] : []),
                        searchableAttributes: [attribute("1")], renamedFrom: number == 1 ? nil : entity("2")),
                    EntityDescription(
                        name: "J", attributes: [.init(name: "n", type: .string)],
                        relationships: [
                            .init(
                                name: joined, destination: other, cardinality: .toMany,
                                renamedFrom: number == 1 ? nil : link("1")),
                            .init(name: link("2"), destination: first, cardinality: .toMany),
                            .init(
                                name: "items", destination: other, inverse: owner, cardinality: .toMany,
                                isOrdered: true),
                        ]),
                ])
        }
        return (version(1), version(2))
    }

    @Test(arguments: ["a", "é", "語", "𝒜"] as [Character])
    func namesAtTheLimitCreateAndMigrateAStoreAndOnePastItIsRefused(character: Character) throws {
        let (v1, v2) = Self.schemas(character)
        #expect(try v1.storeProblems().isEmpty && v2.storeProblems().isEmpty)
        let cluster = try #require(PostgresCluster.shared)
        let database = try cluster.createDatabase()
        defer { _ = try? cluster.psql("DROP DATABASE \(database)", database: "postgres") }
        let configuration = PostgresConfiguration(cluster.connectionString(database: database))
        try Store(postgres: configuration, schema: v1, readers: 1).close()
        // Rows in every table, links in every join table.
        let (first, second) = (v1.entities[0].name, v1.entities[1].name)
        let id = (first: UUID(), second: UUID(), j: UUID())
        let attribute = v1.entities[0].attributes[0].name
        let relationships = v1.entities[2].relationships
        let layout = try SchemaLayout(v1)
        func table(_ relationship: RelationshipDescription) throws -> String {
            guard case .joinTable(let name, _, _, _) = try layout.storage(of: relationship, from: layout.entity("J"))
            else { throw PostgresValueError("no join table for \(relationship.name)") }
            return name
        }
        let q = SQLSyntax.identifier
        try cluster.psql(
            """
            INSERT INTO \(q(second)) ("id", \(q(attribute))) VALUES ('\(id.second)', 's');
            INSERT INTO \(q(first)) ("id", \(q(attribute)), \(q(second))) VALUES ('\(id.first)', 'f', '\(id.second)');
            INSERT INTO "J" ("id", "n") VALUES ('\(id.j)', 'j');
            UPDATE \(q(second)) SET \(q(v1.entities[1].relationships[0].name)) = '\(id.j)', \
            \(q(v1.entities[1].relationships[0].name + "._position")) = 0;
            INSERT INTO \(q(try table(relationships[0]))) ("source", "destination") VALUES ('\(id.j)', '\(id.second)');
            INSERT INTO \(q(try table(relationships[1]))) ("source", "destination") VALUES ('\(id.j)', '\(id.first)')
            """, database: database)
        // Opened again: the schema check compares the store with a fresh one.
        try Store(postgres: configuration, schema: v1, readers: 1).close()

        try Store(
            postgres: configuration,
            migrationPlan: MigrationPlan(current: v2, stages: [.lightweight(from: v1, to: v2)]),
            readers: 1
        ).close()
        let fresh = try cluster.createDatabase()
        defer { _ = try? cluster.psql("DROP DATABASE \(fresh)", database: "postgres") }
        try Store(postgres: PostgresConfiguration(cluster.connectionString(database: fresh)), schema: v2, readers: 1)
            .close()
        let have = try cluster.schemaLines(database: database).union(cluster.constraintLines(database: database))
        let want = try cluster.schemaLines(database: fresh).union(cluster.constraintLines(database: fresh))
        #expect(have == want, "extra \(have.subtracting(want).sorted()), missing \(want.subtracting(have).sorted())")
        // Every name within the limit, and the rows and links kept.
        let names = try cluster.psql(
            "SELECT max(octet_length(relname)) FROM pg_class WHERE relnamespace = 'public'::regnamespace",
            database: database)
        #expect(Int(names.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 99 <= Self.limit)
        let renamed = v2.entities[2].relationships[0].name
        let layout2 = try SchemaLayout(v2)
        guard
            case .joinTable(let joinTable, _, _, _) = try layout2.storage(
                of: v2.entities[2].relationships[0], from: layout2.entity("J"))
        else { throw PostgresValueError("no join table for \(renamed)") }
        let kept = try cluster.psql(
            "SELECT (SELECT count(*) FROM \(q(v2.entities[0].name)) WHERE \(q(second)) = '\(id.second)') "
                + "|| ' ' || (SELECT count(*) FROM \(q(joinTable)) WHERE \"destination\" = '\(id.second)') "
                + "|| ' ' || (SELECT \(q(v2.entities[1].attributes[2].name)) FROM \(q(v2.entities[1].name)))",
            database: database)
        #expect(kept.trimmingCharacters(in: .whitespacesAndNewlines) == "1 1 4")

        // One byte more in any of the user's names is refused, naming it, before anything is created.
        let over = SchemaDescription(
            modelName: "Limits", version: 1,
            entities: [EntityDescription(name: Self.name("E", bytes: Self.limit + 1, character))])
        let empty = try cluster.createDatabase()
        defer { _ = try? cluster.psql("DROP DATABASE \(empty)", database: "postgres") }
        #expect {
            try Store(
                postgres: PostgresConfiguration(cluster.connectionString(database: empty)), schema: over, readers: 1)
        } throws: { error in
            "\(error)".contains("\(Self.limit + 1) bytes long") && "\(error)".contains(over.entities[0].name)
        }
        let tables = try cluster.psql(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'", database: empty)
        #expect(tables.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
    }
}
