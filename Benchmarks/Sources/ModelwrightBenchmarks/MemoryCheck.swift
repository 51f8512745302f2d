import BenchmarkSupport
import Foundation
import Modelwright

/// Iterates a large store with `ReadContext.forEach` and measures how far the process's peak
/// resident memory rises above where it was; then, for contrast, does the same with `fetch`,
/// which holds every record at once.
enum MemoryCheck {
    struct Result {
        let rows: Int
        /// Peak RSS growth while streaming with `forEach`, in bytes; `nil` where it cannot be isolated.
        let forEachGrowth: Int?
        /// Peak RSS growth while fetching every record into one array, in bytes.
        let fetchGrowth: Int?
        /// How long filling the store took (not a benchmark: a lazy sequence into `batchInsert`).
        let fill: Duration
        /// How long the `forEach` pass took.
        let forEach: Duration
    }

    static func run(rows: Int, in directory: URL) async throws -> Result {
        let url = directory.appendingPathComponent("memory.sqlite")
        let (fill, store) = try await measure { try await ModelwrightContender.fill(url, count: rows) }

        let baseline = ResidentMemory.resetPeak()
        let (forEach, streamed) = try await measure {
            try await store.performQuery { context in
                var digest = Digest()
                try context.forEach(Person.request()) { person in
                    digest.add(person)
                }
                return digest
            }
        }
        let forEachPeak = ResidentMemory.peak()
        guard streamed.rows == rows else {
            throw BenchmarkError("forEach saw \(streamed.rows) rows of \(rows)")
        }

        let fetchBaseline = ResidentMemory.resetPeak()
        let fetched = try await store.performQuery { context in
            try context.fetch(Person.request()).count
        }
        let fetchPeak = ResidentMemory.peak()
        guard fetched == rows else { throw BenchmarkError("fetch returned \(fetched) rows of \(rows)") }

        return Result(
            rows: rows,
            forEachGrowth: growth(from: baseline, to: forEachPeak),
            fetchGrowth: growth(from: fetchBaseline, to: fetchPeak),
            fill: fill,
            forEach: forEach
        )
    }

    private static func growth(from baseline: Int?, to peak: Int?) -> Int? {
        guard let baseline, let peak else { return nil }
        return max(0, peak - baseline)
    }
}
