import Foundation

/// The observers of a store, each with the columns it reads, told after every commit that
/// changed one of them, and closed with the store.
final class ObserverRegistry: Sendable {
    private struct Observer {
        let reads: ReadSet
        let hear: @Sendable (StoreChanges) -> Void
        let refresh: @Sendable () -> Void
        let close: @Sendable () -> Void
    }

    private let observers = Locked<[UUID: Observer]>([:])
    /// Told `true` when the first observer comes and `false` when the last one goes, so that the
    /// store watches for other processes' commits only while someone listens.
    let activity = Locked<(@Sendable (Bool) -> Void)?>(nil)

    /// Registers an observer; the returned token removes it. `hear` and then `refresh` run for each
    /// commit that affects `reads`; `close` runs once, when the store closes.
    func add(
        reads: ReadSet, hear: @escaping @Sendable (StoreChanges) -> Void, refresh: @escaping @Sendable () -> Void,
        close: @escaping @Sendable () -> Void
    ) -> UUID {
        let token = UUID()
        let isFirst = observers.withLock { observers in
            observers[token] = Observer(reads: reads, hear: hear, refresh: refresh, close: close)
            return observers.count == 1
        }
        if isFirst { activity.withLock { $0 }?(true) }
        return token
    }

    /// How many observers are registered.
    var count: Int { observers.withLock { $0.count } }

    func remove(_ token: UUID) {
        let wasLast = observers.withLock { observers in
            observers.removeValue(forKey: token) != nil && observers.isEmpty
        }
        if wasLast { activity.withLock { $0 }?(false) }
    }

    /// Commits through `commit` and wakes every observer whose reads `changes` affects.
    ///
    /// Each such observer hears of the changes *before* the commit, so that a refresh already
    /// queued by an earlier commit, which may read this commit's rows, also knows which records
    /// this commit changed; after a commit that fails, they may hear of changes that never
    /// happened, which costs a refresh and nothing more. Refreshes are queued after the commit.
    func commit(_ changes: StoreChanges, _ commit: () throws -> Void) throws {
        let interested =
            changes.isEmpty
            ? []
            : observers.withLock { observers in observers.values.filter { changes.affects($0.reads) } }
        for observer in interested {
            observer.hear(changes)
        }
        try commit()
        for observer in interested {
            observer.refresh()
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
        activity.withLock { $0 }?(false)
    }
}
