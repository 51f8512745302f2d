import Foundation

/// The benchmark's workloads, in the order they run and are reported.
enum Workload: String, CaseIterable {
    case insert
    case fetchAll
    case indexedFetch
    case sortedFetch
    case lookupByID
    case count

    func title(rows: Int, fetches: Int, counts: Int) -> String {
        switch self {
        case .insert: "insert \(rows.grouped) rows, 1 transaction"
        case .fetchAll: "fetch all \(rows.grouped) into structs"
        case .indexedFetch: "\(fetches.grouped) fetches by indexed age"
        case .sortedFetch: "\(fetches.grouped) by age, newest \(Workload.sortedLimit)"
        case .lookupByID: "\(fetches.grouped) lookups by ID"
        case .count: "\(counts.grouped) counts (age >= \(Workload.minimumAge))"
        }
    }

    /// The lower bound of the counted ages: half of the people.
    static let minimumAge = PersonSeed.ageCount / 2

    /// How many people of an age the filtered, sorted and limited fetch keeps.
    static let sortedLimit = 5
}

/// Every timing taken, by workload and contender.
struct Timings {
    private var samples: [Workload: [String: [Duration]]] = [:]

    mutating func record(_ duration: Duration, _ workload: Workload, _ contender: String) {
        samples[workload, default: [:]][contender, default: []].append(duration)
    }

    /// The fastest run, in milliseconds.
    func best(_ workload: Workload, _ contender: String) -> Double? {
        samples[workload]?[contender]?.min().map(\.milliseconds)
    }

    /// The median run, in milliseconds.
    func median(_ workload: Workload, _ contender: String) -> Double? {
        guard let runs = samples[workload]?[contender]?.sorted(), !runs.isEmpty else { return nil }
        return runs[runs.count / 2].milliseconds
    }
}

extension Duration {
    var milliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1_000 + Double(attoseconds) / 1e15
    }
}

extension Int {
    /// `100000` as `100,000`.
    var grouped: String {
        let digits = Array(String(self))
        var result = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0, (digits.count - offset) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return result
    }
}

/// Runs `body` and returns how long it took, with its result (which is freed after the clock stops).
func measure<Result>(
    isolation: isolated (any Actor)? = #isolation,
    _ body: () async throws -> Result
) async rethrows -> (Duration, Result) {
    let clock = ContinuousClock()
    let start = clock.now
    let result = try await body()
    return (start.duration(to: clock.now), result)
}
