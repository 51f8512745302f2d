import Foundation
import ModelwrightTestSupport
import Testing

@testable import ModelwrightSchema

/// Checks stay linear (or n·log n) in the input: inputs here are big enough that a quadratic or
/// cubic pass would take minutes, so a regression shows as a test that does not finish.
struct BoundedCheckTests {
    /// `model Test version 1` and a chain E0 ← E1 ← … of `depth` entities, each with one property.
    private static func chain(depth: Int, extra: (Int) -> String = { _ in "" }) -> String {
        var text = "model Test version 1\nentity E0 {\n    p0: Int\n\(extra(0))}\n"
        for index in 1..<depth {
            text += "entity E\(index): E\(index - 1) {\n    p\(index): Int\n\(extra(index))}\n"
        }
        return text
    }

    /// The error for the first entity past the depth limit in `chain(depth:)`.
    private static let tooDeep =
        "\(2 + 3 * GraphBuilder.maximumInheritanceDepth):13: error: 'E\(GraphBuilder.maximumInheritanceDepth)' inherits through more than \(GraphBuilder.maximumInheritanceDepth) levels; entities may nest at most \(GraphBuilder.maximumInheritanceDepth) deep"

    @Test func aDeepInheritanceChainIsRefusedInLinearTime() throws {
        // Every record holds its ancestors' properties, so depth bounds the generated code.
        #expect(diagnose(Self.chain(depth: 5_000)) == [Self.tooDeep])
        let limit = GraphBuilder.maximumInheritanceDepth
        let graph = try graph(Self.chain(depth: limit) { index in index % 2 == 1 ? "    @index(p0, p\(index))\n" : "" })
        let deepest = try #require(graph.entity(named: "E\(limit - 1)"))
        #expect(graph.ancestors(of: deepest).count == limit - 1)
        #expect(graph.entities[limit - 1].indexes == [["p0", "p\(limit - 1)"]])
    }

    @Test func recordsRepeatAtMostTheBoundOfValues() throws {
        // Every subentity's record repeats its ancestors' properties and every composite
        // attribute its composite's fields: the repeats over a version's records are bounded,
        // whatever the shape (several roots, nested parents, wide composites).
        func model(roots: [(properties: Int, subentities: Int)]) -> String {
            var text = "model Test version 1\n"
            for (root, shape) in roots.enumerated() {
                text += "abstract entity R\(root) {\n"
                text += (0..<shape.properties).map { "    p\(root)x\($0): Int?\n" }.joined() + "}\n"
                text += (0..<shape.subentities).map { "entity S\(root)x\($0): R\(root) {}\n" }.joined()
            }
            return text
        }
        let limit = GraphBuilder.maximumRepeatedValues
        // 100 × 50 + 50 × 100: exactly the bound.
        _ = try graph(model(roots: [(100, limit / 200), (50, limit / 100)]))
        #expect(
            diagnose(model(roots: [(100, limit / 200), (50, limit / 100 + 1)])) == [
                "\(2 + 101 + limit / 200 + 1):17: error: the records of 'R1' and its \(limit / 100 + 1) subentities repeat \(limit / 2 + 50) inherited properties and composite fields (\(limit + 50) in this version; at most \(limit)): each record stores its ancestors' properties and every field of its composites"
            ])
        // The issue's case: 300 properties under 1,000 empty subentities (21 KB).
        #expect(diagnose(model(roots: [(300, 1_000)])).count == 1)
        // Nested parents: each level's record repeats what it inherits.
        var nested = model(roots: [(0, 0)])
        nested += (0..<2).map { "entity N\($0): R0 {\n" + (0..<50).map { "    n\($0): Int\n" }.joined() + "}\n" }
            .joined()
        nested += (0..<(limit / 50)).map { "entity M\($0): N\($0 % 2) { m: Int }\n" }.joined()
        _ = try graph(nested)
        #expect(diagnose(nested + "entity M: N1 {}\n").count == 1)
        // A composite's fields are stored once per attribute of its type, counted across entities
        // (in one entity, SQLite's column limit comes first).
        let composite =
            "model Test version 1\ncomposite C {\n" + (0..<101).map { "    f\($0): Int?\n" }.joined() + "}\n"
        let uses = (0..<(limit / 100)).map { "entity E\($0) {\n    c: C?\n}\n" }.joined()
        _ = try graph(composite + uses)
        #expect(diagnose(composite + uses + "entity Extra {\n    extra: C\n}\n").count == 1)
        // A large schema of plain entities repeats nothing.
        _ = try graph("model Test version 1\n" + (0..<20_000).map { "entity P\($0) { a: Int }\n" }.joined())
    }

    @Test func inheritedDuplicatesAndUnknownMembersInADeepChainAreReported() {
        let depth = 5_000
        let lines = diagnose(
            Self.chain(depth: depth) { index in
                index == depth - 1 ? "    p7: Int\n    @unique(missing)\n" : ""
            })
        #expect(
            lines == [
                Self.tooDeep,
                "\(3 * depth + 1):5: error: property 'p7' is already inherited from 'E7'",
                "\(3 * depth + 2):13: error: '@unique' names 'missing', which is not a property of 'E\(depth - 1)'",
            ])
    }

    @Test func aLongInheritanceCycleIsReportedOnce() {
        let depth = 5_000
        var text = Self.chain(depth: depth)
        text = text.replacingOccurrences(of: "entity E0 {", with: "entity E0: E\(depth - 1) {")
        #expect(
            diagnose(text) == [
                "2:12: error: inheritance cycle: 'E0' inherits from itself through 'E\(depth - 1)'", Self.tooDeep,
            ])
    }

    @Test func theWalkVisitsParentsBeforeChildrenWhateverTheShape() {
        var random = SplitMix64(seed: 5)
        for _ in 0..<500 {
            let count = Int.random(in: 0...40, using: &random)
            let parents: [Int?] = (0..<count).map { _ in
                Bool.random(using: &random) ? nil : Int.random(in: 0..<max(1, count), using: &random)
            }
            let steps = InheritedMembers.walk(parents: parents)
            var entered = Set<Int>()
            var open: [Int] = []
            for step in steps {
                switch step {
                case .enter(let index):
                    #expect(entered.insert(index).inserted)
                    if let parent = parents[index], parent != index, open.contains(parent) {
                        #expect(open.last == parent)
                    }
                    open.append(index)
                case .leave(let index):
                    #expect(open.popLast() == index)
                }
            }
            #expect(entered.count == count)
            #expect(open.isEmpty)
        }
    }
}

/// Nesting and size limits end in located errors, never a stack overflow.
struct NestingLimitTests {
    private static let entity = "model Test version 1\nentity A {\n    x: Int\n}\n"

    @Test func deeplyNestedPredicateListsAreAnError() {
        let depth = 100_000
        let text =
            Self.entity
            + "request r: A where \"x IN \(String(repeating: "{", count: depth))1\(String(repeating: "}", count: depth))\"\n"
        let column = 27 + PredicateParser.maximumNesting
        #expect(
            diagnose(text) == [
                "5:\(column): error: the predicate nests more than \(PredicateParser.maximumNesting) levels deep"
            ])
    }

    @Test func deeplyNestedParenthesesAndTypesAreAnError() {
        let depth = 100_000
        let predicate =
            Self.entity
            + "request r: A where \"\(String(repeating: "(", count: depth))x == 1\(String(repeating: ")", count: depth))\"\n"
        #expect(diagnose(predicate).first?.hasSuffix("the predicate nests more than 64 levels deep") == true)
        let type =
            "model Test version 1\nentity A {\n    x: Codable<\(String(repeating: "[", count: depth))Int\(String(repeating: "]", count: depth))>\n}\n"
        #expect(diagnose(type).first?.hasSuffix("type nested more than 32 levels deep") == true)
    }

    @Test func anOversizedFileIsRefusedAtItsStart() {
        let bytes =
            Array(Self.entity.utf8) + [UInt8](repeating: UInt8(ascii: " "), count: SourceFile.maximumSize)
        let diagnostics = ResolvedFile.compile(SourceFile(path: "Big.v1.model", bytes: bytes)).diagnostics
        #expect(
            diagnostics.map(\.description) == [
                "Big.v1.model:1:1: error: the file is \(bytes.count) bytes; a schema file may hold at most \(SourceFile.maximumSize) bytes (16 MiB)"
            ])
    }

    @Test func anOversizedFileInAFolderIsRefusedUnreadAtItsStart() throws {
        let folder = try temporaryModelFolder(named: "Big", files: ["Big.v1.model": Self.entity])
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("Big.v1.model")
        let padding = Data(repeating: UInt8(ascii: " "), count: SourceFile.maximumSize)
        let handle = try FileHandle(forWritingTo: file)
        try handle.seekToEnd()
        try handle.write(contentsOf: padding)
        try handle.close()
        let diagnostics = FrontEnd.run(modelAt: folder.path).diagnostics.map(\.description)
        #expect(diagnostics.count == 1)
        #expect(diagnostics.first?.hasPrefix(file.path + ":1:1: error: the file is ") == true, "\(diagnostics)")
    }
}
