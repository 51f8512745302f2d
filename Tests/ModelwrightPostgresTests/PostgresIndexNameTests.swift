import Foundation
import Modelwright
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing

/// The index names the runtime makes (`<Entity>_index_<columns>`, `<Entity>_unique_<columns>`)
/// grow with the names they join, and PostgreSQL keeps 63 bytes of a name: two indexes of one table
/// whose names share their first 63 bytes (the corpus's wikipedia-ios model has such long names)
/// are both created, under names PostgreSQL keeps whole, and the store opens again.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresIndexNameTests: DrawsLongNames {
    /// An entity whose indexes and uniqueness constraints start with one long column and differ
    /// only in the column after it, so their names share (at least) their first 63 bytes.
    private static func schema(seed: UInt64) -> (SchemaDescription, entity: String, indexes: Int) {
        var random = SplitMix64(seed: seed, index: 27)
        let entity = name("E", bytes: random.size(in: 1...40), &random)
        let shared = name("s", bytes: random.size(in: (64 - entity.utf8.count)...63), &random)
        let others = (0..<random.size(in: 2...4)).map { name("o\($0)", bytes: random.size(in: 3...20), &random) }
        let indexes = others.map { [shared, $0] }
        let unique = others.prefix(2).map { [shared, $0] }
        let attributes =
            [AttributeDescription(name: shared, type: .int64)]
            + others.map { AttributeDescription(name: $0, type: .string) }
        let schema = SchemaDescription(
            modelName: "LongIndexes", version: 1,
            entities: [
                EntityDescription(
                    name: entity, attributes: attributes, uniquenessConstraints: unique, indexes: indexes)
            ])
        return (schema, entity, indexes.count + unique.count)
    }

    @Test(arguments: 0..<6 as Range<UInt64>)
    func indexesWhoseNamesShareTheirFirst63BytesAreAllCreated(seed: UInt64) async throws {
        let (schema, entity, count) = Self.schema(seed: seed)
        let configuration = try await makeDatabase()
        try Store(postgres: configuration, schema: schema, readers: 1).close()
        // Opening again verifies the schema against a fresh one.
        let store = try Store(postgres: configuration, schema: schema, readers: 1)
        try store.close()
        let connection = try await PostgresConnection(configuration)
        let names = try await connection.query(
            "SELECT indexname FROM pg_indexes WHERE tablename = $1 AND indexname <> $2",
            [.text(entity), .text("\(entity)_pkey")])
        await connection.close()
        #expect(names.count == count, "\(schema.entities)")
    }
}
