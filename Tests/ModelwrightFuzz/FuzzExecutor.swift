import Foundation
import ModelwrightCoreData
import ModelwrightGenerator
import ModelwrightSchema

/// Runs one input in this process through the library calls the CLI's `validate`, `plan`,
/// `generate` and `import-coredata` make, and checks what they give: success, or errors that each
/// name a file, line and column, and nothing that escaped into SQL or Swift.
struct FuzzExecutor {
    /// How an input ended, short of a crash or a hang (which the supervisor sees from outside).
    enum Verdict: String, Sendable {
        /// Every command succeeded.
        case accepted
        /// A command refused the input with located errors, as it should.
        case rejected
        /// An error had no line and column, or a line past the end of its file.
        case unlocated
        /// A command refused the input without any error.
        case silent
        /// A diagnostic printed raw control, separator or bidi characters from the input.
        case rawEcho
        /// Validation accepted the model, but generating its code failed.
        case generateFailed
        /// The input ran SQL of its own (the canary file appeared) or put a line break Swift
        /// honours into generated code.
        case injection
        /// Generated code holds text it should not, short of an injection: CRLF line ends copied
        /// from the schema into doc comments.
        case wrongOutput

        /// Whether the verdict breaks a promise of issue 13.
        var isFailure: Bool { self != .accepted && self != .rejected }
    }

    /// What one input gave.
    struct Outcome: Sendable {
        /// The worst verdict of the input's commands.
        var verdict: Verdict
        /// What was wrong, for a failure: the diagnostic or error at fault.
        var detail: String
        /// The command that failed, for a failure.
        var failedCommand: String
        /// The command that took longest.
        var slowestCommand: String
        /// The processor time it took, in milliseconds.
        var slowestMilliseconds: Int
    }

    /// The file a hostile SQL payload would create in the working folder.
    static let canary = "fuzzcanary"

    /// The folder the input's files are written into, emptied before each input.
    let folder: URL
    /// Called before each command with its CLI spelling, so the supervisor can tell which hung.
    let announce: (String) -> Void

    private final class State {
        var verdict = Verdict.accepted
        var detail = ""
        var command = ""
        var failedCommand = ""
        var slowest = ("", 0)
        var files: [String: [UInt8]] = [:]
    }

    private let state = State()

    /// Writes the input's files into ``folder`` and runs its commands.
    func run(_ input: FuzzInput) -> Outcome {
        try? FileManager.default.removeItem(at: folder)
        for file in input.files {
            let url = folder.appendingPathComponent(file.path)
            try? FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: url.path, contents: Data(file.bytes))
            state.files[url.path] = file.bytes
        }
        switch input.kind {
        case .schema: runSchema(input)
        case .xml: runCoreData(input)
        }
        if FileManager.default.fileExists(atPath: Self.canary) {
            try? FileManager.default.removeItem(atPath: Self.canary)
            fail(.injection, "a string default ran SQL: \(Self.canary) was created by ATTACH DATABASE")
        }
        return Outcome(
            verdict: state.verdict, detail: state.detail, failedCommand: state.failedCommand,
            slowestCommand: state.slowest.0,
            slowestMilliseconds: state.slowest.1)
    }

    private func path(_ relative: String) -> String {
        folder.appendingPathComponent(relative).path
    }

    private func runSchema(_ input: FuzzInput) {
        let commands = input.commands
        let loaded = timed(commands[0]) { FrontEnd.run(modelAt: path(input.target)) }
        check(loaded.diagnostics, modelLoaded: loaded.model != nil)
        if let single = input.singleFile {
            let alone = timed(commands[1]) { FrontEnd.run(modelAt: path(single)) }
            check(alone.diagnostics, modelLoaded: alone.model != nil)
        }
        guard let model = loaded.model else { return }
        timed(commands[commands.count - 2]) { describePlan(model) }
        generate(folder: path(input.target), command: commands[commands.count - 1])
    }

    private func runCoreData(_ input: FuzzInput) {
        let commands = input.commands
        let imported = path("imported")
        let model: PlannedModel? = timed(commands[0]) {
            let bundle: CoreDataBundle
            do {
                bundle = try CoreDataBundle.open(path: path(input.target))
            } catch {
                fail(.unlocated, "\(error)")
                return nil
            }
            var options = CoreDataImporter.Options()
            options.folder = imported
            let result = CoreDataImporter.importModel(bundle, options: options)
            check(result.diagnostics, modelLoaded: !result.hasErrors)
            guard !result.hasErrors else { return nil }
            do {
                _ = try CoreDataImporter.write(result, to: imported)
            } catch {
                fail(.unlocated, "cannot write the model: \(error.localizedDescription)")
                return nil
            }
            // What the import checked of the folder as written is what loading it gives.
            let loaded = result.checked ?? FrontEnd.run(modelAt: imported)
            check(loaded.diagnostics, modelLoaded: loaded.model != nil)
            return loaded.model
        }
        guard model != nil else { return }
        generate(folder: imported, command: commands[1])
    }

    /// What `plan` prints, computed: every step's changes, operations and checksums.
    private func describePlan(_ model: PlannedModel) {
        var text = ""
        for step in model.steps {
            text += step.from.checksum.hexDigits + step.to.checksum.hexDigits
            text += step.customStages.map(\.name).joined() + step.cautions.joined()
            for change in step.changes {
                text += change.summary + change.kind.rawValue + (change.resolution ?? "") + (change.caution ?? "")
            }
            text += step.operations.map(\.description).joined() + step.rewrittenTables.joined()
        }
        _ = text.utf8.count
    }

    private func generate(folder: String, command: String) {
        timed(command) {
            do {
                // The whole pipeline again, as `generate` runs it: its front end gives what the
                // model gave above, so only the back end can add a failure here.
                let output = self.folder.appendingPathComponent("out").path
                let result = try Pipeline.run(Pipeline.Request(modelPath: folder, goal: .write(to: output)))
                for file in result.files {
                    let bytes = Array(file.contents.utf8)
                    let returns = bytes.indices.filter { bytes[$0] == UInt8(ascii: "\r") }
                    if returns.contains(where: { $0 + 1 == bytes.count || bytes[$0 + 1] != UInt8(ascii: "\n") }) {
                        fail(
                            .injection,
                            "\(file.name) holds a bare carriage return, which ends a Swift comment or literal")
                    } else if !returns.isEmpty {
                        fail(.wrongOutput, "\(file.name) holds CRLF line ends copied from the schema")
                    }
                }
            } catch {
                fail(.generateFailed, "validated, but generate failed: \(error)")
            }
        }
    }

    /// Checks the invariants of issue 13 on one command's diagnostics.
    private func check(_ diagnostics: [Diagnostic], modelLoaded: Bool) {
        let errors = diagnostics.filter { $0.severity == .error }
        if !modelLoaded, errors.isEmpty {
            fail(.silent, "refused without an error; diagnostics: \(diagnostics.map(\.description))")
        }
        if !errors.isEmpty, state.verdict == .accepted { state.verdict = .rejected }
        // Lines per file, counted once: a file has up to 100 errors, and a mutated one megabytes.
        var lineCounts: [String: Int] = [:]
        for error in errors {
            guard let location = error.location else {
                fail(.unlocated, "\(error)")
                continue
            }
            if location.line < 1 || location.column < 1 {
                fail(.unlocated, "bad position: " + error.description)
            } else if let bytes = state.files[error.path] {
                let lines =
                    lineCounts[error.path]
                    ?? 1
                    + bytes.withUnsafeBufferPointer { buffer in
                        var count = 0
                        for byte in buffer where byte == 0x0A || byte == 0x0D { count += 1 }
                        return count
                    }
                lineCounts[error.path] = lines
                if location.line > lines {
                    fail(.unlocated, "line \(location.line) is past the end (\(lines) lines): " + error.description)
                }
            }
        }
        // SQLite refusing the SQL built for the shadow check means text from the input changed the
        // statement: a quoting bug, whether or not this payload managed to run anything.
        if let broken = errors.first(where: { error in
            error.message.contains("SQLite error")
                && ["syntax error", "unrecognized token", "incomplete input"].contains { error.message.contains($0) }
        }) {
            fail(.injection, "input text broke the SQL built from it: " + broken.description)
        }
        for diagnostic in diagnostics {
            let texts = [diagnostic.message] + diagnostic.notes.map(\.message)
            if let scalar = texts.lazy.flatMap(\.unicodeScalars).first(where: Self.isHostile) {
                fail(
                    .rawEcho,
                    "U+\(String(scalar.value, radix: 16, uppercase: true)) printed raw: "
                        + diagnostic.description)
                break
            }
        }
    }

    /// Whether a scalar must not reach a terminal raw: controls, separators and bidi controls.
    static func isHostile(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028
            || scalar.value == 0x2029 || scalar.properties.isBidiControl
    }

    /// Records a failure; of several, the first of the most serious kind is the one reported.
    private func fail(_ verdict: Verdict, _ detail: String) {
        let rank: [Verdict] = [.rawEcho, .wrongOutput, .generateFailed, .silent, .unlocated, .injection]
        if state.verdict.isFailure,
            rank.firstIndex(of: verdict) ?? 0 <= rank.firstIndex(of: state.verdict) ?? 0
        {
            return
        }
        state.verdict = verdict
        state.detail = detail
        state.failedCommand = state.command
    }

    @discardableResult
    private func timed<Result>(_ command: String, _ body: () -> Result) -> Result {
        announce(command)
        state.command = command
        // Processor time, not the clock's: on a loaded machine (the test run starts every suite at
        // once) a quick command could wait seconds for a core and be counted slow.
        let start = Self.processorNanoseconds()
        let result = body()
        let milliseconds = Int((Self.processorNanoseconds() - start) / 1_000_000)
        if milliseconds >= state.slowest.1 { state.slowest = (command, milliseconds) }
        return result
    }

    /// The processor time this process has used, in nanoseconds.
    private static func processorNanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
