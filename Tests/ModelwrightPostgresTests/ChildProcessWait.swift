import Foundation

/// Runs `process` (its standard output and error going to `output`) to its end on a thread of its
/// own, and returns what it printed. A task blocked in `waitUntilExit` holds one of the cooperative
/// pool's threads, and on a 2-core machine two such waits stop every other test of the run (their
/// observers and cancellations then time out: seen in a fresh-clone CI run).
func runToEnd(_ process: Process, output: Pipe) async throws -> Data {
    return try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            do {
                try process.run()
                let data = output.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(returning: data)
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }
}
