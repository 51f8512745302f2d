import Foundation
import ModelwrightSchema
import ModelwrightTestSupport
import Testing

@testable import ModelwrightCLI

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Output and model folders that came with a pull request (issue 24): whatever a folder holds,
/// no tool creates or changes anything outside the folder it writes, reads a file outside the
/// folder it reads, or quotes such a file; each run ends in the correct files or an error.
///
/// Each case builds a sandbox: `outside/` (a secret, a `hooks` folder, a file the hostile links
/// point at) and `repo/` (the model, and the folder a command writes, seeded with a random
/// choice of hostile things: journals listing names from a pool of hostile names, symbolic
/// links at every level, temporary files planted as links, files or folders, folders named like
/// outputs). The sandbox is listed before and after, without following links; everything but
/// the output folder's own entries must be unchanged. `MODELWRIGHT_LARGE=1` runs 2,000 cases instead of 100.
@Suite(.heavy)
struct HostileFolderTests {
    private static let caseCount = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == nil ? 100 : 2000

    private static let versions = [
        "model Shop version 1\n\nentity Item {\n    name: String\n}\n",
        "model Shop version 2\n\nentity Item {\n    name: String\n    price: Int = 0\n}\n",
    ]

    /// The secret every hostile link points at; it must never appear in anything a tool prints.
    private static let secret = "TOKEN-7f3a9c secret-value"

    // MARK: - The sandbox

    /// A temporary folder holding `outside/` and `repo/`, removed when the case ends.
    private final class Sandbox {
        let root: URL
        var outside: URL { root.appendingPathComponent("outside") }
        var repo: URL { root.appendingPathComponent("repo") }
        var models: URL { repo.appendingPathComponent("Models") }

        init() throws {
            // Resolved (macOS's temporary folder is under the link /var), so a path inside the
            // sandbox starts with the current folder's physical path when the tool runs there.
            root = FileManager.default.temporaryDirectory.resolvingSymlinksInPath()
                .appendingPathComponent("hostile-\(UUID().uuidString)")
            let manager = FileManager.default
            try manager.createDirectory(at: outside.appendingPathComponent("hooks"), withIntermediateDirectories: true)
            try manager.createDirectory(at: outside.appendingPathComponent("dir"), withIntermediateDirectories: true)
            try manager.createDirectory(at: models, withIntermediateDirectories: true)
            try Data(HostileFolderTests.secret.utf8).write(to: outside.appendingPathComponent("secret"))
            try Data("outside\n".utf8).write(to: outside.appendingPathComponent("target"))
            for (index, text) in HostileFolderTests.versions.enumerated() {
                try Data(text.utf8).write(to: models.appendingPathComponent("Shop.v\(index + 1).model"))
            }
        }

        deinit { try? FileManager.default.removeItem(at: root) }

        func link(_ relative: String, in folder: URL, to destination: String) {
            let url = folder.appendingPathComponent(relative)
            try? FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try? FileManager.default.removeItem(at: url)
            try? FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: destination)
        }

        func file(_ relative: String, in folder: URL, _ text: String, executable: Bool = false) {
            let url = folder.appendingPathComponent(relative)
            try? FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try? FileManager.default.removeItem(at: url)
            try? Data(text.utf8).write(to: url)
            if executable { chmod(url.path, 0o755) }
        }

        func folder(_ relative: String, in folder: URL) {
            let url = folder.appendingPathComponent(relative)
            try? FileManager.default.removeItem(at: url)
            try? FileManager.default.createDirectory(
                at: url.appendingPathComponent("inside"), withIntermediateDirectories: true)
        }
    }

    /// Every entry under `root`, by relative path, without following a link: a link's target, a
    /// file's bytes, permissions and modification date. Entries under `excluded` (a real folder
    /// reached without links) are left out.
    private static func snapshot(_ root: URL, excluding excluded: String?) -> [String: String] {
        var entries: [String: String] = [:]
        func walk(_ relative: String) {
            let path = relative.isEmpty ? root.path : root.path + "/" + relative
            guard relative != excluded else { return }
            var status = stat()
            guard lstat(path, &status) == 0 else { return }
            let mode = status.st_mode & S_IFMT
            #if canImport(Darwin)
                let modified = "\(status.st_mtimespec.tv_sec).\(status.st_mtimespec.tv_nsec)"
            #else
                let modified = "\(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec)"
            #endif
            switch mode {
            case S_IFLNK:
                entries[relative] =
                    "link " + ((try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "?")
            case S_IFDIR:
                entries[relative] = "folder"
                for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
                    walk(relative.isEmpty ? name : relative + "/" + name)
                }
            case S_IFREG:
                let bytes = FileManager.default.contents(atPath: path) ?? Data()
                entries[relative] = "file \(status.st_mode & 0o7777) \(modified) \(bytes.base64EncodedString())"
            default:
                entries[relative] = "other \(mode)"
            }
        }
        walk("")
        return entries
    }

    // MARK: - The commands

    /// One command, writing into one folder of the sandbox.
    private enum Command: CaseIterable {
        case generate, generateNested, exportCoreData, importCoreData, lock, newVersion, validate

        /// The folder it writes, relative to the sandbox's root.
        var output: String {
            switch self {
            case .generate: "repo/Generated"
            case .generateNested: "repo/Sources/App/Generated"
            case .exportCoreData: "repo/Shop.xcdatamodeld"
            case .importCoreData: "repo/Imported"
            case .lock, .newVersion, .validate: "repo/Models"
            }
        }

        /// The command's arguments; `spelling` is appended to the output and model folders' paths
        /// (`/.`, `//`: a link spelled so is still the folder's last component).
        /// `x/..` is resolved in the text for an output folder only (an input is opened as the
        /// system resolves it, and `x` is missing), and `export-coredata` takes its bundle's name
        /// from the last component (`.xcdatamodeld`), so spellings apply where they are the same.
        func arguments(_ sandbox: Sandbox, spelling: String = "") -> [String] {
            let textual = spelling.contains("..")
            let output =
                sandbox.root.appendingPathComponent(self.output).path
                + (self == .exportCoreData ? "" : spelling)
            let models = sandbox.models.path + (textual ? "" : spelling)
            return switch self {
            case .generate, .generateNested: ["generate", models, "--output", output]
            case .exportCoreData: ["export-coredata", models, "--output", output]
            case .importCoreData:
                [
                    "import-coredata", sandbox.root.appendingPathComponent("input/Shop.xcdatamodeld").path,
                    "--output", output, "--all-versions",
                ]
            case .lock: ["lock", models]
            case .newVersion: ["new-version", models]
            case .validate: ["validate", models]
            }
        }
    }

    /// What a command writes into a clean sandbox: relative paths in its output folder and their bytes.
    private static func reference(_ command: Command) throws -> [String: Data] {
        let sandbox = try Sandbox()
        try prepareInput(sandbox)
        var console = BufferConsole()
        let code = ModelwrightCommand.run(command.arguments(sandbox), console: &console)
        #expect(code == .success, "\(command): \(console.errors)")
        var files: [String: Data] = [:]
        for (path, entry) in snapshot(sandbox.root.appendingPathComponent(command.output), excluding: nil)
        where entry.hasPrefix("file ") {
            files[path] = FileManager.default.contents(
                atPath: sandbox.root.appendingPathComponent(command.output).path + "/" + path)
        }
        return files
    }

    /// The Core Data bundle `import-coredata` reads, exported from the model into `input/`.
    private static func prepareInput(_ sandbox: Sandbox) throws {
        var console = BufferConsole()
        let bundle = sandbox.root.appendingPathComponent("input/Shop.xcdatamodeld").path
        let code = ModelwrightCommand.run(
            ["export-coredata", sandbox.models.path, "--output", bundle], console: &console)
        #expect(code == .success, "\(console.errors)")
    }

    // MARK: - The hostile folders

    /// Names a journal may list: the command's own, and ones that lead elsewhere.
    private static let hostileNames = [
        "../escaped.txt", "link/pre-commit", "link/../../escaped.txt", "/tmp/absolute-escape", "..", ".", "",
        "../../outside/target", "a//b", "x/../../../escaped", ".modelwright-pending", "sub/.hidden", "…/x", "...",
        String(repeating: "n", count: 300), "nul\u{0}name", "trailing/", "A\nB", "A\rB", "A\u{1B}[2KB",
    ]

    /// How a folder's path may be spelled: each names the same folder as the bare path.
    private static let spellings = ["", "/.", "//", "/./", "/x/.."]

    /// Seeds the folder `command` writes (and the model folder) with hostile things; when not
    /// `hostile`, only with things a correct run gets past (a journal of its own names, planted
    /// temporaries that are files or links, stale outputs, links and folders it does not use).
    private static func plant(
        _ command: Command, in sandbox: Sandbox, own: [String], hostile: Bool, using random: inout SplitMix64
    ) {
        let output = sandbox.root.appendingPathComponent(command.output)
        let outside = sandbox.outside
        func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }
        func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }
        let folders = [outside.appendingPathComponent("hooks").path, outside.appendingPathComponent("dir").path]
        let targets =
            folders + [
                outside.appendingPathComponent("target").path, outside.appendingPathComponent("secret").path,
                outside.appendingPathComponent("missing").path, "../../outside/hooks", "../../../outside/target",
            ]
        // The output folder itself, or a folder above it, as a link elsewhere.
        if hostile && chance(15) && command.output != "repo/Models" {
            try? FileManager.default.removeItem(at: output)
            sandbox.link(command.output, in: sandbox.root, to: pick(folders))
            return
        }
        try? FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        // Folder-level links, like the issue's `link → ../../../.git/hooks`.
        if chance(40) { sandbox.link("link", in: output, to: pick(folders)) }
        if chance(20) { sandbox.folder("...", in: output) }
        // The journal's own temporary, where the writer puts it before renaming it into place.
        if chance(15) {
            sandbox.link(
                "." + ConfinedFolder.journalName + ConfinedFolder.temporarySuffix, in: output, to: pick(targets))
        }
        if chance(20) { sandbox.file(".../escaped.txt" + ConfinedFolder.temporarySuffix, in: output, "HOSTILE") }
        // A journal listing a few names, hostile or the command's own.
        var journaled = false
        if chance(60) && (hostile || !own.isEmpty) {
            journaled = true
            let lines = (0..<(1 + Int(random.next() % 4))).map { _ in
                (hostile && chance(50)) || own.isEmpty ? pick(hostileNames) : pick(own)
            }
            let text = lines.map { $0 + "\n" }.joined()
            switch hostile ? random.next() % 5 : 4 {
            case 0: sandbox.link(ConfinedFolder.journalName, in: output, to: pick(targets))
            case 1: sandbox.folder(ConfinedFolder.journalName, in: output)
            default: sandbox.file(ConfinedFolder.journalName, in: output, text)
            }
            for line in lines where !line.isEmpty && !line.contains("\u{0}") && chance(70) {
                let path = Self.temporaryPath(of: line)
                if !hostile || chance(50) {
                    sandbox.file(path, in: output, "#!/bin/sh\necho HOSTILE\n", executable: true)
                } else {
                    sandbox.link(path, in: output, to: pick(targets))
                }
            }
        }
        // The command's own files and their temporaries: links, folders, devices, stale files.
        for name in own {
            let parent = name.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
            let temporary = Self.temporaryPath(of: name)
            if hostile && !parent.isEmpty && chance(25) { sandbox.link(parent, in: output, to: pick(folders)) }
            switch random.next() % 10 {
            // A journal of a run that stopped renames temporaries the run wrote, never links.
            case 0 where hostile || !journaled: sandbox.link(temporary, in: output, to: pick(targets))
            case 1: if hostile { sandbox.folder(temporary, in: output) }
            case 2: sandbox.file(temporary, in: output, "HOSTILE")
            default: break
            }
            // The model folder's own schema files are the input; they are left as they are.
            guard command.output != "repo/Models" || !name.hasSuffix(".model") || (hostile && name == "Shop.v3.model")
            else {
                continue
            }
            switch random.next() % 12 {
            case 0: if hostile { sandbox.link(name, in: output, to: pick(targets)) }
            case 1: if hostile { sandbox.folder(name, in: output) }
            // A model folder's lock file is also read: a stale one is an input error, not a leftover.
            case 2: if hostile || command.output != "repo/Models" { sandbox.file(name, in: output, "stale\n") }
            case 3: if hostile { mkfifo(output.appendingPathComponent(name).path, 0o644) }
            default: break
            }
        }
        guard hostile else { return }
        // A model folder whose files lead to the secret: a symbolic or a hard link.
        if chance(8) {
            let version = sandbox.models.appendingPathComponent("Shop.v2.model").path
            unlink(version)
            link(outside.appendingPathComponent("secret").path, version)
        }
        if chance(15) {
            sandbox.link("Shop.v2.model", in: sandbox.models, to: outside.appendingPathComponent("secret").path)
        }
        if chance(10) {
            sandbox.link(FileNames.lock, in: sandbox.models, to: outside.appendingPathComponent("secret").path)
        }
        if chance(10) {
            sandbox.link(FileNames.config, in: sandbox.repo, to: outside.appendingPathComponent("secret").path)
        }
        if chance(8) {
            let template = pick(["../outside/secret", sandbox.outside.appendingPathComponent("secret").path, "t/../x"])
            sandbox.file(FileNames.config, in: sandbox.models, "{ \"templates\": { \"Records\": \"\(template)\" } }")
        }
    }

    /// Where the writer puts `name` before renaming it into place: `.<leaf>.modelwright-new` beside it.
    private static func temporaryPath(of name: String) -> String {
        var components = name.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let leaf = components.popLast() ?? ""
        return (components + ["." + leaf + ConfinedFolder.temporarySuffix]).joined(separator: "/")
    }

    // MARK: - Tests

    @Test func hostileFoldersNeverLeadAWriteOrAReadOutside() throws {
        var references: [Command: [String: Data]] = [:]
        for command in Command.allCases { references[command] = try Self.reference(command) }
        var outcomes: [String: Int] = [:]
        for index in 0..<Self.caseCount {
            var random = SplitMix64(seed: 24, index: index)
            let command = Command.allCases[Int(random.next() % UInt64(Command.allCases.count))]
            let reference = references[command] ?? [:]
            let sandbox = try Sandbox()
            if command == .importCoreData { try Self.prepareInput(sandbox) }
            // The names the command writes (a model folder's schema files are its input).
            let own = reference.keys.filter { name in
                command.output != "repo/Models"
                    || !(Self.versions.indices.map { "Shop.v\($0 + 1).model" }.contains(name))
            }.sorted()
            let hostile = random.next() % 100 < 60
            Self.plant(command, in: sandbox, own: own, hostile: hostile, using: &random)
            let output = command.output
            let before = Self.snapshot(sandbox.root, excluding: output)
            var console = BufferConsole()
            let spelling = Self.spellings[Int(random.next() % UInt64(Self.spellings.count))]
            let code = ModelwrightCommand.run(command.arguments(sandbox, spelling: spelling), console: &console)
            let after = Self.snapshot(sandbox.root, excluding: output)
            let label = "case \(index) (\(command)\(hostile ? ", hostile" : "")\(spelling))"
            let changed = Set(before.keys).union(after.keys).filter { before[$0] != after[$0] }.sorted()
            #expect(changed.isEmpty, "\(label) changed outside its folder: \(changed)\n\(console.errors)")
            #expect(code == .success || code == .invalidInput, "\(label): \(code)")
            #expect(hostile || code == .success, "\(label) refused a folder a correct run gets past: \(console.errors)")
            #expect(!(console.output + console.errors).contains("TOKEN"), "\(label) quoted the secret")
            outcomes["\(hostile ? "hostile" : "benign") \(code)", default: 0] += 1
            guard code == .success, command != .validate else { continue }
            // A success wrote exactly the command's files, as regular files holding the right bytes.
            let folder = sandbox.root.appendingPathComponent(output)
            for (name, bytes) in reference where command != .newVersion || name == "Shop.v3.model" {
                var status = stat()
                #expect(
                    lstat(folder.path + "/" + name, &status) == 0 && status.st_mode & S_IFMT == S_IFREG,
                    "\(label) \(name)")
                #expect(FileManager.default.contents(atPath: folder.path + "/" + name) == bytes, "\(label) \(name)")
            }
            #expect(!FileManager.default.fileExists(atPath: folder.path + "/" + ConfinedFolder.journalName), "\(label)")
        }
        // Both outcomes occur: the generator is not trivially refusing (or accepting) everything.
        #expect(outcomes["hostile success", default: 0] > 0 && outcomes["hostile invalidInput", default: 0] > 0)
        #expect(outcomes["benign success", default: 0] > 0)
    }

    // MARK: - The issue's cases

    private static func run(_ arguments: [String]) -> (ExitCode, BufferConsole) {
        var console = BufferConsole()
        let code = ModelwrightCommand.run(arguments, console: &console)
        return (code, console)
    }

    /// A committed `Generated/` with a journal line `link/pre-commit`, an executable temporary
    /// `.link/pre-commit.modelwright-new` and `link → ../../../.git/hooks` installed a git hook.
    @Test func aJournalCannotInstallAGitHook() throws {
        let sandbox = try Sandbox()
        let hooks = sandbox.repo.appendingPathComponent(".git/hooks")
        try FileManager.default.createDirectory(at: hooks, withIntermediateDirectories: true)
        let output = sandbox.repo.appendingPathComponent("Sources/App/Generated")
        sandbox.file(ConfinedFolder.journalName, in: output, "link/pre-commit\n")
        sandbox.file(".link/pre-commit.modelwright-new", in: output, "#!/bin/sh\necho pwned\n", executable: true)
        sandbox.link("link", in: output, to: "../../../.git/hooks")
        let (code, console) = Self.run(["generate", sandbox.models.path, "--output", output.path])
        #expect(code == .invalidInput)
        #expect(console.errors.contains("the journal of an interrupted write lists 1 name this run does not write"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: hooks.path).isEmpty)
    }

    /// Without a link: a journal line `../escaped.txt` and a folder named `...` wrote beside the
    /// output folder.
    @Test func aJournalCannotWriteBesideTheOutputFolder() throws {
        let sandbox = try Sandbox()
        let output = sandbox.repo.appendingPathComponent("Generated")
        sandbox.file(ConfinedFolder.journalName, in: output, "../escaped.txt\n")
        sandbox.file(".../escaped.txt.modelwright-new", in: output, "escaped\n")
        let before = Self.snapshot(sandbox.root, excluding: "repo/Generated")
        let (code, _) = Self.run(["generate", sandbox.models.path, "--output", output.path])
        #expect(code == .invalidInput)
        #expect(Self.snapshot(sandbox.root, excluding: "repo/Generated") == before)
        #expect(!FileManager.default.fileExists(atPath: sandbox.repo.appendingPathComponent("escaped.txt").path))
    }

    /// `export-coredata` wrote `contents` through a version folder that was a link elsewhere.
    @Test func exportDoesNotWriteThroughALinkedVersionFolder() throws {
        let sandbox = try Sandbox()
        let bundle = sandbox.repo.appendingPathComponent("Shop.xcdatamodeld")
        sandbox.link("Shop 2.xcdatamodel", in: bundle, to: sandbox.outside.appendingPathComponent("dir").path)
        let (code, console) = Self.run(["export-coredata", sandbox.models.path, "--output", bundle.path])
        #expect(code == .invalidInput)
        #expect(console.errors.contains("Shop 2.xcdatamodel: error: is a symbolic link"))
        let inside = try FileManager.default.contentsOfDirectory(
            atPath: sandbox.outside.appendingPathComponent("dir").path)
        #expect(inside.isEmpty)
    }

    /// A version file linked to a file outside the folder was read, and its first token quoted.
    @Test func aLinkedVersionFileIsRefusedUnreadAndUnquoted() throws {
        let sandbox = try Sandbox()
        sandbox.link("Shop.v2.model", in: sandbox.models, to: sandbox.outside.appendingPathComponent("secret").path)
        for command in ["validate", "plan", "lock", "new-version"] {
            let (code, console) = Self.run([command, sandbox.models.path])
            #expect(code == .invalidInput, "\(command)")
            #expect(console.errors.contains("Shop.v2.model: error: the file is a symbolic link"), "\(command)")
            #expect(!(console.output + console.errors).contains("TOKEN"), "\(command)")
        }
        sandbox.link("Shop.v2.model", in: sandbox.models, to: "Shop.v1.model")
        let (code, console) = Self.run(["validate", sandbox.models.path])
        #expect(code == .invalidInput, "a link inside the folder is refused too: \(console.errors)")
    }

    /// A relative `--output` (and the command plugin's, run in the package) follows the path as
    /// named, but its last component, the output folder a checkout commits, must not be a link:
    /// a linked `Generated/` is refused however the path spells it, while a linked `Sources/` or
    /// `.build/` (a scratch disk, a CI cache) is the user's own place and is written through.
    /// Run as a child process, in the sandbox's `repo/`, since the path is relative to the
    /// current folder.
    @Test func aRelativeOutputIsRefusedOnlyWhenTheOutputFolderIsALink() throws {
        let buildFolder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let executable = try #require(
            [buildFolder, buildFolder.deletingLastPathComponent()].map { $0.appendingPathComponent("modelwright") }
                .first { FileManager.default.isExecutableFile(atPath: $0.path) })
        let cases: [(linked: String?, output: String, refused: Bool)] = [
            (nil, "Sources/App/Generated", false), ("Sources", "Sources/App/Generated", false),
            (".build", ".build/plugins/outputs/repo/App/destination/ModelwrightPlugin/Generated", false),
            ("Generated", "Generated", true), ("Generated", "Generated/.", true), ("Generated", "Generated//", true),
            ("Generated", "./Generated/./", true), ("Generated", "x/../Generated", true),
            ("Out", "Out/../Out/Generated", false),
        ]
        for (linked, output, refused) in cases {
            let sandbox = try Sandbox()
            if let linked {
                sandbox.link(linked, in: sandbox.repo, to: sandbox.outside.appendingPathComponent("dir").path)
            }
            let before = Self.snapshot(sandbox.root, excluding: nil)
            for path in [output, sandbox.repo.path + "/" + output] {
                let process = Process()
                process.executableURL = executable
                process.arguments = ["generate", "Models", "--output", path]
                process.currentDirectoryURL = sandbox.repo
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                process.waitUntilExit()
                #expect(process.terminationStatus == (refused ? 1 : 0), "\(path)")
                if refused {
                    #expect(Self.snapshot(sandbox.root, excluding: nil) == before, "\(path)")
                } else {
                    let folder = ConfinedFolder.lexicallyNormalised(sandbox.repo.path + "/" + output)
                    #expect(FileManager.default.fileExists(atPath: folder + "/Shop+Records.swift"), "\(path)")
                }
            }
        }
    }

    // MARK: - The red team's cases (issue 24, second round)

    /// The folder a user names is followed as named, links included, except the output folder's
    /// own last component, which must not be a link however the path spells it: drawn paths of
    /// one to three components under `repo/`, each a real folder or a link to a folder outside,
    /// each followed by `.`, empty or `x/..` components, given absolute to `generate`.
    @Test func theNamedPathIsFollowedButTheOutputFolderItselfIsNeverALink() throws {
        let decorations = ["", "/.", "//", "/./", "/x/..", "/./x/../."]
        var random = SplitMix64(seed: 2402)
        var outcomes: [Bool: Int] = [:]
        for index in 0..<60 {
            let sandbox = try Sandbox()
            let count = 1 + Int(random.next() % 3)
            var built = sandbox.repo
            var spelled = sandbox.repo.path
            var lastIsLink = false
            var lastTarget: URL?
            for level in 0..<count {
                let name = "c\(level)"
                let isLink = random.next() % 3 == 0
                if isLink {
                    let target = sandbox.outside.appendingPathComponent("t\(level)")
                    try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
                    sandbox.link(name, in: built, to: target.path)
                    lastTarget = target
                } else if level < count - 1 || random.next() % 2 == 0 {
                    sandbox.folder(name, in: built)
                }
                lastIsLink = isLink
                built = built.appendingPathComponent(name)
                spelled += "/" + name + decorations[Int(random.next() % UInt64(decorations.count))]
            }
            let (code, console) = Self.run(["generate", sandbox.models.path, "--output", spelled])
            let label = "case \(index): \(spelled)"
            #expect(code == (lastIsLink ? .invalidInput : .success), "\(label): \(console.errors)")
            if lastIsLink, let lastTarget {
                #expect(console.errors.contains("is a symbolic link"), "\(label)")
                #expect(try FileManager.default.contentsOfDirectory(atPath: lastTarget.path).isEmpty, "\(label)")
            } else {
                #expect(FileManager.default.fileExists(atPath: built.path + "/Shop+Records.swift"), "\(label)")
            }
            outcomes[lastIsLink, default: 0] += 1
        }
        #expect(outcomes[true, default: 0] > 0 && outcomes[false, default: 0] > 0)
    }

    /// A model folder reached through a link (a symlinked checkout, a shared model) is the user's
    /// choice: every command that reads it, and `lock` and `new-version` that add a file to it,
    /// accept it, as a linked folder above it.
    @Test func aModelFolderReachedThroughALinkWorksForEveryCommand() throws {
        for through in ["ModelsLink", "RepoLink/Models"] {
            let sandbox = try Sandbox()
            sandbox.link("ModelsLink", in: sandbox.root, to: sandbox.models.path)
            sandbox.link("RepoLink", in: sandbox.root, to: sandbox.repo.path)
            let models = sandbox.root.appendingPathComponent(through).path
            for arguments in [
                ["validate", models], ["plan", models], ["lock", models], ["new-version", models],
                ["generate", models, "--output", sandbox.repo.appendingPathComponent("Generated").path],
            ] {
                let (code, console) = Self.run(arguments)
                #expect(code == .success, "\(arguments): \(console.errors)")
            }
            #expect(FileManager.default.fileExists(atPath: sandbox.models.appendingPathComponent(FileNames.lock).path))
            #expect(FileManager.default.fileExists(atPath: sandbox.models.appendingPathComponent("Shop.v3.model").path))
        }
    }

    /// `generate --check` reads the output folder by the rule `generate` writes it: a linked
    /// output folder is refused, not compared through.
    @Test func checkRefusesALinkedOutputFolderLikeGenerate() throws {
        let sandbox = try Sandbox()
        let real = sandbox.outside.appendingPathComponent("dir")
        #expect(Self.run(["generate", sandbox.models.path, "--output", real.path]).0 == .success)
        sandbox.link("Generated", in: sandbox.repo, to: real.path)
        for output in ["Generated", "Generated/."] {
            let path = sandbox.repo.path + "/" + output
            let (code, console) = Self.run(["generate", sandbox.models.path, "--check", "--output", path])
            #expect(code == .invalidInput, "\(output)")
            #expect(console.errors.contains("is a symbolic link"), "\(output): \(console.errors)")
            #expect(Self.run(["generate", sandbox.models.path, "--output", path]).0 == .invalidInput)
        }
        #expect(Self.run(["generate", sandbox.models.path, "--check", "--output", real.path]).0 == .success)
    }

    /// A second name for a file outside (a hard link) is no file of the folder: a model version,
    /// a lock file, a template and a Core Data `contents` with more than one name are refused
    /// unread and unquoted.
    @Test func aHardLinkToAFileOutsideIsRefusedUnquoted() throws {
        let places: [(folder: (Sandbox) -> URL, name: String, arguments: (Sandbox) -> [String])] = [
            ({ $0.models }, "Shop.v3.model", { ["validate", $0.models.path] }),
            ({ $0.models }, FileNames.lock, { ["validate", $0.models.path] }),
            (
                { $0.repo.appendingPathComponent("T") }, "Records.mustache",
                {
                    [
                        "generate", $0.models.path, "--templates", $0.repo.appendingPathComponent("T").path, "--output",
                        $0.repo.appendingPathComponent("Generated").path,
                    ]
                }
            ),
            (
                { $0.root.appendingPathComponent("input/Shop.xcdatamodeld/Shop 2.xcdatamodel") }, "contents",
                {
                    [
                        "import-coredata", $0.root.appendingPathComponent("input/Shop.xcdatamodeld").path, "--output",
                        $0.repo.appendingPathComponent("Imported").path, "--all-versions",
                    ]
                }
            ),
        ]
        for (folder, name, arguments) in places {
            let sandbox = try Sandbox()
            try Self.prepareInput(sandbox)
            let directory = folder(sandbox)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
            #expect(link(sandbox.outside.appendingPathComponent("secret").path, directory.path + "/" + name) == 0)
            let (code, console) = Self.run(arguments(sandbox))
            #expect(code == .invalidInput, "\(name): \(console.errors)")
            #expect(console.errors.contains("hard link"), "\(name): \(console.errors)")
            #expect(!(console.output + console.errors).contains("TOKEN"), "\(name)")
            let generated = sandbox.repo.appendingPathComponent("Generated/Shop+Records.swift")
            #expect(!FileManager.default.fileExists(atPath: generated.path), "\(name)")
        }
    }

    /// A file in a `--templates` folder that is a link is refused unread, as a config's template
    /// is: its text never reaches generated code.
    @Test func aLinkedTemplateInATemplatesFolderIsRefused() throws {
        let sandbox = try Sandbox()
        let templates = sandbox.repo.appendingPathComponent("T")
        sandbox.link("Records.mustache", in: templates, to: sandbox.outside.appendingPathComponent("secret").path)
        let output = sandbox.repo.appendingPathComponent("Generated")
        let (code, console) = Self.run([
            "generate", sandbox.models.path, "--templates", templates.path, "--output", output.path,
        ])
        #expect(code == .invalidInput, "\(console.errors)")
        #expect(console.errors.contains("symbolic link"), "\(console.errors)")
        #expect(!FileManager.default.fileExists(atPath: output.path + "/Shop+Records.swift"))
        #expect(!(console.output + console.errors).contains("TOKEN"))
    }

    /// `--version-order @file` reads the file as every named file is read (never through a link),
    /// and an error never echoes a line of it.
    @Test func aVersionOrderFileIsReadUnlinkedAndNeverEchoed() throws {
        let sandbox = try Sandbox()
        try Self.prepareInput(sandbox)
        let bundle = sandbox.root.appendingPathComponent("input/Shop.xcdatamodeld").path
        let output = sandbox.repo.appendingPathComponent("Imported").path
        sandbox.link("order-link", in: sandbox.repo, to: sandbox.outside.appendingPathComponent("secret").path)
        try Data(Self.secret.utf8).write(to: sandbox.repo.appendingPathComponent("order-secret"))
        for file in ["order-link", "order-secret"] {
            let path = sandbox.repo.appendingPathComponent(file).path
            let (code, console) = Self.run([
                "import-coredata", bundle, "--output", output, "--all-versions", "--version-order", "@" + path,
            ])
            #expect(code == .usage, "\(file): \(console.errors)")
            #expect(!(console.output + console.errors).contains("TOKEN"), "\(file): \(console.errors)")
        }
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    /// A name with a control character is refused before anything is written: a newline in an
    /// exported bundle's name used to land in the journal, split it, and wedge every rerun.
    @Test func aNameWithAControlCharacterIsRefusedBeforeWriting() throws {
        for character in ["\n", "\r", "\u{1B}", "\u{7F}", "\u{85}"] {
            let sandbox = try Sandbox()
            let output = sandbox.repo.appendingPathComponent("xe/A\(character)B.xcdatamodeld").path
            for _ in 0..<2 {
                let (code, console) = Self.run(["export-coredata", sandbox.models.path, "--output", output])
                // Refused by the name's check, or earlier by the exporter (XML cannot hold U+001B).
                #expect(code == .invalidInput, "\(character.debugDescription): \(console.errors)")
            }
            #expect(!FileManager.default.fileExists(atPath: output))
        }
    }

    /// Every printed path goes through the one escaper: a config's template path holding a
    /// newline prints as one line.
    @Test func aPathWithANewlinePrintsAsOneLine() throws {
        let sandbox = try Sandbox()
        let config = sandbox.repo.appendingPathComponent(FileNames.config)
        try Data(#"{ "templates": { "Records": "T\nFAKE: error: forged.mustache" } }"#.utf8).write(to: config)
        let (code, console) = Self.run([
            "generate", sandbox.models.path, "--config", config.path, "--output",
            sandbox.repo.appendingPathComponent("Generated").path,
        ])
        #expect(code != .success)
        #expect(!console.errors.split(separator: "\n").contains { $0.hasPrefix("FAKE") }, "\(console.errors)")
        // A folder above the output whose name holds a newline: every path printed on standard
        // output (generate, lock, new-version) stays on its line.
        let odd = sandbox.root.appendingPathComponent("A\nFAKE ok")
        let models = odd.appendingPathComponent("Models")
        try FileManager.default.createDirectory(at: odd, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: sandbox.models, to: models)
        for arguments in [
            ["generate", models.path, "--output", odd.appendingPathComponent("Generated").path],
            ["generate", models.path, "--check", "--output", odd.appendingPathComponent("Generated").path],
            ["lock", models.path], ["new-version", models.path],
        ] {
            let (code, console) = Self.run(arguments)
            #expect(code == .success, "\(arguments): \(console.errors)")
            let lines = (console.output + console.errors).split(separator: "\n")
            #expect(!lines.contains { $0.hasPrefix("FAKE") }, "\(arguments): \(console.output)")
        }
    }

    /// `import-coredata` checks everything the written folder is read for before it writes: a
    /// linked lock file in the output folder stops it with nothing written.
    @Test func anImportWritesNothingWhenTheOutputFolderCannotBeRead() throws {
        let sandbox = try Sandbox()
        try Self.prepareInput(sandbox)
        let output = sandbox.repo.appendingPathComponent("Imported")
        sandbox.link(FileNames.lock, in: output, to: sandbox.outside.appendingPathComponent("secret").path)
        let (code, console) = Self.run([
            "import-coredata", sandbox.root.appendingPathComponent("input/Shop.xcdatamodeld").path, "--output",
            output.path, "--all-versions",
        ])
        #expect(code == .invalidInput, "\(console.errors)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: output.path) == [FileNames.lock],
            "\(console.errors)")
        #expect(!(console.output + console.errors).contains("TOKEN"))
    }

    /// A Core Data version folder that is a link is refused, however long the path it points to
    /// (`realpath` failed past 4,096 bytes and the check was skipped), and a version folder
    /// swapped between a folder and a link while imports run never makes one read outside.
    private static let raceRuns = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == nil ? 1000 : 10000

    @Test func aCoreDataVersionFolderIsNeverFollowedNorRaced() throws {
        let sandbox = try Sandbox()
        try Self.prepareInput(sandbox)
        let bundle = sandbox.root.appendingPathComponent("input/Shop.xcdatamodeld")
        let version = bundle.appendingPathComponent("Shop 2.xcdatamodel")
        let real = sandbox.root.appendingPathComponent("input/real.xcdatamodel")
        try FileManager.default.moveItem(at: version, to: real)
        // Outside: a version whose entity is named after the secret, so reading it would show.
        let outside = sandbox.outside.appendingPathComponent("v")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        let text = try String(contentsOf: real.appendingPathComponent("contents"), encoding: .utf8)
        try Data(text.replacingOccurrences(of: "name=\"Item\"", with: "name=\"TOKENSECRET\"").utf8).write(
            to: outside.appendingPathComponent("contents"))
        let output = sandbox.repo.appendingPathComponent("Imported").path
        let arguments = ["import-coredata", bundle.path, "--output", output, "--all-versions"]
        // A link to a folder whose real path is longer than PATH_MAX (`realpath` fails there):
        // two chains of 2,400 bytes, the second made through a link to the end of the first.
        let chain = Array(repeating: String(repeating: "d", count: 200), count: 12).joined(separator: "/")
        try FileManager.default.createDirectory(
            atPath: sandbox.outside.path + "/" + chain, withIntermediateDirectories: true)
        sandbox.link("m", in: sandbox.outside, to: sandbox.outside.path + "/" + chain)
        let deep = sandbox.outside.path + "/m/" + chain
        try FileManager.default.createDirectory(atPath: deep, withIntermediateDirectories: true)
        try Data(contentsOf: outside.appendingPathComponent("contents")).write(
            to: URL(fileURLWithPath: deep + "/contents"))
        #expect(symlink(deep, version.path) == 0)
        var (code, console) = Self.run(arguments)
        #expect(code == .invalidInput && console.errors.contains("symbolic link"), "\(console.errors)")
        #expect(!FileManager.default.fileExists(atPath: output), "\(console.errors)")
        try? FileManager.default.removeItem(atPath: output)
        unlink(version.path)
        // The race: a thread swaps the version folder with a link outside, atomically where the
        // system can (Linux's `RENAME_EXCHANGE`), so the name is always one or the other.
        let stop = StopFlag()
        let (realPath, versionPath, outsidePath) = (real.path, version.path, outside.path)
        let aside = sandbox.root.appendingPathComponent("input/aside").path
        #expect(rename(realPath, versionPath) == 0 && symlink(outsidePath, aside) == 0)
        let swapper = Thread {
            while !stop.isSet {
                exchangeNames(versionPath, aside)
            }
        }
        swapper.start()
        var outcomes: [ExitCode: Int] = [:]
        for _ in 0..<Self.raceRuns {
            (code, console) = Self.run(arguments)
            outcomes[code, default: 0] += 1
            #expect(!(console.output + console.errors).contains("TOKEN"), "\(console.errors)")
            let written = (try? FileManager.default.contentsOfDirectory(atPath: output)) ?? []
            for name in written {
                let contents = (try? String(contentsOfFile: output + "/" + name, encoding: .utf8)) ?? ""
                #expect(!contents.contains("TOKEN"), "\(name)")
            }
        }
        stop.set()
        while !swapper.isFinished { usleep(1000) }
        #expect(outcomes.values.reduce(0, +) == Self.raceRuns)
    }
}
