/// An error a storage engine reported, in the terms every engine has: which engine, its own code
/// for the error and its message. What ``StoreError/transactionAbortedByEngine(cause:)`` carries,
/// so code that handles an aborted transaction names no engine's error type.
///
/// ```swift
/// do {
///     try await store.performAndSave { context in try context.insert(trip) }
/// } catch let error as StoreError {
///     if let cause = error.abortCause { print("rolled back by \(cause.engine): \(cause.code)") }
/// }
/// ```
public struct EngineFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The engine that reported it: `SQLite` or `PostgreSQL`.
    public let engine: String
    /// The engine's code: SQLite's extended result code (`13` for a full disk), PostgreSQL's
    /// SQLSTATE (`23505`); empty when the engine gave none (a lost connection).
    public let code: String
    /// The engine's message.
    public let message: String

    /// A failure reported by `engine`.
    public init(engine: String, code: String, message: String) {
        self.engine = engine
        self.code = code
        self.message = message
    }

    /// The engine, its code and its message.
    public var description: String {
        "\(engine) error" + (code.isEmpty ? "" : " \(code)") + ": \(message)"
    }
}
