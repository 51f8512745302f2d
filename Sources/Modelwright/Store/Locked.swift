import Foundation

/// A value behind a lock, for the little state the store shares across queues.
///
/// `Synchronization.Mutex` would do, but it needs macOS 15; this package supports macOS 13.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// A connection and the serial queue it is used on; the connection is only touched (and only
/// replaced, when it was lost) there, which is why this type can be `Sendable` although no
/// connection is.
final class ConnectionQueue: @unchecked Sendable {
    var connection: any DatabaseConnection
    let queue: DispatchQueue
    /// Whether the task the running transaction is for was cancelled (see
    /// ``DatabaseConnection/watchCancellation(_:)``); touched only on `queue`.
    var isCancelled: (@Sendable () -> Bool)?

    init(_ connection: any DatabaseConnection, label: String) {
        self.connection = connection
        queue = DispatchQueue(label: label)
    }
}
