import Foundation

/// The printed results: a table of best times with ratios to raw C, the medians, the memory
/// check, and each target with PASS or MISS.
struct Report {
    let options: Options
    let timings: Timings
    let memory: MemoryCheck.Result?

    private var names: [String] { options.contenders.map(\.name) }

    /// Modelwright's targets: at most this many times raw C's best time (issue 30).
    private static let ratioTargets: [(Workload, Double)] = [
        (.insert, 1.05), (.fetchAll, 1.05), (.indexedFetch, 1.10), (.sortedFetch, 1.05), (.lookupByID, 1.5),
    ]
    /// Streaming a million rows must not grow the peak RSS by more than this.
    private static let memoryTarget = 50 * 1024 * 1024

    func print() {
        Swift.print("Best of \(options.repetitions) runs, milliseconds (ratio to raw C):")
        table(value: timings.best)
        Swift.print("")
        Swift.print("Median of \(options.repetitions) runs, milliseconds (ratio to raw C):")
        table(value: timings.median)
        Swift.print("")
        if let memory {
            Swift.print("Memory: ReadContext.forEach over \(memory.rows.grouped) rows")
            Swift.print("  peak RSS growth with forEach: \(megabytes(memory.forEachGrowth))", terminator: "")
            Swift.print(String(format: " (pass took %.0f ms)", memory.forEach.milliseconds))
            Swift.print("  for contrast, fetch into one array: \(megabytes(memory.fetchGrowth))")
            Swift.print("")
        }
        targets()
    }

    private func table(value: (Workload, String) -> Double?) {
        let titleWidth = 38
        let cellWidth = 22
        var header = "workload".padding(toLength: titleWidth, withPad: " ", startingAt: 0)
        for name in names { header += name.leftPadded(cellWidth) }
        Swift.print(header)
        for workload in options.workloads {
            let title = workload.title(rows: options.rows, fetches: options.fetches, counts: options.counts)
            var line = title.padding(toLength: titleWidth, withPad: " ", startingAt: 0)
            let raw = value(workload, RawSQLite.name)
            for name in names {
                guard let time = value(workload, name) else {
                    line += "—".leftPadded(cellWidth)
                    continue
                }
                var cell = String(format: "%.1f", time)
                if name != RawSQLite.name, let raw, raw > 0 {
                    cell += String(format: " (%.2f×)", time / raw)
                }
                line += cell.leftPadded(cellWidth)
            }
            Swift.print(line)
        }
    }

    private func targets() {
        Swift.print("Targets (best times):")
        let modelwright = ModelwrightContender.name
        for (workload, limit) in Self.ratioTargets {
            guard let time = timings.best(workload, modelwright), let raw = timings.best(workload, RawSQLite.name)
            else { continue }
            let ratio = time / raw
            verdict(
                ratio <= limit,
                String(format: "%@ ≤ %.2f× raw C: %.2f×", workload.rawValue, limit, ratio)
            )
        }
        for workload in Workload.allCases {
            for peer in [GRDBCodable.name, GRDBOptimized.name] {
                guard let time = timings.best(workload, modelwright), let other = timings.best(workload, peer)
                else { continue }
                verdict(
                    time < other,
                    String(format: "%@ faster than %@: %.1f ms vs %.1f ms", workload.rawValue, peer, time, other)
                )
            }
        }
        if let memory, let growth = memory.forEachGrowth {
            verdict(
                growth < Self.memoryTarget,
                "forEach over \(memory.rows.grouped) rows grows peak RSS < 50 MB: \(megabytes(growth))"
            )
        }
    }

    private func verdict(_ passed: Bool, _ text: String) {
        Swift.print("  \(passed ? "PASS" : "MISS")  \(text)")
    }

    private func megabytes(_ bytes: Int?) -> String {
        guard let bytes else { return "unavailable (needs Linux /proc/self/clear_refs)" }
        return String(format: "%.1f MB", Double(bytes) / 1_048_576)
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? " " + self : String(repeating: " ", count: width - count) + self
    }
}
