import Foundation

/// The observers of a store, each with the tables it reads, told after every commit that
/// wrote to one of them.
final class ObserverRegistry: Sendable {
    private struct Observer {
        let tables: Set<String>
        let notify: @Sendable () -> Void
    }

    private let observers = Locked<[UUID: Observer]>([:])

    /// Registers an observer; the returned token removes it.
    func add(tables: Set<String>, notify: @escaping @Sendable () -> Void) -> UUID {
        let token = UUID()
        observers.withLock { $0[token] = Observer(tables: tables, notify: notify) }
        return token
    }

    func remove(_ token: UUID) {
        observers.withLock { _ = $0.removeValue(forKey: token) }
    }

    /// Tells every observer that reads one of `changedTables`. Called after a commit, never after a rollback.
    func notify(changedTables: Set<String>) {
        guard !changedTables.isEmpty else { return }
        let interested = observers.withLock { observers in
            observers.values.filter { !$0.tables.isDisjoint(with: changedTables) }.map(\.notify)
        }
        for notify in interested {
            notify()
        }
    }
}
