import Foundation
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing
import Trips

@testable import Modelwright

/// PostgreSQL's DDL creates the Trips schema (every attribute type, inheritance, a join table,
/// an ordered relationship, SQL keywords as names), and what the server then holds is what the
/// runtime's layout says, column by column, index by index.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresSchemaTests {
    /// How `format_type` spells each column type.
    private static let catalogSpelling: [String: String] = [
        "timestamptz": "timestamp with time zone"
    ]

    @Test func theTripsSchemaIsCreatedAsItsLayoutSays() async throws {
        let connection = try await makeConnection()
        let statements = try SchemaSQL.createStatements(for: Trips.schema, in: PostgresDialect())
        try await connection.transaction { connection in
            for statement in statements { try await connection.execute(statement) }
        }
        let layout = try SchemaLayout(Trips.schema)
        let catalog = try await connection.query(
            """
            SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull
            FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'public' AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
            """)
        var columns: [String: (type: String, notNull: Bool)] = [:]
        for row in 0..<catalog.count {
            guard case .text(let table) = catalog[row, 0], case .text(let column) = catalog[row, 1],
                case .text(let type) = catalog[row, 2], case .bool(let notNull) = catalog[row, 3]
            else { continue }
            columns["\(table).\(column)"] = (type, notNull)
        }
        var checked = 0
        for entity in Trips.schema.entities {
            let entityLayout = try layout.entity(entity.name)
            let rootColumns = Set(try layout.entity(entityLayout.table).columns.map(\.name))
            for column in entityLayout.columns {
                let expected = PostgresTypeMap.columnType(of: column.type)
                let found = try #require(
                    columns["\(entityLayout.table).\(column.name)"], "\(entity.name).\(column.name)")
                #expect(found.type == (Self.catalogSpelling[expected] ?? expected), "\(entity.name).\(column.name)")
                #expect(found.notNull == (rootColumns.contains(column.name) && !column.isOptional), "\(column.name)")
                checked += 1
            }
            #expect(columns["\(entityLayout.table).id"]?.type == "uuid")
        }
        #expect(checked >= 38)  // every column of every Trips entity, inherited ones included
        // Every index SQLite's DDL has, with its columns and uniqueness.
        let indexes = try await connection.query(
            """
            SELECT i.relname, ix.indisunique, array_to_string(ARRAY(
                SELECT a.attname FROM unnest(ix.indkey) WITH ORDINALITY k(attnum, n)
                JOIN pg_attribute a ON a.attrelid = ix.indrelid AND a.attnum = k.attnum ORDER BY k.n), ',')
            FROM pg_index ix JOIN pg_class i ON i.oid = ix.indexrelid JOIN pg_namespace n ON n.oid = i.relnamespace
            WHERE NOT ix.indisprimary AND n.nspname = 'public'
            """)
        var found: Set<String> = []
        for row in 0..<indexes.count {
            guard case .text(let name) = indexes[row, 0], case .bool(let unique) = indexes[row, 1],
                case .text(let list) = indexes[row, 2]
            else { continue }
            found.insert("\(name) \(unique) \(list)")
        }
        let expected = SchemaSQL.tables(for: layout, in: SQLiteDialect()).flatMap { table in
            table.indexes.map { "\($0.name) \($0.isUnique) \($0.columns.joined(separator: ","))" }
        }
        #expect(Set(expected) == found)
        // Foreign keys: one per referencing column, two per join table.
        let foreignKeys = try await connection.query("SELECT count(*) FROM pg_constraint WHERE contype = 'f'")
        let referencing = Set(
            Trips.schema.entities.flatMap { entity in
                (try? layout.entity(entity.name))?.columns.filter { $0.references != nil }.map {
                    "\(entity.name).\($0.name)"
                } ?? []
            })
        let joinTables = SchemaSQL.tables(for: layout, in: SQLiteDialect()).filter { $0.relationship != nil }.count
        #expect(foreignKeys[0, 0] == .int64(Int64(referencing.count + 2 * joinTables)))
    }

    @Test func defaultsFillInWhatAnInsertLeavesOut() async throws {
        let connection = try await makeConnection()
        for statement in try SchemaSQL.createStatements(for: Trips.schema, in: PostgresDialect()) {
            try await connection.execute(statement)
        }
        let user = UUID()
        try await connection.execute(
            "INSERT INTO \"User\" (id, username, \"givenName\", \"familyName\", \"joinedAt\") VALUES ($1, 'ada', 'Ada', 'L', now())",
            [.uuid(user)])
        let rows = try await connection.query("SELECT rating, role, \"isVerified\" FROM \"User\"")
        #expect(rows[0, 0] == .int16(0))
        #expect(rows[0, 1] == .text("member"))
        #expect(rows[0, 2] == .bool(false))
        try await connection.execute(
            "INSERT INTO \"Trip\" (id, identifier, title, \"startsOn\", owner) VALUES ($1, $2, 'T', now(), $3)",
            [.uuid(UUID()), .uuid(UUID()), .uuid(user)])
        let trip = try await connection.query(
            "SELECT \"distanceKm\", travellers, \"totalSeconds\", priority FROM \"Trip\"")
        #expect(trip[0, 0] == .double(0))
        #expect(trip[0, 1] == .int32(1))
        #expect(trip[0, 2] == .int64(0))
        #expect(trip[0, 3] == .int64(1))  // Priority.normal's raw value
    }

    @Test func aNameLongerThanPostgreSQLKeepsIsRefusedAndALongIndexNameShortened() async throws {
        let long = String(repeating: "a", count: 64)
        let schema = SchemaDescription(
            modelName: "M", version: 1,
            entities: [EntityDescription(name: "E", attributes: [.init(name: long, type: .string)])])
        #expect {
            try SchemaSQL.createStatements(for: schema, in: PostgresDialect())
        } throws: { error in
            "\(error)".contains("63") && "\(error)".contains(long)
        }
        let name = String(repeating: "b", count: 40)
        let indexed = SchemaDescription(
            modelName: "M", version: 1,
            entities: [
                EntityDescription(
                    name: "E", attributes: [.init(name: name, type: .string), .init(name: name + "c", type: .int64)],
                    uniquenessConstraints: [[name, name + "c"]], indexes: [[name], [name + "c"]])
            ])
        let connection = try await makeConnection()
        for statement in try SchemaSQL.createStatements(for: indexed, in: PostgresDialect()) {
            try await connection.execute(statement)
        }
        let count = try await connection.query("SELECT count(*) FROM pg_indexes WHERE tablename = 'E'")
        #expect(count[0, 0] == .int64(4))  // the primary key and the three
    }

    /// Join tables (many-to-many, one-way to-many, ordered) get their keys and cascading foreign
    /// keys, and each table its index; rows go in and a delete cascades to the join rows.
    @Test func joinTablesAreCreatedWithCascadingKeys() async throws {
        let schema = SchemaDescription(
            modelName: "M", version: 1,
            entities: [
                EntityDescription(
                    name: "Tag", attributes: [.init(name: "name", type: .string)],
                    relationships: [
                        .init(name: "posts", destination: "Post", inverse: "tags", cardinality: .toMany)
                    ]),
                EntityDescription(
                    name: "Post", attributes: [.init(name: "title", type: .string)],
                    relationships: [
                        .init(name: "tags", destination: "Tag", inverse: "posts", cardinality: .toMany),
                        .init(name: "related", destination: "Post", cardinality: .toMany, isOrdered: true),
                    ]),
            ])
        let connection = try await makeConnection()
        for statement in try SchemaSQL.createStatements(for: schema, in: PostgresDialect()) {
            try await connection.execute(statement)
        }
        let layout = try SchemaLayout(schema)
        let joinTables = SchemaSQL.tables(for: layout, in: SQLiteDialect()).filter { $0.relationship != nil }
        #expect(joinTables.count == 2)
        let foreignKeys = try await connection.query("SELECT count(*) FROM pg_constraint WHERE contype = 'f'")
        #expect(foreignKeys[0, 0] == .int64(4))
        let (tag, post) = (UUID(), UUID())
        try await connection.execute("INSERT INTO \"Tag\" VALUES ($1, 'swift')", [.uuid(tag)])
        try await connection.execute("INSERT INTO \"Post\" VALUES ($1, 'hello')", [.uuid(post)])
        for table in joinTables {
            // The table belongs to the side its relationship names: its `source` is that entity's.
            let ids = ["Post.related": (post, post), "Post.tags": (post, tag), "Tag.posts": (tag, post)]
            let (source, destination) = try #require(ids[table.relationship ?? ""], "\(table.name)")
            try await connection.execute(
                "INSERT INTO \(SQLSyntax.identifier(table.name)) (source, destination) VALUES ($1, $2)",
                [.uuid(source), .uuid(destination)])
        }
        try await connection.execute("DELETE FROM \"Post\"")
        for table in joinTables {
            let rows = try await connection.query("SELECT count(*) FROM \(SQLSyntax.identifier(table.name))")
            #expect(rows[0, 0] == .int64(0), "\(table.name)")
        }
    }
}
