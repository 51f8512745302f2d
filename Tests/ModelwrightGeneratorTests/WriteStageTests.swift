import Foundation
import ModelwrightSchema
import Testing

@testable import ModelwrightGenerator

/// Generated files are written only when their bytes change, so builds stay incremental.
struct WriteStageTests {
    private static func temporaryFolder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("writer-\(UUID().uuidString)")
    }

    private static func modificationDate(_ url: URL) throws -> Date? {
        try FileManager.default.attributesOfItem(atPath: url.path)[.modificationDate] as? Date
    }

    @Test func writesNewFilesAndCreatesTheFolder() throws {
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let written = try RenderedFile.write([RenderedFile(name: "A.swift", contents: "let a = 1\n")], to: folder.path)
        #expect(written == ["A.swift"])
        #expect(try String(contentsOf: folder.appendingPathComponent("A.swift"), encoding: .utf8) == "let a = 1\n")
    }

    @Test func leavesAnUnchangedFileUntouched() throws {
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let files = [
            RenderedFile(name: "A.swift", contents: "let a = 1\n"),
            RenderedFile(name: "B.swift", contents: "let b = 1\n"),
        ]
        try RenderedFile.write(files, to: folder.path)
        let url = folder.appendingPathComponent("A.swift")
        let past = Date(timeIntervalSince1970: 1_000_000)
        try FileManager.default.setAttributes([.modificationDate: past], ofItemAtPath: url.path)

        let changed = [files[0], RenderedFile(name: "B.swift", contents: "let b = 2\n")]
        let written = try RenderedFile.write(changed, to: folder.path)
        #expect(written == ["B.swift"])
        #expect(try Self.modificationDate(url) == past)
        #expect(try String(contentsOf: folder.appendingPathComponent("B.swift"), encoding: .utf8) == "let b = 2\n")
    }

    @Test func aFailedRunLeavesTheOldSetAndNoTemporaryFile() throws {
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let old = ["A", "B", "C"].map { RenderedFile(name: "\($0).swift", contents: "let \($0.lowercased()) = 1\n") }
        try RenderedFile.write(old, to: folder.path)
        // C.swift's place is taken by a folder, so the new set cannot be written in full.
        try FileManager.default.removeItem(at: folder.appendingPathComponent("C.swift"))
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("C.swift/inside"), withIntermediateDirectories: true)
        let new = ["A", "B", "C"].map { RenderedFile(name: "\($0).swift", contents: "let \($0.lowercased()) = 2\n") }
        #expect(throws: (any Error).self) { try RenderedFile.write(new, to: folder.path) }
        for file in old.prefix(2) {
            #expect(try String(contentsOf: folder.appendingPathComponent(file.name), encoding: .utf8) == file.contents)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == old.map(\.name))
    }

    @Test func aRunStoppedAtAnyPointLeavesOneSetAfterTheNextRun() throws {
        // A stop between any two steps of a write: before the journal, the next run discards the
        // temporary files; after it, the next run finishes the renames.
        let old = ["A", "B", "C"].map { RenderedFile(name: "\($0).swift", contents: "old \($0)\n") }
        let new = ["A", "B", "C"].map { RenderedFile(name: "\($0).swift", contents: "new \($0)\n") }
        for renamedBeforeTheStop in -1...new.count {
            let folder = Self.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            try RenderedFile.write(old, to: folder.path)
            for file in new {
                try Data(file.contents.utf8).write(to: folder.appendingPathComponent(".\(file.name).modelwright-new"))
            }
            if renamedBeforeTheStop >= 0 {
                let journal = new.map { $0.name + "\n" }.joined()
                try Data(journal.utf8).write(to: folder.appendingPathComponent(ConfinedFolder.journalName))
                for file in new.prefix(renamedBeforeTheStop) {
                    try FileManager.default.removeItem(at: folder.appendingPathComponent(file.name))
                    try FileManager.default.moveItem(
                        at: folder.appendingPathComponent(".\(file.name).modelwright-new"),
                        to: folder.appendingPathComponent(file.name))
                }
            }
            try ConfinedFolder.open(folder.path, for: .writing).recover(expecting: Set(new.map(\.name)))
            let expected = renamedBeforeTheStop >= 0 ? new : old
            for file in expected {
                #expect(
                    try String(contentsOf: folder.appendingPathComponent(file.name), encoding: .utf8) == file.contents)
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == old.map(\.name))
        }
    }
}
