import Dispatch
import Foundation

extension Array where Element: Sendable {
    /// `map`, with the elements transformed concurrently and the results in the original order:
    /// loading a long history compiles and lowers a hundred independent files, and the generator
    /// builds the context of each entity and renders each file independently.
    package func parallelMap<Transformed: Sendable>(_ transform: @Sendable (Element) -> Transformed) -> [Transformed] {
        let results = ResultSlots<Transformed>(count: count)
        DispatchQueue.concurrentPerform(iterations: count) { index in
            results.set(transform(self[index]), at: index)
        }
        return results.values
    }
}

/// Slots written from several threads, each once, under a lock.
package final class ResultSlots<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var slots: [Value?]

    package init(count: Int) {
        slots = Array(repeating: nil, count: count)
    }

    package func set(_ value: Value, at index: Int) {
        lock.withLock { slots[index] = value }
    }

    package var values: [Value] { lock.withLock { slots.compactMap { $0 } } }
}
