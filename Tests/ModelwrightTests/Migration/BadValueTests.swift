import Foundation
import Modelwright
import ModelwrightTestSupport
import Testing

/// A custom stage that leaves a value no record can read fails with an error naming the entity
/// and the property, and leaves the store at the version before, values untouched: for every
/// stored type, in random hierarchies (columns that siblings declare differently included).
struct BadValueTests {
    static let modelCount = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 2_000 : 50

    @Test func everyUnreadableValueFailsTheStageNamingItsPlaceAndKeepsTheStore() throws {
        var tried = 0
        var kinds: Set<String> = []
        for index in 0..<Self.modelCount {
            var random = SplitMix64(seed: 0xBAD_7A1, index: index)
            let model = RandomHierarchy(random: &random)
            // A concrete entity and one of its properties, with a value its type cannot read.
            let candidates = model.entities.filter { !$0.isAbstract }.flatMap { entity in
                model.lineage(of: entity.name).flatMap(\.properties).map { (entity: entity.name, $0.name, $0.property) }
            }
            guard !candidates.isEmpty else { continue }
            let (entity, name, property) = candidates[Int.random(in: 0..<candidates.count, using: &random)]
            guard let (key, bad, kind) = Self.badValue(for: name, property, random: &random) else { continue }
            kinds.insert(kind)
            let v1 = model.schema(version: 1)
            var v2 = v1
            v2.version = 2
            // A change elsewhere, so the two versions differ and the stage runs.
            v2.entities[v2.entities.count - 1].attributes.append(.init(name: "note", type: .string, isOptional: true))
            let stage = MigrationStage.custom(
                from: v1, to: v2,
                steps: [
                    .init(name: "spoil", label: "spoil") { context in
                        for row in try context.rows(of: entity)
                        where row["_entity"] == .text(entity) || row["_entity"] == .null {
                            try context.update(entity, id: row.id, set: bad)
                        }
                    }
                ])
            let tester = try MigrationTester(plan: MigrationPlan(current: v2, stages: [stage]), startingAt: v1)
            _ = try model.populate(tester, random: &random)
            let before = try tester.rows(of: entity)
            #expect("model \(index): \(entity).\(key) \(kind) \(bad)\n\(model)") {
                _ = try tester.migrate()
            } throws: { error in
                switch error {
                case MigrationError.unreadableValues(_, let failed, let attribute, _):
                    return failed == entity && attribute == name
                case MigrationError.foreignKeyViolation:
                    // A column with a foreign key: SQLite's check finds the row it points at missing.
                    if case .toOne(_, true, _) = property { return true }
                    return false
                case let error as SQLiteError:
                    // A root entity's required column is NOT NULL: the step's own write fails.
                    return kind == "required composite" && error.message.contains("NOT NULL")
                default:
                    return false
                }
            }
            #expect(try tester.rows(of: entity) == before, "model \(index): \(entity).\(key) \(kind)")
            tried += 1
        }
        #expect(tried > Self.modelCount / 2)
        #expect(kinds.count >= 12, "\(kinds.sorted())")
    }

    /// Values that survive the column's affinity (SQLite would turn the text "1" into an integer
    /// in an INTEGER column, which a record reads fine) and that the property's type cannot read.
    static func badValue(
        for name: String, _ property: RandomHierarchy.Property, random: inout SplitMix64
    ) -> (String, [String: SQLValue], String)? {
        func pick(_ values: [SQLValue]) -> SQLValue { values[Int.random(in: 0..<values.count, using: &random)] }
        let junk = SQLValue.blob(Data([0xFF, 0x00]))
        switch property {
        case .toMany:
            return nil
        case .toOne(_, let withInverse, _):
            if withInverse, Bool.random(using: &random) {
                // A well-formed ID of no row: the foreign key check refuses it.
                return (name, [name: .blob(Data(repeating: 9, count: 16))], "dangling")
            }
            return (
                name, [name: pick([.blob(Data(repeating: 1, count: 15)), .text("0123456789abcdef"), .real(1.5)])], "id"
            )
        case .attribute(let type, let isOptional, _):
            switch type {
            case .bool: return (name, [name: pick([.integer(7), .integer(-1), .real(0.5), .text("yes")])], "bool")
            case .int16: return (name, [name: pick([.integer(40_000), .real(1.5), .text("x")])], "int16")
            case .int32: return (name, [name: pick([.integer(3_000_000_000), .real(-0.5), junk])], "int32")
            case .int64, .int: return (name, [name: pick([.real(1.5), .text("x"), junk])], "int64")
            case .double, .float: return (name, [name: pick([.text("1.5"), junk])], "double")
            case .date: return (name, [name: pick([.text("yesterday"), junk])], "date")
            case .decimal: return (name, [name: pick([.text("1,5"), .text("abc"), junk])], "decimal")
            case .string: return (name, [name: junk], "string")
            case .url: return (name, [name: junk], "url")
            case .day: return (name, [name: pick([.text("2024-02-30"), .text("2024-1-1"), .integer(3), junk])], "day")
            case .data: return (name, [name: pick([.text("x"), .real(2.5)])], "data")
            case .uuid: return (name, [name: pick([.blob(Data(count: 15)), .text("0123456789abcdef")])], "uuid")
            case .codable: return (name, [name: pick([.text("{not json"), .text(""), junk])], "codable")
            case .enumeration(let description):
                return description.rawType == .int
                    ? (name, [name: pick([.integer(8), .text("x")])], "int enum")
                    : (name, [name: pick([.text("angry"), junk])], "string enum")
            case .composite(let composite):
                guard let required = composite.fields.first(where: { !$0.isOptional }),
                    let optional = composite.fields.first(where: \.isOptional)
                else { return nil }
                if isOptional {
                    // Half a composite: the record would read it as absent and lose the field it has.
                    return (
                        name,
                        [
                            "\(name).\(required.name)": .null,
                            "\(name).\(optional.name)": required.type == .string ? .text("x") : .integer(1),
                        ],
                        "composite"
                    )
                }
                return (name, ["\(name).\(required.name)": .null], "required composite")
            }
        }
    }
}
