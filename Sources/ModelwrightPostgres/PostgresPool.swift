/// A few connections to one server, shared by many tasks: each task borrows one for the length
/// of a closure, and waits when all are out.
///
/// ```swift
/// let pool = PostgresPool(PostgresConfiguration("postgresql://app@localhost/trips"), size: 4)
/// let count = try await pool.withConnection { connection in
///     try await connection.query("SELECT count(*) FROM \"Trip\"")
/// }
/// ```
///
/// Connections open on first need, up to `size`. One that broke (the server restarted, the
/// network failed) is dropped when it comes back, and the next borrower gets a fresh one; one
/// given back inside a transaction is rolled back first, so no borrower inherits another's.
public actor PostgresPool {
    /// The most connections the pool holds open at once.
    public nonisolated let size: Int
    private let configuration: PostgresConfiguration
    private var idle: [PostgresConnection] = []
    private var open = 0
    private var waiters: [(id: Int, continuation: CheckedContinuation<PostgresConnection?, Never>)] = []
    private var nextWaiter = 0

    /// A pool of at most `size` connections (at least one) made with `configuration`.
    public init(_ configuration: PostgresConfiguration, size: Int = 4) {
        self.configuration = configuration
        self.size = max(1, size)
    }

    /// Runs `body` with a connection of its own, given back when `body` returns or throws.
    public func withConnection<T: Sendable>(
        _ body: @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        let connection = try await borrow()
        do {
            let value = try await body(connection)
            await giveBack(connection)
            return value
        } catch {
            await giveBack(connection)
            throw error
        }
    }

    /// How many connections are open, idle or borrowed.
    public var openConnections: Int { open }

    private func borrow() async throws -> PostgresConnection {
        while true {
            if let connection = idle.popLast() { return connection }
            if open < size {
                open += 1
                do {
                    return try await PostgresConnection(configuration)
                } catch {
                    open -= 1
                    wakeOne(with: nil)
                    throw error
                }
            }
            let id = nextWaiter
            nextWaiter += 1
            let handed = await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<PostgresConnection?, Never>) in
                    if Task.isCancelled {
                        continuation.resume(returning: nil)
                    } else {
                        waiters.append((id, continuation))
                    }
                }
            } onCancel: {
                Task { await self.cancelWaiter(id) }
            }
            if let handed { return handed }
            try Task.checkCancellation()
        }
    }

    private func giveBack(_ connection: PostgresConnection) async {
        // Never hand out a connection inside a transaction: one whose borrower's task was
        // cancelled mid-transaction is rolled back here, or closed if that fails.
        guard await connection.isReadyForReuse else {
            await connection.close()
            open -= 1
            wakeOne(with: nil)  // a waiter may now open a fresh connection
            return
        }
        if waiters.isEmpty {
            idle.append(connection)
        } else {
            wakeOne(with: connection)
        }
    }

    private func wakeOne(with connection: PostgresConnection?) {
        guard !waiters.isEmpty else {
            if let connection { idle.append(connection) }
            return
        }
        waiters.removeFirst().continuation.resume(returning: connection)
    }

    private func cancelWaiter(_ id: Int) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        waiters.remove(at: index).continuation.resume(returning: nil)
    }
}
