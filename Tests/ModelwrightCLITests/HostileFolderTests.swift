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

        func arguments(_ sandbox: Sandbox) -> [String] {
            let output = sandbox.root.appendingPathComponent(self.output).path
            let models = sandbox.models.path
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
        String(repeating: "n", count: 300), "nul\u{0}name", "trailing/",
    ]

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
        // A model folder whose files lead to the secret.
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
            let code = ModelwrightCommand.run(command.arguments(sandbox), console: &console)
            let after = Self.snapshot(sandbox.root, excluding: output)
            let label = "case \(index) (\(command)\(hostile ? ", hostile" : ""))"
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

    /// A relative `--output` (and the command plugin's, run in the package) follows no link in
    /// the checkout: a linked `Sources/` or `Generated/` is refused. Run as a child process, in
    /// the sandbox's `repo/`, since the path is relative to the current folder.
    @Test func aRelativeOutputFollowsNoLinkInTheCheckout() throws {
        let buildFolder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let executable = try #require(
            [buildFolder, buildFolder.deletingLastPathComponent()].map { $0.appendingPathComponent("modelwright") }
                .first { FileManager.default.isExecutableFile(atPath: $0.path) })
        let cases: [(linked: String?, output: String)] = [
            (nil, "Sources/App/Generated"), ("Sources", "Sources/App/Generated"), ("Generated", "Generated"),
            ("Out", "Out/../Out/Generated"),
        ]
        for (linked, output) in cases {
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
                // Without a link, the same command writes the files (the control).
                #expect(process.terminationStatus == (linked == nil ? 0 : 1), "\(path)")
                if linked != nil {
                    #expect(Self.snapshot(sandbox.root, excluding: nil) == before, "\(path)")
                } else {
                    #expect(
                        FileManager.default.fileExists(atPath: sandbox.repo.path + "/" + output + "/Shop+Records.swift")
                    )
                }
            }
        }
    }
}
