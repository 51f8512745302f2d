import Foundation

/// How a device's ``SyncEngine`` reaches the server: a push and a pull, each a message and its
/// answer. ``SyncServer`` is one (in process, for tests and for an app that is its own server);
/// an app brings its own for any other channel.
///
/// ```swift
/// let server = try SyncServer(store: serverStore)
/// let engine = SyncEngine(store: deviceStore, transport: server)
/// try await engine.sync()
/// ```
public protocol SyncTransport: Sendable {
    /// Sends a push and returns the server's answer.
    func push(_ request: PushRequest) async throws -> PushResponse
    /// Sends a pull and returns the server's answer.
    func pull(_ request: PullRequest) async throws -> PullResponse
}
