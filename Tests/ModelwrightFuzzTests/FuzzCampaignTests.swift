import Foundation
import ModelwrightTestSupport
import Testing

/// Issue 13's promise, checked on generated inputs: no mutated schema file or Core Data model
/// makes `validate`, `plan`, `generate` or `import-coredata` die by a signal, run past the time
/// limit, or refuse it without a located error. The campaign runs in `ModelwrightFuzz` child
/// processes, so a crash fails this test instead of ending the test run.
///
/// Scale it with `MODELWRIGHT_FUZZ_SCHEMA`, `MODELWRIGHT_FUZZ_XML` and `MODELWRIGHT_FUZZ_SEED`;
/// the large campaign is described at the top of `Tests/ModelwrightFuzz/ModelwrightFuzz.swift`.
@Suite(.ownThread, .serialized)
struct FuzzCampaignTests {
    private static let runner = builtExecutable(named: "ModelwrightFuzz")

    private static func setting(_ name: String, _ fallback: Int) -> Int {
        ProcessInfo.processInfo.environment[name].flatMap { Int($0) } ?? fallback
    }

    @Test("a seeded campaign of mutated models and Core Data files: no crash, no hang, every refusal located")
    func mutatedInputsAreRefusedSafely() throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.runner), "build the ModelwrightFuzz target")
        let seed = Self.setting("MODELWRIGHT_FUZZ_SEED", 1)
        let schema = Self.setting("MODELWRIGHT_FUZZ_SCHEMA", 2_000)
        let xml = Self.setting("MODELWRIGHT_FUZZ_XML", 1_000)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.runner)
        process.arguments = [
            "supervise", "--seed", String(seed), "--schema", String(schema), "--xml", String(xml),
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        // The counts always; every failure, with the command that makes it again, when the test fails.
        print(output.split(separator: "\n").prefix(4).joined(separator: "\n"))
        #expect(process.terminationReason == .exit, "the supervisor itself crashed")
        #expect(process.terminationStatus == 0, "the fuzz campaign found failures:\n\(output)")
    }
}
