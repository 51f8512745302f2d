import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright
@testable import ModelwrightSchema

/// A many-to-many ordered on both sides is refused at the side whose order the store would lose,
/// with the fix; the side named is the one the runtime's join table keeps no position for, and the
/// fix applied validates with the other side's order kept. Drawn over entity and relationship
/// names (the rule sorts by them), self-referential pairs and pairs whose inverse is inherited.
struct OrderedManyToManyTests {
    /// One drawn model: the pair's two sides and where each is declared.
    private struct Drawn: CustomStringConvertible {
        var source: String
        var target: String
        /// The entity that declares the inverse and that the forward side leads to: `target`, or
        /// a parent of `target` (so the pair sits on a hierarchy's table).
        var inverseOwner: String
        var forward: String
        var backward: String
        var forwardOrdered: Bool
        var backwardOrdered: Bool

        var description: String {
            "\(source).\(forward)\(forwardOrdered ? "[]" : "{}") ⇄ \(inverseOwner).\(backward)\(backwardOrdered ? "[]" : "{}")"
        }

        /// The text and the line (1-based) of each side's declaration.
        func text() -> (text: String, forwardLine: Int, backwardLine: Int) {
            func type(_ entity: String, ordered: Bool) -> String { ordered ? "[\(entity)]" : "Set<\(entity)>" }
            let forwardLine = "    \(forward): \(type(inverseOwner, ordered: forwardOrdered)) @inverse(\(backward))"
            let backwardLine = "    \(backward): \(type(source, ordered: backwardOrdered)) @inverse(\(forward))"
            var lines = ["model M version 1"]
            var found = (forward: 0, backward: 0)
            var entities = [source, inverseOwner]
            if target != inverseOwner { entities.append(target) }
            var seen: Set<String> = []
            for entity in entities where seen.insert(entity).inserted {
                let parent = entity == target && target != inverseOwner ? ": \(inverseOwner)" : ""
                lines += ["entity \(entity)\(parent) {", parent.isEmpty ? "    name: String" : "    extra: Int = 0"]
                if entity == source {
                    lines.append(forwardLine)
                    found.forward = lines.count
                }
                if entity == inverseOwner {
                    lines.append(backwardLine)
                    found.backward = lines.count
                }
                lines.append("}")
            }
            return (lines.joined(separator: "\n") + "\n", found.forward, found.backward)
        }
    }

    private static func draw(seed: UInt64) -> Drawn {
        var random = SplitMix64(seed: seed)
        func pick(_ names: [String]) -> String { names[Int(random.next() % UInt64(names.count))] }
        let entities = ["Alpha", "Beta", "Zed", "Aardvark", "Node", "Tag"]
        let names = ["items", "links", "zs", "alphas", "tags", "b", "owners", "a_b"]
        let source = pick(entities)
        var target = pick(entities)
        // A quarter of the pairs are self-referential.
        if random.next() % 4 == 0 { target = source }
        var inverseOwner = target
        if target != source, random.next() % 3 == 0 { inverseOwner = "Base" + target }
        let forward = pick(names)
        var backward = pick(names)
        if backward == forward, source == inverseOwner || source == target { backward += "Back" }
        return Drawn(
            source: source, target: target, inverseOwner: inverseOwner,
            forward: forward, backward: backward,
            forwardOrdered: random.next() % 3 != 0, backwardOrdered: random.next() % 3 != 0)
    }

    @Test func bothSidesOrderedIsRefusedAtTheSideTheStoreWouldLose() throws {
        var refused = 0
        var fixed = 0
        for seed in UInt64(1)...400 {
            let drawn = Self.draw(seed: seed)
            let (text, forwardLine, backwardLine) = drawn.text()
            let resolved = ResolvedFile.compile(SourceFile(path: "Test.v1.model", text: text))
            let errors = resolved.diagnostics.filter { $0.severity == .error }
            guard drawn.forwardOrdered && drawn.backwardOrdered else {
                #expect(errors.isEmpty, "seed \(seed) \(drawn): \(errors.map(\.description))")
                continue
            }
            refused += 1
            #expect(errors.count == 1, "seed \(seed) \(drawn): \(errors.map(\.description))")
            guard let error = errors.first else { continue }
            // The runtime, given both sides ordered, keeps a position for one side only: the
            // error is at the other.
            let graph = try #require(resolved.graph)
            let layout = try SchemaLayout(SchemaLowering.lower(graph))
            func position(_ entity: String, _ name: String) throws -> String? {
                let owner = try layout.entity(entity)
                let relationship = try #require(owner.relationships.first { $0.name == name })
                guard case .joinTable(_, _, _, let position) = try layout.storage(of: relationship, from: owner) else {
                    Issue.record("seed \(seed) \(drawn): \(entity).\(name) is not in a join table")
                    return nil
                }
                return position
            }
            let forwardKept = try position(drawn.source, drawn.forward) != nil
            let backwardKept = try position(drawn.inverseOwner, drawn.backward) != nil
            #expect(forwardKept != backwardKept, "seed \(seed) \(drawn): the store keeps both or neither order")
            let lostLine = forwardKept ? backwardLine : forwardLine
            #expect(error.location?.line == lostLine, "seed \(seed) \(drawn): \(error.description)")
            #expect(error.message.contains("are both ordered"), "\(error.message)")
            #expect(error.notes.contains { $0.message.hasPrefix("order one side: declare") }, "\(error.notes)")
            // The fix: the side that lost its order becomes a set; the model validates.
            var fix = drawn
            if forwardKept { fix.backwardOrdered = false } else { fix.forwardOrdered = false }
            let fixedErrors = diagnose(fix.text().text).filter { $0.contains("error:") }
            #expect(fixedErrors.isEmpty, "seed \(seed) \(fix): \(fixedErrors)")
            fixed += 1
        }
        // The draw reaches both-ordered pairs, and every one of them was checked.
        #expect(refused > 100)
        #expect(fixed == refused)
    }

    /// The rule came after versions were released: in a version frozen in the lock file (which its
    /// users cannot change) the pair is a warning at the same place, with a note saying why, and
    /// the model plans; in the next, unreleased version the same pair stays an error.
    @Test func bothSidesOrderedInAReleasedVersionIsAWarning() throws {
        var released = 0
        for seed in UInt64(1)...400 {
            let drawn = Self.draw(seed: seed)
            guard drawn.forwardOrdered && drawn.backwardOrdered else { continue }
            released += 1
            guard released <= 12 else { break }
            let (v1, forwardLine, backwardLine) = drawn.text()
            // The lock records version 1 as it is, as `modelwright lock` would have when it shipped.
            var resolved = ResolvedFile.compile(SourceFile(path: "M.v1.model", text: v1))
            resolved.sink.relaxForReleasedVersion("released")
            let lowered = try #require(FrontEnd.lower(resolved), "seed \(seed) \(drawn)")
            let lock = LockFile(
                model: "M",
                frozen: [
                    LockFile.FrozenVersion(
                        version: 1, checksum: lowered.checksum.hexDigits,
                        entities: LockFile.entityDigests(of: lowered.schema),
                        members: LockFile.memberDigests(of: lowered.schema),
                        enums: LockFile.enumCases(of: lowered.graph),
                        stages: [], sync: LockFile.syncMarkings(of: lowered.graph))
                ])
            let lockText = String(decoding: try lock.encoded(), as: UTF8.self)
            let v2 = v1.replacingOccurrences(of: "model M version 1", with: "model M version 2")
            for (files, unreleased) in [
                (["M.v1.model": v1, LockFile.fileName: lockText], false),
                (["M.v1.model": v1, "M.v2.model": v2, LockFile.fileName: lockText], true),
                (["M.v1.model": v1], nil),
            ] as [([String: String], Bool?)] {
                let failure = "seed \(seed) \(drawn), files \(files.keys.sorted())"
                let folder = try temporaryModelFolder(named: "M", files: files)
                defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
                let result = FrontEnd.run(modelAt: folder.path)
                let ordered = result.diagnostics.filter { $0.message.contains("are both ordered") }
                let inV1 = ordered.filter { $0.path.hasSuffix("M.v1.model") }
                let inV2 = ordered.filter { $0.path.hasSuffix("M.v2.model") }
                #expect(inV1.count == 1, "\(failure): \(result.diagnostics.map(\.description))")
                let line = inV1.first?.location?.line
                #expect(line == forwardLine || line == backwardLine, "\(failure): \(inV1.map(\.description))")
                guard let unreleased else {
                    // No lock file: version 1 is not released, and the rule holds.
                    #expect(inV1.first?.severity == .error, "\(failure)")
                    continue
                }
                #expect(inV1.first?.severity == .warning, "\(failure): \(inV1.map(\.description))")
                #expect(
                    inV1.first?.notes.contains { $0.message.contains("version 1 is released") } == true, "\(failure)")
                if unreleased {
                    #expect(inV2.count == 1 && inV2.first?.severity == .error, "\(failure): \(inV2.map(\.description))")
                    #expect(result.model == nil, "\(failure)")
                } else {
                    #expect(!result.hasErrors, "\(failure): \(result.diagnostics.map(\.description))")
                    #expect(result.model != nil, "\(failure)")
                }
            }
        }
        #expect(released > 12)
    }
}
