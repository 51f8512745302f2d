import Foundation
import ModelwrightTestSupport
import Testing

@testable import ModelwrightSchema

/// Issue 31: a version file named wrong (its case, its extension, or a number its header does
/// not hold) beside `Notes.v1.model` and `Notes.v2.model` is one located diagnostic naming it,
/// never silence and never a second diagnostic for the gap it leaves.
struct VersionFileNameTests {
    private static let v1 = "model Notes version 1\nentity Note {\n    title: String\n    body: String\n}\n"
    private static let v2 =
        "model Notes version 2\nentity Note {\n    title: String\n    body: String\n    pinned: Bool = false\n}\n"

    private static func version(_ number: Int) -> String {
        "model Notes version \(number)\nentity Note {\n    title: String\n    body: String\n}\n"
    }

    /// One misnaming drawn from `random`: the file name, its text, and the name the diagnostic
    /// must suggest.
    private static func misnaming(
        _ random: inout SplitMix64
    ) -> (name: String, text: String, expected: String) {
        func flipCase(_ text: String) -> String {
            var flipped = String(
                text.map { character in
                    Bool.random(using: &random) ? Character(character.uppercased()) : Character(character.lowercased())
                })
            if flipped == text { flipped = text.uppercased() }
            return flipped
        }
        let model = Bool.random(using: &random) ? "Notes" : flipCase("Notes")
        let v = Bool.random(using: &random) ? "v" : "V"
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
            // The case alone is wrong, somewhere.
            var name = "\(model).\(v)3.\(Bool.random(using: &random) ? "model" : flipCase("model"))"
            if name == "Notes.v3.model" { name = "Notes.v3.Model" }
            return (name, version(3), "Notes.v3.model")
        case 1:
            // Another extension, or a backup's.
            let tail = [".mdl", ".modl", ".model.bak", ".model~", ".model.orig", ".swift", "", ".model.json"]
                .randomElement(using: &random)!
            return ("\(model).\(v)3\(tail)", version(3), "Notes.v3.model")
        default:
            // The header holds another number: a clash with 1 or 2, or a gap before it.
            let number = [1, 2, 4, 5, 9, 40].randomElement(using: &random)!
            return ("Notes.v3.model", version(number), "Notes.v\(number).model")
        }
    }

    @Test(arguments: 0..<60)
    func aMisnamedVersionFileIsOneLocatedDiagnosticNamingIt(seed: Int) throws {
        var random = SplitMix64(seed: 31, index: seed)
        let (name, text, expected) = Self.misnaming(&random)
        let folder = try temporaryModelFolder(
            named: "Notes", files: ["Notes.v1.model": Self.v1, "Notes.v2.model": Self.v2, name: text])
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let diagnostics = FrontEnd.run(modelAt: folder.path).diagnostics
        #expect(diagnostics.count == 1, "\(name) holding \(text.prefix(21)): \(diagnostics.map(\.description))")
        let diagnostic = try #require(diagnostics.first)
        #expect(diagnostic.path.split(separator: "/").last.map(String.init) == name)
        #expect(diagnostic.location != nil)
        #expect(diagnostic.message.contains("'\(expected)'"), "\(diagnostic.message)")
    }

    @Test func onlyNamesStartingModelDotVersionAreLookalikes() {
        #expect(FileNames.versionFileName("Notes.v3.model") == .schema)
        #expect(FileNames.versionFileName("README.md") == .unrelated)
        #expect(FileNames.versionFileName("Notes.version.txt") == .unrelated)
        #expect(FileNames.versionFileName("Notes.v3beta.txt") == .unrelated)
        #expect(FileNames.versionFileName("modelwright-lock.json") == .unrelated)
        #expect(FileNames.versionFileName("Notes.coredata-store.json") == .unrelated)
        #expect(
            FileNames.versionFileName("notes.V03.mdl", models: ["Notes"])
                == .lookalike(expected: "Notes.v3.model", isBackup: false))
        #expect(
            FileNames.versionFileName("Notes.v3.model.bak") == .lookalike(expected: "Notes.v3.model", isBackup: true))
    }

    /// A version file in a subfolder of the model folder (the build plugin gives it to the model
    /// folder's command) is one error located at that file, naming where version files must be;
    /// drawn over random subfolder paths, depths and names, with hidden folders passed over.
    @Test func aVersionFileInASubfolderIsOneLocatedErrorNamingTheModelFolder() throws {
        var random = SplitMix64(seed: 4)
        for round in 0..<20 {
            let folder = try temporaryModelFolder(named: "Notes", files: ["Notes.v1.model": Self.v1])
            defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
            var nested: Set<String> = []
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let depth = Int.random(in: 1...4, using: &random)
                let path = (0..<depth).map { _ in
                    ["old", "v1", "Archive", "x y"].randomElement(using: &random) ?? "old"
                }
                let name =
                    ["Notes.v1.model", "Notes.v2.model", "Other.v1.model", "notes.V3.Model"].randomElement(
                        using: &random) ?? "Notes.v1.model"
                let sub = folder.appendingPathComponent(path.joined(separator: "/"))
                try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
                try Data(Self.v1.utf8).write(to: sub.appendingPathComponent(name))
                nested.insert(sub.appendingPathComponent(name).path)
            }
            let hidden = folder.appendingPathComponent(".git")
            try FileManager.default.createDirectory(at: hidden, withIntermediateDirectories: true)
            try Data(Self.v1.utf8).write(to: hidden.appendingPathComponent("Notes.v1.model"))
            let diagnostics = FrontEnd.run(modelAt: folder.path).diagnostics
            let errors = diagnostics.filter { $0.severity == .error }
            #expect(Set(errors.map(\.path)) == nested && errors.count == nested.count, "round \(round): \(errors)")
            for error in errors {
                #expect(error.location == SourcePosition(line: 1, column: 1), "\(error)")
                #expect(
                    error.message.contains("version files must be directly in the model folder '\(folder.path)'"),
                    "\(error)")
            }
        }
    }

    /// A symbolic link that would hide versions (to a folder holding them, anywhere in the model
    /// folder; named like a version file in a subfolder, broken or not) is one located error at
    /// the link saying links are not followed, never silence; drawn over random places and kinds.
    @Test func aSymbolicLinkHidingVersionsIsOneLocatedErrorAtTheLink() throws {
        var random = SplitMix64(seed: 31)
        for round in 0..<20 {
            let folder = try temporaryModelFolder(named: "Notes", files: ["Notes.v1.model": Self.v1])
            defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
            let outside = folder.deletingLastPathComponent().appendingPathComponent("outside")
            try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
            try Data(Self.v2.utf8).write(to: outside.appendingPathComponent("Notes.v2.model"))
            var links: Set<String> = []
            for index in 0..<Int.random(in: 1...3, using: &random) {
                let depth = Int.random(in: 0...3, using: &random)
                let path = (0..<depth).map { _ in ["old", "Archive", "x y"].randomElement(using: &random) ?? "old" }
                let sub = folder.appendingPathComponent(path.joined(separator: "/"))
                try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
                let kind = Int.random(in: 0..<3, using: &random)
                // A link named like a version file directly in the model folder is refused elsewhere.
                let isFolderLink = kind == 0 || depth == 0
                let name = isFolderLink ? "linked\(index)" : "Notes.v\(index + 2).model"
                let file = kind == 1 ? outside.path + "/Notes.v2.model" : "/nonexistent/x"
                let target = isFolderLink ? outside.path : file
                let link = sub.appendingPathComponent(name)
                try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: target)
                links.insert(link.path)
            }
            let errors = FrontEnd.run(modelAt: folder.path).diagnostics.filter { $0.message.contains("symbolic link") }
            #expect(Set(errors.map(\.path)) == links && errors.count == links.count, "round \(round): \(errors)")
            for error in errors {
                #expect(error.location == SourcePosition(line: 1, column: 1), "\(error)")
                #expect(
                    error.message.contains("symbolic link") && error.message.contains("follows no link"), "\(error)")
                // A link to a folder is a warning (it may hold anything); a version file's link is an error.
                #expect(error.severity == (error.message.contains("to a folder") ? .warning : .error), "\(error)")
            }
        }
    }
}
