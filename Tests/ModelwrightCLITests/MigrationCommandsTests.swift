import Foundation
import ModelwrightTestSupport
import Testing

@testable import ModelwrightCLI

/// `plan`, `new-version` and `lock`, used as a developer would between releases.
@Suite(.heavy)
struct MigrationCommandsTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    private static func run(_ arguments: [String]) -> (ExitCode, BufferConsole) {
        var console = BufferConsole()
        let code = ModelwrightCommand.run(arguments, console: &console)
        return (code, console)
    }

    /// A copy of Models/Trips in a temporary folder.
    private static func tripsCopy() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cli-\(UUID().uuidString)/Trips")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for version in 1...3 {
            try FileManager.default.copyItem(
                at: root.appendingPathComponent("Models/Trips/Trips.v\(version).model"),
                to: folder.appendingPathComponent("Trips.v\(version).model"))
        }
        return folder
    }

    @Test func planShowsEveryStepWithItsClassAndCost() throws {
        let (code, console) = Self.run(["plan", Self.root.appendingPathComponent("Models/Trips").path])
        #expect(code == .success)
        let lines = console.output.split(separator: "\n").map(String.init)
        #expect(lines.first == "Trips: 3 versions, 2 steps")
        #expect(
            lines.contains {
                $0.hasPrefix("Version 1 → 2 (") && $0.hasSuffix("): lightweight with 1 caution, in place")
            })
        #expect(
            lines.contains {
                $0.hasPrefix("Version 2 → 3 (")
                    && $0.hasSuffix("): custom stage splitName with 6 cautions, rewrites Trip, User")
            })
        #expect(lines.contains("  lightweight          rename attribute Organization.title to name (in place)"))
        #expect(
            lines.contains {
                $0.hasPrefix(
                    "  lossy                remove attribute User.name [accepted: split into givenName and familyName")
            })

        let (jsonCode, json) = Self.run(["plan", Self.root.appendingPathComponent("Models/Trips").path, "--json"])
        #expect(jsonCode == .success)
        let object = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
        let steps = try #require(object?["steps"] as? [[String: Any]])
        #expect(steps.map { $0["isLightweight"] as? Bool } == [true, false])
        #expect((steps[1]["customStages"] as? [String]) == ["splitName"])
    }

    @Test(
        "every command that works on a model folder refuses one version file, names the folder, and writes nothing",
        arguments: [
            ["plan"], ["plan", "--json"], ["generate", "--output", "OUT"], ["new-version"], ["lock"],
            ["export-coredata", "--output", "OUT/Trips.xcdatamodeld"],
        ])
    func folderCommandsRefuseAFile(_ command: [String]) throws {
        let folder = try Self.tripsCopy()
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let output = folder.deletingLastPathComponent().appendingPathComponent("out")
        let file = folder.appendingPathComponent("Trips.v2.model").path
        let arguments =
            [command[0], file] + command.dropFirst().map { $0.replacingOccurrences(of: "OUT", with: output.path) }
        let before = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        let (code, console) = Self.run(arguments)
        #expect(code == .usage)
        #expect(console.errors.contains("'\(command[0])' works on a model folder"))
        #expect(console.errors.contains("modelwright \(command[0]) \(folder.path)"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == before)
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    @Test func newVersionThenLockThenEditingAFrozenVersionFails() throws {
        let folder = try Self.tripsCopy()
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let (lockCode, lock) = Self.run(["lock", folder.path])
        #expect(lockCode == .success)
        #expect(lock.output.hasSuffix("versions 1–3 of Trips are frozen\n"))
        #expect(Self.run(["lock", folder.path]).1.output.hasPrefix("unchanged "))

        let (newCode, new) = Self.run(["new-version", folder.path])
        #expect(newCode == .success)
        #expect(new.output.contains("Trips.v4.model: version 4 of Trips, a copy of version 3"))
        let v4 = try String(contentsOf: folder.appendingPathComponent("Trips.v4.model"), encoding: .utf8)
        #expect(v4.contains("model Trips version 4") && !v4.contains("migration from") && !v4.contains("@renamed"))
        // An unchanged copy has version 3's checksum: one store version, which validate warns about.
        let (validateCode, validate) = Self.run(["validate", folder.path])
        #expect(validateCode == .success)
        #expect(validate.errors.contains("warning: version 4 has the same structure as version 3"))

        try FileManager.default.removeItem(at: folder.appendingPathComponent("Trips.v4.model"))
        let v3 = folder.appendingPathComponent("Trips.v3.model")
        let edited = try String(contentsOf: v3, encoding: .utf8).replacingOccurrences(
            of: "    logo: Data?", with: "    logo: Data?\n    motto: String?")
        try Data(edited.utf8).write(to: v3)
        let (code, console) = Self.run(["validate", folder.path])
        #expect(code == .invalidInput)
        #expect(
            console.errors.contains(
                "Trips.v3.model:73:5: error: version 3 is frozen (released), but entity 'Organization' changed: attribute 'motto' was added here"
            ),
            "\(console.errors)")
        #expect(
            console.errors.contains(
                "note: undo the change here and make it in a new version instead: 'modelwright new-version"))
    }

    /// Issue 25, red team E: a released version breaking a rule newer than it (both sides of a
    /// many-to-many ordered) can be locked: `lock` releases it, so the rule is a warning there, as
    /// it is once the lock file records it; an unreleased version still gets the error.
    @Test func lockingAVersionThatBreaksANewerRuleWarnsAndLocks() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cli-\(UUID().uuidString)/Tag")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let both =
            "entity Post { title: String = \"p\"; tags: [Label] @inverse(posts) }\n"
            + "entity Label { name: String = \"l\"; posts: [Post] @inverse(tags) }\n"
        try "model Tag version 1\n\(both)".write(
            to: folder.appendingPathComponent("Tag.v1.model"), atomically: true, encoding: .utf8)
        let (validateCode, validate) = Self.run(["validate", folder.path])
        #expect(validateCode == .invalidInput)
        #expect(validate.errors.contains("error: 'Post.tags' and 'Label.posts' are both ordered"), "\(validate.errors)")

        let (lockCode, lock) = Self.run(["lock", folder.path, "--through", "1"])
        #expect(lockCode == .success, "\(lock.errors)")
        #expect(lock.errors.contains("warning: 'Post.tags' and 'Label.posts' are both ordered"), "\(lock.errors)")
        #expect(lock.output.hasSuffix("versions 1–1 of Tag are frozen\n"), "\(lock.output)")
        #expect(Self.run(["validate", folder.path]).0 == .success)
        // A new version is not released: the rule is an error there.
        try "model Tag version 2\n\(both)".write(
            to: folder.appendingPathComponent("Tag.v2.model"), atomically: true, encoding: .utf8)
        let (laterCode, later) = Self.run(["validate", folder.path])
        #expect(laterCode == .invalidInput)
        #expect(later.errors.contains("Tag.v2.model:2:"), "\(later.errors)")
    }

    /// A model folder of two versions of `Person.pets` and its inverse `Animal.owner`.
    private static func pairs(_ v1: (pets: String, owner: String), _ v2: (pets: String, owner: String)) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cli-\(UUID().uuidString)/Pairs")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (version, shape) in [(1, v1), (2, v2)] {
            let text = """
                model Pairs version \(version)
                entity Person {
                    name: String
                    pets: \(shape.pets) @inverse(owner)
                }
                entity Animal {
                    name: String
                    owner: \(shape.owner)
                }

                """
            try text.write(
                to: folder.appendingPathComponent("Pairs.v\(version).model"), atomically: true, encoding: .utf8)
        }
        return folder
    }

    @Test func planKeepsTheLinksOfAWidenedRelationshipAndRefusesANarrowedOneWithWhereAndHow() throws {
        let widened = try Self.pairs(("Animal?", "Person?"), ("Set<Animal>", "Person?"))
        defer { try? FileManager.default.removeItem(at: widened.deletingLastPathComponent()) }
        let (code, console) = Self.run(["plan", widened.path])
        #expect(code == .success, "\(console.errors)")
        let lines = console.output.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("Version 1 → 2 (") && $0.contains("): lightweight") }, "\(lines)")
        #expect(
            lines.contains {
                $0.hasPrefix("  lightweight          change Person.pets from to-one to to-many (every link is kept) (")
            }, "\(lines)")

        // Many people may point at one animal now; after, one at most: not lightweight, and the
        // error says where (the inverse's line in version 2) and how (a stage that chooses).
        let narrowed = try Self.pairs(("Animal?", "Set<Person>"), ("Animal?", "Person?"))
        defer { try? FileManager.default.removeItem(at: narrowed.deletingLastPathComponent()) }
        let (narrowedCode, refusal) = Self.run(["plan", narrowed.path])
        #expect(narrowedCode != .success)
        #expect(
            refusal.errors.contains(
                "Pairs.v2.model:8:5: error: version 2 cannot be migrated to from version 1 (Pairs.v1.model): change Animal.owner from to-many to to-one needs a custom stage"
            ), "\(refusal.errors)")
        #expect(
            refusal.errors.contains(
                "a Animal may hold several links of Animal.owner ↔ Person.pets now and one at most after: declare a custom stage whose code chooses the one link each Animal keeps and sets both sides"
            ), "\(refusal.errors)")
        #expect(refusal.errors.contains("'migration from 1 { custom name \"what it does\" }'"), "\(refusal.errors)")
    }

    @Test func usageErrors() {
        #expect(Self.run(["plan"]).0 == .usage)
        #expect(Self.run(["lock", "a", "b"]).0 == .usage)
        #expect(Self.run(["lock", "a", "--through"]).0 == .usage)
        #expect(Self.run(["new-version"]).0 == .usage)
        #expect(Self.run(["plan", "--help"]).1.output.contains("USAGE: modelwright plan"))
    }
}
