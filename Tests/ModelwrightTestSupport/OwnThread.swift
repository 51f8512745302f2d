import Foundation
import Testing

/// Runs each test case of a suite or test on a thread of its own instead of Swift's shared task
/// pool, whose threads are as many as the machine's cores (two in CI).
///
/// The test run starts every test at once on that pool. A test that blocks its thread (a child
/// process, a compiler, a synchronous PostgreSQL statement, a long computation) holds one of those
/// few threads, and every other test's next step queues behind it: a test waiting for an
/// observation or an HTTP answer then ran into its time limit, and a test that had created a
/// database could not go on to close its connection, so the server ran out of them ("too many
/// clients"). On a thread of its own a blocking test shares the processor with the others as any
/// process does and holds nothing of the pool.
///
/// - ``ownThread``: a thread of its own, at once. For tests that wait for an event within a time
///   limit.
/// - ``heavy``: a thread of its own once one of ``HeavyTestGate/width`` places is free, so that
///   tests holding server connections, processes or compilers are not all running at once.
package struct OwnThread: SuiteTrait, TestTrait, TestScoping {
    let gated: Bool

    /// Every test of a suite it is given to has it.
    package var isRecursive: Bool { true }

    /// Each test case, not the suite or the test as a whole, gets the thread.
    package func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    /// Runs the test case on a new thread, after a place is free when the trait is gated.
    package func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        if gated { await HeavyTestGate.shared.enter() }
        let executor = ThreadExecutor(name: test.name)
        defer {
            executor.finish()
            if gated { Task { await HeavyTestGate.shared.leave() } }
        }
        try await withTaskExecutorPreference(executor) { try await function() }
    }
}

extension Trait where Self == OwnThread {
    /// Each test case runs on a thread of its own, at once.
    package static var ownThread: Self { OwnThread(gated: false) }
    /// Each test case runs on a thread of its own, at most ``HeavyTestGate/width`` at once.
    package static var heavy: Self { OwnThread(gated: true) }
}

/// The places for ``OwnThread/heavy`` test cases: four per core, and at least eight (most of them
/// wait for a server or a child process rather than compute).
package actor HeavyTestGate {
    /// The gate of this test process.
    package static let shared = HeavyTestGate()
    /// How many gated test cases run at once.
    package static let width = max(8, 4 * ProcessInfo.processInfo.activeProcessorCount)

    private var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func enter() async {
        if running < Self.width {
            running += 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func leave() {
        if waiting.isEmpty {
            running -= 1
        } else {
            waiting.removeFirst().resume()  // the place passes on
        }
    }
}

/// A task executor that runs its jobs, in order, on one thread it starts; ``finish()`` ends the
/// thread once its queue is empty. A job that arrives after that gets a thread of its own.
package final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var finished = false

    /// Starts the thread, named `name`.
    package init(name: String) {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// Runs `job` on the thread after the jobs before it.
    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        defer { condition.unlock() }
        if finished {
            let executor = asUnownedTaskExecutor()
            Thread { job.runSynchronously(on: executor) }.start()
            return
        }
        jobs.append(job)
        condition.signal()
    }

    /// Ends the thread once its queue is empty.
    package func finish() {
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty && !finished { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
