import Foundation

/// The observers of a store, each with the columns it reads, told after every commit that
/// changed one of them, and closed with the store.
final class ObserverRegistry: Sendable {
    private struct Observer {
        let reads: ReadSet
        let notify: @Sendable (StoreChanges) -> Void
        let close: @Sendable () -> Void
    }

    private let observers = Locked<[UUID: Observer]>([:])

    /// Registers an observer; the returned token removes it. `close` runs once, when the store closes.
    func add(
        reads: ReadSet, notify: @escaping @Sendable (StoreChanges) -> Void, close: @escaping @Sendable () -> Void
    ) -> UUID {
        let token = UUID()
        observers.withLock { $0[token] = Observer(reads: reads, notify: notify, close: close) }
        return token
    }

    func remove(_ token: UUID) {
        observers.withLock { _ = $0.removeValue(forKey: token) }
    }

    /// Tells every observer whose reads `changes` affects. Called after a commit, never after a rollback.
    func notify(_ changes: StoreChanges) {
        guard !changes.isEmpty else { return }
        let interested = observers.withLock { observers in
            observers.values.filter { changes.affects($0.reads) }.map(\.notify)
        }
        for notify in interested {
            notify(changes)
        }
    }

    /// Removes every observer and tells each that the store closed.
    func closeAll() {
        let closing = observers.withLock { observers in
            defer { observers.removeAll() }
            return observers.values.map(\.close)
        }
        for close in closing {
            close()
        }
    }
}
