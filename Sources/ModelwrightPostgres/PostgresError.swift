import Modelwright

/// What went wrong talking to PostgreSQL. No case's text ever holds the connection's password:
/// every message libpq or the server gives is passed through the connection's redaction first.
public enum PostgresError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The connection string is not a PostgreSQL URL (`postgresql://…`) or `key=value` list.
    case invalidConnectionString(String)
    /// The server could not be reached, or refused the connection (wrong credentials, no such
    /// database); the message is libpq's, without the password.
    case connectionFailed(String)
    /// The connection was lost while a statement ran; the statement's effect is unknown unless
    /// it was outside a transaction and read only.
    case connectionLost(during: String)
    /// The connection was lost while `COMMIT` ran: the transaction may or may not have committed.
    case commitOutcomeUnknown
    /// `COMMIT` found the transaction already failed: PostgreSQL rolled it back instead.
    case transactionRolledBack
    /// A statement of the open transaction failed with `cause`, so PostgreSQL refuses every
    /// later statement of it: roll the transaction back (nothing of it can commit) and retry.
    /// The engine interface throws ``StoreError/transactionAbortedByEngine(cause:)`` instead, so a
    /// store's user matches an abort without naming either engine's error type.
    indirect case transactionAborted(cause: PostgresError)
    /// The statement was cancelled at the caller's request (its task was cancelled).
    case cancelled
    /// The statement ran longer than the connection's statement timeout and was stopped.
    case timedOut
    /// The server refused the statement.
    case server(sqlState: String, message: String, detail: String?, hint: String?)
    /// A value cannot be stored exactly in its column type (a string holding NUL, a date out of
    /// range), or a stored value cannot be read as the type asked for.
    case invalidValue(String)
    /// The connection was closed, or broke earlier, and takes no more statements.
    case closed
    /// A store needs the extension `name` (`unaccent`, for `diacriticInsensitive` string tests)
    /// and the server could not create it in the database; `reason` is the server's.
    case extensionUnavailable(name: String, reason: String)

    /// Whether a cached prepared statement failed because it went stale: another session's DDL
    /// changed what its plan returns (0A000, a column retyped behind the store's back), or a
    /// `DISCARD ALL` / `DEALLOCATE ALL` dropped it (26000). The connection forgets its cache;
    /// a statement that is the first of its transaction (or outside one) is prepared and run
    /// once more, since nothing was read before it.
    var isStaleStatement: Bool {
        guard case .server(let sqlState, _, _, _) = self else { return false }
        return sqlState == "0A000" || sqlState == "26000"
    }

    /// The error in words, naming what to do where there is something to do.
    public var description: String {
        switch self {
        case .invalidConnectionString(let reason):
            "not a PostgreSQL connection string (postgresql://user@host:port/database or key=value pairs): \(reason)"
        case .connectionFailed(let reason):
            "could not connect to PostgreSQL: \(reason)"
        case .connectionLost(let during):
            "the connection to PostgreSQL was lost during \(during); its effect is unknown"
        case .commitOutcomeUnknown:
            "the connection to PostgreSQL was lost during COMMIT: the transaction may or may not have committed; "
                + "check the data before retrying"
        case .transactionRolledBack:
            "the transaction was rolled back because a statement in it failed; nothing of it was committed"
        case .transactionAborted(let cause):
            "the transaction was aborted by an earlier failure (\(cause)); roll it back, nothing of it can commit"
        case .cancelled:
            "the statement was cancelled"
        case .timedOut:
            "the statement ran longer than the statement timeout and was stopped (raise statementTimeout if it must run longer)"
        case .server(let sqlState, let message, let detail, let hint):
            "PostgreSQL error \(sqlState): \(message)" + (detail.map { " (\($0))" } ?? "")
                + (hint.map { "; hint: \($0)" } ?? "")
        case .invalidValue(let reason):
            reason
        case .closed:
            "the connection is closed"
        case .extensionUnavailable(let name, let reason):
            "the store needs PostgreSQL's \(name) extension, which could not be created in the database (\(reason)): "
                + "install the server's contrib modules (Debian: postgresql-contrib; Homebrew's postgresql has them), "
                + "or have a superuser run CREATE EXTENSION \(name) in the database, then open the store again"
        }
    }
}

extension PostgresError {
    /// The error in terms of no particular engine: `PostgreSQL`, the SQLSTATE where the server
    /// gave one, and the message; an abort gives its cause's.
    public var engineFailure: EngineFailure {
        switch self {
        case .server(let sqlState, let message, _, _):
            EngineFailure(engine: "PostgreSQL", code: sqlState, message: message)
        case .transactionAborted(let cause): cause.engineFailure
        default: EngineFailure(engine: "PostgreSQL", code: "", message: description)
        }
    }
}
