import Foundation
import ModelwrightTestSupport
import Testing

@testable import ModelwrightSchema

/// ``ConfinedFolder``, the one way the tools reach files inside a folder: names that lead out are
/// refused, links are never followed, and a journal it did not write is refused untouched.
struct ConfinedFolderTests {
    private static func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("confined-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url.appendingPathComponent("in"), withIntermediateDirectories: true)
        return url
    }

    /// A name is accepted exactly when every `/`-separated component is non-empty, not `.` or
    /// `..`, and holds no NUL: drawn from components of every kind.
    @Test func aNameIsAcceptedExactlyWhenEveryComponentStaysInside() {
        let good = ["a", "Trips+Records.swift", "...", ".hidden", "Shop 2.xcdatamodel", "é", "-", "a..b"]
        let bad = ["", ".", "..", "nul\u{0}x"]
        var random = SplitMix64(seed: 24)
        for _ in 0..<2000 {
            let count = 1 + Int(random.next() % 4)
            var components: [String] = []
            var valid = true
            for _ in 0..<count {
                if random.next() % 4 == 0 {
                    components.append(bad[Int(random.next() % UInt64(bad.count))])
                    valid = false
                } else {
                    components.append(good[Int(random.next() % UInt64(good.count))])
                }
            }
            let name = components.joined(separator: "/")
            let accepted = (try? ConfinedFolder.check(name, in: "/out")) != nil
            #expect(accepted == valid, "\(name.debugDescription)")
        }
    }

    /// Whatever links a folder holds, a read reaches only regular files inside it, and a write
    /// changes nothing outside it: every path of a small tree, with a link at a random level.
    @Test func readsAndWritesNeverCrossALink() throws {
        var random = SplitMix64(seed: 7)
        for _ in 0..<30 {
            let root = try Self.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: root) }
            let outside = root.appendingPathComponent("outside")
            try FileManager.default.createDirectory(
                at: outside.appendingPathComponent("a"), withIntermediateDirectories: true)
            try Data("secret".utf8).write(to: outside.appendingPathComponent("a/f"))
            try Data("secret".utf8).write(to: outside.appendingPathComponent("f"))
            let inside = root.appendingPathComponent("in")
            // `a/f` inside, with `a` or `f` (or neither) replaced by a link to the same place outside.
            let linkLevel = random.next() % 3
            if linkLevel == 0 {
                try FileManager.default.createSymbolicLink(
                    at: inside.appendingPathComponent("a"), withDestinationURL: outside.appendingPathComponent("a"))
            } else {
                try FileManager.default.createDirectory(
                    at: inside.appendingPathComponent("a"), withIntermediateDirectories: true)
                if linkLevel == 1 {
                    try FileManager.default.createSymbolicLink(
                        at: inside.appendingPathComponent("a/f"),
                        withDestinationURL: outside.appendingPathComponent("f"))
                } else {
                    try Data("inside".utf8).write(to: inside.appendingPathComponent("a/f"))
                }
            }
            let folder = try ConfinedFolder.open(inside.path, for: .reading)
            let read = try? folder.read("a/f", limit: 100)
            #expect(read == (linkLevel == 2 ? Array("inside".utf8) : nil))
            let written = try? ConfinedFolder.open(inside.path, for: .writing).write([
                .init(path: "a/f", text: "new")
            ])
            #expect((written != nil) == (linkLevel == 2))
            #expect(
                FileManager.default.contents(atPath: outside.appendingPathComponent("a/f").path) == Data("secret".utf8))
            #expect(
                FileManager.default.contents(atPath: outside.appendingPathComponent("f").path) == Data("secret".utf8))
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: outside.appendingPathComponent("a").path) == ["f"])
        }
    }

    /// A journal that lists a name the run does not write is refused, and nothing is renamed: not
    /// even the names it lists that the run does write.
    @Test func aForeignJournalRenamesNothing() throws {
        let root = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let inside = root.appendingPathComponent("in")
        try Data("A.swift\nB.swift\n".utf8).write(to: inside.appendingPathComponent(ConfinedFolder.journalName))
        try Data("planted".utf8).write(to: inside.appendingPathComponent(".A.swift.modelwright-new"))
        try Data("planted".utf8).write(to: inside.appendingPathComponent(".B.swift.modelwright-new"))
        let folder = try ConfinedFolder.open(inside.path, for: .writing)
        #expect(throws: ConfinedFolder.Failure.self) { try folder.write([.init(path: "A.swift", text: "a")]) }
        #expect(!FileManager.default.fileExists(atPath: inside.appendingPathComponent("A.swift").path))
        // Listing only the run's names, it completes the interrupted set, then writes this run's.
        try Data("A.swift\n".utf8).write(to: inside.appendingPathComponent(ConfinedFolder.journalName))
        #expect(try folder.write([.init(path: "A.swift", text: "a")]) == ["A.swift"])
        #expect(FileManager.default.contents(atPath: inside.appendingPathComponent("A.swift").path) == Data("a".utf8))
        #expect(!FileManager.default.fileExists(atPath: inside.appendingPathComponent(ConfinedFolder.journalName).path))
    }
}
