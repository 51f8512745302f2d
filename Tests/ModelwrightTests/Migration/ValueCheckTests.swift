import Foundation
import Modelwright
import Testing

/// A migration leaves only values the new version's records can read: a lossy step clears what
/// it gives up, and a step that would leave anything else unreadable fails, store untouched.
struct ValueCheckTests {
    /// Posts whose `foreignID` moves one level down the hierarchy and becomes a UUID, as in a real
    /// app's history: one column of the hierarchy's table holds it before and after.
    private static func posts(version: Int, foreignID: AttributeType?, isOptional: Bool = true) -> SchemaDescription {
        let moved = foreignID.map { [AttributeDescription(name: "foreignID", type: $0, isOptional: isOptional)] } ?? []
        return SchemaDescription(
            modelName: "Posts", version: version,
            entities: [
                EntityDescription(
                    name: "BasePost", isAbstract: true,
                    attributes: [AttributeDescription(name: "title", type: .string)]
                        + (version == 1
                            ? [AttributeDescription(name: "foreignID", type: .string, isOptional: true)] : [])),
                EntityDescription(
                    name: "AbstractPost", parent: "BasePost", isAbstract: true, attributes: version == 1 ? [] : moved),
                EntityDescription(name: "Post", parent: "AbstractPost"),
            ])
    }

    @Test func aLossyRetypedColumnIsClearedAndEveryRowReadsBack() throws {
        let v1 = Self.posts(version: 1, foreignID: nil)
        let v2 = Self.posts(version: 2, foreignID: .uuid)
        let tester = try MigrationTester(
            plan: MigrationPlan(current: v2, stages: [.lightweight(from: v1, to: v2)]), startingAt: v1)
        try tester.insert("Post", ["title": .text("a"), "foreignID": .text("not-a-uuid")])
        try tester.insert("Post", ["title": .text("b")])
        _ = try tester.migrate()
        let values = try tester.rows(of: "Post").map { $0["foreignID"] }
        #expect(values == [.null, .null], "\(values)")
    }

    @Test func aRequiredColumnLeftUnreadableFailsTheStageAndKeepsTheStore() throws {
        let v1 = Self.posts(version: 1, foreignID: nil)
        let v2 = Self.posts(version: 2, foreignID: .int16, isOptional: false)
        let tester = try MigrationTester(
            plan: MigrationPlan(current: v2, stages: [.lightweight(from: v1, to: v2)]), startingAt: v1)
        try tester.insert("Post", ["title": .text("a"), "foreignID": .text("text")])
        #expect {
            _ = try tester.migrate()
        } throws: { error in
            guard case MigrationError.unreadableValues(_, "Post", "foreignID", 1) = error else { return false }
            return true
        }
        #expect(try tester.rows(of: "Post").first?["foreignID"] == .text("text"))
    }

    @Test func everyUnreadableKindIsCaughtAfterACustomStage() throws {
        // A custom stage that writes values of the wrong kind into each type of column.
        let types: [(AttributeType, SQLValue)] = [
            (.bool, .text("yes")), (.int16, .integer(40_000)), (.int32, .integer(3_000_000_000)), (.int64, .real(1.5)),
            (.double, .text("x")), (.date, .blob(Data([1]))), (.string, .blob(Data([1]))), (.data, .text("x")),
            (.uuid, .blob(Data([1, 2]))), (.url, .blob(Data([2]))), (.decimal, .blob(Data([3]))),
            (
                .enumeration(EnumDescription(name: "Kind", rawType: .string, cases: [.init(name: "a", rawValue: "a")])),
                .text("b")
            ),
        ]
        for (type, bad) in types {
            let v1 = SchemaDescription(
                modelName: "M", version: 1, entities: [EntityDescription(name: "E", attributes: [])])
            let v2 = SchemaDescription(
                modelName: "M", version: 2,
                entities: [
                    EntityDescription(
                        name: "E", attributes: [AttributeDescription(name: "v", type: type, isOptional: true)])
                ])
            let stage = MigrationStage.custom(
                from: v1, to: v2,
                steps: [.init(name: "fill", label: "fill") { try $0.execute("UPDATE \"E\" SET \"v\" = ?", [bad]) }])
            let tester = try MigrationTester(plan: MigrationPlan(current: v2, stages: [stage]), startingAt: v1)
            try tester.insert("E", [:])
            #expect(throws: MigrationError.self, "\(type) holding \(bad)") { _ = try tester.migrate() }
        }
    }
}
