import Foundation
import ModelwrightEngineTestSupport
import ModelwrightTestSupport
import Testing

@testable import Modelwright

/// The corpus test's population (``CorpusEndToEnd/populate(_:at:)``) stores the same rows and
/// links on every engine, whatever order the entities that point at each other come in: on
/// PostgreSQL a row pointing at a row of an entity inserted after it was once dropped (its
/// deferred foreign key was checked at the statement's own commit), so the corpus compared fewer
/// values and links there (alemar11 SampleModel: 42 and 4 against 58 and 12).
///
/// Each drawn schema has 2 to 6 entities, each with an attribute and a to-one (optional or
/// required) to a drawn entity, itself included, before or after it; on each engine the populated
/// rows and the to-one links are counted, and the engines must agree.
@Suite(.heavy, .serialized)
struct CorpusPopulationTests {
    private static func schema(seed: UInt64) -> SchemaDescription {
        var random = SplitMix64(seed: seed, index: 61)
        let count = random.size(in: 2...6)
        var entities = (0..<count).map { index in
            EntityDescription(name: "E\(index)", attributes: [.init(name: "label", type: .string, isOptional: true)])
        }
        for index in 0..<count {
            let target = random.size(in: 0...(count - 1))
            entities[index].relationships.append(
                .init(
                    name: "to\(index)", destination: "E\(target)", inverse: "from\(index)", cardinality: .toOne,
                    isOptional: random.next() % 3 != 0))
            entities[target].relationships.append(
                .init(name: "from\(index)", destination: "E\(index)", inverse: "to\(index)", cardinality: .toMany))
        }
        return SchemaDescription(modelName: "Population", version: 1, entities: entities)
    }

    @Test(arguments: 0..<12 as Range<UInt64>)
    func everyEngineStoresTheSameRowsAndLinks(seed: UInt64) throws {
        let schema = Self.schema(seed: seed)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("population-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var stored: [TestEngine: [String]] = [:]
        for engine in TestEngine.available {
            let store = try CorpusDatabase.create(engine, in: folder, named: "store")
            let rows = try CorpusEndToEnd.populate(store, at: schema)
            stored[engine] = rows.keys.sorted().map { entity in
                let toOnes = schema.entity(named: entity)?.relationships.filter { $0.cardinality == .toOne } ?? []
                let links = toOnes.map { relationship in
                    rows[entity]?.filter { $0[relationship.name] != .null }.count ?? 0
                }
                return "\(entity): \(rows[entity]?.count ?? 0) rows, links \(links)"
            }
        }
        #expect(stored[.sqlite]?.isEmpty == false)
        if let postgres = stored[.postgres] {
            #expect(postgres == stored[.sqlite], "seed \(seed)")
        }
    }
}
