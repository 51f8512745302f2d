import Foundation
import Testing

@testable import ModelwrightSchema

/// Version numbers are bounded, and every check across versions walks the versions that exist,
/// never the numbers between them.
struct VersionLimitTests {
    private static func file(_ version: String) -> String {
        "model Notes version \(version)\nentity Note {\n    title: String\n}\n"
    }

    private static func load(_ files: [String: String]) throws -> [String] {
        let folder = try temporaryModelFolder(named: "Notes", files: files)
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        return FrontEnd.run(modelAt: folder.path).diagnostics.map { diagnostic in
            let file = diagnostic.path.split(separator: "/").last.map(String.init) ?? ""
            return "\(file):\(diagnostic.location.map(\.description) ?? "-"): \(diagnostic.message)"
        }
    }

    @Test func aVersionPastTheLimitIsALocatedError() throws {
        for number in ["9223372036854775807", "9223372036854775808", "1000001", String(repeating: "9", count: 10_000)] {
            let lines = try Self.load([
                "Notes.v1.model": Self.file("1"), "Notes.v\(number.prefix(40)).model": Self.file(number),
            ])
            let shown = DiagnosticText.escaped("version \(number) is too high: version numbers go up to 1000000")
            #expect(lines == ["Notes.v\(number.prefix(40)).model:1:21: \(shown)"], "\(lines)")
        }
        #expect(try Self.load(["Notes.v1.model": Self.file("1"), "Notes.v2.model": Self.file("00")]).count == 1)
    }

    @Test func missingVersionsAreReportedAsRanges() throws {
        let lines = try Self.load(["Notes.v1.model": Self.file("1"), "Notes.v1000000.model": Self.file("1000000")])
        #expect(
            lines == [
                "Notes.v1000000.model:1:7: versions 2–999999 of 'Notes' are missing: versions are numbered 1, 2, 3, … without gaps; a released version (listed in modelwright-lock.json) must keep its file: restore it from version control"
            ])
        #expect(VersionChecker.missingVersionsMessage([1, 2, 3], model: "M") == nil)
        #expect(
            VersionChecker.missingVersionsMessage([2, 4, 9], model: "M")
                == "versions 1, 3, 5–8 of 'M' are missing: versions are numbered 1, 2, 3, … without gaps; a released version (listed in modelwright-lock.json) must keep its file: restore it from version control"
        )
        // Many gaps: listed up to the cap, the rest counted; built from the versions that exist.
        let odd = Set(stride(from: 1, through: 200_001, by: 2))
        let message = try #require(VersionChecker.missingVersionsMessage(odd, model: "M"))
        #expect(message.hasPrefix("versions 2, 4, 6,"))
        #expect(message.contains("and \(100_000 - VersionChecker.maximumListedGaps) more gaps"))
    }

    @Test func theLastVersionHasNoSuccessor() throws {
        let folder = try temporaryModelFolder(
            named: "Notes", files: ["Notes.v1000000.model": Self.file("1000000")])
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let result = FrontEnd.run(modelAt: folder.appendingPathComponent("Notes.v1000000.model").path)
        let version = try #require(result.model?.current)
        #expect(throws: VersionLimitReached.self) { try NewVersion.text(after: version) }
    }
}
