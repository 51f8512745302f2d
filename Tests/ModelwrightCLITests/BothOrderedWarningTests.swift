import Foundation
import ModelwrightTestSupport
import Testing

@testable import ModelwrightCLI

/// A many-to-many ordered on both sides in a released version prints its warning once, at the
/// relationship, whatever else the model holds (issue 25's red team saw it four times beside
/// another error): drawn models of a released version 1 with the pair, and later versions with
/// or without the pair and with or without another error, through `validate`, `plan` and `lock`.
@Suite(.heavy)
struct BothOrderedWarningTests {
    private static func run(_ arguments: [String]) -> (ExitCode, BufferConsole) {
        var console = BufferConsole()
        let code = ModelwrightCommand.run(arguments, console: &console)
        return (code, console)
    }

    private static let pair =
        "entity Post { title: String = \"p\"; tags: [Label] @inverse(posts) }\n"
        + "entity Label { name: String = \"l\"; posts: [Post] @inverse(tags) }\n"

    /// What a later version holds beside the released one.
    private static let laterVersions = [
        // The pair fixed, its loss declared: no error.
        "entity Post { title: String = \"p\"; tags: Set<Label> @inverse(posts) }\n"
            + "entity Label { name: String = \"l\"; posts: [Post] @inverse(tags) }\n"
            + "migration from 1 {\n    lossy Post.tags \"order kept on Label.posts\"\n}\n",
        // The pair fixed without declaring the loss: a plan error.
        "entity Post { title: String = \"p\"; tags: Set<Label> @inverse(posts) }\n"
            + "entity Label { name: String = \"l\"; posts: [Post] @inverse(tags) }\n",
        // The pair kept: its error in the unreleased version.
        pair,
        // Another error: an unknown type.
        "entity Post { title: String = \"p\"; tags: [Label] @inverse(posts); bad: Nope }\n"
            + "entity Label { name: String = \"l\"; posts: [Post] @inverse(tags) }\n",
        // A syntax error.
        "entity Post { title: String = \n",
    ]

    @Test func theWarningOfAReleasedVersionIsPrintedOnceAtItsRelationship() throws {
        var cases = 0
        for later in [nil] + Self.laterVersions.indices.map(Optional.some) {
            for edited in [false, true] {
                for command in ["validate", "plan", "lock"] {
                    let folder = FileManager.default.temporaryDirectory
                        .appendingPathComponent("cli-\(UUID().uuidString)/Tag")
                    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                    defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
                    let v1 = folder.appendingPathComponent("Tag.v1.model")
                    try "model Tag version 1\n\(Self.pair)".write(to: v1, atomically: true, encoding: .utf8)
                    _ = Self.run(["lock", folder.path, "--through", "1"])
                    if edited {
                        // A frozen version edited by hand: another error, in the same file.
                        try "model Tag version 1\n\(Self.pair.replacingOccurrences(of: "\"p\"", with: "\"q\""))"
                            .write(to: v1, atomically: true, encoding: .utf8)
                    }
                    if let later {
                        try "model Tag version 2\n\(Self.laterVersions[later])".write(
                            to: folder.appendingPathComponent("Tag.v2.model"), atomically: true, encoding: .utf8)
                    }
                    let arguments =
                        command == "lock" ? ["lock", folder.path, "--through", "1"] : [command, folder.path]
                    let (_, console) = Self.run(arguments)
                    let printed = (console.errors + console.output).split(separator: "\n")
                    let warnings = printed.filter { $0.contains("Tag.v1.model") && $0.contains("are both ordered") }
                    let label = "\(command), later version \(later.map(String.init) ?? "none"), edited \(edited)"
                    #expect(warnings.count == 1, "\(label): \(printed)")
                    #expect(warnings.first?.contains("Tag.v1.model:2:36: warning: ") == true, "\(label): \(warnings)")
                    cases += 1
                }
            }
        }
        #expect(cases == 36)
    }
}
