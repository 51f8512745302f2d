import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright

/// The column order the generator writes records in (`SchemaDescription.recordPropertyOrder()`,
/// which reads the layout's rule without building a layout) is the order of the columns the store's
/// own `SchemaLayout` lays out: over seeded random schemas whose entities inherit (in chains, and
/// siblings declaring the same names), hold composites (with no field, one or several) and declare
/// to-one and to-many relationships, every entity's order equals its layout columns' properties.
struct RecordPropertyOrderTests {
    @Test(arguments: 0..<200)
    func theGeneratorsOrderIsTheLayoutsColumnOrder(_ index: Int) throws {
        var random = SplitMix64(seed: 0x0D_E4, index: index)
        let schema = Self.schema(&random)
        let layout = try SchemaLayout(schema)
        var expected: [String: [String]] = [:]
        for (name, entity) in layout.entities {
            var properties: [String] = []
            for column in entity.columns where properties.last != column.property {
                properties.append(column.property)
            }
            expected[name] = properties
        }
        #expect(try schema.recordPropertyOrder() == expected, "\(schema)")
    }

    /// Up to six entities, each with a random earlier parent or none; attribute names drawn from a
    /// small pool so that relatives and siblings share some.
    static func schema(_ random: inout SplitMix64) -> SchemaDescription {
        let count = 1 + random.next(below: 6)
        var entities: [EntityDescription] = []
        let names = ["a", "b", "c", "home", "d"]
        for index in 0..<count {
            let parent = index > 0 && random.chance(0.5) ? entities[random.next(below: index)].name : nil
            var attributes: [AttributeDescription] = []
            for name in names.shuffled(using: &random).prefix(random.next(below: 4)) {
                let type: AttributeType
                if random.chance(0.3) {
                    let fields = (0..<random.next(below: 3)).map { field in
                        AttributeDescription(name: "f\(field)", type: .string, isOptional: random.chance(0.5))
                    }
                    type = .composite(CompositeDescription(name: "C\(index)\(name)", fields: fields))
                } else {
                    type = random.pick([.string, .int64, .bool, .decimal])
                }
                attributes.append(
                    AttributeDescription(name: "\(name)\(random.next(below: 2))", type: type, isOptional: true))
            }
            entities.append(EntityDescription(name: "E\(index)", parent: parent, attributes: attributes))
        }
        for index in entities.indices {
            for number in 0..<random.next(below: 3) {
                let toMany = random.chance(0.4)
                // Declared before and after attributes alike: the order puts attributes first.
                entities[index].relationships.insert(
                    RelationshipDescription(
                        name: "r\(index)x\(number)", destination: random.pick(entities).name,
                        cardinality: toMany ? .toMany : .toOne, deleteRule: .nullify),
                    at: random.next(below: entities[index].relationships.count + 1))
            }
        }
        return SchemaDescription(modelName: "Order", version: 1, entities: entities)
    }
}
