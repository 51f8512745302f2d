import Foundation
import ModelwrightTestSupport
import Testing

@testable import ModelwrightSchema

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// ``ConfinedFolder``, the one way the tools reach files inside a folder: names that lead out are
/// refused, links are never followed, and a journal it did not write is refused untouched.
struct ConfinedFolderTests {
    private static func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("confined-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url.appendingPathComponent("in"), withIntermediateDirectories: true)
        return url
    }

    /// A name is accepted exactly when every `/`-separated component is non-empty, not `.` or
    /// `..`, and holds no NUL; a name to write, also no control character (a newline split the
    /// journal and wedged every rerun): drawn from components of every kind.
    @Test func aNameIsAcceptedExactlyWhenEveryComponentStaysInside() {
        let good = ["a", "Trips+Records.swift", "...", ".hidden", "Shop 2.xcdatamodel", "é", "-", "a..b", "\u{200B}"]
        let bad = ["", ".", "..", "nul\u{0}x"]
        let control = ["A\nB", "\r", "x\u{1B}[2K", "\u{7F}", "\u{85}", "\t"]
        var random = SplitMix64(seed: 24)
        for _ in 0..<2000 {
            let count = 1 + Int(random.next() % 4)
            var components: [String] = []
            var structural = true
            var printable = true
            for _ in 0..<count {
                switch random.next() % 6 {
                case 0:
                    components.append(bad[Int(random.next() % UInt64(bad.count))])
                    structural = false
                case 1:
                    components.append(control[Int(random.next() % UInt64(control.count))])
                    printable = false
                default:
                    components.append(good[Int(random.next() % UInt64(good.count))])
                }
            }
            let name = components.joined(separator: "/")
            let written = (try? ConfinedFolder.check(name, in: "/out")) != nil
            let read = (try? ConfinedFolder.check(name, in: "/out", reading: true)) != nil
            #expect(written == (structural && printable), "\(name.debugDescription)")
            #expect(read == structural, "\(name.debugDescription)")
        }
    }

    /// An output folder's path is followed as named except its last component, which must not be
    /// a link however `.`, `..` and empty components spell it (`link/.` made the link not-last).
    @Test func theOutputFolderIsNeverALinkHoweverItIsSpelled() throws {
        let root = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let outside = root.appendingPathComponent("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            at: root.appendingPathComponent("in/link"), withDestinationURL: outside)
        let base = root.appendingPathComponent("in").path
        let refused = ["link", "link/", "link/.", "link//", "link/./.", "x/../link", "./link/.", "link/x/.."]
        let accepted = ["link/Generated", "link/./Generated/", "real", "real/.", "x/../real/sub/.."]
        for spelling in refused + accepted {
            let path = base + "/" + spelling
            let opened = (try? ConfinedFolder.open(path, for: .writing).write([.init(path: "f", text: "x")])) != nil
            #expect(opened == accepted.contains(spelling), "\(spelling)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path) == ["Generated"])
    }

    /// A regular file with a second name (a hard link to a file elsewhere) is refused unread.
    @Test func aFileWithTwoNamesIsRefused() throws {
        let root = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        try Data("secret".utf8).write(to: root.appendingPathComponent("secret"))
        try Data("own".utf8).write(to: root.appendingPathComponent("in/own"))
        #expect(link(root.appendingPathComponent("secret").path, root.appendingPathComponent("in/f").path) == 0)
        let folder = try ConfinedFolder.open(root.appendingPathComponent("in").path, for: .reading)
        #expect(throws: BoundedFile.Failure.hardLink) { try folder.read("f", limit: 100) }
        #expect(try folder.read("own", limit: 100) == Array("own".utf8))
    }

    /// A folder swapped, in one step, between a real folder and a link outside while it is read:
    /// every read returns the file inside or fails, never the file outside (no check-then-use gap).
    @Test func aFolderSwappedWhileReadNeverLeadsOutside() throws {
        let root = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let real = root.appendingPathComponent("real").path
        let outside = root.appendingPathComponent("outside").path
        let swapped = root.appendingPathComponent("in/a").path
        let aside = root.appendingPathComponent("in/aside").path
        for (folder, text) in [(real, "inside"), (outside, "secret")] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: URL(fileURLWithPath: folder + "/f"))
        }
        let done = DispatchSemaphore(value: 0)
        let stop = StopFlag()
        #expect(rename(real, swapped) == 0 && symlink(outside, aside) == 0)
        Thread {
            while !stop.isSet { exchangeNames(swapped, aside) }
            done.signal()
        }.start()
        let folder = try ConfinedFolder.open(root.appendingPathComponent("in").path, for: .reading)
        var read = 0
        for _ in 0..<3000 {
            if let bytes = try? folder.read("a/f", limit: 100) {
                #expect(bytes == Array("inside".utf8))
                read += 1
            }
        }
        stop.set()
        done.wait()
        #expect(read > 0, "the race never let a read through; it tested nothing")
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
