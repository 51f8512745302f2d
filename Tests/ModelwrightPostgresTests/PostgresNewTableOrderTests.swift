import Foundation
import Modelwright
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing

/// A step that adds entities referencing each other migrates on PostgreSQL, which resolves a
/// reference when it is declared: a new entity with a to-one to a new entity declared after it,
/// chains of them and pairs referencing each other. The database keeps its rows and ends as a
/// fresh store of the new version (verified at open).
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresNewTableOrderTests {
    /// A deterministic generator, so a failing case can be drawn again.
    struct Draw {
        var state: UInt64

        mutating func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
    }

    /// Version 2 of a model whose version 1 holds only `Keep`: `count` new entities, each with a
    /// to-one to a new entity declared after it (drawn) and, for some, a to-one back (a cycle).
    static func schemas(seed: UInt64) -> (SchemaDescription, SchemaDescription) {
        var draw = Draw(state: seed)
        let keep = EntityDescription(name: "Keep", attributes: [.init(name: "value", type: .int64)])
        let v1 = SchemaDescription(modelName: "Order", version: 1, entities: [keep])
        let count = 2 + draw.next(3)
        var entities = (0..<count).map { index in
            EntityDescription(name: "N\(index)", attributes: [.init(name: "label", type: .string, isOptional: true)])
        }
        for index in 0..<(count - 1) {
            let target = index + 1 + draw.next(count - index - 1)
            entities[index].relationships.append(
                .init(name: "next\(index)", destination: "N\(target)", cardinality: .toOne))
            if draw.next(2) == 0 {
                entities[target].relationships.append(
                    .init(name: "back\(index)", destination: "N\(index)", cardinality: .toOne))
            }
        }
        return (v1, SchemaDescription(modelName: "Order", version: 2, entities: [keep] + entities))
    }

    @Test(arguments: 0..<12 as Range<UInt64>)
    func newEntitiesReferencingLaterOnesMigrate(seed: UInt64) async throws {
        let (v1, v2) = Self.schemas(seed: seed)
        let configuration = try await makeDatabase()
        try Store(postgres: configuration, schema: v1, readers: 1).close()
        let connection = try await PostgresConnection(configuration)
        _ = try await connection.execute("INSERT INTO \"Keep\" (id, value) VALUES ($1, 7)", [.uuid(UUID())])
        await connection.close()
        let plan = MigrationPlan(current: v2, stages: [.lightweight(from: v1, to: v2)])
        try Store(postgres: configuration, migrationPlan: plan, readers: 1).close()
        let reopened = try await PostgresConnection(configuration)
        let kept = try await reopened.query("SELECT value FROM \"Keep\"")
        await reopened.close()
        #expect(kept[0, 0] == .int64(7))
        // Verified at open against a fresh store of version 2.
        try Store(postgres: configuration, schema: v2, readers: 1).close()
    }
}
