import CLibPQ
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A notification another connection sent with `NOTIFY` or `pg_notify`.
public struct PostgresNotification: Sendable, Equatable {
    /// The channel it was sent on.
    public let channel: String
    /// What the sender attached (empty when nothing).
    public let payload: String
    /// The server process of the sending connection (``PostgresConnection/serverProcessID``).
    public let senderProcessID: Int32
}

/// A connection of its own that `LISTEN`s on channels and delivers what arrives, as it arrives
/// (the server pushes notifications; nothing polls the database).
///
/// ```swift
/// let listener = try await PostgresListener(configuration, channels: ["changes"])
/// for try await notification in listener.notifications {
///     print(notification.channel, notification.payload)
/// }
/// ```
///
/// The sequence ends with ``PostgresError/connectionLost(during:)`` when the connection breaks,
/// and when the listener is stopped or the sequence's consumer goes away.
public final class PostgresListener: Sendable {
    /// Every notification on the channels, in the order the server sent them.
    public let notifications: AsyncThrowingStream<PostgresNotification, any Error>
    private let stopFlag: StopSignal

    /// Connects and listens on `channels`; returns once the server listens, so a notification
    /// sent after this returns is delivered.
    public convenience init(_ configuration: PostgresConfiguration, channels: [String]) async throws {
        try await self.init(configuration, channels: channels, batches: nil)
    }

    /// Connects and listens on `channels`; `batches`, when given, is also handed what each wake
    /// of the connection brought, all at once (or the error that ended it, or nothing when the
    /// listener stopped), so that the
    /// notifications of one transaction, which the server sends together, are seen together.
    init(
        _ configuration: PostgresConfiguration, channels: [String],
        batches: (@Sendable (Result<[PostgresNotification], any Error>) -> Void)?
    ) async throws {
        let (stream, continuation) = AsyncThrowingStream<PostgresNotification, any Error>.makeStream()
        let stop = StopSignal()
        let redaction = Redaction(connectionString: configuration.connectionString)
        // A thread of its own: waiting for the socket blocks, which the cooperative pool must not do.
        try await withCheckedThrowingContinuation { (ready: CheckedContinuation<Void, any Error>) in
            Self.start(configuration, channels, redaction, stop, into: continuation, batches: batches) {
                ready.resume(with: $0)
            }
        }
        continuation.onTermination = { _ in stop.set() }
        notifications = stream
        stopFlag = stop
    }

    /// Connects and listens on `channels`, blocking the calling thread until the server listens;
    /// for the runtime's synchronous store opening, never for a task of the cooperative pool.
    init(
        listeningNow configuration: PostgresConfiguration, channels: [String],
        batches: @escaping @Sendable (Result<[PostgresNotification], any Error>) -> Void
    ) throws {
        let (stream, continuation) = AsyncThrowingStream<PostgresNotification, any Error>.makeStream()
        let stop = StopSignal()
        let redaction = Redaction(connectionString: configuration.connectionString)
        let outcome = Outcome()
        Self.start(configuration, channels, redaction, stop, into: continuation, batches: batches) { result in
            outcome.set(result)
        }
        try outcome.wait()
        continuation.onTermination = { _ in stop.set() }
        notifications = stream
        stopFlag = stop
    }

    /// Starts the listening thread, which calls `ready` once the server listens or connecting failed.
    private static func start(
        _ configuration: PostgresConfiguration, _ channels: [String], _ redaction: Redaction, _ stop: StopSignal,
        into continuation: AsyncThrowingStream<PostgresNotification, any Error>.Continuation,
        batches: (@Sendable (Result<[PostgresNotification], any Error>) -> Void)?,
        ready: @escaping @Sendable (Result<Void, any Error>) -> Void
    ) {
        let thread = Thread {
            receive(configuration, channels, redaction, stop, ready: ready, into: continuation, batches: batches)
        }
        thread.name = "modelwright.postgres.listener"
        thread.start()
    }

    deinit {
        stopFlag.set()
    }

    /// Stops listening and closes the connection; the sequence finishes.
    public func stop() {
        stopFlag.set()
    }

    private static func receive(
        _ configuration: PostgresConfiguration, _ channels: [String], _ redaction: Redaction, _ stop: StopSignal,
        ready: @Sendable (Result<Void, any Error>) -> Void,
        into continuation: AsyncThrowingStream<PostgresNotification, any Error>.Continuation,
        batches: (@Sendable (Result<[PostgresNotification], any Error>) -> Void)?
    ) {
        let connection: OpaquePointer
        do {
            connection = try PostgresConnection.connect(configuration, redaction: redaction).pointer
        } catch {
            ready(.failure(error))
            return
        }
        defer { PQfinish(connection) }
        // PostgreSQL would cut a longer name to 63 bytes and listen on another channel.
        if let long = channels.first(where: { $0.utf8.count > 63 }) {
            ready(.failure(PostgresError.invalidValue("the channel name \"\(long)\" is longer than 63 bytes")))
            return
        }
        for channel in channels {
            let quoted = "\"" + channel.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            let result = PQexec(connection, "LISTEN \(quoted)")
            defer { PQclear(result) }
            guard PQresultStatus(result) == PGRES_COMMAND_OK else {
                let reason = String(cString: PQerrorMessage(connection))
                ready(.failure(PostgresError.connectionFailed(redaction.apply(reason))))
                return
            }
        }
        ready(.success(()))
        let socket = PQsocket(connection)
        while !stop.isSet {
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            // Wakes at least every 100 ms to see whether to stop.
            guard poll(&descriptor, 1, 100) >= 0 || errno == EINTR else { break }
            guard descriptor.revents != 0 else { continue }
            guard PQconsumeInput(connection) == 1, PQstatus(connection) == CONNECTION_OK else {
                continuation.finish(throwing: PostgresError.connectionLost(during: "LISTEN"))
                batches?(.failure(PostgresError.connectionLost(during: "LISTEN")))
                return
            }
            var batch: [PostgresNotification] = []
            while let notification = PQnotifies(connection) {
                let value = notification.pointee
                let received = PostgresNotification(
                    channel: String(cString: value.relname), payload: String(cString: value.extra),
                    senderProcessID: value.be_pid)
                continuation.yield(received)
                batch.append(received)
                PQfreemem(notification)
            }
            if !batch.isEmpty { batches?(.success(batch)) }
        }
        continuation.finish()
        batches?(.success([]))
    }
}

/// The listening thread's answer to a synchronous start, which the starting thread waits for.
private final class Outcome: @unchecked Sendable {
    // @unchecked: `result` is written once before `done` is signalled and read after it is waited for.
    private var result: Result<Void, any Error> = .success(())
    private let done = DispatchSemaphore(value: 0)

    func set(_ result: Result<Void, any Error>) {
        self.result = result
        done.signal()
    }

    func wait() throws {
        done.wait()
        try result.get()
    }
}

/// A flag the listener's thread polls to know when to stop.
final class StopSignal: @unchecked Sendable {
    // @unchecked: the one field is behind `lock`.
    private let lock = NSLock()
    private var value = false

    var isSet: Bool { lock.withLock { value } }

    func set() { lock.withLock { value = true } }
}
