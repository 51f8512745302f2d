import Foundation
import Modelwright
import ModelwrightTestSupport
import Testing

/// Entities of one hierarchy share their root's table; siblings and cousins that declare one
/// property name with different meanings get a column each, so every value reads back as written,
/// and migrations that make such sharing appear or disappear keep every value.
///
/// The models are drawn at random: hierarchies up to four levels deep whose entities declare
/// properties from a small pool of names, each as an attribute of any type (optional or required,
/// with or without a default), a composite, an enum, a `Codable` value or a to-one relationship
/// (with or without an inverse, to one of two targets). `MODELWRIGHT_LARGE=1` draws 2,000 models.
struct ColumnSharingTests {
    static let modelCount = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 2_000 : 40

    @Test func everyValueReadsBackAndSurvivesSharingThatAppearsOrDisappears() throws {
        var sharedColumns = 0
        for index in 0..<Self.modelCount {
            var random = SplitMix64(seed: 0xC011_5EED, index: index)
            let model = RandomHierarchy(random: &random)
            let v1 = model.schema(version: 1)
            let v2 = model.reshuffled(random: &random).schema(version: 2)
            sharedColumns += model.collisions
            // A custom stage with no steps of its own makes the migration check every row of every entity.
            // The reshuffle can move rows out of a relationship's destination and remove entities: this
            // test is about values, so the stage declares every link and removal it may lose (the
            // runtime refuses an undeclared one, which DepartingLinkLossTests covers).
            let losses =
                v1.entities.flatMap { entity in entity.relationships.map { MigrationStage.Loss(entity.name, $0.name) } }
                + v1.entities.filter { v2.entity(named: $0.name) == nil }.map { MigrationStage.Loss($0.name) }
            let stage = MigrationStage.custom(
                from: v1, to: v2, steps: [.init(name: "nothing", label: "nothing") { _ in }], lossy: losses)
            let tester = try MigrationTester(plan: MigrationPlan(current: v2, stages: [stage]), startingAt: v1)
            let written = try model.populate(tester, random: &random)
            for (entity, rows) in written {
                let stored = try tester.rows(of: entity).filter {
                    $0["_entity"] == .text(entity) || $0["_entity"] == .null
                }
                try expectSame(rows, stored, "model \(index) v1 \(entity)\n\(model)")
            }
            _ = try tester.migrate()
            for (entity, rows) in written where v2.entity(named: entity) != nil {
                let stored = try tester.rows(of: entity).filter {
                    $0["_entity"] == .text(entity) || $0["_entity"] == .null
                }
                try expectSame(rows, stored, "model \(index) v2 \(entity)\n\(model)")
            }
        }
        // The generator must actually make siblings disagree.
        #expect(sharedColumns > Self.modelCount / 2, "\(sharedColumns)")
    }

    @Test func theBloggingAppsFeaturedImageIsARelationshipBesideAnAttribute() throws {
        // AbstractPost.featuredImage: Media? and ReaderPost.featuredImage: String? under one root.
        let v1 = SchemaDescription(
            modelName: "Blog", version: 1,
            entities: [
                EntityDescription(
                    name: "BasePost", isAbstract: true, attributes: [.init(name: "title", type: .string)]),
                EntityDescription(
                    name: "AbstractPost", parent: "BasePost",
                    relationships: [
                        .init(
                            name: "featuredImage", destination: "Media", inverse: "posts", cardinality: .toOne)
                    ]),
                EntityDescription(
                    name: "ReaderPost", parent: "BasePost",
                    attributes: [.init(name: "featuredImage", type: .string, isOptional: true)]),
                EntityDescription(
                    name: "Media", attributes: [.init(name: "url", type: .string)],
                    relationships: [
                        .init(
                            name: "posts", destination: "AbstractPost", inverse: "featuredImage", cardinality: .toMany)
                    ]),
            ])
        var v2 = v1
        v2.version = 2
        v2.entities[0].attributes.append(.init(name: "summary", type: .string, isOptional: true))
        // A custom stage checks every table's foreign keys and values.
        let stage = MigrationStage.custom(from: v1, to: v2, steps: [.init(name: "nothing", label: "nothing") { _ in }])
        let tester = try MigrationTester(plan: MigrationPlan(current: v2, stages: [stage]), startingAt: v1)
        let media = try tester.insert("Media", ["url": .text("https://example.com/a.png")])
        try tester.insert("AbstractPost", ["title": .text("mine"), "featuredImage": media])
        try tester.insert(
            "ReaderPost", ["title": .text("theirs"), "featuredImage": .text("https://example.com/b.png")])
        _ = try tester.migrate()
        #expect(try tester.rows(of: "AbstractPost").first?["featuredImage"] == media)
        #expect(
            try tester.rows(of: "ReaderPost").first?["featuredImage"] == .text("https://example.com/b.png"))
    }

    private func expectSame(_ written: [[String: SQLValue]], _ stored: [MigrationRow], _ comment: String) throws {
        #expect(written.count == stored.count, "\(comment)")
        for row in written {
            guard let match = stored.first(where: { $0.id == row["id"] }) else {
                Issue.record("row missing: \(comment)")
                continue
            }
            for (key, value) in row where match[key] != value {
                Issue.record("\(key): wrote \(value), read \(match[key]): \(comment)")
            }
        }
    }
}

/// A random hierarchy whose entities declare properties from a small pool of names.
struct RandomHierarchy: CustomStringConvertible {
    /// What one entity declares under one name.
    enum Property: Equatable {
        case attribute(AttributeType, isOptional: Bool, defaultValue: DefaultValue?)
        /// A to-one relationship; its inverse on the target, when it has one, is a to-many that
        /// may be ordered (which gives this column a position column beside it).
        case toOne(target: String, withInverse: Bool, ordered: Bool)
        /// A one-way to-many relationship (a join table per declaring entity).
        case toMany(target: String, ordered: Bool)
    }

    struct Entity {
        var name: String
        var parent: String?
        var isAbstract: Bool
        var properties: [(name: String, property: Property)]
    }

    var entities: [Entity] = []
    // No two names differ only in case: `validate` refuses that within a hierarchy (SQL would see one column).
    static let names = ["v", "w", "home", "Image"]
    static let targets = ["Target1", "Target2"]

    init(random: inout SplitMix64) {
        let count = Int.random(in: 2...7, using: &random)
        for number in 0..<count {
            let parent = number == 0 ? nil : entities[Int.random(in: 0..<number, using: &random)].name
            var entity = Entity(
                name: "E\(number)", parent: parent, isAbstract: Bool.random(using: &random), properties: [])
            let inherited = Set(lineage(of: parent).flatMap { $0.properties.map(\.name) })
            // The root declares few names, so that its descendants declare the rest, often differently.
            let odds = number == 0 ? 4 : 3
            for name in Self.names
            where !inherited.contains(name) && Int.random(in: 0..<odds, using: &random) == (number == 0 ? 0 : 1) {
                entity.properties.append((name, Self.property(random: &random)))
            }
            // Below an entity that declares a name, no descendant may declare it again.
            entities.append(entity)
        }
        // Names an entity declares are inherited: remove them from every descendant.
        for index in entities.indices {
            let inherited = Set(lineage(of: entities[index].parent).flatMap { $0.properties.map(\.name) })
            entities[index].properties.removeAll { inherited.contains($0.name) }
        }
    }

    private init(entities: [Entity]) {
        self.entities = entities
    }

    /// The entity and its ancestors, root first.
    func lineage(of name: String?) -> [Entity] {
        var result: [Entity] = []
        var next = name
        while let current = next, let entity = entities.first(where: { $0.name == current }) {
            result.insert(entity, at: 0)
            next = entity.parent
        }
        return result
    }

    /// How many names two entities of the hierarchy declare with different meanings.
    var collisions: Int {
        Self.names.reduce(0) { count, name in
            let meanings = entities.flatMap { $0.properties.filter { $0.name == name }.map(\.property) }
            var distinct: [Property] = []
            for meaning in meanings where !distinct.contains(meaning) { distinct.append(meaning) }
            return count + max(0, distinct.count - 1)
        }
    }

    /// The same entities in another order (so another meaning gets each plain column name), some
    /// leaves dropped and a new first sibling declaring every name with a type of its own.
    func reshuffled(random: inout SplitMix64) -> RandomHierarchy {
        var entities = self.entities
        let parents = Set(entities.compactMap(\.parent))
        entities.removeAll {
            $0.parent != nil && !parents.contains($0.name) && Int.random(in: 0..<4, using: &random) == 0
        }
        entities.shuffle(using: &random)
        // A parent must still exist; the root stays first among its own line by construction of lineage.
        let root = self.entities[0]
        if Bool.random(using: &random) {
            let properties = Self.names.map { ($0, Self.property(random: &random)) }
            let newcomer = Entity(name: "Newcomer", parent: root.name, isAbstract: false, properties: properties)
            let inherited = Set(root.properties.map(\.name))
            var trimmed = newcomer
            trimmed.properties.removeAll { inherited.contains($0.name) }
            entities.insert(trimmed, at: 0)
        }
        return RandomHierarchy(entities: entities)
    }

    static func property(random: inout SplitMix64) -> Property {
        let isOptional = Bool.random(using: &random)
        switch Int.random(in: 0..<20, using: &random) {
        case 0, 1:
            return .toOne(
                target: targets[Int.random(in: 0..<2, using: &random)], withInverse: Bool.random(using: &random),
                ordered: Bool.random(using: &random))
        case 2:
            return .toMany(target: targets[Int.random(in: 0..<2, using: &random)], ordered: Bool.random(using: &random))
        default:
            let type = attributeTypes[Int.random(in: 0..<attributeTypes.count, using: &random)]
            // A required attribute gets a default now and then, which the table's DDL declares.
            let defaultValue: DefaultValue? =
                Int.random(in: 0..<3, using: &random) == 0 ? Self.defaultValue(for: type) : nil
            return .attribute(type, isOptional: isOptional, defaultValue: defaultValue)
        }
    }

    static let attributeTypes: [AttributeType] = [
        .bool, .int16, .int32, .int64, .int, .double, .float, .decimal, .string, .date, .data, .uuid, .url,
        .codable(typeName: "[String]"), .codable(typeName: "Tags"),
        .enumeration(EnumDescription(name: "Mood", rawType: .string, cases: [.init(name: "calm", rawValue: "calm")])),
        .enumeration(EnumDescription(name: "Level", rawType: .int, cases: [.init(name: "low", rawValue: "7")])),
        .composite(
            CompositeDescription(
                name: "Address",
                fields: [
                    AttributeDescription(name: "city", type: .string),
                    AttributeDescription(name: "zip", type: .int32, isOptional: true),
                ])),
        .composite(
            CompositeDescription(
                name: "Place",
                fields: [
                    AttributeDescription(name: "city", type: .double),
                    AttributeDescription(name: "code", type: .string, isOptional: true),
                ])),
    ]

    static func defaultValue(for type: AttributeType) -> DefaultValue? {
        switch type {
        case .bool: .bool(true)
        case .int16, .int32, .int64, .int: .integer(7)
        case .double, .float: .floatingPoint(1.5)
        case .decimal: .decimal("2.5")
        case .string: .string("007")
        default: nil
        }
    }

    /// The schema: the hierarchy and the two targets of its relationships.
    func schema(version: Int) -> SchemaDescription {
        var described: [EntityDescription] = entities.map { entity in
            var attributes: [AttributeDescription] = []
            var relationships: [RelationshipDescription] = []
            for (name, property) in entity.properties {
                switch property {
                case .attribute(let type, let isOptional, let defaultValue):
                    attributes.append(.init(name: name, type: type, isOptional: isOptional, defaultValue: defaultValue))
                case .toOne(let target, let withInverse, _):
                    relationships.append(
                        .init(
                            name: name, destination: target, inverse: withInverse ? "back\(entity.name)\(name)" : nil,
                            cardinality: .toOne))
                case .toMany(let target, let ordered):
                    relationships.append(
                        .init(name: name, destination: target, cardinality: .toMany, isOrdered: ordered))
                }
            }
            return EntityDescription(
                name: entity.name, parent: entity.parent, isAbstract: entity.isAbstract, attributes: attributes,
                relationships: relationships)
        }
        for target in Self.targets {
            var inverses: [RelationshipDescription] = []
            for entity in entities {
                for case (let name, .toOne(target, true, let ordered)) in entity.properties {
                    inverses.append(
                        .init(
                            name: "back\(entity.name)\(name)", destination: entity.name, inverse: name,
                            cardinality: .toMany, isOrdered: ordered))
                }
            }
            described.append(
                EntityDescription(
                    name: target, attributes: [.init(name: "label", type: .string)], relationships: inverses))
        }
        return SchemaDescription(modelName: "Random", version: version, entities: described)
    }

    /// Writes two rows of every concrete entity, every property set (or NULL where optional), and
    /// returns what was written by entity, keyed as the entity's properties name their columns.
    func populate(_ tester: MigrationTester, random: inout SplitMix64) throws -> [String: [[String: SQLValue]]] {
        var targets: [String: SQLValue] = [:]
        for target in Self.targets {
            targets[target] = try tester.insert(target, ["label": .text(target)])
        }
        var written: [String: [[String: SQLValue]]] = [:]
        for entity in entities where !entity.isAbstract {
            for row in 0..<2 {
                var values: [String: SQLValue] = [:]
                for member in lineage(of: entity.name) {
                    for (name, property) in member.properties {
                        switch property {
                        case .toOne(let target, _, _):
                            values[name] = row == 1 ? .null : targets[target] ?? .null
                        case .toMany:
                            break
                        case .attribute(let type, let isOptional, _):
                            let empty = isOptional && row == 1
                            if case .composite(let composite) = type {
                                for field in composite.fields {
                                    let key = "\(name).\(field.name)"
                                    values[key] =
                                        empty || (field.isOptional && Bool.random(using: &random))
                                        ? .null : Self.value(of: field.type, random: &random)
                                }
                            } else {
                                values[name] = empty ? .null : Self.value(of: type, random: &random)
                            }
                        }
                    }
                }
                values["id"] = try tester.insert(entity.name, values)
                written[entity.name, default: []].append(values)
            }
        }
        return written
    }

    /// A value the runtime writes for `type`, drawn to defeat a column of another type: text of
    /// digits with leading zeros, integral doubles, reals in text columns.
    static func value(of type: AttributeType, random: inout SplitMix64) -> SQLValue {
        let number = Int64.random(in: -1_000...1_000, using: &random)
        switch type {
        case .bool: return .integer(Int64.random(in: 0...1, using: &random))
        case .int16, .int32, .int64, .int: return .integer(number)
        case .double, .float, .date: return .real(Double(number) + (Bool.random(using: &random) ? 0.5 : 0))
        case .decimal: return .text(Bool.random(using: &random) ? "\(number).25" : "\(number)")
        case .string: return .text(Bool.random(using: &random) ? "00\(abs(number))" : "\(number).0")
        case .url: return .text("https://example.com/\(number)")
        case .day: return .text(Day(daysSince1970: Int(number)).description)
        case .data: return .blob(Data("0\(number)".utf8))
        case .uuid: return .blob(withUnsafeBytes(of: UUID().uuid) { Data($0) })
        case .codable: return .text("[\"0\(number)\"]")
        case .enumeration(let description):
            return description.rawType == .int ? .integer(7) : .text(description.cases[0].rawValue)
        case .composite: return .null
        }
    }

    var description: String {
        entities.map { entity in
            let properties = entity.properties.map { "\($0.name): \($0.property)" }.joined(separator: "; ")
            return "\(entity.isAbstract ? "abstract " : "")\(entity.name): \(entity.parent ?? "-") { \(properties) }"
        }.joined(separator: "\n")
    }
}
