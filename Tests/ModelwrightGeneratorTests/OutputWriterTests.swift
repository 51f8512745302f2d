import Foundation
import Testing

@testable import ModelwrightGenerator

/// Generated files are written only when their bytes change, so builds stay incremental.
struct OutputWriterTests {
    private static func temporaryFolder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("writer-\(UUID().uuidString)")
    }

    private static func modificationDate(_ url: URL) throws -> Date? {
        try FileManager.default.attributesOfItem(atPath: url.path)[.modificationDate] as? Date
    }

    @Test func writesNewFilesAndCreatesTheFolder() throws {
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let written = try OutputWriter.write([GeneratedFile(name: "A.swift", contents: "let a = 1\n")], to: folder)
        #expect(written == ["A.swift"])
        #expect(try String(contentsOf: folder.appendingPathComponent("A.swift"), encoding: .utf8) == "let a = 1\n")
    }

    @Test func leavesAnUnchangedFileUntouched() throws {
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let files = [
            GeneratedFile(name: "A.swift", contents: "let a = 1\n"),
            GeneratedFile(name: "B.swift", contents: "let b = 1\n"),
        ]
        try OutputWriter.write(files, to: folder)
        let url = folder.appendingPathComponent("A.swift")
        let past = Date(timeIntervalSince1970: 1_000_000)
        try FileManager.default.setAttributes([.modificationDate: past], ofItemAtPath: url.path)

        let changed = [files[0], GeneratedFile(name: "B.swift", contents: "let b = 2\n")]
        let written = try OutputWriter.write(changed, to: folder)
        #expect(written == ["B.swift"])
        #expect(try Self.modificationDate(url) == past)
        #expect(try String(contentsOf: folder.appendingPathComponent("B.swift"), encoding: .utf8) == "let b = 2\n")
    }
}
